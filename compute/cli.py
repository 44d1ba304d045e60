"""``python -m compute``: rank, network, wtf, influence-max, coordination, stream, generate, bench.

Exit codes: 0 success, 2 bad input or usage (the message names the file, line and field), 1 anything else.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

from .cli_coordination import coordination
from .cli_network import network
from .progress import Progress

__all__ = ["main", "build_parser"]

NETWORK_ANALYSES = (
    "degrees",
    "components",
    "scc",
    "kcore",
    "clustering",
    "betweenness",
    "conversations",
    "neighbourhood",
    "communities",
)


def build_parser() -> argparse.ArgumentParser:
    from .algorithms.coordination import (
        COORDINATION_METHODS,
        DEFAULT_MIN_COUNT,
        DEFAULT_MIN_RETWEETS,
        DEFAULT_THRESHOLD,
        DEFAULT_WINDOW,
    )
    from .formats.registry import AUTO, FORMATS  # here: the formats pull in numba, which `import compute.cli` need not
    from .graphs import DEFAULT_BETWEENNESS_SAMPLES
    from .results import DEFAULT_EPSILON, DEFAULT_WALKS, WTF_METHODS

    p = argparse.ArgumentParser(prog="python -m compute", description="Spreadwatch influence engine")
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("rank", help="rank users by influence over the cascades in INPUT files")
    r.add_argument("inputs", nargs="+", metavar="INPUT", help="tweet files, a trees folder, TUDataset or .npz")
    r.add_argument("--format", choices=(AUTO, *FORMATS), default=AUTO, help="input format (default: detect)")
    r.add_argument("--follows", metavar="FILE", help="follower graph: follows CSV / edge list / collection .npz")
    r.add_argument("--aggregate", choices=("total", "mean", "participation"), default="total")
    r.add_argument("--publisher", type=int, metavar="ID", help="only cascades of this publisher (user id)")
    r.add_argument("--by-publisher", action="store_true", help="one ranking per publisher")
    r.add_argument("--bucket", choices=("day", "week", "month"), help="one ranking per time bucket (UTC)")
    r.add_argument("--orphans", choices=("strict", "attach"), default="strict", help="orphan policy (docs/measure.md)")
    r.add_argument("--top", type=int, default=20, metavar="N", help="rows per ranking (0: all; default 20)")
    r.add_argument("--backend", choices=("auto", "cpu", "gpu"), default="auto")
    r.add_argument("--output", choices=("table", "csv", "json"), default="table")
    r.add_argument("--skip-bad", action="store_true", help="skip bad records (counted and listed) instead of stopping")
    r.add_argument("--max-shown", type=int, default=20, metavar="N", help="bad records listed with --skip-bad")
    r.add_argument("--quiet", action="store_true", help="no progress bar or notes on stderr")

    n = sub.add_parser(
        "network",
        help="network analytics (GraphCT) of the follower or interaction graph in INPUT files",
        description="Per-account values as rows sorted by value descending, then user id (docs/network.md).",
    )
    n.add_argument("inputs", nargs="+", metavar="INPUT", help="tweet files, follows, a trees folder or a collection")
    n.add_argument("--format", choices=(AUTO, *FORMATS), default=AUTO, help="input format (default: detect)")
    n.add_argument("--follows", metavar="FILE", help="follower graph: follows CSV / edge list / collection .npz")
    n.add_argument(
        "--graph",
        choices=("follows", "interactions"),
        default="follows",
        help="follows: follower -> followee; interactions: retweeter -> retweeted author, weighted (default follows)",
    )
    n.add_argument("--analysis", required=True, choices=NETWORK_ANALYSES)
    between = n.add_mutually_exclusive_group()
    between.add_argument(
        "--samples",
        type=int,
        default=DEFAULT_BETWEENNESS_SAMPLES,
        metavar="K",
        help="betweenness: sources sampled per component, an unbiased estimate (default "
        f"{DEFAULT_BETWEENNESS_SAMPLES}, as the web app; 0: exact)",
    )
    between.add_argument(
        "--exact", action="store_true", help="betweenness: every account a source (exact, = --samples 0; slow)"
    )
    n.add_argument(
        "--seed", type=int, default=0, metavar="S", help="seed of the betweenness sample or of Leiden (default 0)"
    )
    n.add_argument(
        "--resolution",
        type=float,
        default=1.0,
        metavar="G",
        help="communities: modularity's resolution (default 1; higher finds smaller communities)",
    )
    n.add_argument("--account", type=int, metavar="ID", help="neighbourhood: the account (user id) at the centre")
    n.add_argument("--depth", type=int, default=1, metavar="D", help="neighbourhood: hops (default 1)")
    n.add_argument("--direction", choices=("out", "in", "both"), default="both", help="neighbourhood: edges followed")
    n.add_argument("--top", type=int, default=20, metavar="N", help="rows (0: all; default 20)")
    n.add_argument("--backend", choices=("auto", "cpu", "gpu"), default="auto")
    n.add_argument("--output", choices=("table", "csv", "json"), default="table")
    n.add_argument("--quiet", action="store_true", help="no summary, notes or progress on stderr")
    im = sub.add_parser("influence-max", help="the K accounts with the largest joint spread (IMM, IMGPU, baselines)")
    im.add_argument("inputs", nargs="+", metavar="INPUT", help="follows file, collection .npz or tweet files")
    im.add_argument("--format", choices=(AUTO, *FORMATS), default=AUTO, help="input format (default: detect)")
    im.add_argument("--follows", metavar="FILE", help="follower graph: follows CSV / edge list / collection .npz")
    im.add_argument("--k", type=int, default=50, metavar="K", help="seeds to choose (default 50)")
    im.add_argument("--model", choices=("ic",), default="ic", help="diffusion model: Independent Cascade")
    im.add_argument(
        "--p",
        default="0.01",
        metavar="P|wc|estimated",
        help="edge probability: a number (uniform), wc (1 / accounts followed) or estimated (from the cascades in "
        "INPUT: retweets over exposures per follow edge, shrunk to the pooled rate)",
    )
    im.add_argument("--method", choices=("imm", "imgpu", "degree", "influence", "random"), default="imm")
    im.add_argument("--eps", type=float, default=0.1, help="IMM's epsilon (default 0.1)")
    im.add_argument("--ell", type=float, default=1.0, help="IMM's ell: success probability 1 - 1/n^ell")
    im.add_argument("--snapshots", type=int, default=200, metavar="R", help="IMGPU's live-edge snapshots")
    im.add_argument("--seed", type=int, default=0, metavar="S")
    im.add_argument(
        "--evaluate", type=int, default=20000, metavar="RUNS", help="Monte-Carlo runs scoring the seeds (0: none)"
    )
    im.add_argument("--backend", choices=("auto", "cpu", "gpu"), default="auto")
    im.add_argument("--output", choices=("table", "json"), default="table")
    im.add_argument("--quiet", action="store_true", help="no progress on stderr")
    w = sub.add_parser("wtf", help="who-to-follow (PPR circle of trust + Money) for accounts of a follower graph")
    w.add_argument("inputs", nargs="+", metavar="INPUT", help="follows CSV / edge list / collection .npz / tweets")
    w.add_argument("--format", choices=(AUTO, *FORMATS), default=AUTO, help="input format (default: detect)")
    w.add_argument("--follows", metavar="FILE", help="more follows: follows CSV / edge list / collection .npz")
    w.add_argument("--account", type=int, action="append", required=True, metavar="ID", help="seed account (repeat)")
    w.add_argument("--direction", choices=("follows", "followers"), default="follows")
    w.add_argument("--circle", type=int, default=1000, metavar="N", help="circle of trust size (default 1000)")
    w.add_argument("--top", type=int, default=20, metavar="K", help="relevant and similar accounts per seed")
    w.add_argument(
        "--method",
        choices=WTF_METHODS,
        default="exact",
        help="the circle of trust's PageRank: exact (power iteration over the graph, default), push (local "
        "forward push from the account), fora (push, then random walks from what it left) or walks (random walks "
        "from the account, no push); on the CPU and the GPU (docs/wtf.md)",
    )
    w.add_argument(
        "--epsilon",
        type=float,
        default=None,
        metavar="E",
        help=f"push threshold per out-edge (default {DEFAULT_EPSILON:g})",
    )
    w.add_argument(
        "--walks",
        type=float,
        default=None,
        metavar="W",
        help=f"fora: walks per unit of residual; walks: walks from the account (default {DEFAULT_WALKS:g})",
    )
    w.add_argument("--backend", choices=("auto", "cpu", "gpu"), default="auto")
    w.add_argument("--output", choices=("table", "json"), default="table")
    w.add_argument("--quiet", action="store_true", help="no progress on stderr")

    c = sub.add_parser(
        "coordination",
        help="coordinated accounts: pairs that retweet the same tweets (co-retweet or similarity) and their clusters",
        description="Every edge between coordinated accounts (docs/coordination.md): JSON rows {a, b, weight, "
        "cluster} with a < b as strings, sorted by weight descending then ids; clusters numbered by size.",
    )
    c.add_argument("inputs", nargs="+", metavar="INPUT", help="tweet files (retweets with their times)")
    c.add_argument("--format", choices=(AUTO, *FORMATS), default=AUTO, help="input format (default: detect)")
    c.add_argument("--method", choices=COORDINATION_METHODS, default="co-retweet")
    c.add_argument("--window", type=float, default=DEFAULT_WINDOW, metavar="SECONDS",
                   help=f"co-retweet: first retweets at most this far apart (default {DEFAULT_WINDOW:g})")  # fmt: skip
    c.add_argument("--min-count", type=int, default=DEFAULT_MIN_COUNT, metavar="N",
                   help=f"co-retweet: an edge from N shared tweets (default {DEFAULT_MIN_COUNT})")  # fmt: skip
    c.add_argument("--min-retweets", type=int, default=DEFAULT_MIN_RETWEETS, metavar="N",
                   help=f"similarity: accounts with N tweets retweeted or more (default {DEFAULT_MIN_RETWEETS})",
                   )  # fmt: skip
    c.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD, metavar="COS",
                   help=f"similarity: an edge from this cosine (default {DEFAULT_THRESHOLD:g})")  # fmt: skip
    c.add_argument("--backend", choices=("auto", "cpu", "gpu"), default="auto")
    c.add_argument("--top", type=int, default=50, metavar="N", help="table: clusters and edges shown (0: all)")
    c.add_argument("--output", choices=("table", "json"), default="table")
    c.add_argument("--quiet", action="store_true", help="no progress on stderr")

    s = sub.add_parser(
        "stream",
        help="replay a collection as a stream of micro-batches and check the result against batch (docs/stream.md)",
        description="Replays INPUT as a stream: rows delayed by up to --lateness seconds (seeded), cut into "
        "micro-batches of --batch rows, pushed through the stream engine. Prints one row per micro-batch, the "
        "sustained rate, the check against the batch forward and backward phases, and the top of the ranking. "
        "Exit status 1 when the stream's edges or influence differ from batch.",
    )
    s.add_argument("inputs", nargs="+", metavar="INPUT", help="tweet files, a trees folder or a collection .npz")
    s.add_argument("--format", choices=(AUTO, *FORMATS), default=AUTO, help="input format (default: detect)")
    s.add_argument("--follows", metavar="FILE", help="follower graph: follows CSV / edge list / collection .npz")
    s.add_argument("--batch", type=int, default=10_000, metavar="N", help="rows per micro-batch (default 10000)")
    s.add_argument("--lateness", type=float, default=0.0, metavar="SECONDS", help="rows arrive up to this late")
    s.add_argument("--seed", type=int, default=0, help="seed of the delays (default 0)")
    s.add_argument("--hold-seconds", type=float, default=3600.0, metavar="S",
                   help="stream time a retweet of an unknown tweet waits for it (default 3600)")  # fmt: skip
    s.add_argument("--orphans", choices=("strict", "attach"), default="strict", help="orphan policy (docs/measure.md)")
    s.add_argument("--backend", choices=("auto", "cpu", "gpu"), default="auto")
    s.add_argument("--top", type=int, default=10, metavar="N", help="rows of the final ranking (default 10)")
    s.add_argument("--no-check", action="store_true", help="skip the batch run and the comparison")
    s.add_argument("--output", choices=("table", "json"), default="table")

    g = sub.add_parser("generate", help="write a generated dataset")
    g.add_argument("preset", choices=("rsg", "seibert", "twitter"))
    size = g.add_mutually_exclusive_group()
    size.add_argument("--scale", type=float, default=None, help="fraction of the full preset (default 1)")
    size.add_argument(
        "--retweets",
        type=int,
        default=None,
        metavar="N",
        help="twitter only: pick the scale for about N retweets instead of --scale (approximate: the generator's "
        "plan is inverted; 100 to 1,000,000 came out within 1%%)",
    )
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--out", required=True, metavar="PATH", help=".npz file (or a folder with --format csv/v1)")
    g.add_argument(
        "--format",
        choices=("npz", "csv", "v1"),
        default="npz",
        help="twitter only: csv (tweets.csv + follows.csv, small scales) or v1 (tweets.jsonl in API v1.1 form + "
        "follows.csv with only the follows among co-participants of a cascade)",
    )

    b = sub.add_parser("bench", help="time the forward or backward phase")
    b.add_argument("phase", choices=("forward", "backward"))
    b.add_argument(
        "--dataset",
        default=None,
        metavar="PATH|PRESET",
        help="an .npz archive or a preset (default: rsg for backward, twitter for forward)",
    )
    b.add_argument("--scale", type=float, default=1.0)
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--backend", choices=("auto", "cpu", "gpu"), default="cpu")
    b.add_argument("--repeat", type=int, default=5, metavar="K")
    b.add_argument("--threads", type=int, default=None, metavar="N", help="CPU threads (default: all cores)")
    b.add_argument("--orphans", choices=("strict", "attach"), default="strict")
    b.add_argument("--output", choices=("table", "json"), default="table")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        commands = {
            "rank": _rank,
            "network": network,
            "wtf": _wtf,
            "influence-max": _influence_max,
            "coordination": coordination,
            "stream": _stream,
            "generate": _generate,
            "bench": _bench,
        }
        return commands[args.command](args)
    except KeyboardInterrupt:
        return 130
    except (ValueError, FileNotFoundError, NotADirectoryError) as exc:
        # InputError is a ValueError: its message already names file, line and field.
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        from .backends import BackendUnavailable

        if isinstance(exc, BackendUnavailable):
            print(f"error: {exc}", file=sys.stderr)
            return 2
        raise


def _rank(args) -> int:
    from .pipeline import rank

    with Progress("rank", quiet=args.quiet) as progress:
        result = rank(
            args.inputs,
            format=args.format,
            follows=args.follows,
            aggregate=args.aggregate,
            publisher=args.publisher,
            bucket=args.bucket,
            by_publisher=args.by_publisher,
            orphans=args.orphans,
            backend=args.backend,
            mode="skip-bad" if args.skip_bad else "strict",
            max_shown=args.max_shown,
            progress=progress.bytes_read,
        )
    ranking = result.ranking.top(args.top)
    if not args.quiet:
        report = result.read_report
        if report is not None and getattr(report, "n_bad", 0):
            print(str(report), file=sys.stderr)
        for note in result.notes:
            print(f"note: {note}", file=sys.stderr)
    rows = ranking.rows()
    out = sys.stdout
    if args.output == "json":
        json.dump(rows, out, indent=1)
        out.write("\n")
    elif args.output == "csv":
        cols = list(rows[0].keys()) if rows else ["user_id", "influence", "cascades"]
        w = csv.DictWriter(out, fieldnames=cols, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    else:
        out.write(_table(rows, result))
    return 0


def _table(rows: list[dict], result) -> str:
    unit = "followers reached" if result.ranking.unit == "followers" else "retweeters reached"
    g = result.graphs
    head = (
        f"{g.n_cascades:,} cascades, {g.n_nodes - g.n_cascades:,} retweeters, {g.n_edges:,} spreading edges; "
        f"aggregate {result.ranking.aggregate} ({unit}); orphans {g.orphans}; backend {result.backend}\n"
    )
    cols = []
    if rows and "publisher_id" in rows[0]:
        cols.append(("publisher_id", "publisher", "<"))
    if rows and "bucket" in rows[0]:
        cols.append(("bucket", "bucket", "<"))
    cols += [
        ("rank", "rank", ">"),
        ("user_id", "user_id", "<"),
        ("influence", "influence", ">"),
        ("cascades", "cascades", ">"),
    ]
    table = []
    rank_in_group = 0
    prev = None
    for r in rows:
        key = (r.get("publisher_id"), r.get("bucket"))
        rank_in_group = rank_in_group + 1 if key == prev else 1
        prev = key
        cells = dict(r, rank=rank_in_group, influence=f"{r['influence']:,.2f}")
        table.append([str(cells[k]) for k, _, _ in cols])
    widths = [max([len(h)] + [len(row[i]) for row in table]) for i, (_, h, _) in enumerate(cols)]
    fmt = "  ".join(f"{{:{a}{w}}}" for (_, _, a), w in zip(cols, widths))
    lines = [fmt.format(*[h for _, h, _ in cols])]
    lines += [fmt.format(*row) for row in table]
    if not table:
        lines.append("(no users)")
    return head + "\n".join(lines) + "\n"


def _influence_max(args) -> int:
    with Progress("influence-max", quiet=args.quiet) as progress:
        out = _run_influence_max(args, progress)
    if args.output == "json":
        json.dump(out, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(_im_table(out))
    return 0


def _follower_graph_from(paths: list[str], fmt: str, follows: str | None):
    """The follower graph of the inputs: a collection archive's, plus every follows table read (the same
    sources ``rank`` uses)."""
    import numpy as np

    from .formats import read_many
    from .structures import FollowerGraph

    results = [read_many([Path(p) for p in paths], format=fmt)]
    if follows is not None:
        results.append(read_many([Path(follows)], format="auto"))
    graph = None
    for r in results:
        if r.follower_graph is not None:
            graph = r.follower_graph
    tables = [r.follows for r in results if r.follows is not None and len(r.follows)]
    if tables:
        fr = np.concatenate([t.follower_id for t in tables])
        fe = np.concatenate([t.followee_id for t in tables])
        if graph is not None:
            gf, ge = graph.to_edges()
            fr, fe = np.concatenate([fr, gf]), np.concatenate([fe, ge])
        graph = FollowerGraph.from_edges(fr, fe)
    if graph is None or graph.n_users == 0:
        raise ValueError("the input holds no follower graph (give a follows file as INPUT or with --follows)")
    has_cascades = any(r.graphs is not None or (r.tweets is not None and len(r.tweets)) for r in results)
    return graph, has_cascades


def _needs_cascades(args) -> str:
    """What to pass when ``--p estimated`` or ``--method influence`` meets inputs without tweets: both read the
    cascades (retweets), and a follows file has none."""
    wants, instead = [], []
    if args.p == "estimated":
        wants.append("--p estimated (retweets over exposures per follow edge)")
        instead.append("--p wc (1 / accounts followed) or a probability such as --p 0.01")
    if args.method == "influence":
        wants.append("--method influence (the accounts' influence measure)")
        instead.append("--method imm, imgpu, degree or random")
    verb = "need" if len(wants) > 1 else "needs"
    return (
        f"{' and '.join(wants)} {verb} the cascades, and {' '.join(args.inputs)} holds follows but no tweets: give "
        f"the tweets as INPUT and the follower graph with --follows (python -m compute influence-max TWEETS "
        f"--follows {args.inputs[0]} ...), or without tweets use {' and '.join(instead)}"
    )


def _run_influence_max(args, progress: Progress | None = None) -> dict:
    """Read, choose with ``args.method``, score with the evaluator: the JSON object of the command."""
    import time

    import numpy as np

    from .algorithms import influence_max as im
    from .backends import resolve_backend
    from .graphs import follower_graph

    t0 = time.perf_counter()
    progress = progress or Progress("influence-max", quiet=True)
    backend = resolve_backend(args.backend)
    fg, has_cascades = _follower_graph_from(args.inputs, args.format, args.follows)
    g = follower_graph(fg)
    spreading = None
    if args.p == "estimated" or args.method == "influence":
        from .pipeline import graphs_from_inputs

        if not has_cascades:
            raise ValueError(_needs_cascades(args))
        progress.stage("rebuilding the cascades")
        spreading, _build, _report, _notes = graphs_from_inputs(
            args.inputs, format=args.format, follows=args.follows, backend=backend
        )
    if args.p == "wc":
        model = im.ic_model(g, p="wc")
    elif args.p == "estimated":
        est = im.estimate_edge_probabilities(*im.exposure_counts(g, spreading))
        model = im.ic_model(g, p=est)
    else:
        try:
            p = float(args.p)
        except ValueError:
            raise ValueError(f"--p must be a probability, wc or estimated, not {args.p!r}") from None
        model = im.ic_model(g, p=p)
    scores = None
    if args.method == "influence":
        from .algorithms.backward import backward

        progress.stage("computing influence")
        from .algorithms.combine import combine

        bw = backward(spreading, backend=backend)
        ranking = combine(spreading.cascades, bw.influence, aggregate="total")
        scores = np.zeros(g.n_nodes)
        pos = g.index_of(ranking.user_id)
        scores[pos[pos >= 0]] = ranking.total[pos >= 0]
    progress.stage(f"choosing {args.k:,} seeds ({args.method})")
    res = im.influence_max(
        model,
        k=args.k,
        method=args.method,
        eps=args.eps,
        ell=args.ell,
        seed=args.seed,
        scores=scores,
        snapshots=args.snapshots,
        backend=backend,
    )
    spread = ci = None
    if args.evaluate < 0:
        raise ValueError(f"--evaluate must be >= 0, not {args.evaluate}")
    if args.evaluate:
        progress.stage(f"evaluating the spread ({args.evaluate:,} runs)")
        ev = im.evaluate_spread(model, res.nodes, runs=args.evaluate, seed=args.seed + 1, backend=backend)
        spread, ci = ev.mean, [ev.ci_low, ev.ci_high]
    return {
        "method": res.method,
        "k": res.k,
        "p": args.p if args.p in ("wc", "estimated") else float(args.p),
        "model": model.describe(),
        "seeds": [{"user_id": str(int(u)), "marginal_gain": float(x)} for u, x in zip(res.user_ids, res.gains)],
        "spread": spread,
        "spread_ci": ci,
        "evaluate_runs": args.evaluate,
        "rr_sets": res.rr_sets,
        "estimate": res.estimate,
        "backend": res.backend,
        "notes": res.notes,
        "seconds": res.seconds,  # the method's own time; total_seconds adds reading and the evaluator
        "total_seconds": time.perf_counter() - t0,
    }


def _im_table(out: dict) -> str:
    spread = "not evaluated"
    if out["spread"] is not None:
        lo, hi = out["spread_ci"]
        spread = f"{out['spread']:,.2f} (95% CI {lo:,.2f} .. {hi:,.2f}, {out['evaluate_runs']:,} runs)"
    head = (
        f"{out['method']}: k={out['k']}, p={out['p']} ({out['model']}), {out['rr_sets']:,} RR sets, "
        f"{out['seconds']:.2f} s on {out['backend']}\nexpected spread: {spread}\n"
    )
    rows = [(str(i + 1), s["user_id"], f"{s['marginal_gain']:,.2f}") for i, s in enumerate(out["seeds"])]
    cols = [("rank", ">"), ("user_id", "<"), ("marginal_gain", ">")]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, (h, _) in enumerate(cols)]
    fmt = "  ".join(f"{{:{a}{w}}}" for (_, a), w in zip(cols, widths))
    lines = [fmt.format(*[h for h, _ in cols])] + [fmt.format(*r) for r in rows]
    return head + "\n".join(lines) + "\n"


def _follower_graph(paths: list[str], format: str, follows: str | None):
    """The follower graph of the inputs (a collection's graph and every follows table, merged) as a Graph."""
    import numpy as np

    from .formats import read_many
    from .graphs import follower_graph
    from .structures import FollowerGraph

    results = [read_many([Path(p) for p in paths], format=format)]
    if follows is not None:
        results.append(read_many([Path(follows)], format="auto"))
    graphs = [r.follower_graph for r in results if r.follower_graph is not None]
    tables = [r.follows for r in results if r.follows is not None and len(r.follows)]
    if not graphs and not tables:
        raise ValueError("the input holds no follower graph (give a follows file, or --follows FILE)")
    if len(graphs) == 1 and not tables:
        return follower_graph(graphs[0])
    edges = [gr.to_edges() for gr in graphs] + [(t.follower_id, t.followee_id) for t in tables]
    users = [gr.user_ids for gr in graphs]
    fg = FollowerGraph.from_edges(
        np.concatenate([e[0] for e in edges]),
        np.concatenate([e[1] for e in edges]),
        user_ids=np.concatenate(users) if users else None,
    )
    return follower_graph(fg)


def _stream(args) -> int:
    from .pipeline import stream_replay

    out = stream_replay(
        args.inputs, format=args.format, follows=args.follows, batch=args.batch, lateness=args.lateness,
        seed=args.seed, hold_seconds=args.hold_seconds, orphans=args.orphans, backend=args.backend, top=args.top,
        check=not args.no_check,
    )  # fmt: skip
    if args.output == "json":
        json.dump(out, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(_stream_table(out))
    check = out.get("check")
    return 1 if check is not None and not (check["edges_equal"] and check["influence_equal"]) else 0


def _stream_table(out: dict) -> str:
    lines = [f"{'batch':>6} {'retweets':>9} {'accepted':>9} {'edges':>9} {'rebuilt':>8} {'held':>7} {'expired':>8} "
             f"{'ms':>9} {'retweets/s':>12}"]  # fmt: skip
    for r in out["batches"]:
        lines.append(
            f"{r['batch']:>6} {r['retweets']:>9,} {r['accepted']:>9,} {r['edges']:>9,} {r['recomputed']:>8,} "
            f"{r['held']:>7,} {r['expired']:>8,} {1e3 * r['seconds']:>9.2f} {r['retweets_per_s']:>12,.0f}"
        )
    s = out["summary"]
    lines += [
        "",
        f"{s['micro_batches']:,} micro-batches of {s['batch']:,} rows, lateness {s['lateness_s']:g} s, seed "
        f"{s['seed']}, backend {s['backend']}: {s['retweets']:,} retweets in {s['push_seconds']:.3f} s of push "
        f"= {s['retweets_per_s']:,.0f} retweets/s sustained ({s['retweets_per_s_after_first']:,.0f}/s after the "
        "first micro-batch, which also compiles the kernels)",
        f"cascades {s['cascades']:,}, participants {s['participants']:,}, edges {s['edges']:,}; "
        f"rebuilt {s['recomputed']:,} times (late or out of order), duplicates {s['duplicates']:,}, "
        f"self-retweets {s['self_retweets']:,}, expired {s['expired']:,} (original never seen)",
    ]
    c = out.get("check")
    if c is not None:
        verdict = "EQUAL" if c["edges_equal"] and c["influence_equal"] else "DIFFERENT"
        lines.append(
            f"check against batch: {verdict} — edges {c['stream_edges']:,} vs {c['batch_edges']:,} "
            f"(equal: {c['edges_equal']}), influence max relative difference {c['influence_max_rel_diff']:.1e}"
        )
        if s["expired"] and verdict != "EQUAL":
            lines.append(
                f"  {s['expired']:,} retweets expired waiting for their original (the batch run has them): "
                f"raise --hold-seconds above --lateness ({s['lateness_s']:g} s)"
            )
    if out["ranking"]:
        lines += ["", f"{'rank':>4}  {'user_id':>20}  {'influence':>14}  {'cascades':>8}"]
        for k, r in enumerate(out["ranking"], 1):
            lines.append(f"{k:>4}  {r['user_id']:>20}  {r['influence']:>14,.2f}  {r['cascades']:>8}")
    return "\n".join(lines) + "\n"


def _wtf(args) -> int:
    from .algorithms.wtf import wtf
    from .backends import resolve_backend
    from .results import DEFAULT_EPSILON, DEFAULT_WALKS

    with Progress("wtf", quiet=args.quiet) as progress:
        g = _follower_graph(args.inputs, args.format, args.follows)
        seeds = g.index_of(args.account)
        missing = [a for a, s in zip(args.account, seeds.tolist()) if s < 0]
        if missing:
            raise ValueError(f"--account: {', '.join(map(str, missing))} not in the follower graph")
        if args.epsilon is not None and args.method not in ("push", "fora"):
            raise ValueError("--epsilon is for --method push or fora")
        if args.walks is not None and args.method not in ("fora", "walks"):
            raise ValueError("--walks is for --method fora or walks")
        epsilon = DEFAULT_EPSILON if args.epsilon is None else args.epsilon
        walks = DEFAULT_WALKS if args.walks is None else args.walks
        push = args.method in ("push", "fora")
        used = resolve_backend(args.backend)
        progress.stage(f"circle of trust and Money for {len(seeds):,} account(s)")
        recs = wtf(
            g, seeds, direction=args.direction, circle=args.circle, top=args.top, backend=used, method=args.method,
            epsilon=epsilon, walks=walks,
        )  # fmt: skip
    fora, plain = args.method == "fora", args.method == "walks"
    how = {"method": args.method, "epsilon": epsilon if push else None, "walks": walks if fora or plain else None}
    rows = [{**r.to_json(g.ids), **how} for r in recs]
    if args.output == "json":
        json.dump(rows, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    said = (
        f"method {args.method}"
        + (f", epsilon {epsilon:g}" if push else "")
        + (f", {walks:g} walks per unit of residual" if fora else "")
        + (f", {walks:g} walks from each account" if plain else "")
    )
    out = [f"{g.n_nodes:,} accounts, {g.n_edges:,} follows; direction {args.direction}; {said}; backend {used}"]
    for row in rows:
        out.append(
            f"\naccount {row['account']}: PPR "
            + ("by walks" if plain else f"{row['iterations']} {'pushes' if push else 'iterations'}")
            + f"{'' if row['converged'] else ' (not converged)'}, circle of {len(row['circle'])}, "
            f"Money {row['money_iterations']} iterations{'' if row['money_converged'] else ' (not converged)'}"
        )
        for key in ("relevance", "similarity"):
            out.append(f"  {key}:" if row[key] else f"  {key}: (none)")
            out.extend(
                f"    {i:>3}  {r['user_id']:<20} {r['score']:.6g}  ppr {r['ppr']:.6g}"
                for i, r in enumerate(row[key], 1)
            )
    print("\n".join(out))
    return 0


def _generate(args) -> int:
    from .generators import generate

    if args.retweets is not None and args.preset != "twitter":
        raise ValueError("--retweets is for the twitter preset")
    scale = 1.0 if args.scale is None else args.scale
    stats = generate(args.preset, args.out, scale=scale, seed=args.seed, fmt=args.format, retweets=args.retweets)
    print(json.dumps(stats, indent=1, default=str))
    return 0


def _bench(args) -> int:
    from .bench import bench, format_table

    dataset = args.dataset or ("twitter" if args.phase == "forward" else "rsg")
    res = bench(
        args.phase,
        dataset,
        scale=args.scale,
        seed=args.seed,
        backend=args.backend,
        repeat=args.repeat,
        threads=args.threads,
        orphans=args.orphans,
    )
    if args.output == "json":
        print(json.dumps(res.to_dict()))
    else:
        print(format_table(res))
    return 0
