"""``python -m compute``: rank, influence-max, generate, bench.

Exit codes: 0 success, 2 bad input or usage (the message names the file, line and field), 1 anything else.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    from .formats.registry import AUTO, FORMATS  # here: the formats pull in numba, which `import compute.cli` need not

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
    r.add_argument("--orphans", choices=("strict", "attach"), default="strict", help="orphan policy (DESIGN §1)")
    r.add_argument("--top", type=int, default=20, metavar="N", help="rows per ranking (0: all; default 20)")
    r.add_argument("--backend", choices=("auto", "cpu", "gpu"), default="auto")
    r.add_argument("--output", choices=("table", "csv", "json"), default="table")
    r.add_argument("--skip-bad", action="store_true", help="skip bad records (counted and listed) instead of stopping")
    r.add_argument("--max-shown", type=int, default=20, metavar="N", help="bad records listed with --skip-bad")
    r.add_argument("--quiet", action="store_true", help="no progress bar or notes on stderr")

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
        commands = {"rank": _rank, "influence-max": _influence_max, "generate": _generate, "bench": _bench}
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


def _progress_bar(paths: list[str], quiet: bool):
    """A tqdm bar over input bytes, shown on a terminal for inputs over 32 MiB."""
    if quiet:
        return None, None
    total = 0
    for p in paths:
        path = Path(p)
        if path.is_file():
            total += path.stat().st_size
    if total < 32 * 2**20:
        return None, None
    try:
        from tqdm import tqdm
    except ImportError:
        return None, None
    bar = tqdm(total=total, unit="B", unit_scale=True, desc="reading", file=sys.stderr, disable=None)
    done = {"n": 0}

    def update(bytes_done: int, bytes_total: int) -> None:
        bar.update(max(0, bytes_done - done["n"]))
        done["n"] = bytes_done

    return update, bar


def _rank(args) -> int:
    from .pipeline import rank

    progress, bar = _progress_bar(args.inputs, args.quiet)
    try:
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
            progress=progress,
        )
    finally:
        if bar is not None:
            bar.close()
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
    out = _run_influence_max(args)
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
    return graph


def _run_influence_max(args) -> dict:
    """Read, choose with ``args.method``, score with the evaluator: the JSON object of the command."""
    import time

    import numpy as np

    from .algorithms import influence_max as im
    from .backends import resolve_backend
    from .graphs import follower_graph

    t0 = time.perf_counter()
    backend = resolve_backend(args.backend)
    g = follower_graph(_follower_graph_from(args.inputs, args.format, args.follows))
    spreading = None
    if args.p == "estimated" or args.method == "influence":
        from .pipeline import graphs_from_inputs

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
        from .algorithms.combine import combine

        bw = backward(spreading, backend=backend)
        ranking = combine(spreading.cascades, bw.influence, aggregate="total")
        scores = np.zeros(g.n_nodes)
        pos = g.index_of(ranking.user_id)
        scores[pos[pos >= 0]] = ranking.total[pos >= 0]
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
