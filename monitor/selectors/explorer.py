"""The cascade explorer and a tweet's page: a cascade's participants, its spreading graph, the drawn subgraph
of a large cascade and its retweet timeline."""

from __future__ import annotations

from django.db import connection

from ..cache import cached
from ..db import int_array_param
from ..models import Account, CascadeGraph, CascadeInfluence, Retweet, Tweet, Workspace


def tweet_participants(tweet: Tweet, *, limit: int = 200) -> list[CascadeInfluence]:
    return list(
        CascadeInfluence.objects.filter(tweet=tweet)
        .select_related("account")
        .order_by("-influence", "account__twitter_id")[:limit]
    )


def cascade_graph(tweet: Tweet) -> dict:
    """One cascade as nodes (participants with influence, n_v, role, account) and spreading edges
    ``(src, dst)`` as Account pks: ``src`` could have seen the tweet from ``dst`` (the thesis' (v, u))."""
    import numpy as np

    nodes = tweet_participants(tweet, limit=10**9)
    g = CascadeGraph.objects.filter(tweet=tweet).first()
    src, dst = g.edge_arrays() if g is not None else (np.zeros(0, np.int64), np.zeros(0, np.int64))
    return {"nodes": nodes, "src": src, "dst": dst}


def twitter_ids(account_pks: set[int]) -> dict[int, int]:
    """The Twitter ids of accounts by their pks (the edges of :func:`cascade_graph` name accounts by pk)."""
    return dict(Account.objects.filter(pk__in=account_pks).values_list("pk", "twitter_id"))


EXPLORER_LIMIT = 20_000  # nodes the explorer draws by default (WebGL: every node of cascades up to this size)
TIMELINE_POINTS = 512  # the explorer's retweet timeline is drawn from at most this many (delay, count) points


@cached
def cascade_explorer_data(ws: Workspace, tweet: Tweet, *, limit: int = 400) -> dict:
    """What the cascade explorer draws: the publisher and the ``limit`` - 1 most influential other participants
    (chosen in SQL: a cascade may have tens of thousands), the spreading edges among them, the drawn retweeters'
    delays after the tweet, the cumulative retweet timeline (every retweet, sampled to at most
    ``TIMELINE_POINTS`` points), and how much was left out. Cached under the workspace's data version."""
    import numpy as np

    pub = tweet.author_id
    keep = _drawn_participants(tweet, limit)
    n_nodes = (
        CascadeInfluence.objects.filter(tweet=tweet).count() if tweet.n_participants == 0 else tweet.n_participants
    )
    kept = np.array([n["account_id"] for n in keep], dtype=np.int64)
    g = CascadeGraph.objects.filter(tweet=tweet).first()
    src, dst = g.edge_arrays() if g is not None else (np.zeros(0, np.int64), np.zeros(0, np.int64))
    mask = np.isin(src, kept) & np.isin(dst, kept)
    # every retweet's delay (one query: the timeline needs them all, the drawn nodes theirs)
    retweeters, seconds = _retweet_delays(tweet)
    delays = dict(zip(retweeters.tolist(), seconds.tolist(), strict=True))
    x, y = _positions(keep, kept, src[mask], dst[mask], pub)
    return {
        "tweet": str(tweet.tweet_id),
        "label": tweet.label,
        "unit": tweet.unit,
        "nodes": [
            {
                "id": n["account_id"],
                "tid": str(n["account__twitter_id"]),
                "name": n["account__screen_name"],
                "inf": n["influence"],
                "n": n["followers"],
                "role": n["role"],
                "delay": 0.0 if n["account_id"] == pub else delays.get(n["account_id"]),
                "x": x[i],
                "y": y[i],
            }
            for i, n in enumerate(keep)
        ],
        "edges": np.stack([src[mask], dst[mask]], axis=1).tolist(),
        "hidden": {"nodes": max(n_nodes - len(keep), 0), "edges": int(len(src) - mask.sum())},
        "timeline": _timeline(seconds),
    }


_NODE_COLUMNS = ("account_id", "account__twitter_id", "account__screen_name", "influence", "followers", "role")


def _drawn_participants(tweet: Tweet, limit: int) -> list[dict]:
    """The publisher and the ``limit`` - 1 most influential other participants (ties by account), as dicts of
    :data:`_NODE_COLUMNS`: rows as tuples (building 20,000 model dicts cost more than the query). On PostgreSQL the
    participants are chosen first and their accounts read by key after: joined in one query, PostgreSQL hashed the
    whole account table for a large cascade (4.3M accounts at the 10M-retweet benchmark: 307-356 ms of the
    explorer's 338-421 ms for a 60,001-account cascade, against 117-202 ms for the two queries)."""
    pub = tweet.author_id
    if connection.vendor != "postgresql":
        select = """SELECT ci.account_id, a.twitter_id, a.screen_name, ci.influence, ci.followers, ci.role
                    FROM monitor_cascadeinfluence ci JOIN monitor_account a ON a.id = ci.account_id
                    WHERE ci.tweet_id = %s AND ci.account_id """
        with connection.cursor() as cur:
            cur.execute(select + "= %s", [tweet.pk, pub])
            rows = cur.fetchall()
            others = select + "<> %s ORDER BY ci.influence DESC, ci.account_id LIMIT %s"
            cur.execute(others, [tweet.pk, pub, max(limit - 1, 0)])
            rows += cur.fetchall()
        return [dict(zip(_NODE_COLUMNS, r, strict=True)) for r in rows]
    select = """SELECT account_id, influence, followers, role FROM monitor_cascadeinfluence
                WHERE tweet_id = %s AND account_id """
    with connection.cursor() as cur:
        cur.execute(select + "= %s", [tweet.pk, pub])
        rows = cur.fetchall()
        cur.execute(select + "<> %s ORDER BY influence DESC, account_id LIMIT %s", [tweet.pk, pub, max(limit - 1, 0)])
        rows += cur.fetchall()
        # the ids as one array's text: a Python list is quoted element by element (1.3 s of a 1M run's warm-up
        # under the profiler, its ten explorers' 20,000 ids each)
        cur.execute(
            "SELECT id, twitter_id, screen_name FROM monitor_account WHERE id = ANY(%s::bigint[])",
            [int_array_param([r[0] for r in rows])],
        )
        names = {pk: (tid, name) for pk, tid, name in cur.fetchall()}
    return [
        dict(zip(_NODE_COLUMNS, (pk, *names.get(pk, (None, "")), inf, followers, role), strict=True))
        for pk, inf, followers, role in rows
    ]


