"""The cascade explorer and a tweet's page: a cascade's participants, its spreading graph, the drawn subgraph
of a large cascade and its retweet timeline."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from django.db import connection

from ..cache import cached
from ..db import int_array_param
from ..models import Account, CascadeGraph, CascadeInfluence, Retweet, Tweet, Workspace

if TYPE_CHECKING:
    import numpy as np


def tweet_participants(tweet: Tweet, *, limit: int = 200) -> list[CascadeInfluence]:
    return list(
        CascadeInfluence.objects.filter(workspace_id=tweet.workspace_id, tweet=tweet)
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
    ``TIMELINE_POINTS`` points), and how much was left out. Cached under the workspace's data version.

    Columns, not one object per node: ``nodes`` holds one list per field (``id``, ``tid``, ``name``, ``inf``,
    ``n``, ``role``: an index into ``roles``, ``delay``: None where unknown, ``x``, ``y``), the publisher first,
    then by influence; ``edges`` holds ``src`` and ``dst``, positions in those lists (``src`` could have seen the
    tweet from ``dst``). For a 17,000-account cascade of the 1M-retweet benchmark, building one dict per node
    and one list per edge (92,000) took about 150 ms of the explorer's 250 ms, most of it the garbage
    collector's passes over the new objects; the page's script makes the objects it draws from the columns."""
    import numpy as np

    pub = tweet.author_id
    keep = _drawn_participants(tweet, limit)
    n_nodes = (
        CascadeInfluence.objects.filter(workspace_id=tweet.workspace_id, tweet=tweet).count()
        if tweet.n_participants == 0
        else tweet.n_participants
    )
    g = CascadeGraph.objects.filter(tweet=tweet).first()
    src, dst = g.edge_arrays() if g is not None else (np.zeros(0, np.int64), np.zeros(0, np.int64))
    s, d = _positions_in(keep.account, src, dst)
    drawn = (s >= 0) & (d >= 0)
    s, d = s[drawn], d[drawn]
    # every retweet's delay (one query: the timeline needs them all, the drawn nodes theirs)
    retweeters, seconds = _retweet_delays(tweet)
    delay = _delays_of(keep.account, retweeters, seconds)
    delay[keep.account == pub] = 0.0
    x, y = _positions(keep, s, d, pub)
    return {
        "tweet": str(tweet.tweet_id),
        "label": tweet.label,
        "unit": tweet.unit,
        "roles": list(_ROLES),
        "nodes": {
            "id": keep.account.tolist(),
            "tid": [str(t) for t in keep.twitter_id.tolist()],
            "name": keep.name,
            "inf": keep.influence.tolist(),
            "n": keep.followers.tolist(),
            "role": keep.role.tolist(),
            "delay": [None if v != v else v for v in delay.tolist()],  # NaN: the retweet is not stored
            "x": x,
            "y": y,
        },
        "edges": {"src": s.tolist(), "dst": d.tolist()},
        "hidden": {"nodes": max(n_nodes - len(keep.account), 0), "edges": int(len(src) - len(s))},
        "timeline": _timeline(seconds),
    }


#: the participants' roles, in the order of the codes the explorer sends (``nodes.role`` indexes ``roles``)
_ROLES = tuple(CascadeInfluence.Role.values)


class _Drawn(NamedTuple):
    """The drawn participants as columns, the publisher first, then by influence (ties by account key)."""

    account: np.ndarray  # int64 Account pks
    twitter_id: np.ndarray  # int64
    name: list[str]
    influence: np.ndarray  # float64
    followers: np.ndarray  # float64
    role: np.ndarray  # int64 positions in _ROLES


