"""Evaluation: dedupe, the rate limit, mute / snooze / unsubscribe, the inbox, email, access, the tasks."""

from __future__ import annotations

import datetime as dt

import pytest
from django.test import RequestFactory
from django.utils import timezone

from monitor.alerts import selectors, services, tasks, views
from monitor.alerts.delivery import unsubscribe_path
from monitor.alerts.models import Alert, AlertRule
from monitor.models import Tweet
from tests.webapp import THESIS


@pytest.fixture
def thesis(ws_a, alice, import_files):
    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    assert c.status == c.Status.DONE, c.error
    Tweet.objects.filter(workspace=ws_a, tweet_id__in=[1000, 2000]).update(label="false")
    return ws_a


def spreaders(ws, owner, **kw) -> AlertRule:
    """false_spreader with count 1: five candidates, e, f, c, a (2 cascades, by influence) then d (1)."""
    return services.rule_create(
        workspace=ws, owner=owner, name="false spreaders", kind=AlertRule.Kind.FALSE_SPREADER, count=1, **kw
    )


def test_it_deduplicates_alerts_across_evaluations(thesis, alice):
    r = spreaders(thesis, alice)
    assert len(services.evaluate_workspace(workspace_id=thesis.pk)) == 5
    assert services.evaluate_workspace(workspace_id=thesis.pk) == []
    assert tasks.evaluate_alerts.delay(thesis.pk).get() == 0
    assert Alert.objects.filter(rule=r).count() == 5


def test_it_enforces_the_unique_alert_in_the_database(thesis, alice):
    from django.db import IntegrityError, transaction

    r = spreaders(thesis, alice)
    a = services.evaluate_workspace(workspace_id=thesis.pk)[0]
    with pytest.raises(IntegrityError), transaction.atomic():
        Alert.objects.create(
            rule=r, workspace=thesis, account=a.account, window_start=a.window_start, window_end=a.window_end, value=1
        )


def test_it_rate_limits_per_rule_and_day_keeping_the_most_notable(thesis, alice):
    r = spreaders(thesis, alice, max_alerts_per_day=2)
    created = services.evaluate_workspace(workspace_id=thesis.pk)
    assert [a.account.screen_name for a in created] == ["e", "f"]
    r.refresh_from_db()
    assert r.suppressed_count == 3 and r.last_suppressed_at is not None
    assert services.evaluate_workspace(workspace_id=thesis.pk) == []  # still inside the 24 hours
    later = timezone.now() + dt.timedelta(hours=25)
    assert [a.account.screen_name for a in services.evaluate_workspace(workspace_id=thesis.pk, now=later)] == ["c", "a"]
    r.refresh_from_db()
    assert r.suppressed_count == 1


def test_it_skips_snoozed_and_muted_rules(thesis, alice):
    r = spreaders(thesis, alice)
    now = timezone.now()
    services.rule_snooze(rule=r, until=now + dt.timedelta(hours=1))
    assert services.evaluate_workspace(workspace_id=thesis.pk, now=now) == []
    assert len(services.evaluate_workspace(workspace_id=thesis.pk, now=now + dt.timedelta(hours=2))) == 5
    r2 = spreaders(thesis, alice)
    services.rule_mute(rule=r2)
    assert services.evaluate_workspace(workspace_id=thesis.pk) == []
    services.rule_mute(rule=r2, muted=False)
    assert len(services.evaluate_workspace(workspace_id=thesis.pk)) == 5


def test_it_raises_nothing_for_an_owner_who_left_the_workspace(thesis, bob):
    spreaders(thesis, bob)  # bob is a member of workspace B only
    assert services.evaluate_workspace(workspace_id=thesis.pk) == []


def test_it_keeps_the_inbox_with_unread_and_read_alerts(thesis, alice, bob):
    spreaders(thesis, alice)
    services.evaluate_workspace(workspace_id=thesis.pk)
    unread = list(selectors.inbox_for_user(alice, thesis, unread_only=True))
    assert len(unread) == 5
    services.alert_mark_read(alert=unread[0])
    assert selectors.inbox_for_user(alice, thesis, unread_only=True).count() == 4
    assert services.alerts_mark_all_read(user=alice, workspace=thesis) == 4
    assert selectors.inbox_for_user(alice, thesis).count() == 5
    assert selectors.inbox_for_user(bob, thesis).count() == 0


def test_it_emails_new_alerts_with_the_unsubscribe_link(thesis, alice, mailoutbox, settings):
    settings.SPREADWATCH_BASE_URL = "https://spreadwatch.example"
    r = spreaders(thesis, alice, email=True)
    services.evaluate_workspace(workspace_id=thesis.pk)
    assert len(mailoutbox) == 1
    m = mailoutbox[0]
    link = f"https://spreadwatch.example/alerts/unsubscribe/{r.unsubscribe_token}/"
    assert m.to == ["alice@example.com"]
    assert "5 new alerts" in m.subject
    assert link in m.body and "@e spread 2 cascades labelled false" in m.body
    assert m.extra_headers["List-Unsubscribe"] == f"<{link}>"
    assert Alert.objects.filter(rule=r, emailed_at__isnull=False).count() == 5
    services.evaluate_workspace(workspace_id=thesis.pk)
    assert len(mailoutbox) == 1  # nothing new, no mail


def test_it_sends_no_email_when_email_is_off(thesis, alice, mailoutbox):
    spreaders(thesis, alice)
    services.evaluate_workspace(workspace_id=thesis.pk)
    assert mailoutbox == []


def test_it_unsubscribes_from_the_email_by_token(thesis, alice, mailoutbox):
    r = spreaders(thesis, alice, email=True)
    assert unsubscribe_path(r) == f"/alerts/unsubscribe/{r.unsubscribe_token}/"
    assert services.rule_unsubscribe(token=r.unsubscribe_token).pk == r.pk
    r.refresh_from_db()
    assert r.email is False and r.inbox is True
    services.evaluate_workspace(workspace_id=thesis.pk)
    assert mailoutbox == [] and Alert.objects.filter(rule=r).count() == 5
    with pytest.raises(AlertRule.DoesNotExist):
        services.rule_unsubscribe(token="not-a-token")


def test_it_unsubscribes_through_the_view_on_post_only(thesis, alice):
    r = spreaders(thesis, alice, email=True)
    rf = RequestFactory()
    page = views.unsubscribe(rf.get(unsubscribe_path(r)), r.unsubscribe_token)
    assert page.status_code == 200 and b"<form" in page.content
    r.refresh_from_db()
    assert r.email is True  # a link prefetch does not unsubscribe
    done = views.unsubscribe(rf.post(unsubscribe_path(r)), r.unsubscribe_token)
    assert done.status_code == 200
    r.refresh_from_db()
    assert r.email is False
    assert views.unsubscribe(rf.get("/x/"), "nope").status_code == 404


def test_it_evaluates_every_workspace_from_beat(thesis, alice, run_tasks):
    spreaders(thesis, alice)
    assert run_tasks(tasks.evaluate_all.delay).get() >= 1
    assert Alert.objects.filter(workspace=thesis).count() == 5
