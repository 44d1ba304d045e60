"""IMGPU's bottom-up traversal on the device (Liu et al., Alg. 2): :func:`imgpu_device`, which the GPU twin's
``influence_max(method="imgpu")`` (:mod:`compute.gpu.influence_max`) runs. The R live-edge snapshots as one
disjoint union (the CPU reference's coins), SCCs by trimming, min-label propagation and a backward closure (named
by their smallest node, the reference's canonical numbering), the condensation and its levels, then per round a
level-by-level sweep of every snapshot: merged reach lists by one sort/unique of (component, entry) keys per
level, or the reference's bottom-k sketches. docs/influence_max.md says what is equal to the CPU and when.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import cupy as cp
import numpy as np

from ..influence_model import EDGE_SALT, GOLDEN, STREAM_SNAPSHOTS, ICModel, base_key, mix64
from ._device import memory_budget, set_of

#: reach-list entries one snapshot may use before it switches to sketches (the CPU reference's EXACT_ENTRIES)
EXACT_ENTRIES = int(os.environ.get("SPREADWATCH_IMGPU_EXACT_ENTRIES", 1 << 25))
#: entries of a bottom-k reachability sketch (the reference's SKETCH_K)
SKETCH_K = 64

_U = np.uint64


def _mix64_dev(z: cp.ndarray) -> cp.ndarray:
    z = (z ^ (z >> _U(30))) * _U(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> _U(27))) * _U(0x94D049BB133111EB)
    return z ^ (z >> _U(31))


def _expand(lens: cp.ndarray) -> tuple[cp.ndarray, cp.ndarray]:
    """For segments of ``lens`` entries laid end to end: each entry's segment and its offset in it."""
    if len(lens) == 0:
        return cp.zeros(0, cp.int64), cp.zeros(0, cp.int64)
    ends = cp.cumsum(lens)
    total = int(ends[-1])
    j = cp.arange(total, dtype=cp.int64)
    seg = cp.searchsorted(ends, j, side="right")
    return seg, j - (ends[seg] - lens[seg])


def _lower_to_min(a: cp.ndarray, idx: cp.ndarray, v: cp.ndarray, span: int) -> None:
    """``a[i] = min(a[i], every v at i)`` for values below ``span`` (a sort of packed (index, value) keys: the
    first key of each index holds its smallest value)."""
    keys = cp.sort(idx * span + v)
    at = keys // span
    first = cp.ones(len(keys), dtype=cp.bool_)
    first[1:] = at[1:] != at[:-1]
    at, low = at[first], keys[first] % span
    a[at] = cp.minimum(a[at], low)


def _scc_min_labels(size: int, a: cp.ndarray, b: cp.ndarray) -> cp.ndarray:
    """Every node's strongly connected component, named by its smallest node, in the graph of edges a -> b.
    Trimming (a node with no live edge in or out is a component alone) until nothing changes, then forward
    min-label propagation: the nodes whose label is themselves are the smallest of their components, and their
    components are what reaches them back among the nodes of their label; those are removed and the rest
    repeats."""
    label = cp.arange(size, dtype=cp.int64)
    active = cp.ones(size, dtype=cp.bool_)
    idx = cp.arange(size, dtype=cp.int64)
    while len(a):
        while True:
            keep = active[a] & active[b]
            a, b = a[keep], b[keep]
            dead = active & ((cp.bincount(b, minlength=size) == 0) | (cp.bincount(a, minlength=size) == 0))
            if not bool(dead.any()):
                break
            active &= ~dead
        if not len(a):
            break
        color = cp.where(active, idx, size)
        while True:
            cand = color[a]
            upd = cand < color[b]
            if not bool(upd.any()):
                break
            _lower_to_min(color, b[upd], cand[upd], size + 1)
        done = active & (color == idx)
        while True:
            grow = (color[a] == color[b]) & done[b] & ~done[a]
            if not bool(grow.any()):
                break
            done[a[grow]] = True
        label[done] = color[done]
        active &= ~done
    return label


