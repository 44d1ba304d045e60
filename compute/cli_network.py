"""``python -m compute network``: one analysis of the follower or interaction graph (docs/network.md), its rows
as a table, CSV or JSON. The parser's options are in :func:`compute.cli.build_parser`."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .progress import Progress

if TYPE_CHECKING:
    import numpy as np

__all__ = ["network"]


def _network_graph(args):
    """The graph ``--graph`` names, from the inputs as ``rank`` reads them: follows from a collection, follows
    files, ``--follows`` and cascade-tree folders (one graph over all trees); interactions from the retweets
    (retweeter -> author of the original), or the edges of given spreading graphs (tudataset / .npz)."""
    import numpy as np

    from .formats import read_many
    from .graphs import follower_graph, graph_from_edges, interaction_graph
    from .tables import NO_TWEET

    notes: list[str] = []
    res = read_many([Path(p) for p in args.inputs], format=args.format)
    extra = read_many([Path(args.follows)], format="auto") if args.follows else None
    if args.graph == "follows":
        graphs = [r.follower_graph for r in (res, extra) if r is not None and r.follower_graph is not None]
        tables = [r.follows for r in (res, extra) if r is not None and r.follows is not None and len(r.follows)]
        if not graphs and not tables:
            raise ValueError("the input holds no follower graph (give follows, a collection, or --follows FILE)")
        if len(graphs) == 1 and not tables:
            return follower_graph(graphs[0]), notes
        src = [t.follower_id for t in tables] + [fg.to_edges()[0] for fg in graphs]
        dst = [t.followee_id for t in tables] + [fg.to_edges()[1] for fg in graphs]
        ids = [fg.user_ids for fg in graphs]
        return graph_from_edges(np.concatenate(src), np.concatenate(dst), ids=np.concatenate([[], *ids])), notes
    if res.graphs is not None:
        sg = res.graphs
        users = sg.cascades.user_ids
        return interaction_graph([], [], spreading_src=users[sg.edge_src], spreading_dst=users[sg.edge_dst]), notes
    t = res.tweets
    if t is None or not len(t):
        raise ValueError("the input holds no tweets to build the interaction graph from")
    order = np.argsort(t.tweet_id, kind="stable")
    rt = np.flatnonzero(t.retweeted_tweet_id != NO_TWEET)
    pos = np.minimum(np.searchsorted(t.tweet_id[order], t.retweeted_tweet_id[rt]), len(order) - 1)
    found = t.tweet_id[order][pos] == t.retweeted_tweet_id[rt]
    if not found.all():
        notes.append(f"{int((~found).sum()):,} retweet(s) of tweets not in the input have no known author: left out")
    authors = t.user_id[order][pos[found]]
    return interaction_graph(t.user_id[rt][found], authors), notes


def network(args) -> int:
    if args.top < 0:
        raise ValueError(f"--top must be >= 0 (0: all), not {args.top}")
    if args.samples < 0:
        raise ValueError(f"--samples must be >= 0 (0: exact), not {args.samples}")
    if args.seed < 0:
        raise ValueError(f"--seed must be >= 0, not {args.seed}")
    if args.depth < 0:
        raise ValueError(f"--depth must be >= 0, not {args.depth}")
    if args.analysis == "neighbourhood" and args.account is None:
        raise ValueError("--analysis neighbourhood needs --account ID")
    if args.exact:
        args.samples = 0
    with Progress(f"network {args.analysis}", quiet=args.quiet) as progress:
        ids, value, extra, info, notes = _network_values(args, progress)
    rows = _network_rows(ids, value, extra, args.top, ascending=args.analysis == "communities")
    if not args.quiet:
        for line in info:
            print(line, file=sys.stderr)
        for note in notes:
            print(f"note: {note}", file=sys.stderr)
    out = sys.stdout
    if args.output == "json":
        json.dump(rows, out, indent=1)
        out.write("\n")
    elif args.output == "csv":
        w = csv.DictWriter(out, fieldnames=["user_id", "value", *extra], lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    else:
        out.write(_network_table(rows, ["user_id", "value", *extra]))
    return 0


def _network_values(args, progress: Progress):
    """(ids, value, extra columns, summary lines, notes) of ``args.analysis`` over the graph ``args`` names."""
    from .algorithms import network as net

    g, notes = _network_graph(args)
    info = [f"{args.graph} graph: {g.n_nodes:,} accounts, {g.n_edges:,} edges"]
    b = args.backend
    a = args.analysis
    extra: dict[str, np.ndarray] = {}
    progress.stage(f"computing {a}")
    if a == "degrees":
        d = net.degrees(g, backend=b)
        ids, value = g.ids, d.in_degree + d.out_degree
        extra = {"in": d.in_degree, "out": d.out_degree}
        for name, vec in (("in", d.in_degree), ("out", d.out_degree)):
            s = net.degree_summary(vec)
            info.append(f"{name}-degree: mean {s['mean']:.3f}, variance {s['variance']:.3f}, max {s['max']:,}")
    elif a in ("components", "scc"):
        c = net.components(g, backend=b) if a == "components" else net.strong_components(g, backend=b)
        ids, value = g.ids, c.sizes[c.labels]
        extra = {"component": c.labels}
        info.append(_sizes_line("weak" if a == "components" else "strong", c.sizes))
    elif a == "kcore":
        ids, value = g.ids, net.core_numbers(g, backend=b)
        info.append(f"max core number {int(value.max()) if len(value) else 0}")
    elif a == "clustering":
        c = net.clustering(g, backend=b)
        ids, value = g.ids, c.local
        extra = {"triangles": c.triangles}
        info.append(f"transitivity {c.transitivity:.6g}; {int(c.triangles.sum()) // 3:,} triangles")
    elif a == "betweenness":
        ids, value = g.ids, _betweenness(g, args.samples, args.seed, b, progress, notes)
    elif a == "communities":
        from .algorithms.communities import communities

        c = communities(g, seed=args.seed, resolution=args.resolution, backend=b)
        ids, value = g.ids, c.labels
        extra = {"size": c.sizes[c.labels - 1]}
        info.append(
            f"modularity {c.modularity:.6f} (resolution {c.resolution:g}, seed {c.seed}) on the undirected simple view"
        )
        info.append(_sizes_line("", c.sizes, noun="communities"))
    elif a == "conversations":
        c = net.conversations(g, backend=b)
        ids, value = c.graph.ids, c.graph.out_degree
        extra = {"component": c.components.labels}
        info.append(
            f"conversations: {c.nodes_after:,} of {c.nodes_before:,} accounts, {c.edges_after:,} of "
            f"{c.edges_before:,} edges (reciprocated, both directions counted)"
        )
        info.append(_sizes_line("conversation", c.components.sizes))
    else:
        node = int(g.index_of([args.account])[0])
        if node < 0:
            raise ValueError(f"--account {args.account}: not in the {args.graph} graph")
        r = net.neighbourhood(g, node, depth=args.depth, direction=args.direction, backend=b)
        ids, value = r.graph.ids, r.graph.in_degree + r.graph.out_degree
        extra = {"distance": r.distance}
        info.append(f"{r.graph.n_nodes:,} accounts within {args.depth} hop(s) ({args.direction}), value = degree there")
    return ids, value, extra, info, notes


def _betweenness(g, samples: int, seed: int, backend: str, progress: Progress, notes: list[str]) -> np.ndarray:
    """The engine's ``betweenness(g, samples=, seed=)`` computed a wave of source blocks at a time, so the
    progress line can count the sources done: whole blocks, added in any order, give the same bits
    (:func:`compute.algorithms.network.betweenness_partial`)."""
    import os

    import numpy as np

    from .algorithms import network as net
    from .graphs import SOURCE_BLOCK, betweenness_plan, undirected

    u = undirected(g)
    plan = betweenness_plan(u, samples, seed)
    notes.extend(plan.notes)
    n_src = len(plan.sources)
    # a wave fills every CPU thread; at most ~100 waves, so a GPU gets large launches and the loop stays cheap
    wave = SOURCE_BLOCK * max(os.cpu_count() or 1, -(-n_src // (100 * SOURCE_BLOCK)))
    values = np.zeros(u.n_nodes, dtype=np.float64)
    progress.stage("computing betweenness", total=n_src, unit="sources")
    for lo in range(0, n_src, wave):
        values += net.betweenness_partial(u, plan.sources[lo : lo + wave], plan.scale[lo : lo + wave], backend=backend)
        progress.advance(min(wave, n_src - lo))
    return values


def _sizes_line(kind: str, sizes: np.ndarray, noun: str = "component(s)") -> str:
    shown = ", ".join(f"{int(x):,}" for x in sizes[:20])
    more = f", ... ({len(sizes) - 20:,} more)" if len(sizes) > 20 else ""
    return f"{len(sizes):,} {kind + ' ' if kind else ''}{noun}, sizes: {shown}{more}"


def _network_rows(ids: np.ndarray, value: np.ndarray, extra: dict, top: int, ascending: bool = False) -> list[dict]:
    """Rows sorted by value descending (``ascending``: ascending, as community numbers), then user id; ids as
    strings (JSON loses digits of large ints)."""
    import numpy as np

    key = np.asarray(value, dtype=np.float64)
    order = np.lexsort((ids, key if ascending else -key))
    if top:
        order = order[:top]
    as_py = float if np.asarray(value).dtype.kind == "f" else int
    rows = []
    for i in order:
        row = {"user_id": str(int(ids[i])), "value": as_py(value[i])}
        for k, vec in extra.items():
            row[k] = int(vec[i])
        rows.append(row)
    return rows


def _network_table(rows: list[dict], cols: list[str]) -> str:
    cells = [
        [str(i + 1)] + [f"{r[c]:.6g}" if isinstance(r[c], float) else str(r[c]) for c in cols]
        for i, r in enumerate(rows)
    ]
    head = ["rank", *cols]
    widths = [max([len(h)] + [len(row[j]) for row in cells]) for j, h in enumerate(head)]
    fmt = "  ".join(f"{{:{'<' if h == 'user_id' else '>'}{w}}}" for h, w in zip(head, widths))
    lines = [fmt.format(*head)] + [fmt.format(*row) for row in cells]
    if not cells:
        lines.append("(no accounts)")
    return "\n".join(lines) + "\n"
