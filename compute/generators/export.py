"""Export a generated collection as the files an analyst would upload: Twitter API v1.1 JSONL plus follows.

:func:`write_v1_folder` writes a folder with

* ``tweets.jsonl``: one v1.1 status per line, in the table's row order (the generator's rows are in time
  order, so originals and retweets interleave by ``created_at``). An original is
  ``{"id_str","created_at","text","user":{"id_str","screen_name","followers_count"}}``; a retweet has the same
  fields plus ``"retweeted_status"``, the whole original embedded, as v1.1 does. ``created_at`` is Twitter's
  ``"Mon Jun 01 00:00:00 +0000 2020"``; texts are short and deterministic (``"claim #k: synthetic status"``,
  ``"RT @user12: claim #k: synthetic status"``); screen names are ``user<k>`` with ``k`` the user's rank among
  the collection's distinct user ids. Lines are compact (no spaces) and encoded with msgspec, orjson or the
  standard library (the same bytes from each), a chunk of rows at a time.
* ``follows.csv``: ``follower_id,followee_id``, only the follow edges between two users who take part in the
  same cascade (publisher or retweeter), each edge once (:func:`coparticipant_edges`).

Why the restricted follows lose nothing: the forward phase looks, for each retweeter, only at the users it
follows *within its cascade*, so an edge whose two ends never share a cascade can never become a spreading
edge. The spreading graphs, and so every influence value, are the same as with the whole follower graph; the
follower counts n_v come from ``user.followers_count`` (the full in-degree), not from the edges. Real
collections are built the same way: one fetches the followers (or friends) of the participants only.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np

from .. import _jit
from ..arrays import unique
from ..structures import FollowerGraph
from ..tables import TweetTable
from ._common import ProgressFn, make_progress

__all__ = ["coparticipant_edges", "write_v1_jsonl", "write_follows_csv", "write_v1_folder", "v1_created_at"]

_CHUNK = 1 << 16  # rows (or follow edges) formatted and written at a time
_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")  # 1970-01-01 was a Thursday: (days + 3) % 7
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_HMS: list[str] | None = None


# --- follow edges among co-participants ------------------------------------------------------------------


def _cascade_nodes(tweets: TweetTable, graph: FollowerGraph) -> tuple[np.ndarray, np.ndarray]:
    """(node_offsets int64[T+1], node_user int64[N]): each cascade's distinct participants as dense graph
    indices, sorted within the cascade. Participants missing from the graph have no follows and are left out."""
    key = np.where(tweets.is_retweet, tweets.retweeted_tweet_id, tweets.tweet_id)
    _, casc = np.unique(key, return_inverse=True)
    n_casc = int(casc.max()) + 1 if len(casc) else 0
    user = graph.index_of(tweets.user_id)
    keep = user >= 0
    u = max(graph.n_users, 1)
    nodes = unique(casc.ravel()[keep].astype(np.int64) * u + user[keep])  # sorted by (cascade, user)
    node_casc = nodes // u
    off = np.zeros(n_casc + 1, dtype=np.int64)
    np.cumsum(np.bincount(node_casc, minlength=n_casc), out=off[1:])
    return off, nodes - node_casc * u


@_jit.njit
def _bsearch(a, lo, hi, x):
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@_jit.njit
def _coparticipant_kernel(node_off, node_user, indptr, indices, n_users):
    """Follow edges ``(follower, followee)`` (dense indices, unsorted, possibly repeated across cascades)
    whose two ends are both participants of one cascade.

    Per cascade its users are stamped in ``marks``; per participant the cheaper side is taken, as in the
    forward kernel: scan its friend list testing the stamps (``d`` reads of an array that stays in cache), or
    binary-search each other participant in the sorted friend list (``n log d`` steps, each a likely miss).
    Both sides emit in increasing followee order."""
    marks = np.zeros(n_users, dtype=np.int32)
    cap = 1024
    src = np.empty(cap, dtype=np.int64)
    dst = np.empty(cap, dtype=np.int64)
    m = 0
    for t in range(len(node_off) - 1):
        lo = node_off[t]
        hi = node_off[t + 1]
        n = hi - lo
        stamp = t + 1
        for i in range(lo, hi):
            marks[node_user[i]] = stamp
        for i in range(lo, hi):
            v = node_user[i]
            a = indptr[v]
            b = indptr[v + 1]
            d = b - a
            if d == 0:
                continue
            if m + min(d, n) > cap:
                while m + min(d, n) > cap:
                    cap *= 2
                src2 = np.empty(cap, dtype=np.int64)
                dst2 = np.empty(cap, dtype=np.int64)
                src2[:m] = src[:m]
                dst2[:m] = dst[:m]
                src = src2
                dst = dst2
            steps = 1
            while (16 << steps) < d:
                steps += 1
            if d <= 16 * n * steps:
                for e in range(a, b):
                    f = indices[e]
                    if marks[f] == stamp:
                        src[m] = v
                        dst[m] = f
                        m += 1
            else:
                for j in range(lo, hi):
                    f = node_user[j]
                    k = _bsearch(indices, a, b, f)
                    if k < b and indices[k] == f:
                        src[m] = v
                        dst[m] = f
                        m += 1
    return src[:m].copy(), dst[:m].copy()


def _coparticipant_numpy(node_off, node_user, indptr, indices, n_users):
    """Vectorised twin of the kernel (no numba): every participant's friends, looked up as
    ``cascade * U + friend`` keys in the sorted participant keys, a chunk of participants at a time.
    Costs one ``searchsorted`` per friend of every participant (~23 s for 1M retweets)."""
    u = max(int(n_users), 1)
    n_casc = len(node_off) - 1
    node_casc = np.repeat(np.arange(n_casc, dtype=np.int64), np.diff(node_off))
    keys = node_casc * u + node_user  # sorted: nodes are grouped by cascade and sorted within
    deg_all = np.diff(indptr)[node_user]
    srcs, dsts = [], []
    a = 0
    n = len(node_user)
    budget = 1 << 22  # friends expanded per step
    while a < n:
        b = int(np.searchsorted(np.cumsum(deg_all[a : a + budget]), budget, side="right")) + a
        b = min(max(b, a + 1), n)
        v, d = node_user[a:b], deg_all[a:b]
        rep = np.repeat(np.arange(b - a), d)
        first = np.cumsum(d) - d
        pos = np.arange(len(rep), dtype=np.int64) - first[rep] + indptr[v][rep]
        f = indices[pos].astype(np.int64)
        q = node_casc[a:b][rep] * u + f
        at = np.minimum(np.searchsorted(keys, q), max(len(keys) - 1, 0))
        hit = keys[at] == q
        srcs.append(v[rep[hit]])
        dsts.append(f[hit])
        a = b
    if not srcs:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(srcs), np.concatenate(dsts)


def coparticipant_edges(
    tweets: TweetTable, graph: FollowerGraph, *, use_numba: bool | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(follower_ids, followee_ids)`` (Twitter ids, int64) of the follow edges of ``graph`` whose two ends
    both take part in one cascade of ``tweets``; each edge once, sorted by (follower, followee) dense index.

    ``use_numba``: ``None`` uses the compiled kernel when numba is installed, else the NumPy twin (same
    result; ``False`` forces the twin, the tests compare both)."""
    off, node_user = _cascade_nodes(tweets, graph)
    if use_numba is None:
        use_numba = _jit.HAVE_NUMBA
    if use_numba and not _jit.HAVE_NUMBA:
        raise ValueError("numba is not available here")
    run = _coparticipant_kernel if use_numba else _coparticipant_numpy
    src, dst = run(off, node_user, graph.friends_indptr, graph.friends_indices, graph.n_users)
    u = max(graph.n_users, 1)
    key = unique(src * u + dst)
    src = key // u
    dst = key - src * u
    return graph.user_ids[src], graph.user_ids[dst]


