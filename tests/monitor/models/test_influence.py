"""The per-cascade rows have one index, their unique (tweet, account) key, so an account's rows are found through
the cascades it published or retweeted (``CascadeInfluence.objects.of_accounts``). That is exact only while every
row's account is its cascade's publisher or one of its retweeters: both are checked here on real data."""

from __future__ import annotations

import shutil

import pytest
from django.db import connection
from django.db.models import Count

from monitor.models import Account, CascadeInfluence, Retweet, Tweet
from tests.webapp import THESIS

TWITTER16 = THESIS.parent / "twitter16"


def _imported(ws, import_files, tmp_path):
    c = import_files(ws, [shutil.make_archive(str(tmp_path / "twitter16"), "zip", TWITTER16)])
    assert c.status == c.Status.DONE, c.error
    assert CascadeInfluence.objects.filter(tweet__workspace=ws).exists()


def test_every_rows_account_published_or_retweeted_its_cascade(ws_a, import_files, tmp_path):
    _imported(ws_a, import_files, tmp_path)
    rows = set(CascadeInfluence.objects.filter(tweet__workspace=ws_a).values_list("tweet_id", "account_id"))
    took_part = set(Retweet.objects.filter(tweet__workspace=ws_a).values_list("tweet_id", "retweeter_id"))
    took_part |= set(Tweet.objects.filter(workspace=ws_a).values_list("pk", "author_id"))
    assert rows <= took_part


def test_of_accounts_finds_exactly_the_accounts_rows(ws_a, import_files, tmp_path):
    _imported(ws_a, import_files, tmp_path)
    # the busiest accounts, and an account that both published and retweeted where the data has one
    busiest = list(
        CascadeInfluence.objects.filter(tweet__workspace=ws_a)
        .values("account")
        .annotate(n=Count("pk"))
        .order_by("-n", "account")
        .values_list("account", flat=True)[:20]
    )
    both = list(
        Account.objects.filter(workspace=ws_a, tweets__isnull=False, retweets__isnull=False)
        .distinct()
        .values_list("pk", flat=True)[:5]
    )
    accounts = busiest + both
    assert len(accounts) >= 20

    def pks(qs) -> set[int]:
        return set(qs.values_list("pk", flat=True))

    for account in accounts:
        want = pks(CascadeInfluence.objects.filter(account_id=account))
        assert want and pks(CascadeInfluence.objects.of_accounts(account)) == want
    want = pks(CascadeInfluence.objects.filter(account_id__in=accounts))
    assert pks(CascadeInfluence.objects.of_accounts(accounts)) == want
    as_query = Account.objects.filter(pk__in=accounts).values("pk")
    assert pks(CascadeInfluence.objects.of_accounts(as_query)) == want
    one = Account.objects.get(pk=accounts[0])
    assert pks(CascadeInfluence.objects.of_accounts(one)) == pks(CascadeInfluence.objects.filter(account=one))
    assert not CascadeInfluence.objects.of_accounts([]).exists()


def test_the_per_cascade_rows_unique_key_is_their_only_index():
    """Why ``of_accounts`` exists: writing these rows is what every run and micro-batch pays, per index."""
    meta = CascadeInfluence._meta
    assert meta.indexes == []
    assert [c.fields for c in meta.constraints] == [("tweet", "account")]
    assert not any(f.db_index for f in meta.get_fields() if getattr(f, "db_index", False) and not f.primary_key)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's planner")
def test_an_accounts_rows_are_read_by_the_unique_key_even_without_retweet_statistics(ws_a, import_files, tmp_path):
    """Where autovacuum is off a stream-fed workspace keeps its retweets' first statistics: given as a subquery,
    the tweets an account took part in were estimated hundreds of times too many and the planner scanned the
    whole per-cascade table. Named in the statement, their number is known."""
    with connection.cursor() as cur:  # no statistics for the retweeter column, whatever ANALYZE runs
        cur.execute("ALTER TABLE monitor_retweet ALTER COLUMN retweeter_id SET STATISTICS 0")
    _imported(ws_a, import_files, tmp_path)
    busiest = (
        Retweet.objects.filter(tweet__workspace=ws_a)
        .values("retweeter")
        .annotate(n=Count("pk"))
        .order_by("-n", "retweeter")
        .values_list("retweeter", flat=True)[0]
    )
    qs = CascadeInfluence.objects.of_accounts(busiest)
    with connection.cursor() as cur:
        cur.execute("SET LOCAL max_parallel_workers_per_gather = 0")
        sql, params = qs.query.sql_with_params()
        cur.execute("EXPLAIN " + sql, params)
        plan = "\n".join(r[0] for r in cur.fetchall())
    # the workspace's partition's unique key (migration 0048)
    assert f"monitor_cascadeinfluence_w{ws_a.pk}_unique" in plan, plan
    assert "Seq Scan on monitor_cascadeinfluence" not in plan, plan
    assert set(qs.values_list("pk", flat=True)) == set(
        CascadeInfluence.objects.filter(account_id=busiest).values_list("pk", flat=True)
    )
