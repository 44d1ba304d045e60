"""``python -m compute coordination``: coordinated accounts in INPUT's retweets by co-retweet or similarity
(docs/coordination.md), every edge as JSON or a table of clusters and edges. The parser's options are in
:func:`compute.cli.build_parser`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .progress import Progress

__all__ = ["coordination"]


def _retweets(args):
    """The retweets of the inputs as (original tweet id, retweeter id, time in seconds)."""
    import numpy as np

    from .formats import read_many
    from .tables import NO_TWEET

    res = read_many([Path(p) for p in args.inputs], format=args.format)
    t = res.tweets
    if t is None or not len(t):
        raise ValueError("the input holds no tweets: coordination needs retweets with their times (tweet files)")
    rt = np.flatnonzero(t.retweeted_tweet_id != NO_TWEET)
    if not len(rt):
        raise ValueError("the input holds no retweets: coordination compares who retweeted what, and when")
    return t.retweeted_tweet_id[rt], t.user_id[rt], t.created_at[rt]


def coordination(args) -> int:
    from .algorithms.coordination import coordination as run

    with Progress("coordination", quiet=args.quiet):
        tweet, account, time = _retweets(args)
        res = run(
            tweet,
            account,
            time,
            method=args.method,
            window=args.window,
            min_count=args.min_count,
            min_retweets=args.min_retweets,
            threshold=args.threshold,
            backend=args.backend,
        )
    if args.output == "json":
        json.dump(res.rows(), sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(_table(res, args.top))
    return 0


def _table(res, top: int) -> str:
    params = ", ".join(f"{k} {v:g}" for k, v in res.params.items())
    clusters = res.clusters()
    lines = [
        f"{res.method} ({params}); backend {res.backend}: {res.accounts:,} accounts, {res.tweets:,} tweets, "
        f"{res.pairs:,} pairs compared; {len(res):,} edges in {len(clusters):,} clusters",
        "",
        f"{'cluster':>7}  {'accounts':>8}  {'edges':>7}  members",
    ]
    for c in clusters[: top or None]:
        shown = c["members"][:8]
        more = f" (+{c['size'] - len(shown)})" if c["size"] > len(shown) else ""
        lines.append(f"{c['cluster']:>7}  {c['size']:>8,}  {c['edges']:>7,}  {' '.join(shown)}{more}")
    if not clusters:
        lines.append("(no coordinated pair)")
    rows = res.rows()[: top or None]
    if rows:
        wa = max(len("a"), *(len(r["a"]) for r in rows))
        wb = max(len("b"), *(len(r["b"]) for r in rows))
        lines += ["", f"{'a':<{wa}}  {'b':<{wb}}  {'weight':>10}  cluster"]
        for r in rows:
            w = f"{r['weight']:.6f}" if isinstance(r["weight"], float) else str(r["weight"])
            lines.append(f"{r['a']:<{wa}}  {r['b']:<{wb}}  {w:>10}  {r['cluster']:>7}")
        if len(res) > len(rows):
            lines.append(f"... {len(res) - len(rows):,} more edges (--top 0 shows all; --output json gives every edge)")
    return "\n".join(lines) + "\n"