def _imgpu_snapshots(model: ICModel, dev: dict, snapshots: int, seed: int) -> dict:
    """The R live-edge snapshots (the CPU's coins), condensed, as one disjoint union: node v of snapshot r is
    r * n + v; components are numbered per snapshot by their smallest node (the reference's canonical labels)
    and laid out snapshot after snapshot; the DAG (influence direction) in CSR, every component's level."""
    g = model.graph
    n, m = g.n_nodes, g.n_edges
    base = base_key(seed, STREAM_SNAPSHOTS)
    e1 = (cp.arange(m, dtype=cp.uint64) + _U(1)) * _U(EDGE_SALT)
    thr = dev["thr"] if not model.uniform else dev["thr"][0]
    followee = dev["indices"].astype(cp.int64)
    follower = set_of(dev["indptr"], m)
    a_parts, b_parts = [], []
    for r in range(snapshots):
        key = _U(mix64((base + (r + 1) * GOLDEN) & 0xFFFFFFFFFFFFFFFF))
        live = (_mix64_dev(e1 ^ key) >> _U(32)) < thr
        a_parts.append(followee[live] + r * n)  # influence: followee -> follower
        b_parts.append(follower[live] + r * n)
    a = cp.concatenate(a_parts) if a_parts else cp.zeros(0, cp.int64)
    b = cp.concatenate(b_parts) if b_parts else cp.zeros(0, cp.int64)
    del a_parts, b_parts
    size = snapshots * n
    label = _scc_min_labels(size, a, b)
    roots = cp.flatnonzero(label == cp.arange(size, dtype=cp.int64))
    comp = cp.searchsorted(roots, label)
    nc = len(roots)
    comp_off = cp.searchsorted(roots, cp.arange(snapshots + 1, dtype=cp.int64) * n).get()
    w = cp.asarray(model.weights, dtype=cp.float64)
    cw = cp.bincount(comp, weights=w[cp.arange(size, dtype=cp.int64) % n], minlength=nc)
    ca, cb = comp[a], comp[b]
    keep = ca != cb
    keys = cp.unique(ca[keep] * nc + cb[keep])
    dag_src, dag_dst = keys // nc, keys % nc
    dag_ptr = cp.zeros(nc + 1, dtype=cp.int64)
    dag_ptr[1:] = cp.cumsum(cp.bincount(dag_src, minlength=nc))
    # levels (sinks 0, else 1 + the highest child's), level-synchronously from the sinks
    order = cp.argsort(dag_dst * nc + dag_src)
    parents = dag_src[order]
    par_ptr = cp.zeros(nc + 1, dtype=cp.int64)
    par_ptr[1:] = cp.cumsum(cp.bincount(dag_dst, minlength=nc))
    pending = cp.diff(dag_ptr)
    level = cp.zeros(nc, dtype=cp.int64)
    frontier = cp.flatnonzero(pending == 0)
    depth = 0
    while len(frontier):
        seg, off = _expand(par_ptr[frontier + 1] - par_ptr[frontier])
        p = parents[par_ptr[frontier][seg] + off]
        pending -= cp.bincount(p, minlength=nc)
        cand = cp.unique(p)
        frontier = cand[pending[cand] == 0]
        depth += 1
        level[frontier] = depth
    by_level = cp.argsort(level * nc + cp.arange(nc, dtype=cp.int64))
    level_ptr = cp.searchsorted(level[by_level], cp.arange(depth + 2, dtype=cp.int64)).get()
    return {
        "comp": comp.reshape(snapshots, n),
        "cw": cw,
        "nc": nc,
        "comp_off": comp_off,
        "dag_ptr": dag_ptr,
        "dag_idx": dag_dst,
        "by_level": by_level,
        "level_ptr": level_ptr,
        "sink": cp.diff(dag_ptr) == 0,
        "snap_of": cp.searchsorted(cp.asarray(comp_off[1:]), cp.arange(nc, dtype=cp.int64), side="right"),
    }


def _children(s: dict, cs: cp.ndarray, covered: cp.ndarray) -> tuple[cp.ndarray, cp.ndarray]:
    """(position in ``cs`` of the parent, child) for every uncovered child of the components ``cs``."""
    ptr = s["dag_ptr"]
    seg, off = _expand(ptr[cs + 1] - ptr[cs])
    ch = s["dag_idx"][ptr[cs][seg] + off]
    keep = ~covered[ch]
    return seg[keep], ch[keep]