# --- text ------------------------------------------------------------------------------------------------


def v1_created_at(seconds) -> list[str]:
    """Twitter's ``created_at`` (``"Mon Jun 01 00:00:00 +0000 2020"``) of whole epoch seconds (UTC)."""
    global _HMS
    if _HMS is None:
        _HMS = [f"{h:02d}:{m:02d}:{s:02d}" for h in range(24) for m in range(60) for s in range(60)]
    t = np.floor(np.asarray(seconds, dtype=np.float64)).astype(np.int64)
    day, sec = np.divmod(t, 86_400)
    days, inv = np.unique(day, return_inverse=True)
    dates = days.astype("datetime64[D]")
    ymd = [str(x) for x in dates]  # "2020-06-01"
    head, tail = [], []
    for dd, s in zip(days.tolist(), ymd):
        y, mo, dm = s.rsplit("-", 2)
        head.append(f"{_DAYS[(dd + 3) % 7]} {_MONTHS[int(mo) - 1]} {dm} ")
        tail.append(f" +0000 {y}")
    hms = _HMS
    return [head[i] + hms[s] + tail[i] for i, s in zip(inv.ravel().tolist(), sec.tolist())]


def _encoder():
    """``encode(list of dicts) -> bytes`` of compact JSON lines, with the fastest backend here (all three give
    the same bytes for these ASCII-only objects)."""
    from ..formats._json import backend

    name = backend()
    if name == "msgspec":
        import msgspec

        return msgspec.json.Encoder().encode_lines
    if name == "orjson":
        import orjson

        opt = orjson.OPT_APPEND_NEWLINE

        def enc_orjson(items):
            return b"".join([orjson.dumps(x, option=opt) for x in items])

        return enc_orjson

    dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode

    def enc_json(items):
        return "".join([dumps(x) + "\n" for x in items]).encode("utf-8")

    return enc_json


