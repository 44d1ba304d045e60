"""Flat data structures shared by every phase (thesis §6.2 layout).

Everything is a handful of NumPy arrays with per-cascade offsets, so a batch of many cascades moves to a GPU
(or into a worker process) as a few contiguous buffers and no Python object per node or edge.

* :class:`Cascades` — the participants of many cascades. Cascade ``t`` owns the global node indices
  ``node_offsets[t]:node_offsets[t+1]``; ``publisher[t]`` is the global index of its publisher (sink).
* :class:`FollowerGraph` — the follower graph F in CSR over dense user indices. The primary direction is
  *friends*: row ``i`` lists the users that user ``i`` follows (whom ``i`` could have seen), which is what
  the forward phase needs. The opposite direction (*followers*: edges ``u -> v``, follower to followee) is built on
  demand.
* :class:`SpreadingGraphs` — cascades plus their spreading edges as a flat edge list with per-cascade offsets.
  Edge ``(edge_src[k], edge_dst[k])`` is the thesis' ``(v, u)``: ``dst`` receives ``src``'s share. Indices are
  global node indices into the cascades' arrays. Saved and loaded as the ``.npz`` archive (docs/formats.md).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ._jit import HAVE_NUMBA, njit
from .arrays import sorted_positions, unique

#: what the forward phase does with a retweeter no follower path reaches (docs/measure.md): ``strict`` leaves it
#: isolated (the thesis), ``attach`` adds the edge to the publisher
ORPHAN_POLICIES = ("strict", "attach")

__all__ = [
    "ARCHIVE_KEYS",
    "Cascades",
    "ORPHAN_POLICIES",
    "FollowerGraph",
    "SpreadingGraphs",
    "is_spreading_archive",
    "load_archive",
    "save_archive",
]

#: Keys of the spreading-graph archive (docs/formats.md). ``times`` is optional; the rest are required.
ARCHIVE_KEYS = (
    "node_offsets",
    "user_ids",
    "followers",
    "times",
    "publisher",
    "edge_offsets",
    "edge_src",
    "edge_dst",
    "tweet_ids",
)
_REQUIRED_ARCHIVE_KEYS = tuple(k for k in ARCHIVE_KEYS if k != "times")


def _as(a, dtype) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(a, dtype=dtype))


@dataclass(frozen=True, eq=False)
class Cascades:
    """Participants of ``T`` cascades, ``N`` nodes in all.

    ``times`` are seconds (float64; epoch seconds for real data, any origin for generated data) or ``None``
    when the input carries no times. ``followers`` is n_v (float64). ``unit`` says what n_v counts:
    ``"followers"`` or ``"retweeters"`` (n_v = 1 because follower counts were unknown, docs/measure.md).
    ``labels`` is an optional per-cascade truth label (object array of str or ``None``).
    """

    node_offsets: np.ndarray
    user_ids: np.ndarray
    followers: np.ndarray
    publisher: np.ndarray
    tweet_ids: np.ndarray
    times: np.ndarray | None = None
    unit: str = "followers"
    labels: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "node_offsets", _as(self.node_offsets, np.int64))
        object.__setattr__(self, "user_ids", _as(self.user_ids, np.int64))
        object.__setattr__(self, "followers", _as(self.followers, np.float64))
        object.__setattr__(self, "publisher", _as(self.publisher, np.int64))
        object.__setattr__(self, "tweet_ids", _as(self.tweet_ids, np.int64))
        if self.times is not None:
            object.__setattr__(self, "times", _as(self.times, np.float64))
        if self.unit not in ("followers", "retweeters"):
            raise ValueError(f"unit must be 'followers' or 'retweeters', not {self.unit!r}")
        self.validate()

    @property
    def n_cascades(self) -> int:
        return len(self.node_offsets) - 1

    @property
    def n_nodes(self) -> int:
        return int(self.node_offsets[-1]) if len(self.node_offsets) else 0

    @property
    def sizes(self) -> np.ndarray:
        """Participants per cascade (publisher included)."""
        return np.diff(self.node_offsets)

    def cascade_of_node(self) -> np.ndarray:
        """Cascade index of every node (int64[N])."""
        return np.repeat(np.arange(self.n_cascades, dtype=np.int64), self.sizes)

    def subset(self, which) -> Cascades:
        """A new batch holding only cascades ``which`` (indices or mask; renumbered, order kept)."""
        which = _which(which, self.n_cascades)
        nsz = self.sizes[which]
        node_off = _offsets(nsz)
        nodes = ranges(self.node_offsets[which], nsz)
        return Cascades(
            node_offsets=node_off,
            user_ids=self.user_ids[nodes],
            followers=self.followers[nodes],
            publisher=self.publisher[which] - self.node_offsets[which] + node_off[:-1],
            tweet_ids=self.tweet_ids[which],
            times=None if self.times is None else self.times[nodes],
            unit=self.unit,
            labels=None if self.labels is None else self.labels[which],
        )

    def validate(self) -> None:
        """Raise ``ValueError`` naming the array and the problem when the layout is inconsistent."""
        off = self.node_offsets
        if off.ndim != 1 or len(off) < 1:
            raise ValueError("node_offsets must be a 1-D array of length T+1 >= 1")
        if off[0] != 0 or np.any(np.diff(off) < 0):
            raise ValueError("node_offsets must start at 0 and never decrease")
        n, t = int(off[-1]), len(off) - 1
        for name in ("user_ids", "followers"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"{name} has length {len(getattr(self, name))}, expected N={n}")
        if self.times is not None and len(self.times) != n:
            raise ValueError(f"times has length {len(self.times)}, expected N={n}")
        for name in ("publisher", "tweet_ids"):
            if len(getattr(self, name)) != t:
                raise ValueError(f"{name} has length {len(getattr(self, name))}, expected T={t}")
        if self.labels is not None and len(self.labels) != t:
            raise ValueError(f"labels has length {len(self.labels)}, expected T={t}")
        if t:
            pub = self.publisher
            bad = (pub < off[:-1]) | (pub >= off[1:])
            if np.any(bad):
                k = int(np.flatnonzero(bad)[0])
                raise ValueError(
                    f"publisher[{k}]={int(pub[k])} lies outside cascade {k}'s nodes [{int(off[k])}, {int(off[k + 1])})"
                )


@dataclass(frozen=True, eq=False)
class FollowerGraph:
    """The follower graph in CSR over dense user indices ``0..U-1``.

    ``user_ids`` (int64[U], strictly increasing) maps a dense index to a Twitter user id.
    ``friends_indptr``/``friends_indices``: row ``i`` lists (sorted, no duplicates) the dense indices of the
    users that user ``i`` follows. An edge here is a *follow*: follower ``i`` -> followee ``j``; information
    flows the other way (the thesis' ``j -> i``).
    """

    user_ids: np.ndarray
    friends_indptr: np.ndarray
    friends_indices: np.ndarray
    #: optional (indptr, indices) of the followers direction, for a builder that has it already
    followers_csr: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "user_ids", _as(self.user_ids, np.int64))
        object.__setattr__(self, "friends_indptr", _as(self.friends_indptr, np.int64))
        idx = np.asarray(self.friends_indices)
        if idx.dtype not in (np.int32, np.int64):
            idx = idx.astype(np.int64)
        object.__setattr__(self, "friends_indices", np.ascontiguousarray(idx))
        if len(self.friends_indptr) != len(self.user_ids) + 1:
            raise ValueError("friends_indptr must have length U+1")
        if len(self.friends_indptr) and self.friends_indptr[-1] != len(self.friends_indices):
            raise ValueError("friends_indptr[-1] must equal the number of follow edges")

    @property
    def n_users(self) -> int:
        return len(self.user_ids)

    @property
    def n_edges(self) -> int:
        return len(self.friends_indices)

    @property
    def nbytes(self) -> int:
        return self.user_ids.nbytes + self.friends_indptr.nbytes + self.friends_indices.nbytes

    @classmethod
    def from_edges(cls, follower_ids, followee_ids, user_ids=None) -> FollowerGraph:
        """Build from parallel arrays of Twitter user ids (``follower`` follows ``followee``).

        Self-follows and duplicate edges are dropped. ``user_ids`` optionally adds users with no edges.
        """
        fr = np.asarray(follower_ids, dtype=np.int64).ravel()
        fe = np.asarray(followee_ids, dtype=np.int64).ravel()
        if fr.shape != fe.shape:
            raise ValueError("follower and followee arrays differ in length")
        parts = [fr, fe] if user_ids is None else [fr, fe, np.asarray(user_ids, dtype=np.int64).ravel()]
        uids = unique(np.concatenate(parts)) if sum(len(p) for p in parts) else np.zeros(0, np.int64)
        a = np.searchsorted(uids, fr)
        b = np.searchsorted(uids, fe)
        keep = a != b
        a, b = a[keep], b[keep]
        u = len(uids)
        key = a.astype(np.int64) * max(u, 1) + b
        key = unique(key)  # sorts by (follower, followee) and drops duplicates
        a = key // max(u, 1)
        b = key - a * max(u, 1)
        indptr = np.zeros(u + 1, dtype=np.int64)
        np.cumsum(np.bincount(a, minlength=u), out=indptr[1:])
        idx_dtype = np.int32 if u < 2**31 else np.int64
        return cls(uids, indptr, b.astype(idx_dtype))

    def index_of(self, ids) -> np.ndarray:
        """Dense index of each Twitter user id, ``-1`` where the user is not in the graph."""
        ids = np.asarray(ids, dtype=np.int64)
        if not len(self.user_ids):
            return np.full(ids.shape, -1, dtype=np.int64)
        pos, found = sorted_positions(self.user_ids, ids.ravel())
        return np.where(found, pos, -1).astype(np.int64).reshape(ids.shape)

    def followers(self) -> tuple[np.ndarray, np.ndarray]:
        """CSR of the opposite direction: row ``j`` lists (sorted) the users following ``j``. Cached."""
        if self.followers_csr is None:
            u = self.n_users
            src = np.repeat(np.arange(u, dtype=self.friends_indices.dtype), np.diff(self.friends_indptr))
            order = np.argsort(self.friends_indices, kind="stable")
            indptr = np.zeros(u + 1, dtype=np.int64)
            np.cumsum(np.bincount(self.friends_indices, minlength=u), out=indptr[1:])
            object.__setattr__(self, "followers_csr", (indptr, src[order]))
        return self.followers_csr  # type: ignore[return-value]

    def to_edges(self) -> tuple[np.ndarray, np.ndarray]:
        """(follower_ids, followee_ids) as Twitter user ids."""
        src = np.repeat(np.arange(self.n_users), np.diff(self.friends_indptr))
        return self.user_ids[src], self.user_ids[self.friends_indices]


@dataclass(frozen=True, eq=False)
class SpreadingGraphs:
    """Cascades with their spreading edges (the ``.npz`` archive of docs/formats.md).

    ``orphans`` records the forward phase's orphan policy (``"strict"``/``"attach"``) or ``"given"`` when the
    edges came from the input file.
    """

    cascades: Cascades
    edge_offsets: np.ndarray
    edge_src: np.ndarray
    edge_dst: np.ndarray
    orphans: str = "given"
    #: cascades a GPU twin left undone (too large for the device; they have no edges here): the dispatcher
    #: computes them on the CPU reference and splices them in, so a dispatcher's result never has any
    deferred: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64), repr=False, compare=False)
    #: per cascade, the order in which one sweep through its edge list is a topological order (see
    #: :func:`edge_shapes`); computed on construction, like the thesis' CSR build in data preparation
    shapes: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "edge_offsets", _as(self.edge_offsets, np.int64))
        for name in ("edge_src", "edge_dst"):
            a = np.asarray(getattr(self, name))
            if a.dtype not in (np.int32, np.int64):
                a = a.astype(np.int64)
            object.__setattr__(self, name, np.ascontiguousarray(a))
        object.__setattr__(self, "shapes", self._check_edges())
        # the shapes describe these arrays: freeze them so nothing can change the edges behind the shapes' back
        for name in ("edge_offsets", "edge_src", "edge_dst"):
            getattr(self, name).flags.writeable = False

    # Convenience views of the node arrays -------------------------------------------------------
    @property
    def n_cascades(self) -> int:
        return self.cascades.n_cascades

    @property
    def n_nodes(self) -> int:
        return self.cascades.n_nodes

    @property
    def n_edges(self) -> int:
        return int(self.edge_offsets[-1]) if len(self.edge_offsets) else 0

    @property
    def nbytes(self) -> int:
        c = self.cascades
        arrays = [
            c.node_offsets,
            c.user_ids,
            c.followers,
            c.publisher,
            c.tweet_ids,
            self.edge_offsets,
            self.edge_src,
            self.edge_dst,
        ]
        if c.times is not None:
            arrays.append(c.times)
        return sum(a.nbytes for a in arrays)

    def edges_of(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        """Global (src, dst) arrays of cascade ``t``."""
        a, b = int(self.edge_offsets[t]), int(self.edge_offsets[t + 1])
        return self.edge_src[a:b], self.edge_dst[a:b]

    def validate(self) -> None:
        self._check_edges()

    def _check_edges(self) -> np.ndarray:
        """Raise ``ValueError`` naming the first inconsistency; return the per-cascade :func:`edge_shapes`.

        One pass over the edges does both (with numba): this runs on every construction, and the full RSG
        preset has 440M edges."""
        off = self.edge_offsets
        t = self.cascades.n_cascades
        if len(off) != t + 1:
            raise ValueError(f"edge_offsets has length {len(off)}, expected T+1={t + 1}")
        if off[0] != 0 or np.any(np.diff(off) < 0):
            raise ValueError("edge_offsets must start at 0 and never decrease")
        m = int(off[-1])
        if len(self.edge_src) != m or len(self.edge_dst) != m:
            raise ValueError(f"edge_src/edge_dst must have length M={m}")
        node_off = self.cascades.node_offsets
        if HAVE_NUMBA:
            k, in_dst, shapes = _scan_edges(off, node_off, self.edge_src, self.edge_dst)
            name = "edge_dst" if in_dst else "edge_src"
        else:
            k, name = -1, ""
            for name in ("edge_src", "edge_dst"):
                k = _first_edge_outside_np(off, node_off, getattr(self, name))
                if k >= 0:
                    break
            shapes = None if k >= 0 else edge_shapes(off, self.edge_src, self.edge_dst)
        if k >= 0:
            a = getattr(self, name)
            c = int(np.searchsorted(off, k, side="right") - 1)
            raise ValueError(
                f"{name}[{k}]={int(a[k])} is not a node of cascade {c} ([{int(node_off[c])}, {int(node_off[c + 1])}))"
            )
        return shapes

    def with_edges(self, edge_offsets, edge_src, edge_dst) -> SpreadingGraphs:
        return replace(self, edge_offsets=edge_offsets, edge_src=edge_src, edge_dst=edge_dst)

    def subset(self, which) -> SpreadingGraphs:
        """A new batch holding only cascades ``which`` (indices or mask; renumbered, order kept)."""
        c = self.cascades
        which = _which(which, c.n_cascades)
        sub_c = c.subset(which)
        esz = np.diff(self.edge_offsets)[which]
        edges = ranges(self.edge_offsets[which], esz)
        shift = np.repeat(sub_c.node_offsets[:-1] - c.node_offsets[which], esz).astype(self.edge_src.dtype)
        return SpreadingGraphs(
            sub_c, _offsets(esz), self.edge_src[edges] + shift, self.edge_dst[edges] + shift, orphans=self.orphans
        )


def _first_edge_outside_np(edge_offsets, node_offsets, a, chunk: int = 1 << 22) -> int:
    """First edge endpoint of ``a`` outside its cascade's node range, or -1: the check without numba, in chunks
    of edges so the temporaries stay small."""
    m = len(a)
    for s0 in range(0, m, chunk):
        e = np.arange(s0, min(m, s0 + chunk))
        cas = np.searchsorted(edge_offsets, e, side="right") - 1
        v = a[e]
        bad = (v < node_offsets[cas]) | (v >= node_offsets[cas + 1])
        if bad.any():
            return int(e[np.argmax(bad)])
    return -1


#: :func:`edge_shapes` codes
SHAPE_QUEUE, SHAPE_SWEEP_FORWARD, SHAPE_SWEEP_BACKWARD = 0, 1, 2


def edge_shapes(edge_offsets: np.ndarray, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Per cascade: can one pass through its edge list run the backward phase, and in which direction?

    ``SHAPE_SWEEP_FORWARD`` (1) or ``SHAPE_SWEEP_BACKWARD`` (2) when ``src`` is sorted (either way) and every
    edge points the same way in index order (all ``src < dst`` or all ``src > dst``): then taking the runs of
    equal sources through memory forwards (1) or backwards (2) visits every node after all its in-neighbours.
    ``SHAPE_QUEUE`` (0) otherwise, and for cascades without edges. Our forward phase always emits shape 2 (the
    publisher first, retweeters in time order, edges grouped by retweeter), Algorithm 10 graphs shape 1.
    """
    if HAVE_NUMBA:
        return _scan_edges(edge_offsets, None, src, dst)[2]
    t = len(edge_offsets) - 1
    m = len(src)
    out = np.zeros(t, dtype=np.int8)
    if m == 0:
        return out
    nonempty = np.diff(edge_offsets) > 0
    starts = edge_offsets[:-1][nonempty]
    step = np.diff(src.astype(np.int64), prepend=src[:1].astype(np.int64))
    step[edge_offsets[:-1][nonempty]] = 0  # no step across cascades
    up = src < dst

    def every(x):
        r = np.zeros(t, dtype=bool)
        r[nonempty] = np.logical_and.reduceat(x, starts)
        return r

    inc, dec, all_up, all_down = every(step >= 0), every(step <= 0), every(up), every(~up & (src != dst))
    out[(inc & all_up) | (dec & all_down)] = SHAPE_SWEEP_FORWARD
    out[((inc & all_down) | (dec & all_up)) & (out == 0)] = SHAPE_SWEEP_BACKWARD
    out[~nonempty] = SHAPE_QUEUE
    return out


@njit
def _scan_edges(edge_offsets, node_offsets, src, dst):
    """One pass: (first edge with an endpoint outside its cascade or -1, whether it was the dst, shapes).

    ``node_offsets=None`` skips the range check."""
    t = len(edge_offsets) - 1
    shapes = np.zeros(t, dtype=np.int8)
    for c in range(t):
        a = edge_offsets[c]
        b = edge_offsets[c + 1]
        if b == a:
            continue
        inc = True
        dec = True
        up = True
        down = True
        prev = src[a]
        for e in range(a, b):
            s = src[e]
            d = dst[e]
            if node_offsets is not None:
                lo = node_offsets[c]
                hi = node_offsets[c + 1]
                if s < lo or s >= hi:
                    return e, False, shapes
                if d < lo or d >= hi:
                    return e, True, shapes
            inc &= s >= prev
            dec &= s <= prev
            up &= s < d
            down &= s > d
            prev = s
        if (inc and up) or (dec and down):
            shapes[c] = SHAPE_SWEEP_FORWARD
        elif (inc and down) or (dec and up):
            shapes[c] = SHAPE_SWEEP_BACKWARD
    return -1, False, shapes


def _which(which, n: int) -> np.ndarray:
    which = np.asarray(which)
    if which.dtype == bool:
        if len(which) != n:
            raise ValueError(f"mask has length {len(which)}, expected {n}")
        return np.flatnonzero(which)
    return which.astype(np.int64)


def _offsets(sizes: np.ndarray) -> np.ndarray:
    off = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=off[1:])
    return off


def ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(s, s + l)`` for each pair, vectorised."""
    lengths = np.asarray(lengths, dtype=np.int64)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    rep = np.repeat(np.asarray(starts, dtype=np.int64) - np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths)
    return np.arange(total, dtype=np.int64) + rep


def save_archive(graphs: SpreadingGraphs, path: str | os.PathLike, *, compress: bool = False) -> None:
    """Write the spreading-graph archive (docs/formats.md). ``load_archive`` gives back identical arrays."""
    c = graphs.cascades
    arrays = {
        "node_offsets": c.node_offsets,
        "user_ids": c.user_ids,
        "followers": c.followers,
        "publisher": c.publisher,
        "edge_offsets": graphs.edge_offsets,
        "edge_src": graphs.edge_src,
        "edge_dst": graphs.edge_dst,
        "tweet_ids": c.tweet_ids,
        "unit": np.array(c.unit),
        "orphans": np.array(graphs.orphans),
    }
    if c.times is not None:
        arrays["times"] = c.times
    if c.labels is not None:
        arrays["labels"] = np.array(["" if x is None else str(x) for x in c.labels], dtype=np.str_)
    path = Path(path)
    with open(path, "wb") as fh:  # an open file keeps numpy from appending ".npz" to the name
        (np.savez_compressed if compress else np.savez)(fh, **arrays)


def is_spreading_archive(keys) -> bool:
    return all(k in keys for k in _REQUIRED_ARCHIVE_KEYS)


def load_archive(path: str | os.PathLike, *, mmap: bool = False) -> SpreadingGraphs:
    """Read a spreading-graph archive; a missing or inconsistent array raises ``ValueError`` naming it."""
    path = Path(path)
    with np.load(path, allow_pickle=False, mmap_mode="r" if mmap else None) as z:
        missing = [k for k in _REQUIRED_ARCHIVE_KEYS if k not in z.files]
        if missing:
            raise ValueError(f"{path}: not a spreading-graph archive, missing array(s) {', '.join(missing)}")
        get = {k: z[k] for k in z.files}
    labels = get.get("labels")
    if labels is not None:
        labels = np.array([None if s == "" else str(s) for s in labels.tolist()], dtype=object)
    unit = str(get["unit"]) if "unit" in get else "followers"
    orphans = str(get["orphans"]) if "orphans" in get else "given"
    try:
        cascades = Cascades(
            node_offsets=get["node_offsets"],
            user_ids=get["user_ids"],
            followers=get["followers"],
            publisher=get["publisher"],
            tweet_ids=get["tweet_ids"],
            times=get.get("times"),
            unit=unit,
            labels=labels,
        )
        return SpreadingGraphs(cascades, get["edge_offsets"], get["edge_src"], get["edge_dst"], orphans=orphans)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