def _reach_exact_group(
    s: dict, covered: cp.ndarray, snaps: np.ndarray, budget: int
) -> tuple[cp.ndarray, list, np.ndarray]:
    """Exact reach (IMGPU's eq. 1, overlap() by merged lists) of every uncovered component of the snapshots
    ``snaps``, level by level: a component's list is the union of itself and its uncovered children's lists (one
    sort and unique of (parent, entry) keys per level; a sink, level 0, keeps no list and counts as itself).
    Returns (reach over all components, the snapshots whose lists would pass ``budget`` entries by the
    reference's order-free count (their reach is left 0), that count per snapshot)."""
    nc = s["nc"]
    reach = cp.zeros(nc, dtype=cp.float64)
    in_group = cp.zeros(len(s["comp_off"]) - 1, dtype=cp.bool_)
    in_group[cp.asarray(snaps)] = True
    needed = cp.zeros(len(in_group), dtype=cp.int64)
    lstart = cp.full(nc, -1, dtype=cp.int64)
    lsize = cp.zeros(nc, dtype=cp.int64)
    pool = cp.empty(1 << 16, dtype=cp.int64)
    pos = 0
    over = np.zeros(0, dtype=np.int64)
    lp = s["level_ptr"]
    for lev in range(len(lp) - 1):
        cs = s["by_level"][lp[lev] : lp[lev + 1]]
        cs = cs[in_group[s["snap_of"][cs]] & ~covered[cs]]
        if not len(cs):
            continue
        if lev == 0:  # the sinks (most components at small p): their reach is their weight, their list themselves
            reach[cs] = s["cw"][cs]
            lsize[cs] = 1
            continue
        par, ch = _children(s, cs, covered)
        child = cp.bincount(par, weights=lsize[ch].astype(cp.float64), minlength=len(cs))
        need = cp.where(s["sink"][cs], 0, 1 + child.astype(cp.int64))
        needed += cp.bincount(s["snap_of"][cs], weights=need.astype(cp.float64), minlength=len(in_group)).astype(
            cp.int64
        )
        now_over = in_group & (needed > budget)
        if bool(now_over.any()):
            over = np.union1d(over, cp.flatnonzero(now_over).get())
            in_group &= ~now_over
            ok = in_group[s["snap_of"][cs]]
            remap = cp.cumsum(ok) - 1
            cs = cs[ok]
            keep = ok[par]
            par, ch = remap[par[keep]], ch[keep]
            if not len(cs):
                continue
        seg, off = _expand(lsize[ch])
        at = lstart[ch][seg]
        ent = cp.where(at < 0, ch[seg], pool[cp.maximum(at + off, 0)])  # a sink child keeps no list: itself
        keys = cp.concatenate([cs * nc + cs, cs[par[seg]] * nc + ent])
        uniq = cp.unique(keys)
        upar, uent = uniq // nc, uniq % nc
        count = len(uniq)
        if pos + count > len(pool):
            bigger = cp.empty(max(2 * len(pool), pos + count), dtype=cp.int64)
            bigger[:pos] = pool[:pos]
            pool = bigger
        pool[pos : pos + count] = uent
        first = cp.searchsorted(upar, cs)
        lstart[cs] = pos + first
        lsize[cs] = cp.diff(cp.concatenate([first, cp.asarray([count], dtype=cp.int64)]))
        pos += count
        reach[cs] = cp.bincount(cp.searchsorted(cs, upar), weights=s["cw"][uent], minlength=len(cs))
    return reach, over.tolist(), needed.get()


def _reach_sketch(s: dict, covered: cp.ndarray, snaps: list, ranks: cp.ndarray, kk: int) -> cp.ndarray:
    """The reference's bottom-kk sketches (Cohen 1997) for the snapshots ``snaps``, level by level: a component's
    sketch is the kk smallest ranks among its own (if it weighs anything) and its uncovered children's, each
    component once; a reach of fewer than kk components is summed, a larger one estimated by rank conditioning.
    Sums run entry by entry in rank order, as the reference's do."""
    nc = s["nc"]
    reach = cp.zeros(nc, dtype=cp.float64)
    in_set = cp.zeros(len(s["comp_off"]) - 1, dtype=cp.bool_)
    in_set[cp.asarray(np.asarray(snaps, dtype=np.int64))] = True
    members = cp.flatnonzero(in_set[s["snap_of"]])
    loc = cp.full(nc, -1, dtype=cp.int64)
    loc[members] = cp.arange(len(members), dtype=cp.int64)
    sk_rank = cp.full((len(members), kk), np.inf)
    sk_id = cp.full((len(members), kk), -1, dtype=cp.int64)
    cnt = cp.zeros(len(members), dtype=cp.int64)
    cw = s["cw"]
    lp = s["level_ptr"]
    for lev in range(len(lp) - 1):
        cs = s["by_level"][lp[lev] : lp[lev + 1]]
        cs = cs[in_set[s["snap_of"][cs]] & ~covered[cs]]
        if not len(cs):
            continue
        par, ch = _children(s, cs, covered)
        lch = loc[ch]
        seg, off = _expand(cnt[lch])
        own = cp.flatnonzero(cw[cs] > 0)
        e_par = cp.concatenate([own, par[seg]])
        e_id = cp.concatenate([cs[own], sk_id[lch[seg], off]])
        e_rank = cp.concatenate([ranks[cs[own]], sk_rank[lch[seg], off]])
        lcs = loc[cs]
        if len(e_par):
            rank_pos = cp.empty(len(e_rank), dtype=cp.int64)
            rank_pos[cp.argsort(e_rank)] = cp.arange(len(e_rank), dtype=cp.int64)
            o = cp.argsort(e_par * len(e_rank) + rank_pos)
            e_par, e_id, e_rank = e_par[o], e_id[o], e_rank[o]
            dup = cp.zeros(len(e_par), dtype=cp.bool_)
            dup[1:] = (e_par[1:] == e_par[:-1]) & (e_id[1:] == e_id[:-1])
            e_par, e_id, e_rank = e_par[~dup], e_id[~dup], e_rank[~dup]
            slot = cp.arange(len(e_par), dtype=cp.int64) - cp.searchsorted(e_par, e_par)
            take = slot < kk
            rows = lcs[e_par[take]]
            sk_rank[rows, slot[take]] = e_rank[take]
            sk_id[rows, slot[take]] = e_id[take]
            cnt[lcs] = cp.minimum(cp.bincount(e_par, minlength=len(cs)), kk)
        took = cnt[lcs]
        ids = sk_id[lcs]
        w = cp.where(ids >= 0, cw[cp.maximum(ids, 0)], 0.0)
        full = took == kk
        tau = cp.where(full, sk_rank[lcs, kk - 1], 0.0)
        total = cp.zeros(len(cs), dtype=cp.float64)
        for z in range(kk):  # entry by entry, the reference's order of summation
            wz = w[:, z]
            if z < kk - 1:
                den = cp.where(full & (wz > 0), -cp.expm1(-wz * tau), 1.0)
                term = cp.where(full, wz / den, wz)
            else:
                term = cp.where(full, 0.0, wz)
            total += cp.where(z < took, term, 0.0)
        reach[cs] = total
    return reach


