"""Reader throughput: synthesise realistic inputs, time ``compute.formats.read`` / ``iter_tweets`` on them.

    python benchmarks/readers_bench.py                    # 200K v1.1 statuses, 1M CSV rows, 5M follow edges
    python benchmarks/readers_bench.py --v1-lines 50000 --only v1
    SPREADWATCH_JSON_BACKEND=orjson python benchmarks/readers_bench.py --only v1   # a fallback backend
    python benchmarks/readers_bench.py --only v1 --v1-file var/bench1m/tweets.jsonl  # a file of your own

The v1.1 statuses look like what the API returns in extended mode: a user object with its ~40 fields, entities
(hashtags, mentions, urls, sometimes media), place/geo nulls, quote/reply fields, and ``retweeted_status`` (a
whole embedded status with its own user) on about 60% of lines; mean size is about 5 KB. Each measurement runs
in a fresh process, so the peak RSS it prints (``resource.getrusage``) is the reader's own. ``--v1-file`` times
an existing file instead, with ``iter_tweets``: the web benchmark's generated collection (``make bench-web``),
whose 430-byte statuses name only the fields the product reads, is bound by the reader's Python per line rather
than by the JSON decoder.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

_WORDS = [
    "the",
    "of",
    "and",
    "to",
    "in",
    "is",
    "you",
    "that",
    "it",
    "he",
    "was",
    "for",
    "on",
    "are",
    "as",
    "with",
    "his",
    "they",
    "at",
    "be",
    "this",
    "have",
    "from",
    "or",
    "one",
    "had",
    "by",
    "word",
    "but",
    "not",
    "what",
    "all",
    "were",
    "we",
    "when",
    "your",
    "can",
    "said",
    "there",
    "use",
    "an",
    "each",
    "which",
    "she",
    "do",
    "how",
    "their",
    "if",
    "will",
    "up",
    "other",
    "about",
    "out",
    "many",
    "then",
    "them",
    "these",
    "so",
    "some",
    "her",
    "would",
    "make",
    "like",
    "him",
    "into",
    "time",
    "has",
    "look",
    "two",
    "more",
    "write",
    "go",
    "see",
    "number",
    "no",
    "way",
    "could",
    "people",
    "my",
    "than",
    "first",
    "water",
    "been",
    "call",
    "who",
    "oil",
    "its",
    "now",
    "find",
    "long",
    "down",
    "day",
    "did",
    "get",
    "come",
    "made",
    "may",
    "part",
    "vaccine",
    "election",
    "breaking",
    "news",
    "climate",
    "fake",
    "truth",
    "report",
    "video",
    "watch",
    "thread",
]
_EXTRA = ["café", "naïve", "señor", "😂", "🔥", "👉", "—", "“quoted”", "日本語", "Ελλάδα", "مرحبا", "&amp;"]
_SOURCES = [
    '<a href="http://twitter.com/download/iphone" rel="nofollow">Twitter for iPhone</a>',
    '<a href="http://twitter.com/download/android" rel="nofollow">Twitter for Android</a>',
    '<a href="https://mobile.twitter.com" rel="nofollow">Twitter Web App</a>',
]
_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def twitter_time(t: float) -> str:
    d = datetime.fromtimestamp(t, UTC)
    return f"{_DAYS[d.weekday()]} {_MONTHS[d.month - 1]} {d.day:02d} {d:%H:%M:%S} +0000 {d.year}"


def snowflake(t: float, rng: random.Random) -> int:
    return ((int(t * 1000) - 1288834974657) << 22) | rng.getrandbits(22)


def _text(rng: random.Random, n: int) -> str:
    words = [rng.choice(_WORDS) if rng.random() > 0.08 else rng.choice(_EXTRA) for _ in range(n)]
    return " ".join(words)


def _user(rng: random.Random, uid: int) -> dict:
    name = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz_0123456789") for _ in range(rng.randint(5, 14)))
    created = rng.uniform(1.2e9, 1.55e9)
    return {
        "id": uid,
        "id_str": str(uid),
        "name": name.replace("_", " ").title(),
        "screen_name": name,
        "location": rng.choice(["", "Bergen, Norway", "London", "New York, NY", "somewhere 🌍"]),
        "description": _text(rng, rng.randint(0, 25)),
        "url": rng.choice([None, "https://t.co/abcDEF1234"]),
        "entities": {"description": {"urls": []}},
        "protected": False,
        "followers_count": int(rng.paretovariate(0.8) * 20),
        "friends_count": rng.randint(0, 5000),
        "listed_count": rng.randint(0, 300),
        "created_at": twitter_time(created),
        "favourites_count": rng.randint(0, 100000),
        "utc_offset": None,
        "time_zone": None,
        "geo_enabled": rng.random() < 0.3,
        "verified": rng.random() < 0.02,
        "statuses_count": rng.randint(1, 200000),
        "lang": None,
        "contributors_enabled": False,
        "is_translator": False,
        "is_translation_enabled": False,
        "profile_background_color": "C0DEED",
        "profile_background_image_url": "http://abs.twimg.com/images/themes/theme1/bg.png",
        "profile_background_image_url_https": "https://abs.twimg.com/images/themes/theme1/bg.png",
        "profile_background_tile": False,
        "profile_image_url": f"http://pbs.twimg.com/profile_images/{uid}/photo_normal.jpg",
        "profile_image_url_https": f"https://pbs.twimg.com/profile_images/{uid}/photo_normal.jpg",
        "profile_banner_url": f"https://pbs.twimg.com/profile_banners/{uid}/1560000000",
        "profile_link_color": "1DA1F2",
        "profile_sidebar_border_color": "C0DEED",
        "profile_sidebar_fill_color": "DDEEF6",
        "profile_text_color": "333333",
        "profile_use_background_image": True,
        "has_extended_profile": rng.random() < 0.5,
        "default_profile": rng.random() < 0.5,
        "default_profile_image": False,
        "following": None,
        "follow_request_sent": None,
        "notifications": None,
        "translator_type": "none",
        "withheld_in_countries": [],
    }


def _entities(rng: random.Random, text: str) -> dict:
    mentions = [
        {"screen_name": f"user{k}", "name": f"User {k}", "id": k, "id_str": str(k), "indices": [0, 8]}
        for k in (rng.randint(1, 10**9) for _ in range(rng.randint(0, 3)))
    ]
    urls = [
        {
            "url": "https://t.co/xYz123AbC",
            "expanded_url": "https://example.com/some/long/article/path?x=1",
            "display_url": "example.com/some/long/arti…",
            "indices": [100, 123],
        }
        for _ in range(rng.randint(0, 2))
    ]
    ent = {
        "hashtags": [{"text": rng.choice(_WORDS), "indices": [10, 20]} for _ in range(rng.randint(0, 3))],
        "symbols": [],
        "user_mentions": mentions,
        "urls": urls,
    }
    if rng.random() < 0.2:
        ent["media"] = [
            {
                "id": 1234567890123456789,
                "id_str": "1234567890123456789",
                "indices": [120, 143],
                "media_url": "http://pbs.twimg.com/media/EXAMPLE.jpg",
                "media_url_https": "https://pbs.twimg.com/media/EXAMPLE.jpg",
                "url": "https://t.co/MeDiA1234",
                "display_url": "pic.twitter.com/MeDiA1234",
                "expanded_url": "https://twitter.com/x/status/1/photo/1",
                "type": "photo",
                "sizes": {k: {"w": 1200, "h": 675, "resize": "fit"} for k in ("thumb", "small", "medium", "large")},
            }
        ]
    return ent


def _status(rng: random.Random, t: float, uid: int) -> dict:
    tid = snowflake(t, rng)
    text = _text(rng, rng.randint(8, 45))
    ent = _entities(rng, text)
    st = {
        "created_at": twitter_time(t),
        "id": tid,
        "id_str": str(tid),
        "full_text": text,
        "truncated": False,
        "display_text_range": [0, len(text)],
        "entities": ent,
        "source": rng.choice(_SOURCES),
        "in_reply_to_status_id": None,
        "in_reply_to_status_id_str": None,
        "in_reply_to_user_id": None,
        "in_reply_to_user_id_str": None,
        "in_reply_to_screen_name": None,
        "user": _user(rng, uid),
        "geo": None,
        "coordinates": None,
        "place": None,
        "contributors": None,
        "is_quote_status": False,
        "retweet_count": rng.randint(0, 5000),
        "favorite_count": rng.randint(0, 20000),
        "favorited": False,
        "retweeted": False,
        "lang": "en",
    }
    if "media" in ent:
        st["extended_entities"] = {"media": ent["media"]}
        st["possibly_sensitive"] = False
    return st


def v1_line(rng: random.Random, originals: list[tuple[float, int]]) -> dict:
    """One v1.1 status: a retweet of an earlier original on ~60% of lines."""
    t = rng.uniform(1.55e9, 1.6e9)
    uid = rng.randint(10**6, 1.5e18) if rng.random() < 0.3 else rng.randint(10**6, 4 * 10**9)
    if originals and rng.random() < 0.6:
        ot, ouid = rng.choice(originals)
        orig = _status(random.Random(ouid ^ int(ot)), ot, ouid)
        st = _status(rng, ot + rng.uniform(1, 86400), uid)
        st["full_text"] = f"RT @{orig['user']['screen_name']}: {orig['full_text']}"[:280]
        st["retweeted_status"] = orig
        st["entities"]["user_mentions"].insert(
            0,
            {
                "screen_name": orig["user"]["screen_name"],
                "name": "x",
                "id": ouid,
                "id_str": str(ouid),
                "indices": [3, 15],
            },
        )
        return st
    originals.append((t, uid))
    if len(originals) > 5000:
        originals.pop(rng.randrange(len(originals)))
    return _status(rng, t, uid)


def write_v1(path: Path, n: int, seed: int = 7) -> None:
    try:
        import orjson

        def dumps(o):
            return orjson.dumps(o) + b"\n"
    except ImportError:

        def dumps(o):
            return (json.dumps(o) + "\n").encode()

    rng = random.Random(seed)
    originals: list[tuple[float, int]] = []
    ascii_rng = random.Random(seed + 1)
    with open(path, "wb") as fh:
        for _ in range(n):
            st = v1_line(rng, originals)
            # the API escapes non-ASCII in about half the archives we see; mix both
            fh.write((json.dumps(st) + "\n").encode() if ascii_rng.random() < 0.3 else dumps(st))


def write_csv(path: Path, n: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("tweet_id,retweeted_tweet_id,user_id,created_at,followers_count,screen_name\n")
        last = 0
        for i in range(n):
            t = 1.55e9 + i * 0.5
            tid = snowflake(t, rng)
            if i and rng.random() < 0.7:
                rt = str(last)
            else:
                rt, last = "", tid
            iso = datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            fh.write(f"{tid},{rt},{rng.randint(1, 10**12)},{iso},{rng.randint(0, 10**6)},user{i % 9973}\n")


def write_follows(path: Path, n: int, seed: int = 7) -> None:
    import numpy as np

    rng = np.random.default_rng(seed)
    with open(path, "w") as fh:
        fh.write("# follower followee\n")
        for a in range(0, n, 1_000_000):
            m = min(1_000_000, n - a)
            e = rng.integers(1, 2**40, size=(m, 2))
            np.savetxt(fh, e, fmt="%d", delimiter=" ")


def measure(fmt: str, path: str, how: str) -> dict:
    import compute.formats as F

    size = os.path.getsize(path)
    t0 = time.perf_counter()
    if how == "read":
        res = F.read(path, fmt)
        n_rows = len(res.tweets) if res.tweets is not None else len(res.follows)
        n_rec = res.report.n_good
    elif how == "iter_tweets":
        report = F.ReadReport()
        n_rows = sum(len(c) for c in F.iter_tweets(path, fmt, report=report))
        n_rec = report.n_good
    else:
        report = F.ReadReport()
        n_rows = sum(len(c) for c in F.iter_follows(path, fmt, report=report))
        n_rec = report.n_good
    dt = time.perf_counter() - t0
    from compute.formats._json import backend

    return {
        "format": fmt,
        "how": how,
        "records": n_rec,
        "rows": n_rows,
        "seconds": round(dt, 3),
        "records_per_s": round(n_rec / dt),
        "MB_per_s": round(size / dt / 1e6, 1),
        "MB": round(size / 1e6, 1),
        "peak_rss_MB": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "json_backend": backend() if fmt in ("v1", "v2") else "-",
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--v1-lines", type=int, default=200_000)
    ap.add_argument("--csv-rows", type=int, default=1_000_000)
    ap.add_argument("--follow-edges", type=int, default=5_000_000)
    ap.add_argument("--dir", default="/tmp/spreadwatch-readers-bench")
    ap.add_argument("--only", choices=["v1", "csv", "follows"], action="append")
    ap.add_argument("--v1-file", help="time this v1.1 file (iter_tweets) instead of writing a synthetic one")
    ap.add_argument("--measure", nargs=3, metavar=("FORMAT", "PATH", "HOW"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure:
        print(json.dumps(measure(*args.measure)))
        return
    out = Path(args.dir)
    out.mkdir(parents=True, exist_ok=True)
    only = set(args.only or ["v1", "csv", "follows"])
    jobs = []
    if "v1" in only and args.v1_file:
        jobs += [("v1", Path(args.v1_file), "iter_tweets")]
    elif "v1" in only:
        p = out / f"v1_{args.v1_lines}.jsonl"
        if not p.exists():
            print(f"writing {p} ...", flush=True)
            write_v1(p, args.v1_lines)
        jobs += [("v1", p, "read"), ("v1", p, "iter_tweets")]
    if "csv" in only:
        p = out / f"tweets_{args.csv_rows}.csv"
        if not p.exists():
            print(f"writing {p} ...", flush=True)
            write_csv(p, args.csv_rows)
        jobs += [("csv", p, "read")]
    if "follows" in only:
        p = out / f"follows_{args.follow_edges}.txt"
        if not p.exists():
            print(f"writing {p} ...", flush=True)
            write_follows(p, args.follow_edges)
        jobs += [("follows", p, "read"), ("follows", p, "iter_follows")]
    for fmt, p, how in jobs:
        r = subprocess.run(
            [sys.executable, __file__, "--measure", fmt, str(p), how], capture_output=True, text=True, check=False
        )
        if r.returncode:
            print(r.stderr, file=sys.stderr)
            continue
        m = json.loads(r.stdout)
        print(
            f"{m['format']:8s} {m['how']:12s} {m['records']:>10,} records {m['rows']:>10,} rows  "
            f"{m['seconds']:7.2f} s  {m['records_per_s']:>10,}/s  {m['MB_per_s']:7.1f} MB/s of {m['MB']:,} MB  "
            f"peak RSS {m['peak_rss_MB']:,} MB  json={m['json_backend']}",
            flush=True,
        )


if __name__ == "__main__":
    main()
