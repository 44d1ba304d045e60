"""Small v1.1 collections with the awkward cases of a real one, written fast (no generator, no graph): originals
and retweets that embed them, accounts renamed between rows, repeated and self retweets, duplicate and self
follows, follower counts that change."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

T0 = 1_600_000_000


def twitter_time(t: float) -> str:
    return time.strftime("%a %b %d %H:%M:%S +0000 %Y", time.gmtime(t))


def write_v1(
    folder: Path, *, retweets: int, seed: int = 0, users: int | None = None, first_id: int = 10_000
) -> list[Path]:
    """``tweets.jsonl`` (about ``retweets`` retweets of ``retweets // 40`` originals) and ``follows.csv``."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    n_users = users or max(20, retweets // 3)
    n_orig = max(1, retweets // 40)

    def user(uid: int) -> dict:
        # a few accounts go by another name now and then: the last name read wins
        name = f"user{uid}" if rng.random() < 0.9 else f"user{uid}_{rng.randrange(3)}"
        return {"id_str": str(uid), "screen_name": name, "followers_count": rng.randrange(0, 1000)}

    originals = []
    lines = []
    for i in range(n_orig):
        uid = 1 + rng.randrange(n_users)
        o = {
            "id_str": str(first_id + i),
            "created_at": twitter_time(T0 + 100 * i),
            "text": f"claim #{i}",
            "user": user(uid),
        }
        originals.append((o, uid, T0 + 100 * i))
        lines.append(o)
    rid = first_id + 10 * retweets
    for _ in range(retweets):
        o, author, t = originals[rng.randrange(n_orig)]
        # some users retweet the same tweet twice, some authors retweet themselves
        uid = author if rng.random() < 0.02 else 1 + rng.randrange(n_users)
        rid += 1
        lines.append(
            {
                "id_str": str(rid),
                "created_at": twitter_time(t + rng.randrange(1, 5000)),
                "text": f"RT: {o['text']}",
                "user": user(uid),
                "retweeted_status": o,
            }
        )
    rng.shuffle(lines)  # an upload is not in time order
    tweets = folder / "tweets.jsonl"
    tweets.write_text("".join(json.dumps(x) + "\n" for x in lines))
    follows = folder / "follows.csv"
    edges = [(1 + rng.randrange(n_users), 1 + rng.randrange(n_users)) for _ in range(retweets * 2)]
    edges += edges[: len(edges) // 10]  # repeated edges
    follows.write_text("follower_id,followee_id\n" + "".join(f"{a},{b}\n" for a, b in edges))
    return [tweets, follows]
