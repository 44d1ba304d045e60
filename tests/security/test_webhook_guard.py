"""The webhook URL guard: only http(s) to public addresses, checked when a rule is saved and at delivery."""

from __future__ import annotations

import socket

import pytest
from django.core.exceptions import ValidationError

from monitor.alerts import delivery
from monitor.alerts import services as alerts
from monitor.alerts.models import WebhookDelivery
from monitor.security import WebhookURLRefused, address_refused_reason, check_webhook_url


def fake_dns(*ips):
    def resolve(host, port, type=0):
        return [(socket.AF_INET6 if ":" in ip else socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, port)) for ip in ips]

    return resolve


@pytest.mark.parametrize(
    "ip",
    [
        "127.0.0.1",
        "127.8.9.1",
        "::1",
        "169.254.169.254",
        "fe80::1",
        "10.1.2.3",
        "172.16.0.1",
        "172.31.255.255",
        "192.168.1.1",
        "fc00::1",
        "fd12:3456::1",
        "0.0.0.0",
        "::",
        "224.0.0.1",
        "ff02::1",
        "::ffff:127.0.0.1",
        "100.64.0.1",
    ],
)
def test_it_refuses_internal_addresses(ip):
    assert address_refused_reason(ip)
    with pytest.raises(WebhookURLRefused, match="internal"):
        check_webhook_url("https://hooks.example.com/x", allow_private=False, resolve=fake_dns(ip))
    assert check_webhook_url("https://hooks.example.com/x", allow_private=True, resolve=fake_dns(ip)) == [ip]


@pytest.mark.parametrize("ip", ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "172.32.0.1"])
def test_it_allows_public_addresses(ip):
    assert address_refused_reason(ip) is None
    assert check_webhook_url("http://hooks.example.com:8080/x", allow_private=False, resolve=fake_dns(ip)) == [ip]


def test_one_internal_address_among_public_ones_is_refused():
    with pytest.raises(WebhookURLRefused):
        check_webhook_url("https://x.example.com/", allow_private=False, resolve=fake_dns("8.8.8.8", "10.0.0.1"))


@pytest.mark.parametrize(
    "url", ["ftp://example.com/x", "file:///etc/passwd", "gopher://127.0.0.1/", "javascript:alert(1)", "https:///x"]
)
def test_it_refuses_other_schemes_and_hostless_urls(url):
    with pytest.raises(WebhookURLRefused):
        check_webhook_url(url, allow_private=True, resolve=fake_dns("8.8.8.8"))


def test_the_setting_is_read_at_each_call(settings):
    settings.SPREADWATCH_WEBHOOK_ALLOW_PRIVATE = False
    with pytest.raises(WebhookURLRefused):
        check_webhook_url("http://127.0.0.1:9/hook")
    settings.SPREADWATCH_WEBHOOK_ALLOW_PRIVATE = True
    assert check_webhook_url("http://127.0.0.1:9/hook") == ["127.0.0.1"]


def test_saving_a_rule_refuses_an_internal_url(settings, objs, alice):
    settings.SPREADWATCH_WEBHOOK_ALLOW_PRIVATE = False
    with pytest.raises(ValidationError) as err:
        alerts.rule_create(
            workspace=objs.ws, owner=alice, name="x", kind="top_k", webhook_url="http://169.254.169.254/latest/"
        )
    assert "webhook_url" in err.value.message_dict
    with pytest.raises(ValidationError):
        alerts.rule_update(rule=objs.rule, webhook_url="http://localhost:8000/hook")


def _form(**kw):
    return {
        "name": "hook",
        "kind": "top_k",
        "publisher": "",
        "k": "3",
        "threshold": "0",
        "places": "5",
        "members": "5",
        "reach": "0",
        "count": "1",
        "window_days": "7",
        "aggregate": "total",
        "inbox": "",
        "email": "",
        **kw,
    }


def test_the_form_and_the_api_show_the_refusal_on_the_field(settings, client, objs, alice):
    settings.SPREADWATCH_WEBHOOK_ALLOW_PRIVATE = False
    client.force_login(alice)
    r = client.post(f"/w/{objs.ws.slug}/alerts/rules/new/", _form(webhook_url="http://10.0.0.5/hook"))
    assert r.status_code == 400
    assert r.context["form"].errors["webhook_url"][0].startswith("webhooks may not be sent to internal addresses")
    api = f"/api/v1/workspaces/{objs.ws.slug}/alerts/rules/"
    r = client.post(api, {"name": "hook", "kind": "top_k", "webhook_url": "http://127.0.0.1:9/hook"}, format="json")
    assert r.status_code == 400 and "internal addresses" in r.json()["webhook_url"][0]
    r = client.patch(f"{api}{objs.rule.pk}/", {"webhook_url": "http://[::1]/x"}, content_type="application/json")
    assert r.status_code == 400 and "webhook_url" in r.json()


def _delivery(rule, url):
    from monitor.alerts.models import Alert

    alert = Alert.objects.filter(rule=rule).first()
    rule.webhook_url = url
    rule.save()  # as if the URL was valid when saved
    return delivery.delivery_create(alert)


def test_a_delivery_to_an_internal_address_fails_at_once_with_the_reason(settings, objs):
    settings.SPREADWATCH_WEBHOOK_ALLOW_PRIVATE = False
    d = _delivery(objs.rule, "http://127.0.0.1:9/hook")
    d, attempted = delivery.attempt(d.pk)
    assert attempted and d.status == WebhookDelivery.Status.FAILED and d.attempts == 1
    assert d.next_attempt_at is None and d.last_error.startswith("refused: webhooks may not be sent")


def test_the_connection_refuses_a_rebound_address(settings, objs, monkeypatch):
    """DNS answers a public address to the check and a private one to the connection: the socket's peer is
    checked, and nothing is sent."""
    settings.SPREADWATCH_WEBHOOK_ALLOW_PRIVATE = False
    monkeypatch.setattr(delivery, "check_webhook_url", lambda url: ["8.8.8.8"])
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)  # the connection completes in the backlog; nothing is ever read
        d = _delivery(objs.rule, f"http://127.0.0.1:{listener.getsockname()[1]}/hook")
        d, _ = delivery.attempt(d.pk)
    assert d.status == WebhookDelivery.Status.FAILED and d.attempts == 1
    assert "connected to 127.0.0.1 is a loopback address" in d.last_error


def test_an_unresolvable_host_is_retried(settings, objs):
    settings.SPREADWATCH_WEBHOOK_ALLOW_PRIVATE = False
    d = _delivery(objs.rule, "http://does-not-exist.invalid/hook")
    d, _ = delivery.attempt(d.pk)
    assert d.status == WebhookDelivery.Status.PENDING and d.next_attempt_at is not None
    assert "cannot be resolved" in d.last_error
