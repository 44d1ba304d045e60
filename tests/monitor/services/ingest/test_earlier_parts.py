"""What the earlier parts of an import stored, kept in memory (monitor/services/ingest/earlier_parts.py)."""

from __future__ import annotations

import numpy as np

from monitor.services.ingest.earlier_parts import StoredKeys, snapshot_hashes


def test_two_times_postgresql_stores_as_one_give_one_snapshot_hash():
    """The hash keys a snapshot by the time as the table holds it (microseconds): times that differ below half a
    microsecond are one row there, and one hash here; a microsecond apart, or another account, another hash."""
    t = 1_600_000_000.25
    same = snapshot_hashes(np.array([5, 5]), np.array([t, t + 1e-7]))
    assert same[0] == same[1]
    other = snapshot_hashes(np.array([5, 6, 5]), np.array([t + 1e-6, t, t + 1.0]))
    assert len(set(other.tolist()) | {int(same[0])}) == 4


def test_stored_keys_miss_nothing_an_earlier_part_added():
    """No false negative over random keys in three parts; what no part added is mostly answered no."""
    rng = np.random.default_rng(3)
    pks, times = rng.integers(1, 10**6, 30_000), rng.integers(1_500_000_000, 1_600_000_000, 30_000).astype(float)
    keys = StoredKeys()
    assert not keys.maybe(snapshot_hashes(pks[:5], times[:5])).any()  # nothing kept yet
    for part in np.array_split(np.arange(20_000), 3):
        keys.add(snapshot_hashes(pks[part], times[part]))
    assert keys.nbytes == 8 * 20_000
    assert keys.maybe(snapshot_hashes(pks[:20_000], times[:20_000])).all()
    fresh = keys.maybe(snapshot_hashes(pks[20_000:] + 10**6, times[20_000:]))
    assert fresh.sum() == 0
