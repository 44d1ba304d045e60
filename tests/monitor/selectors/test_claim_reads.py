"""A claim's reads (monitor/selectors/claim_reads.py): its timeline, spreaders, publishers, tracked accounts and
provenance against the rows they summarise, and the refusal of a claim broader than its limit. The collection is
``tests/claimed.py``'s (its table says which tweet has what)."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db.models import Count, Sum

from monitor import selectors, services
from monitor.models import CascadeInfluence, Tweet


def test_the_claims_timeline_counts_tweets_by_label_and_retweets_by_their_day(claimed):
    rows = selectors.claim_timeline(claimed, "5g")
    got = [(r["day"], r["tweets"], r["retweets"], r["by_label"]["false"], r["by_label"]["unverified"]) for r in rows]
    assert got == [
        (dt.date(2020, 3, 1), 1, 0, 1, 0),
        (dt.date(2020, 3, 2), 1, 3, 1, 0),
        (dt.date(2020, 3, 3), 1, 2, 0, 1),
        (dt.date(2020, 3, 4), 0, 2, 0, 0),
    ]
    reach = Tweet.objects.filter(workspace=claimed, tweet_id__in=[1, 2, 5]).aggregate(r=Sum("reach"))["r"]
    assert sum(r["reach"] for r in rows) == pytest.approx(reach)


def test_the_claims_spreaders_are_the_ranking_over_its_tweets(claimed):
    got = selectors.claim_spreaders(claimed, "5g")
    rows = (
        CascadeInfluence.objects.filter(tweet__workspace=claimed, tweet__tweet_id__in=[1, 2, 5])
        .exclude(role=CascadeInfluence.Role.PUBLISHER)
        .values("account__twitter_id")
        .annotate(total=Sum("influence"), n=Count("tweet"))
    )
    want = sorted(((r["account__twitter_id"], r["total"], r["n"]) for r in rows), key=lambda r: (-r[1], r[0]))
    assert want and [(r["twitter_id"], r["total"], r["cascades"]) for r in got] == [
        (a, pytest.approx(t), n) for a, t, n in want
    ]
    assert [r["rank"] for r in got] == list(range(1, len(got) + 1))
    march_4 = selectors.Window(dt.date(2020, 3, 3), None)
    assert {r["twitter_id"] for r in selectors.claim_spreaders(claimed, "5g", window=march_4)} == {101, 106}


def test_the_claims_publishers_with_their_false_tweets(claimed):
    got = selectors.claim_publishers(claimed, "5g")
    assert {(r["screen_name"], r["tweets"], r["false"]) for r in got} == {("pa", 2, 2), ("pc", 1, 0)}


def test_a_claim_broader_than_its_limit_is_refused(claimed, monkeypatch):
    monkeypatch.setattr("monitor.selectors.claims.CLAIM_MAX_TWEETS", 2)
    with pytest.raises(selectors.ClaimTooBroad, match="more than 2 tweets"):
        selectors.claim_timeline(claimed, "5g")


def test_tracked_accounts_say_how_much_of_the_claim_they_spread(claimed, alice):
    claim = services.claim_create(workspace=claimed, user=alice, name="5G", query="5g")
    for twitter_id in (101, 105, 901):
        services.claim_track(claim=claim, account=claimed.accounts.get(twitter_id=twitter_id))
    claim.refresh_from_db()
    got = [(r["account"].twitter_id, r["published"], r["retweeted"]) for r in selectors.claim_tracked(claim)]
    assert got == [(101, 0, 3), (105, 0, 0), (901, 2, 0)]


def test_the_claims_provenance_counts_its_tweets_by_graph_and_status(claimed):
    assert selectors.claim_provenance(claimed, "5g") == {"follows": 3, "given": 0, "pending": 0}
    Tweet.objects.filter(workspace=claimed, tweet_id=5).update(compute_status=Tweet.ComputeStatus.PENDING)
    Tweet.objects.filter(workspace=claimed, tweet_id=2).update(graph_source=Tweet.GraphSource.GIVEN)
    assert selectors.claim_provenance(claimed, "5g") == {"follows": 1, "given": 1, "pending": 1}