def _retweet_delays(tweet: Tweet):
    """Every retweet of ``tweet``: its retweeter and its delay after the tweet in seconds, as two arrays. On
    PostgreSQL the delays are computed there and read by binary COPY (parsing 17,000 timestamps into datetimes
    was a third of the explorer's time); elsewhere from the datetimes."""
    import numpy as np

    if connection.vendor == "postgresql":
        from ..db import copy_out

        with connection.cursor() as cur:
            acc, sec = copy_out(
                cur,
                """SELECT r.retweeter_id, extract(epoch from r.created_at - t.created_at)::double precision
                   FROM monitor_retweet r JOIN monitor_tweet t ON t.id = r.tweet_id
                   WHERE r.workspace_id = %s AND r.tweet_id = %s""",
                [tweet.workspace_id, tweet.pk],
                [("retweeter", "bigint"), ("delay", "float")],
            )
        return acc, sec
    t0 = tweet.created_at
    rows = list(
        Retweet.objects.filter(workspace_id=tweet.workspace_id, tweet=tweet).values_list("retweeter_id", "created_at")
    )
    acc = np.array([r[0] for r in rows], dtype=np.int64)
    sec = np.array([(r[1] - t0).total_seconds() for r in rows], dtype=np.float64)
    return acc, sec


# what json_script escapes, so that the text can sit inside a <script> element
_SCRIPT_SAFE = {ord(">"): "\\u003E", ord("<"): "\\u003C", ord("&"): "\\u0026"}


@cached
def cascade_explorer_page(ws: Workspace, tweet: Tweet, *, limit: int = 400) -> dict:
    """What the explorer's page renders: :func:`cascade_explorer_data` serialised once, as JSON text safe inside a
    ``<script>`` element (``json``), with the counts its words show (``nodes``: drawn, ``hidden``, ``timeline_n``).
    Cached as text: for a cascade drawn with 15,000 nodes, unpickling the data and serialising it again took about
    400 ms a view (2-4 MB), most of the explorer's time under load; fetching the text takes milliseconds. Written
    by msgspec (the data holds only strings, numbers, None and lists): 12 ms for a 17,000-account cascade at the
    1M-retweet benchmark against the standard library's 45 ms, and 12 % shorter (no spaces)."""
    import msgspec

    data = cascade_explorer_data.__wrapped__(ws, tweet, limit=limit)  # built here: only the text is kept
    return {
        "nodes": len(data["nodes"]),
        "hidden": data["hidden"],
        "timeline_n": data["timeline"]["n"],
        "json": msgspec.json.encode(data).decode().translate(_SCRIPT_SAFE),
    }


def _positions(keep: list[dict], kept, src, dst, pub: int) -> tuple[list[float], list[float]]:
    """Where the explorer draws each kept node: :func:`compute.drawing.radial_layout` (the publisher in the
    centre, each level a band around it), rounded to what a screen shows."""
    import numpy as np

    from compute.drawing import radial_layout

    if not keep:
        return [], []
    # each node's position in ``kept`` (its accounts are distinct), found by one sorted search
    order = np.argsort(kept, kind="stable")
    at = np.searchsorted(kept, pub, sorter=order)
    root = int(order[at]) if at < len(kept) and kept[order[at]] == pub else 0
    s = order[np.searchsorted(kept, src, sorter=order)].astype(np.int64)
    d = order[np.searchsorted(kept, dst, sorter=order)].astype(np.int64)
    weight = np.array([n["influence"] or 0.0 for n in keep], dtype=np.float64)
    x, y = radial_layout(len(keep), s, d, root, weight=weight)
    return np.round(x, 2).tolist(), np.round(y, 2).tolist()


def _timeline(delays, points: int = TIMELINE_POINTS) -> dict:
    """The cumulative retweet curve as ``[delay, retweets so far]`` pairs: every retweet when there are at most
    ``points``, else ``points`` evenly spaced ranks (the first and the last included), which draws the same curve."""
    import numpy as np

    from compute.arrays import unique

    d = np.sort(np.asarray(delays, dtype=np.float64))
    n = len(d)
    ranks = np.arange(1, n + 1) if n <= points else unique(np.linspace(1, n, points).round().astype(np.int64))
    return {"n": n, "points": [[float(d[r - 1]), int(r)] for r in ranks]}