def _cover_dev(s: dict, covered: cp.ndarray, start: cp.ndarray) -> None:
    frontier = cp.unique(start[~covered[start]])
    while len(frontier):
        covered[frontier] = True
        _, ch = _children(s, frontier, covered)
        frontier = cp.unique(ch)


def imgpu_device(
    model: ICModel,
    device_model: Callable[[ICModel], dict],
    *,
    k: int,
    snapshots: int,
    seed: int,
    stop: Callable[[], object] | None = None,
) -> tuple[np.ndarray, np.ndarray, list]:
    """IMGPU (Liu et al., Alg. 2) on the device, the reference's ``imgpu_cpu`` step for step: the same snapshots
    (counter-based coins), the same canonical components, the same reach by level, the same picks.
    ``device_model`` is the twin's (the model's arrays on the device), called once the graph has a node. ``stop``
    is called between rounds (it may raise)."""
    n = model.n_nodes
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0), [f"imgpu: {snapshots} live-edge snapshots of an empty graph"]
    dev = device_model(model)
    s = _imgpu_snapshots(model, dev, snapshots, seed)
    nc = s["nc"]
    covered = cp.zeros(nc, dtype=cp.bool_)
    ranks = cp.zeros(nc, dtype=cp.float64)
    sketched: list[int] = []
    off = s["comp_off"]
    # snapshots swept together: their lists (8 bytes an entry, about 6 with a level's sort and unique) must fit the
    # device; a snapshot's count only shrinks as the picks cover more, so the last round's count bounds this one's
    room = memory_budget() // 48
    entries = np.full(snapshots, EXACT_ENTRIES, dtype=np.int64)
    chosen: list[int] = []
    gains: list[float] = []
    for _ in range(min(k, n)):
        if stop is not None:
            stop()
        reach = cp.zeros(nc, dtype=cp.float64)
        exact = [r for r in range(snapshots) if r not in sketched]
        groups: list[list[int]] = []
        used = room
        for r in exact:
            if used + entries[r] > room and (not groups or groups[-1]):
                groups.append([])
                used = 0
            groups[-1].append(r)
            used += entries[r]
        for grp in groups:
            part, over, needed = _reach_exact_group(s, covered, np.asarray(grp), EXACT_ENTRIES)
            entries[grp] = np.minimum(needed[grp], EXACT_ENTRIES)
            reach += part
            for r in over:
                sketched.append(int(r))
                cw_r = s["cw"][off[r] : off[r + 1]].get()
                rng = np.random.default_rng([seed, int(r)])
                with np.errstate(divide="ignore"):
                    ranks[off[r] : off[r + 1]] = cp.asarray(rng.exponential(size=len(cw_r)) / cw_r)
        if sketched:
            reach += _reach_sketch(s, covered, sketched, ranks, SKETCH_K)
        comp = s["comp"]
        gain = cp.where(covered[comp], 0.0, reach[comp])
        total = cp.zeros(n, dtype=cp.float64)
        for r in range(snapshots):  # snapshot by snapshot, the reference's order of summation
            total += gain[r]
        if chosen:
            total[cp.asarray(chosen)] = -1.0
        best = int(cp.argmax(total))
        chosen.append(best)
        gains.append(max(float(total[best]), 0.0) / snapshots)
        _cover_dev(s, covered, comp[:, best])
    notes = [
        f"imgpu: {snapshots} live-edge snapshots; overlap() exact in {snapshots - len(sketched)}, "
        f"bottom-{SKETCH_K} sketches in {len(sketched)}"
    ]
    return np.asarray(chosen, dtype=np.int64), np.asarray(gains), notes
