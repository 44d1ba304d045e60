"""``python -m compute``: rank, wtf, generate, bench.

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

    w = sub.add_parser("wtf", help="who-to-follow (PPR circle of trust + Money) for accounts of a follower graph")
    w.add_argument("inputs", nargs="+", metavar="INPUT", help="follows CSV / edge list / collection .npz / tweets")
    w.add_argument("--format", choices=(AUTO, *FORMATS), default=AUTO, help="input format (default: detect)")
    w.add_argument("--follows", metavar="FILE", help="more follows: follows CSV / edge list / collection .npz")
    w.add_argument("--account", type=int, action="append", required=True, metavar="ID", help="seed account (repeat)")
    w.add_argument("--direction", choices=("follows", "followers"), default="follows")
    w.add_argument("--circle", type=int, default=1000, metavar="N", help="circle of trust size (default 1000)")
    w.add_argument("--top", type=int, default=20, metavar="K", help="relevant and similar accounts per seed")
    w.add_argument("--backend", choices=("auto", "cpu", "gpu"), default="auto")
    w.add_argument("--output", choices=("table", "json"), default="table")

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
        return {"rank": _rank, "wtf": _wtf, "generate": _generate, "bench": _bench}[args.command](args)
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


def _wtf(args) -> int:
    from .algorithms.wtf import wtf
    from .backends import resolve_backend

    g = _follower_graph(args.inputs, args.format, args.follows)
    seeds = g.index_of(args.account)
    missing = [a for a, s in zip(args.account, seeds.tolist()) if s < 0]
    if missing:
        raise ValueError(f"--account: {', '.join(map(str, missing))} not in the follower graph")
    used = resolve_backend(args.backend)
    recs = wtf(g, seeds, direction=args.direction, circle=args.circle, top=args.top, backend=used)
    rows = [r.to_json(g.ids) for r in recs]
    if args.output == "json":
        json.dump(rows, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    out = [f"{g.n_nodes:,} accounts, {g.n_edges:,} follows; direction {args.direction}; backend {used}"]
    for row in rows:
        out.append(
            f"\naccount {row['account']}: PPR {row['iterations']} iterations"
            f"{'' if row['converged'] else ' (not converged)'}, circle of {len(row['circle'])}, "
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
