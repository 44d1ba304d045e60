"""The duplicate check of an import in parts keeps the earlier parts' references in files, a run per part, behind
a Bloom filter (``monitor.services.ingest.seen``)."""

from __future__ import annotations

import numpy as np

from monitor.services.ingest.seen import FENCE, SpilledSeenTweets


def _times(sec: np.ndarray) -> np.ndarray:
    return sec.astype(np.float64) + 0.25


def _refs(rng, n):
    return rng.integers(0, 9, n), rng.integers(1, 10**9, n), rng.integers(1.2e9, 1.6e9, n)


def test_spilled_references_are_found_with_their_file_and_line_and_new_ids_are_rarely_looked_for(tmp_path):
    rng = np.random.default_rng(7)
    ids = np.unique(rng.integers(1, 2**62, 200_000))
    rng.shuffle(ids)
    n = len(ids)
    rt, uid, sec = _refs(rng, n)
    lines = np.arange(n) + 2
    seen = SpilledSeenTweets(tmp_path / "seen")
    src = seen.file("a.jsonl")
    assert seen.check(src, ids, rt, uid, _times(sec), lines) == []
    seen.spill()
    assert len(seen) == 0 and seen.spilled == n  # memory holds nothing of them now but the run's fence
    assert len(seen.runs) == 1 and len(seen.runs[0].fence) == -(-n // FENCE)

    # every spilled id is found, with the reference it had (no false negatives)
    src_b = seen.file("b.jsonl")
    known = seen._known(np.sort(ids))
    order = np.argsort(ids)
    assert known.hit.all()
    assert (known.rt == rt[order]).all() and (known.uid == uid[order]).all()
    assert (known.sec == sec[order]).all() and (known.line == lines[order]).all()
    assert (known.src == src).all()
    # a contradicting row names the first one's file and line
    k = 123
    bad = seen.check(src_b, ids[k : k + 1], rt[k : k + 1], uid[k : k + 1] + 1, _times(sec[k : k + 1]), np.array([5]))
    assert bad == [
        (0, f"tweet {ids[k]} was read before (a.jsonl:{lines[k]}) by user {uid[k]}; here by user {uid[k] + 1}")
    ]

    # ids never read: none found, and only the filter's false positives are looked for in the run
    fresh = np.setdiff1d(np.unique(rng.integers(1, 2**62, 300_000)), ids)
    asked = seen.asked
    assert not seen._known(fresh).hit.any()
    assert seen.asked - asked < 0.01 * len(fresh)

    seen.drop()
    assert seen.runs == [] and not any((tmp_path / "seen").iterdir())


def test_ids_of_several_runs_are_found_in_their_own_at_every_edge_of_a_block(tmp_path):
    """Three parts whose ids interleave; asked for together with ids below, between and above them: the ids at a
    block's first and last place, the last block cut short, one id past a run's last and before its first."""
    rng = np.random.default_rng(11)
    all_ids = np.arange(1, 3 * 5 * FENCE + 700, dtype=np.int64) * 4  # multiples of 4: others are never read
    part = rng.integers(0, 3, len(all_ids))
    seen = SpilledSeenTweets(tmp_path / "seen")
    want = {}
    for p in range(3):
        src = seen.file(f"f{p}.jsonl")
        ids = rng.permutation(all_ids[part == p])
        rt, uid, sec = _refs(rng, len(ids))
        lines = rng.integers(1, 10**6, len(ids))
        assert seen.check(src, ids, rt, uid, _times(sec), lines) == []
        for i, r, u, s, ln in zip(ids.tolist(), rt.tolist(), uid.tolist(), sec.tolist(), lines.tolist()):
            want[i] = (r, u, s, ln, src)
        seen.spill()
    assert [r.n for r in seen.runs] == [int((part == p).sum()) for p in range(3)]
    run_ids = [np.fromfile(r.ids, dtype="<i8") for r in seen.runs]
    edges = np.concatenate(
        [
            np.concatenate([r[::FENCE], r[FENCE - 1 :: FENCE], r[-1:], r[:1] - 1, r[-1:] + 1, r[FENCE::FENCE] - 1])
            for r in run_ids
        ]
    )
    q = np.unique(np.concatenate([edges, all_ids[::7], [0, 2, all_ids[-1] + 4]]))
    known = seen._known(q)
    assert (known.hit == np.isin(q, all_ids)).all()
    got = {int(i): (int(r), int(u), int(s), int(ln), int(sr)) for i, h, r, u, s, ln, sr in zip(q, *known) if h}
    assert got == {i: want[i] for i in got}
    # asked alone, so that no other id brings its block: each edge is found in its own block
    for r in run_ids:
        for i in (r[0], r[FENCE - 1], r[FENCE], r[2 * FENCE], r[-1]):
            one = seen._known(np.array([i]))
            assert one.hit[0] and one.line[0] == want[int(i)][3], int(i)
    # a row in the newest part that contradicts one of the first part's is named with the first part's file
    first = int(run_ids[0][FENCE - 1])
    r, u, s, ln, _ = want[first]
    bad = seen.check(seen.file("g.jsonl"), np.array([first]), np.array([r]), np.array([u]), np.array([s + 5.0]), None)
    assert len(bad) == 1 and bad[0][1].startswith(f"tweet {first} was read before (f0.jsonl:{ln}) ")
