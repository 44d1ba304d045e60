"""The claim rule kinds (``tests/claimed.py``'s collection, the claim "5g": tweets 1, 2 and 5): a tracked account
that starts spreading the claim, and the claim's reach doubling between two windows; each fires when its condition
holds and stays quiet just short of it. A claim kind needs a claim of the rule's workspace."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from monitor import services as monitor_services
from monitor.alerts import services
from monitor.alerts.kinds import CLAIM_KINDS
from monitor.alerts.models import Alert, AlertRule
from monitor.models import Tweet
from tests.claimed import claimed_csv

Kind = AlertRule.Kind


@pytest.fixture
def claim(ws_a, alice, import_files, tmp_path):
    c = import_files(ws_a, [claimed_csv(tmp_path / "tweets.csv")])
    assert c.status == c.Status.DONE, c.error
    return monitor_services.claim_create(workspace=ws_a, user=alice, name="5G towers", query="5g")


def _track(claim, *twitter_ids):
    for t in twitter_ids:
        monitor_services.claim_track(claim=claim, account=claim.workspace.accounts.get(twitter_id=t))


def fired(claim, kind, **params) -> list[Alert]:
    ws = claim.workspace
    r = services.rule_create(workspace=ws, owner=ws.members.get(), name="r", kind=kind, claim=claim, **params)
    services.evaluate_workspace(workspace_id=ws.pk)
    return list(Alert.objects.filter(rule=r).select_related("account").order_by("pk"))


def test_it_fires_claim_tracked_spreader_for_a_tracked_account_that_starts_spreading_the_claim(claim):
    _track(claim, 101, 105, 106)  # 101 spread it before the window; 105 retweeted tweet 3 only; 106 on March 4
    (alert,) = fired(claim, Kind.CLAIM_TRACKED_SPREADER, window_days=1)
    assert alert.account.twitter_id == 106 and alert.value == 1
    assert (str(alert.window_start), str(alert.window_end)) == ("2020-03-04", "2020-03-04")
    assert "tracked for the claim “5G towers”, started spreading it" in alert.message


def test_it_does_not_fire_claim_tracked_spreader_for_an_account_that_spread_it_before(claim):
    _track(claim, 101, 105)
    assert fired(claim, Kind.CLAIM_TRACKED_SPREADER, window_days=1) == []


def _reach(claim, **by_tweet):
    for tid, reach in by_tweet.items():
        Tweet.objects.filter(workspace=claim.workspace, tweet_id=int(tid[1:])).update(reach=reach)


def test_it_fires_claim_reach_doubles_when_the_window_reaches_twice_the_one_before(claim):
    _reach(claim, t1=10.0, t2=20.0, t5=60.0)  # windows of 2 days: March 3-4 (tweet 5) against March 1-2 (1, 2)
    (alert,) = fired(claim, Kind.CLAIM_REACH_DOUBLES, window_days=2)
    assert (alert.value, alert.previous_value, alert.account.twitter_id) == (60.0, 30.0, 903)
    assert (
        "reached 60.0 in 2020-03-03..2020-03-04, 2.0× its 30.0 of the 2 days before; most of it through @pc"
        in alert.message
    )


def test_it_does_not_fire_claim_reach_doubles_just_short_of_twice(claim):
    _reach(claim, t1=10.0, t2=20.0, t5=59.0)
    assert fired(claim, Kind.CLAIM_REACH_DOUBLES, window_days=2) == []


@pytest.mark.parametrize("kind", sorted(CLAIM_KINDS))
def test_a_claim_kind_needs_a_claim_of_the_workspace(ws_a, ws_b, alice, bob, kind):
    with pytest.raises(ValidationError, match="choose the claim"):
        services.rule_create(workspace=ws_a, owner=alice, name="r", kind=kind)
    theirs = monitor_services.claim_create(workspace=ws_b, user=bob, name="x", query="x")
    with pytest.raises(ValidationError, match="not a claim of this workspace"):
        services.rule_create(workspace=ws_a, owner=alice, name="r", kind=kind, claim=theirs)


def test_deleting_a_claim_deletes_its_rules(claim):
    ws = claim.workspace
    services.rule_create(workspace=ws, owner=ws.members.get(), name="r", kind=Kind.CLAIM_REACH_DOUBLES, claim=claim)
    monitor_services.claim_delete(claim=claim)
    assert not AlertRule.objects.filter(workspace=ws).exists()