def write_v1_jsonl(path: str | os.PathLike, tweets: TweetTable, *, progress: ProgressFn | bool | None = None) -> dict:
    """Write ``tweets`` as v1.1 JSONL (see the module docstring), in row order; return ``statuses``,
    ``originals``, ``retweets`` and ``bytes``.

    Every retweet's original must be in the table, and times and follower counts must be known."""
    report = make_progress(progress)
    n = len(tweets)
    if n and not (np.all(np.isfinite(tweets.created_at)) and np.all(np.isfinite(tweets.followers_count))):
        raise ValueError("v1 export needs a created_at and followers_count on every row")
    rt = tweets.is_retweet
    orig_rows = np.flatnonzero(~rt)
    orig_ids = tweets.tweet_id[orig_rows]
    by_id = np.argsort(orig_ids, kind="stable")
    target = tweets.retweeted_tweet_id
    pos = np.minimum(np.searchsorted(orig_ids, target, sorter=by_id), max(len(orig_ids) - 1, 0))
    of_row = np.where(rt, by_id[pos] if len(orig_ids) else 0, -1)  # k-th original (row order) a retweet embeds
    if np.any(rt) and (not len(orig_ids) or np.any(orig_ids[of_row[rt]] != target[rt])):
        raise ValueError("v1 export: a retweet's original tweet is missing from the table")
    _, sn_rank = np.unique(tweets.user_id, return_inverse=True)
    sn_rank = sn_rank.ravel()

    def status(rows: np.ndarray) -> list[dict]:
        """The plain status objects (no ``retweeted_status``) of ``rows``."""
        users = [
            {"id_str": str(u), "screen_name": f"user{k}", "followers_count": int(f)}
            for u, k, f in zip(
                tweets.user_id[rows].tolist(), sn_rank[rows].tolist(), tweets.followers_count[rows].tolist()
            )
        ]
        return [
            {"id_str": str(i), "created_at": c, "text": None, "user": us}
            for i, c, us in zip(tweets.tweet_id[rows].tolist(), v1_created_at(tweets.created_at[rows]), users)
        ]

    originals = status(orig_rows)  # one object per original: its own line, and embedded in its retweets
    for k, o in enumerate(originals):
        o["text"] = f"claim #{k}: synthetic status"
    orig_k = np.cumsum(~rt) - 1  # row -> its rank among the originals (meaningful on original rows)
    encode = _encoder()
    size = 0
    with open(path, "wb") as fh:
        for a in range(0, n, _CHUNK):
            b = min(a + _CHUNK, n)
            rows = np.arange(a, b)
            is_rt = rt[a:b]
            retweets = iter(status(rows[is_rt]))
            out = []
            for r, k in zip(of_row[a:b].tolist(), orig_k[a:b].tolist()):
                if r < 0:
                    out.append(originals[k])
                else:
                    o = next(retweets)
                    emb = originals[r]
                    o["text"] = f"RT @{emb['user']['screen_name']}: {emb['text']}"
                    o["retweeted_status"] = emb
                    out.append(o)
            buf = encode(out)
            fh.write(buf)
            size += len(buf)
            report("write: tweets.jsonl", b / n)
    n_orig = len(orig_rows)
    return {"statuses": n, "originals": n_orig, "retweets": n - n_orig, "bytes": size}


