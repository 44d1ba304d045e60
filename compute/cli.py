"""``python -m compute``: rank, generate, bench.

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
        return {"rank": _rank, "generate": _generate, "bench": _bench}[args.command](args)
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
