"""The alert pages: inbox, rules and their actions, the rule form, the unread badge, workspace scoping."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from monitor.alerts import services as alerts
from monitor.alerts.models import Alert, AlertRule
from tests.webapp import THESIS


@pytest.fixture
def thesis(ws_a, alice, import_files):
    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    assert c.status == c.Status.DONE, c.error
    return ws_a


@pytest.fixture
def top3(thesis, alice) -> AlertRule:
    """top_k with k=3 over publisher b (102): fires for b, e, f."""
    from monitor.selectors import account_get

    return alerts.rule_create(
        workspace=thesis, owner=alice, name="top 3 of b", kind="top_k", k=3, publisher=account_get(thesis, 102)
    )


def url(name: str, ws, **kw) -> str:
    return reverse(name, kwargs={"ws": ws.slug, **kw})


def badge(html: str) -> int:
    m = re.search(r'data-unread="(\d+)"', html)
    return int(m.group(1)) if m else 0


def test_it_renders_the_alert_pages_for_the_owner(client, alice, top3):
    client.force_login(alice)
    ws = top3.workspace
    inbox = client.get(url("alerts", ws))
    assert inbox.status_code == 200 and "No alerts yet" in inbox.content.decode()
    rules = client.get(url("alert-rules", ws)).content.decode()
    assert "top 3 of b" in rules and "@b" in rules and "k=3" in rules and "never" in rules
    form = client.get(url("alert-rule-new", ws)).content.decode()
    assert 'value="102"' in form and "Any publisher" in form
    edit = client.get(url("alert-rule-edit", ws, pk=top3.pk)).content.decode()
    assert 'value="top 3 of b"' in edit and '<option value="102" selected>' in edit


def test_it_creates_a_rule_through_the_form(client, alice, thesis):
    client.force_login(alice)
    data = {
        "name": "b's top 3",
        "kind": "top_k",
        "publisher": "102",
        "k": "3",
        "threshold": "0",
        "places": "5",
        "members": "5",
        "reach": "0",
        "count": "1",
        "window_days": "7",
        "aggregate": "total",
        "inbox": "on",
        "webhook_url": "",
    }
    r = client.post(url("alert-rule-new", thesis), data)
    assert r.status_code == 302, r.content.decode()[:2000]
    rule = AlertRule.objects.get(workspace=thesis, owner=alice)
    assert (rule.kind, rule.k, rule.publisher.twitter_id, rule.inbox, rule.email) == ("top_k", 3, 102, True, False)
    # edit it through the same form
    r = client.post(url("alert-rule-edit", thesis, pk=rule.pk), {**data, "k": "5", "publisher": ""})
    assert r.status_code == 302
    rule.refresh_from_db()
    assert rule.k == 5 and rule.publisher is None
    # every channel off is refused, as is a publisher of no workspace of hers
    r = client.post(url("alert-rule-new", thesis), {**data, "inbox": ""})
    assert r.status_code == 400 and "at least one channel" in r.content.decode()
    r = client.post(url("alert-rule-new", thesis), {**data, "publisher": "999"})
    assert r.status_code == 400


def test_it_snoozes_mutes_unsnoozes_and_deletes(client, alice, top3):
    client.force_login(alice)
    ws = top3.workspace

    def act(action: str):
        r = client.post(url("alert-rule-action", ws, pk=top3.pk, action=action))
        assert r.status_code == 302
        top3.refresh_from_db()

    act("snooze-7d")
    assert top3.muted_until is not None
    assert "snoozed until" in client.get(url("alert-rules", ws)).content.decode()
    assert alerts.evaluate_workspace(workspace_id=ws.pk) == []  # a snoozed rule is not evaluated
    act("unsnooze")
    assert top3.muted_until is None
    act("snooze-1d")
    assert top3.muted_until is not None
    act("unsnooze")
    act("mute")
    assert not top3.is_active and "Unmute" in client.get(url("alert-rules", ws)).content.decode()
    act("unmute")
    assert top3.is_active
    assert client.get(url("alert-rule-action", ws, pk=top3.pk, action="mute")).status_code == 405
    assert client.post(url("alert-rule-action", ws, pk=top3.pk, action="explode")).status_code == 404
    r = client.post(url("alert-rule-action", ws, pk=top3.pk, action="delete"))
    assert r.status_code == 302 and not AlertRule.objects.filter(pk=top3.pk).exists()


def test_it_rotates_the_webhook_secret_showing_it_once(client, alice, top3):
    top3.webhook_url = "https://hooks.example.com/x"
    top3.save()
    old = top3.webhook_secret
    client.force_login(alice)
    r = client.post(url("alert-rule-action", top3.workspace, pk=top3.pk, action="rotate-secret"), follow=True)
    top3.refresh_from_db()
    assert top3.webhook_secret != old and top3.webhook_secret in r.content.decode()
    assert top3.webhook_secret not in client.get(url("alert-rules", top3.workspace)).content.decode()


def test_it_lists_the_alerts_of_an_evaluation_and_marks_them_read(client, alice, top3):
    ws = top3.workspace
    created = alerts.evaluate_workspace(workspace_id=ws.pk)
    assert sorted(a.account.screen_name for a in created) == ["b", "e", "f"]
    client.force_login(alice)
    html = client.get(url("alerts", ws)).content.decode()
    for name in ("@b", "@e", "@f"):
        assert name in html
    assert "top 3 of b" in html and badge(html) == 3
    first = Alert.objects.filter(rule=top3).order_by("pk").first()
    assert client.post(url("alert-read", ws, pk=first.pk)).status_code == 302
    assert badge(client.get(url("alerts", ws)).content.decode()) == 2
    assert client.post(url("alerts-read-all", ws)).status_code == 302
    html = client.get(url("alerts", ws)).content.decode()
    assert badge(html) == 0 and Alert.objects.filter(rule=top3, read_at__isnull=True).count() == 0


def test_it_evaluates_now_from_the_rules_page(client, alice, top3):
    client.force_login(alice)
    r = client.post(url("alert-rules-evaluate", top3.workspace), follow=True)
    assert r.status_code == 200 and "3 new alerts" in r.content.decode()
    assert Alert.objects.filter(rule=top3).count() == 3
    top3.refresh_from_db()
    assert top3.last_evaluated_at is not None


def test_it_shows_the_badge_on_other_pages(client, alice, top3):
    alerts.evaluate_workspace(workspace_id=top3.workspace.pk)
    client.force_login(alice)
    html = client.get(url("overview", top3.workspace)).content.decode()
    assert badge(html) == 3 and url("alerts", top3.workspace) in html


def test_it_answers_404_to_another_workspace(client, bob, top3):
    ws = top3.workspace
    alerts.evaluate_workspace(workspace_id=ws.pk)
    alert = Alert.objects.filter(rule=top3).first()
    client.force_login(bob)
    for name, kw in [("alerts", {}), ("alert-rules", {}), ("alert-rule-new", {}), ("alert-rule-edit", {"pk": top3.pk})]:
        assert client.get(url(name, ws, **kw)).status_code == 404, name
    posts = [
        url("alert-read", ws, pk=alert.pk),
        url("alerts-read-all", ws),
        url("alert-rules-evaluate", ws),
        url("alert-rule-new", ws),
        url("alert-rule-edit", ws, pk=top3.pk),
        *(url("alert-rule-action", ws, pk=top3.pk, action=a) for a in ("snooze-1d", "mute", "delete", "rotate-secret")),
    ]
    for u in posts:
        assert client.post(u, {"name": "x"}).status_code == 404, u
    top3.refresh_from_db()
    assert top3.is_active and top3.muted_until is None
    assert Alert.objects.filter(rule=top3, read_at__isnull=True).count() == 3


def test_it_hides_another_users_rule_in_the_same_workspace(client, alice, top3, django_user_model):
    from monitor import services

    carol = django_user_model.objects.create_user("carol", "carol@example.com", "carol-pass-123")
    services.membership_add(workspace=top3.workspace, user=carol)
    client.force_login(carol)
    assert "top 3 of b" not in client.get(url("alert-rules", top3.workspace)).content.decode()
    assert client.get(url("alert-rule-edit", top3.workspace, pk=top3.pk)).status_code == 404
    assert client.post(url("alert-rule-action", top3.workspace, pk=top3.pk, action="delete")).status_code == 404
