"""Webhooks against slow receivers and tunnelled addresses (issue 20): a total deadline per delivery (not per socket
read), the POST made outside any database transaction, a queue of their own, 6to4 and NAT64 refused, and a rule
whose stored host stopped resolving can still be muted or edited."""

from __future__ import annotations

import datetime as dt
import socket
import threading
import time

import pytest
from django.conf import settings as django_settings
from django.db import DatabaseError, connection, transaction
from rest_framework.test import APIClient

from monitor import jobs, services
from monitor.alerts import delivery
from monitor.alerts import services as alerts
from monitor.alerts.models import AlertRule, WebhookDelivery
from monitor.security import WebhookURLRefused, address_refused_reason, check_webhook_url
from tests.webapp import THESIS

from .test_webhook_guard import fake_dns


@pytest.mark.parametrize(
    "ip",
    [
        "2002:7f00:1::1",  # 6to4 of 127.0.0.1
        "2002:a00:1::1",  # 6to4 of 10.0.0.1
        "2002:808:808::1",  # 6to4 of a public address: the relay decides where it lands
        "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1
        "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254 (cloud metadata)
        "64:ff9b::808:808",  # NAT64 of 8.8.8.8: the gateway's side of the network
        "64:ff9b:1::a00:1",  # local-use NAT64
    ],
)
def test_it_refuses_6to4_and_nat64_addresses(ip):
    assert address_refused_reason(ip)
    with pytest.raises(WebhookURLRefused, match="internal"):
        check_webhook_url("https://hooks.example.com/x", allow_private=False, resolve=fake_dns(ip))


def test_webhooks_have_a_queue_of_their_own():
    assert django_settings.CELERY_TASK_ROUTES[jobs.DELIVER_WEBHOOK] == {"queue": "webhooks"}
    others = {r["queue"] for name, r in django_settings.CELERY_TASK_ROUTES.items() if name != jobs.DELIVER_WEBHOOK}
    assert "webhooks" not in others


@pytest.fixture
def thesis(ws_a, alice, import_files):
    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    assert c.status == c.Status.DONE, c.error
    return ws_a


def test_a_rule_whose_host_stopped_resolving_can_be_muted_and_edited(thesis, alice, settings, monkeypatch):
    from monitor import security

    settings.SPREADWATCH_WEBHOOK_ALLOW_PRIVATE = False
    monkeypatch.setitem(security.check_webhook_url.__kwdefaults__, "resolve", fake_dns("93.184.216.34"))
    rule = alerts.rule_create(
        workspace=thesis,
        owner=alice,
        name="big",
        kind=AlertRule.Kind.CASCADE_REACH,
        reach=60,
        webhook_url="https://hooks.example.com/x",
    )

    def gone(*args, **kwargs):
        raise socket.gaierror(-2, "Name or service not known")

    monkeypatch.setitem(security.check_webhook_url.__kwdefaults__, "resolve", gone)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {services.api_token_create(user=alice)[1]}")
    url = f"/api/v1/workspaces/{thesis.slug}/alerts/rules/{rule.pk}/"
    r = api.patch(url, {"is_active": False}, format="json")
    assert r.status_code == 200, r.content
    assert r.json()["state"] == "muted"
    r = api.patch(url, {"name": "bigger", "reach": 80}, format="json")
    assert r.status_code == 200 and r.json()["name"] == "bigger", r.content
    r = api.patch(url, {"webhook_url": "https://other.example.com/y"}, format="json")
    assert r.status_code == 400 and "webhook_url" in r.json()  # a new URL is still checked


class DripReceiver:
    """Reads a request, then answers one byte every ``every`` seconds (a receiver that defeats per-read timeouts);
    while it answers it checks from its own database connection whether the delivery's row is locked."""

    def __init__(self, every: float = 0.4, check_lock_of: list | None = None):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/hook"
        self.every = every
        self.check_lock_of = check_lock_of
        self.row_was_locked: bool | None = None
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def _row_locked(self, pk: int) -> bool:
        try:
            with transaction.atomic():
                WebhookDelivery.objects.select_for_update(nowait=True).get(pk=pk)
            return False
        except DatabaseError:
            return True
        finally:
            connection.close()

    def _serve(self):
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(5)
                conn.recv(65536)
                if self.check_lock_of:
                    self.row_was_locked = self._row_locked(self.check_lock_of[0])
                for b in b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n":
                    if self.stop.is_set():
                        break
                    try:
                        conn.sendall(bytes([b]))
                    except OSError:
                        break
                    time.sleep(self.every)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(10)
        self.sock.close()


def _pending_delivery(ws, owner, url) -> WebhookDelivery:
    rule = alerts.rule_create(
        workspace=ws, owner=owner, name="big", kind=AlertRule.Kind.CASCADE_REACH, reach=60, webhook_url=url
    )
    alert = rule.alerts.model.objects.create(
        rule=rule,
        workspace=ws,
        account=ws.accounts.first(),
        window_start=dt.date(2020, 1, 1),
        window_end=dt.date(2020, 1, 7),
        value=1.0,
        message="m",
    )
    return delivery.delivery_create(alert)


@pytest.mark.django_db(transaction=True)
def test_a_dripping_receiver_is_cut_off_at_the_total_deadline_with_no_row_lock_held(ws_a, alice, settings):
    settings.SPREADWATCH_WEBHOOK_ALLOW_PRIVATE = True
    settings.SPREADWATCH_WEBHOOK_TIMEOUT = 2

    c = services.collection_create(workspace=ws_a, files=[THESIS / "tweets.csv"], compute=False)
    services.collection_ingest(collection_id=c.pk)
    pk: list[int] = []
    with DripReceiver(every=0.4, check_lock_of=pk) as rx:
        d = _pending_delivery(ws_a, alice, rx.url)
        pk.append(d.pk)
        t0 = time.monotonic()
        d, attempted = delivery.attempt(d.pk)
        took = time.monotonic() - t0
    # 38 bytes at 0.4 s each would take 15 s; each read returns within the 2 s a per-read timeout allows
    assert attempted and took < 4.5, took
    assert d.status == WebhookDelivery.Status.PENDING and d.attempts == 1 and d.last_status_code is None
    assert "deadline" in d.last_error and d.next_attempt_at is not None and d.attempting_until is None
    assert rx.row_was_locked is False  # the POST ran outside any transaction


@pytest.mark.django_db(transaction=True)
def test_a_delivery_being_attempted_is_not_attempted_twice(ws_a, alice, settings):
    settings.SPREADWATCH_WEBHOOK_ALLOW_PRIVATE = True
    settings.SPREADWATCH_WEBHOOK_TIMEOUT = 3
    c = services.collection_create(workspace=ws_a, files=[THESIS / "tweets.csv"], compute=False)
    services.collection_ingest(collection_id=c.pk)
    with DripReceiver(every=0.05) as rx:
        d = _pending_delivery(ws_a, alice, rx.url)
        out = {}

        def attempt_in_a_thread():
            try:
                out["first"] = delivery.attempt(d.pk)
            finally:
                connection.close()  # this thread's own connection

        first = threading.Thread(target=attempt_in_a_thread)
        first.start()
        time.sleep(0.3)  # the first attempt is under way
        second = delivery.attempt(d.pk)
        first.join(10)
    assert second[1] is False  # claimed by the first: left alone
    d.refresh_from_db()
    assert d.status == WebhookDelivery.Status.SENT and d.attempts == 1