def _drawn_participants(tweet: Tweet, limit: int) -> _Drawn:
    """The publisher and the ``limit`` - 1 most influential other participants. On PostgreSQL the participants
    are read as arrays (``copy_out``) and their accounts looked up by key one at a time after (a nested loop over
    the accounts' primary key, so the cost grows with the cascade, not the workspace): joined in one query,
    PostgreSQL hashed the whole account table for a large cascade (4.3M accounts at the 10M-retweet benchmark:
    307-356 ms of the explorer's 338-421 ms for a 60,001-account cascade), and ``id = ANY`` of 17,000 keys
    scanned every account of the 1M-retweet benchmark (44 ms against 40 for the lookups)."""
    import numpy as np

    pub = tweet.author_id
    n = max(limit, 1)
    if connection.vendor != "postgresql":
        select = """SELECT ci.account_id, a.twitter_id, a.screen_name, ci.influence, ci.followers, ci.role
                    FROM monitor_cascadeinfluence ci JOIN monitor_account a ON a.id = ci.account_id
                    WHERE ci.tweet_id = %s ORDER BY ci.account_id <> %s, ci.influence DESC, ci.account_id LIMIT %s"""
        with connection.cursor() as cur:
            cur.execute(select, [tweet.pk, pub, n])
            rows = cur.fetchall()
        return _Drawn(
            np.array([r[0] for r in rows], np.int64),
            np.array([r[1] for r in rows], np.int64),
            [r[2] for r in rows],
            np.array([r[3] for r in rows], np.float64),
            np.array([r[4] for r in rows], np.float64),
            np.array([_ROLES.index(r[5]) for r in rows], np.int64),
        )
    import psycopg

    from ..db import copy_out

    roles = ", ".join(f"'{r}'" for r in _ROLES)  # the model's choices: no quote in them
    with connection.cursor() as cur:
        # array_position is NULL for a role outside the choices: copy_out refuses a NULL
        acc, inf, followers, role = copy_out(
            cur,
            f"""SELECT account_id, influence, followers, array_position(ARRAY[{roles}]::text[], role::text) - 1
                FROM monitor_cascadeinfluence WHERE workspace_id = %s AND tweet_id = %s
                ORDER BY account_id <> %s, influence DESC, account_id LIMIT %s""",
            [tweet.workspace_id, tweet.pk, pub, n],
            [("a", "bigint"), ("i", "float"), ("f", "float"), ("r", "bigint")],
        )
        raw = cur.cursor if hasattr(cur, "cursor") else cur
        # the keys in ascending order: the lookups walk the index and the table in their order (at the 10M
        # benchmark, 20,000 accounts of 4.3M: 58-126 ms against 155-229 ms in the participants' order)
        with psycopg.Cursor(raw.connection) as bc:  # binary: the ids as int8 arrays, the names as one text[]
            bc.execute(
                """SELECT array_agg(u.id), array_agg(a.twitter_id), array_agg(a.screen_name)
                   FROM unnest(%s::bigint[]) AS u(id),
                       LATERAL (SELECT twitter_id, screen_name FROM monitor_account WHERE id = u.id LIMIT 1) a""",
                [int_array_param(np.sort(acc))],
                binary=True,
            )
            found, tids, names = bc.fetchone()
    found = np.array(found or (), np.int64)
    if len(found) != len(acc):
        raise LookupError(f"cascade explorer: a participant of tweet {tweet.tweet_id} has no account row")
    # each participant's row among those found (the three aggregates read the rows in one order)
    from compute.arrays import sorted_positions

    order = np.argsort(found, kind="stable")
    at = order[sorted_positions(found[order], acc)[0]]
    tids = np.array(tids, np.int64)[at]
    names = [names[i] for i in at.tolist()]
    return _Drawn(acc, tids, names, inf, followers, role)


def _positions_in(kept, src, dst):
    """Each edge end's position in ``kept`` (distinct account keys), -1 where it is not drawn."""
    import numpy as np

    if not len(kept):
        return np.full(len(src), -1, np.int64), np.full(len(dst), -1, np.int64)
    from compute.arrays import sorted_positions_each

    order = np.argsort(kept, kind="stable")
    ends = sorted_positions_each(kept[order], [src, dst])
    return tuple(np.where(hit, order[pos], -1).astype(np.int64) for pos, hit in ends)


def _delays_of(kept, retweeters, seconds):
    """The delay of each of ``kept``'s retweets (NaN where it has none), from the arrays of every retweet."""
    import numpy as np

    out = np.full(len(kept), np.nan)
    if len(retweeters):
        from compute.arrays import sorted_positions

        order = np.argsort(retweeters, kind="stable")
        pos, hit = sorted_positions(retweeters[order], kept)
        out[hit] = seconds[order[pos[hit]]]
    return out


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
        "nodes": len(data["nodes"]["id"]),
        "hidden": data["hidden"],
        "timeline_n": data["timeline"]["n"],
        "json": msgspec.json.encode(data).decode().translate(_SCRIPT_SAFE),
    }


def _positions(keep: _Drawn, s, d, pub: int) -> tuple[list[float], list[float]]:
    """Where the explorer draws each kept node: :func:`compute.drawing.radial_layout` (the publisher in the
    centre, each level a band around it), rounded to what a screen shows. ``s``, ``d``: the drawn edges as
    positions in ``keep``."""
    import numpy as np

    from compute.drawing import radial_layout

    if not len(keep.account):
        return [], []
    at = np.flatnonzero(keep.account == pub)
    root = int(at[0]) if len(at) else 0
    x, y = radial_layout(len(keep.account), s, d, root, weight=keep.influence)
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