def write_follows_csv(path: str | os.PathLike, follower_ids: np.ndarray, followee_ids: np.ndarray) -> int:
    """Write ``follower_id,followee_id`` rows (with that header); return the bytes written."""
    size = 0
    with open(path, "wb") as fh:
        head = b"follower_id,followee_id\n"
        fh.write(head)
        size += len(head)
        for a in range(0, len(follower_ids), _CHUNK):
            fr = follower_ids[a : a + _CHUNK].tolist()
            fe = followee_ids[a : a + _CHUNK].tolist()
            buf = "".join([f"{x},{y}\n" for x, y in zip(fr, fe)]).encode("ascii")
            fh.write(buf)
            size += len(buf)
    return size


def write_v1_folder(
    folder: str | os.PathLike,
    tweets: TweetTable,
    graph: FollowerGraph,
    *,
    progress: ProgressFn | bool | None = None,
) -> dict:
    """Write ``tweets.jsonl`` and ``follows.csv`` (co-participant edges only) into ``folder``.

    Returns ``statuses``, ``originals``, ``retweets``, ``follow_edges_written``, ``tweets_bytes``,
    ``follows_bytes``, ``bytes`` and the seconds spent on each step (``follows_select_seconds``,
    ``tweets_write_seconds``, ``follows_write_seconds``). Each file is written under ``<name>.tmp`` and
    renamed, so a crash never leaves a truncated file under the real name.
    """
    report = make_progress(progress)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    info = _atomic_write(folder / "tweets.jsonl", lambda p: write_v1_jsonl(p, tweets, progress=report))
    t1 = time.perf_counter()
    report("write: follows.csv", 0.0)
    fr, fe = coparticipant_edges(tweets, graph)
    t2 = time.perf_counter()
    follows_bytes = _atomic_write(folder / "follows.csv", lambda p: write_follows_csv(p, fr, fe))
    t3 = time.perf_counter()
    report("write: follows.csv", 1.0)
    return {
        "statuses": info["statuses"],
        "originals": info["originals"],
        "retweets": info["retweets"],
        "follow_edges_written": len(fr),
        "tweets_bytes": info["bytes"],
        "follows_bytes": follows_bytes,
        "bytes": info["bytes"] + follows_bytes,
        "tweets_write_seconds": round(t1 - t0, 3),
        "follows_select_seconds": round(t2 - t1, 3),
        "follows_write_seconds": round(t3 - t2, 3),
    }


def _atomic_write(path: Path, write):
    tmp = path.with_name(path.name + ".tmp")
    try:
        out = write(tmp)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return out
