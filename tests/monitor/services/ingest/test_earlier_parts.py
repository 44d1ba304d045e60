"""What the earlier parts of an import stored, kept in memory (monitor/services/ingest/earlier_parts.py)."""

from __future__ import annotations

import numpy as np

from monitor.services.ingest.earlier_parts import EarlierSnapshots, KeptSnapshots, StoredKeys, pair_hashes, snapshot_key


def test_two_times_postgresql_stores_as_one_are_one_snapshot_key():
    """A snapshot is keyed by the time as the table holds it (microseconds): times that differ below half a
    microsecond are one row there and one key here; a microsecond apart, or another account, another key."""
    t = 1_600_000_000.25
    us, same = snapshot_key(np.array([5, 5]), np.array([t, t + 1e-7]))
    assert us[0] == us[1] and same[0] == same[1]
    _, other = snapshot_key(np.array([5, 6, 5]), np.array([t + 1e-6, t, t + 1.0]))
    assert len(set(other.tolist()) | {int(same[0])}) == 4


def test_pair_hashes_spread_near_keys():
    """Keys one apart in either column (an account's snapshots a second apart, a tweet's next retweeters) give
    200,000 distinct hashes."""
    a, b = np.meshgrid(np.arange(1000, 1400), 1_600_000_000 * 10**6 + np.arange(0, 500) * 10**6)
    assert len(np.unique(pair_hashes(a.ravel(), b.ravel()))) == 200_000
    assert len(np.unique(pair_hashes(np.arange(100_000) // 7, np.arange(100_000) % 7))) == 100_000


def test_stored_keys_miss_nothing_an_earlier_part_added():
    """No false negative over random keys in three parts; what no part added is answered no; cleared, nothing."""
    rng = np.random.default_rng(3)
    pks, times = rng.integers(1, 10**6, 30_000), rng.integers(1_500_000_000, 1_600_000_000, 30_000).astype(float)
    hashes = snapshot_key(pks, times)[1]
    keys = StoredKeys()
    assert not keys.maybe(hashes[:5]).any()  # nothing kept yet
    for part in np.array_split(np.arange(20_000), 3):
        keys.add(hashes[part])
    assert keys.nbytes == 8 * 20_000
    assert keys.maybe(hashes[:20_000]).all()
    assert not keys.maybe(snapshot_key(pks[20_000:] + 10**6, times[20_000:])[1]).any()
    keys.clear()
    assert not keys.maybe(hashes[:20_000]).any()


def test_stored_keys_of_many_parts_are_asked_in_a_few_merged_runs():
    """Sixty parts of equal size are kept as a few sorted runs (merged as they come), and still miss nothing."""
    rng = np.random.default_rng(4)
    hashes = pair_hashes(rng.integers(1, 10**9, 60_000), rng.integers(1, 10**9, 60_000))
    keys = StoredKeys()
    for part in np.array_split(np.arange(60_000), 60):
        keys.add(hashes[part].copy())
    assert len(keys.parts) <= 7 and all((p[1:] >= p[:-1]).all() for p in keys.parts)
    assert keys.nbytes == 8 * 60_000 and keys.maybe(hashes).all()
    assert not keys.maybe(pair_hashes(rng.integers(10**9, 2 * 10**9, 5_000), rng.integers(1, 9, 5_000))).any()


def test_kept_snapshots_find_their_own_key_only_and_keep_the_highest_count():
    """A row is found only with its account and time (not another key with the same hash, made here by hand);
    a raised count is kept for the next part."""
    kept = KeptSnapshots()
    kept.add(np.array([30, 10], np.uint64), np.array([3, 1]), np.array([300, 100]), np.array([7, 5]))
    kept.add(np.array([20], np.uint64), np.array([2]), np.array([200]), np.array([6]))
    pos, found = kept.find(np.array([10, 20, 20, 99], np.uint64), np.array([1, 2, 9, 1]), np.array([100, 200, 200, 1]))
    assert found.tolist() == [True, True, False, False]
    assert kept.count[pos[:2]].tolist() == [5, 6]
    kept.raise_counts(pos[:1], np.array([8]))
    assert kept.count[kept.find(np.array([10], np.uint64), np.array([1]), np.array([100]))[0]].tolist() == [8]
    kept.clear()
    assert not kept.find(np.array([10], np.uint64), np.array([1]), np.array([100]))[1].any()


def test_earlier_snapshots_answer_the_originals_given_again_and_send_only_the_others_to_the_table():
    """A later part's snapshots: one no part stored is neither stored nor asked; an original's snapshot given
    again is stored (raised when its count is higher, the raise kept); a retweet's snapshot given again is asked."""
    t0 = 1_600_000_000.0
    snaps = EarlierSnapshots()
    snaps.add(
        np.array([1, 2, 3]), np.array([t0, t0 + 1, t0 + 2]), np.array([10, 20, 30]), np.array([True, True, False])
    )
    account, times = np.array([1, 2, 3, 4, 2]), np.array([t0, t0 + 1, t0 + 2, t0, t0 + 9])
    ask, stored, raised = snaps.check(account, times, np.array([10, 25, 30, 5, 1]))
    assert ask.tolist() == [False, False, True, False, False]
    assert stored.tolist() == [True, True, False, False, False]
    assert raised.tolist() == [False, True, False, False, False]
    ask, stored, raised = snaps.check(account[:2], times[:2], np.array([10, 24]))  # 25 is kept: 24 raises nothing
    assert stored.tolist() == [True, True] and not raised.any() and not ask.any()
    snaps.clear()
    assert not snaps.check(account, times, np.array([10, 25, 30, 5, 1]))[0].any()
