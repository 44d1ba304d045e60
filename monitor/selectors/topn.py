"""The first rows of a per-account grouping, named by key after it is cut (shared by the overview's reads)."""

from __future__ import annotations

from django.db import connection

from ..models import Account

__all__ = ["top_named"]


def top_named(grouped_sql: str, params: list, n: int) -> list[tuple[tuple, tuple[int, str]]]:
    """The first ``n`` rows of ``grouped_sql`` (one row per account: its key, then two sort keys ``k1``, ``k2``
    and any other columns) by ``k1``, ``k2`` descending and the account's Twitter id, each with the account's
    (Twitter id, screen name). Only the rows up to the ``n``-th by (``k1``, ``k2``) and those tied with it are
    read back; their accounts are then read by key."""
    if n <= 0:
        return []
    with connection.cursor() as cur:
        cur.execute(
            f"""WITH g AS ({grouped_sql}),
                     cut AS (SELECT k1, k2 FROM g ORDER BY k1 DESC, k2 DESC LIMIT 1 OFFSET %s)
                SELECT g.* FROM g
                WHERE NOT EXISTS (SELECT 1 FROM cut) OR (g.k1, g.k2) >= (SELECT k1, k2 FROM cut)""",
            [*params, n - 1],
        )
        rows = cur.fetchall()
    names = dict(
        (pk, (tid, name))
        for pk, tid, name in Account.objects.filter(pk__in=[r[0] for r in rows]).values_list(
            "pk", "twitter_id", "screen_name"
        )
    )
    named = [(r, names.get(r[0], (None, ""))) for r in rows]
    named.sort(key=lambda x: (-(x[0][1] or 0), -(x[0][2] or 0), x[1][0] or 0))
    return named[:n]
