"""A v1.1 JSONL upload rich in entities, for what reading and storing them costs (benchmarks/claims.md, "What the
search costs an import"): N retweet lines of N/50 originals, each original with 0-3 hashtags and 0-2 expanded links
(a quarter of them long tweets with ``extended_tweet`` and its own entities), seeded, no follows.

    .venv/bin/python benchmarks/entities_v1_gen.py /tmp/ent1m/tweets.jsonl 1000000
    printf "follower_id,followee_id\n" > /tmp/ent1m/follows.csv
"""

import json
import random
import sys
from datetime import UTC, datetime

n = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
out = sys.argv[1]
rnd = random.Random(7)
TAGS = ["covid", "Vaccine", "FakeNews", "election2020", "Breaking", "news", "climate", "StopTheSteal", "wef"]
T0 = 1580000000


def ts(t):
    return datetime.fromtimestamp(t, UTC).strftime("%a %b %d %H:%M:%S +0000 %Y")


def user(uid, fol):
    return {
        "id": uid,
        "id_str": str(uid),
        "name": f"User {uid}",
        "screen_name": f"user{uid}",
        "location": "",
        "description": "a person on the internet",
        "url": None,
        "protected": False,
        "followers_count": fol,
        "friends_count": 100,
        "listed_count": 1,
        "created_at": ts(T0 - 10**7),
        "favourites_count": 5,
        "verified": False,
        "statuses_count": 1000,
        "lang": None,
        "profile_image_url_https": "https://pbs.twimg.com/profile_images/1/x_normal.jpg",
        "default_profile": True,
    }


def ents(k):
    r = random.Random(k)
    tags = r.sample(TAGS, r.choice([0, 0, 1, 1, 2, 3]))
    urls = [f"https://example{r.randrange(100)}.com/a/{k}" for _ in range(r.choice([0, 0, 1, 1, 2]))]
    return {
        "hashtags": [{"text": t, "indices": [0, len(t) + 1]} for t in tags],
        "symbols": [],
        "user_mentions": [{"screen_name": "someone", "name": "S", "id": 1, "id_str": "1", "indices": [3, 11]}],
        "urls": [
            {"url": "https://t.co/abc" + str(i), "expanded_url": u, "display_url": u[8:30], "indices": [40, 63]}
            for i, u in enumerate(urls)
        ],
    }


n_orig = max(1, n // 50)
with open(out, "w") as f:
    for i in range(n):
        k = rnd.randrange(n_orig)
        oid = 1_200_000_000_000_000_000 + k
        ouid = 10_000 + k % 5000
        ot = T0 + k * 10
        orig = {
            "created_at": ts(ot),
            "id": oid,
            "id_str": str(oid),
            "text": f"claim {k} #" + "x" * 60,
            "truncated": False,
            "entities": ents(k),
            "source": '<a href="x">web</a>',
            "in_reply_to_status_id": None,
            "user": user(ouid, 1000 + k),
            "geo": None,
            "coordinates": None,
            "place": None,
            "is_quote_status": False,
            "retweet_count": 50,
            "favorite_count": 10,
            "favorited": False,
            "retweeted": False,
            "lang": "en",
        }
        if k % 4 == 0:
            orig["truncated"] = True
            orig["extended_tweet"] = {
                "full_text": "full " + orig["text"],
                "display_text_range": [0, 100],
                "entities": ents(k + 1),
            }
        rid = 1_300_000_000_000_000_000 + i
        ruid = 100_000 + rnd.randrange(200_000)
        rt = {
            "created_at": ts(ot + 60 + i % 1000),
            "id": rid,
            "id_str": str(rid),
            "text": "RT @user: claim",
            "truncated": False,
            "entities": ents(k),
            "source": "web",
            "in_reply_to_status_id": None,
            "user": user(ruid, rnd.randrange(5000)),
            "geo": None,
            "coordinates": None,
            "place": None,
            "retweeted_status": orig,
            "is_quote_status": False,
            "retweet_count": 0,
            "favorite_count": 0,
            "favorited": False,
            "retweeted": False,
            "lang": "en",
            "timestamp_ms": str((ot + 60) * 1000),
        }
        f.write(json.dumps(rt) + "\n")
