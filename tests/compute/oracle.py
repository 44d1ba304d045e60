"""Naive, line-by-line transliterations of the thesis' Algorithms 1 and 2 — the reference the property
tests compare our fast kernels against. Slow on purpose; only for small inputs.

Algorithm 1 as printed has no visited set: a node is enqueued once per in-edge found, and BE is a set, so
the repeats only cost time. We keep that.
"""

from __future__ import annotations

from collections import deque


def compute_spread_graph(followers: dict, L: set, p, time: dict, orphans: str = "strict") -> set:
    """Algorithm 1. ``followers[u]`` = N^+(u) in F (users following u). Returns BE as a set of (v, u).

    ``attach`` (docs/measure.md): an unreached retweeter gets (v, p); we attach the earliest unreached one, let the
    BFS continue from it, and repeat — the literal reading of "found the tweet and passed it on".
    """
    BE: set = set()
    reached = {p}
    Q: deque = deque([p])
    while True:
        while Q:  # lines 4-12
            u = Q.popleft()
            for v in followers.get(u, ()):
                if v in L and time[u] < time[v]:
                    Q.append(v)
                    BE.add((v, u))
                    reached.add(v)
        if orphans != "attach":
            return BE
        left = sorted((time[v], v) for v in L if v not in reached)
        if not left:
            return BE
        v = left[0][1]
        BE.add((v, p))
        reached.add(v)
        Q.append(v)


def compute_influence(C: list, BE: set, num_followers: dict, L: set) -> dict:
    """Algorithm 2 over S = (C, BE); edges (u, v) with v receiving u's share."""
    BE = set(BE)
    out = {v: [] for v in C}
    indeg = dict.fromkeys(C, 0)
    for u, v in BE:
        out[u].append(v)
        indeg[v] += 1
    outdeg = {v: len(out[v]) for v in C}
    I = {}
    for v in C:  # lines 2-4
        I[v] = num_followers[v]
    Q: deque = deque()
    for v in C:  # lines 6-10
        if v in L and indeg[v] == 0:
            Q.append(v)
    while Q:  # lines 11-20
        u = Q.popleft()
        for v in out[u]:
            I[v] = I[v] + I[u] / outdeg[u]
            BE.discard((u, v))
            indeg[v] -= 1
            if indeg[v] == 0:
                Q.append(v)
    return I
