"""Webhooks: the HMAC-SHA256 signature, a real POST to a local HTTP server, retry with backoff after a 500,
no re-send once sent, failure after the last attempt."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.utils import timezone

from monitor.alerts import delivery, services, tasks
from monitor.alerts.models import AlertRule, WebhookDelivery
from tests.webapp import THESIS


class Receiver:
    """A local HTTP server: answers each POST with the next status of ``statuses`` (then 200), records it."""

    def __init__(self, statuses=()):
        self.statuses = list(statuses)
        self.requests: list[tuple[dict, bytes]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                outer.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(outer.statuses.pop(0) if outer.statuses else 200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def thesis(ws_a, alice, import_files):
    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    assert c.status == c.Status.DONE, c.error
    return ws_a


def reach_rule(ws, owner, url) -> AlertRule:
    """cascade_reach above 60: one alert, tweet 1000 of @b (reach 63)."""
    return services.rule_create(
        workspace=ws, owner=owner, name="big cascades", kind=AlertRule.Kind.CASCADE_REACH, reach=60, webhook_url=url
    )


def test_it_signs_with_hmac_sha256_and_verifies_in_constant_time():
    body = b'{"alert":1}'
    expect = "sha256=" + hmac.new(b"s3cret", body, hashlib.sha256).hexdigest()
    assert delivery.sign("s3cret", body) == expect
    assert delivery.verify_signature("s3cret", body, expect)
    assert not delivery.verify_signature("other", body, expect)
    assert not delivery.verify_signature("s3cret", body + b" ", expect)
    assert not delivery.verify_signature("s3cret", body, None)


def test_it_posts_the_signed_alert_to_the_webhook(thesis, alice, run_tasks):
    with Receiver() as rx:
        r = reach_rule(thesis, alice, rx.url)
        (alert,) = run_tasks(services.evaluate_workspace, workspace_id=thesis.pk)
    assert len(rx.requests) == 1
    headers, body = rx.requests[0]
    d = WebhookDelivery.objects.get(alert=alert)
    assert headers["content-type"] == "application/json"
    assert headers["x-spreadwatch-delivery"] == str(d.pk)
    expect = "sha256=" + hmac.new(r.webhook_secret.encode(), body, hashlib.sha256).hexdigest()
    assert headers["x-spreadwatch-signature"] == expect
    data = json.loads(body)
    assert data["alert"] == alert.pk and data["kind"] == "cascade_reach" and data["workspace"] == "newsroom"
    assert data["account"] == {"twitter_id": "102", "screen_name": "b"}
    assert data["tweet_id"] == "1000" and data["value"] == 63.0
    assert data["window"] == {"start": "2020-01-01", "end": "2020-01-01"}
    assert data["rule"] == {"id": r.pk, "name": "big cascades"} and "reached 63" in data["message"]
    assert (d.status, d.attempts, d.last_status_code, d.sent_at is not None) == ("sent", 1, 200, True)


def test_it_retries_after_a_500_with_backoff_and_logs_every_attempt(thesis, alice, run_tasks):
    with Receiver(statuses=[500]) as rx:
        reach_rule(thesis, alice, rx.url)
        run_tasks(services.evaluate_workspace, workspace_id=thesis.pk)  # eager: the first attempt, answered 500
        d = WebhookDelivery.objects.get()
        assert (d.status, d.attempts, d.last_status_code) == ("pending", 1, 500)
        wait = (d.next_attempt_at - timezone.now()).total_seconds()
        assert 25 < wait <= 30
        d, attempted = delivery.attempt(d.pk)  # what the retried task does
        assert attempted and (d.status, d.attempts, d.last_status_code, d.last_error) == ("sent", 2, 200, "")
        assert [e["status_code"] for e in d.log] == [500, 200]
        d, attempted = delivery.attempt(d.pk)  # a redelivered task: nothing is sent again
        assert not attempted and d.attempts == 2
        assert tasks.deliver_webhook.delay(d.pk).get() == "sent"
    assert len(rx.requests) == 2
    assert rx.requests[0][1] == rx.requests[1][1]  # the same signed bytes each time


def test_it_fails_a_delivery_after_the_last_attempt(thesis, alice, run_tasks):
    with Receiver(statuses=[503] * 10) as rx:
        reach_rule(thesis, alice, rx.url)
        run_tasks(services.evaluate_workspace, workspace_id=thesis.pk)
        d = WebhookDelivery.objects.get()
        for _ in range(delivery.MAX_ATTEMPTS - 1):
            d, _ = delivery.attempt(d.pk)
    assert (d.status, d.attempts, d.next_attempt_at) == ("failed", delivery.MAX_ATTEMPTS, None)
    assert len(rx.requests) == delivery.MAX_ATTEMPTS
    assert [delivery.retry_delay(n) for n in range(1, 6)] == [30, 60, 120, 240, 480]


def test_it_logs_a_refused_connection_and_sweeps_due_retries(thesis, alice, run_tasks):
    with Receiver() as rx:
        url = rx.url
    reach_rule(thesis, alice, url)  # nobody listens there any more
    run_tasks(services.evaluate_workspace, workspace_id=thesis.pk)
    d = WebhookDelivery.objects.get()
    assert d.status == "pending" and d.last_status_code is None and d.last_error
    later = timezone.now() + timezone.timedelta(minutes=5)
    assert services.deliveries_retry_due(now=timezone.now()) == []
    with Receiver() as rx:
        WebhookDelivery.objects.filter(pk=d.pk).update(url=rx.url)
        assert run_tasks(services.deliveries_retry_due, now=later) == [d.pk]
    d.refresh_from_db()
    assert d.status == "sent" and len(rx.requests) == 1
