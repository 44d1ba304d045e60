"""An account's page: its influence per publisher and per day, its cascades and follower counts, and whom it
amplified / who amplified it."""

from __future__ import annotations

from django.db.models import Count, Sum

from ..cache import cached
from ..models import Account, CascadeGraph, CascadeInfluence, FollowerCount, Tweet, Workspace
from .windows import ALL_TIME, Window


@cached
def account_summary(ws: Workspace, account: Account, *, window: Window = ALL_TIME) -> dict:
    """An account's influence per publisher, per day, its cascades and follower-count history (cached under the
    workspace's data version, which imports bump too, so new follower counts show at once)."""
    # from the per-cascade rows (through the cascades it took part in: ``of_accounts``), not the daily aggregates:
    # neither table has an index that leads with the account (one cost 3-9 s of every 1M-row aggregate refresh,
    # issue 20; one on the per-cascade rows a third of writing them), and the sums are the same. The rows are read
    # once and summed here: one statement instead of one per sum (an account takes part in thousands of cascades
    # at most, and each statement names the cascades' tweets)
    rows = list(
        CascadeInfluence.objects.of_accounts(account)
        .filter(window.filter())
        .values_list("tweet_id", "publisher_id", "day", "influence", "tweet__tweet_id")
    )
    per_publisher: dict[int, list] = {}
    per_day: dict = {}
    for _, publisher, day, influence, _ in rows:
        for sums, key in ((per_publisher, publisher), (per_day, day)):
            got = sums.setdefault(key, [0.0, 0])
            got[0] += influence
            got[1] += 1
    names = Account.objects.in_bulk(sorted(per_publisher))
    top = sorted(per_publisher.items(), key=lambda kv: (-kv[1][0], names[kv[0]].twitter_id))[:50]
    best = sorted(rows, key=lambda r: (-r[3], r[4]))[:50]
    # by the (tweet, account) key, one row per cascade: the rows' ``id`` has no index (migration 0044)
    cascades = {
        c.tweet_id: c
        for c in CascadeInfluence.objects.select_related("tweet", "publisher").filter(
            workspace_id=account.workspace_id, account_id=account.pk, tweet_id__in=[r[0] for r in best]
        )
    }
    published = Tweet.objects.filter(workspace=ws, author=account).aggregate(n=Count("pk"), reach=Sum("reach"))
    counts = list(
        FollowerCount.objects.filter(workspace_id=account.workspace_id, account=account).order_by("-observed_at")[:20]
    )
    return {
        "per_publisher": [
            {
                "publisher__twitter_id": names[p].twitter_id,
                "publisher__screen_name": names[p].screen_name,
                "total": total,
                "n_cascades": n,
            }
            for p, (total, n) in top
        ],
        "per_day": [{"day": d, "total": total, "n_cascades": n} for d, (total, n) in sorted(per_day.items())],
        "cascades": [cascades[r[0]] for r in best],
        "published": published,
        "follower_counts": counts,
        "total": float(sum(r[3] for r in rows)),
        "n_cascades": len(rows),
    }


@cached
def account_amplification(ws: Workspace, account: Account, *, cascades: int = 1000, top: int = 20) -> dict:
    """Whom ``account`` amplified (the accounts it retweeted from: its share flowed to them) and who amplified
    it (the accounts that retweeted from it), counted over its ``cascades`` most influential cascades. Cached
    under the workspace's data version (it reads up to ``cascades`` packed edge lists)."""
    from compute.arrays import unique

    tweet_ids = list(
        CascadeInfluence.objects.of_accounts(account)
        .filter(tweet__workspace=ws)
        .order_by("-influence")
        .values_list("tweet_id", flat=True)[:cascades]
    )
    amplified: dict[int, int] = {}
    amplified_by: dict[int, int] = {}
    for g in CascadeGraph.objects.filter(tweet_id__in=tweet_ids).only("edges"):
        src, dst = g.edge_arrays()
        for acc in unique(dst[src == account.pk]).tolist():
            amplified[acc] = amplified.get(acc, 0) + 1
        for acc in unique(src[dst == account.pk]).tolist():
            amplified_by[acc] = amplified_by.get(acc, 0) + 1

    def rows(counts: dict[int, int]) -> list[dict]:
        best = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
        accs = Account.objects.in_bulk([k for k, _ in best])
        return [{"account": accs[k], "cascades": n} for k, n in best if k in accs]

    return {"amplified": rows(amplified), "amplified_by": rows(amplified_by), "cascades_read": len(tweet_ids)}
