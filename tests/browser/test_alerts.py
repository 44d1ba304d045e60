"""Alerts end to end: subscribe to a top K rule through the form (inbox, email and a webhook to a local HTTP
server), trigger it with a second upload, and see the alert in the inbox, in the captured email and as a signed
POST on the webhook."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from tests.browser.pages import field, screenshot, upload
from tests.webapp import THESIS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


class _Hook(BaseHTTPRequestHandler):
    received: list[dict]

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.received.append({"path": self.path, "headers": dict(self.headers.items()), "body": body})
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def webhook():
    """A local HTTP server that records the POSTs it receives (``server.received``)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hook)
    server.received = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    server.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    yield server
    server.shutdown()
    server.server_close()


def halves(tmp_path):
    """The worked example in two uploads: tweet 1000's cascade, then tweet 2000's (each with the follows)."""
    header, *rows = (THESIS / "tweets.csv").read_text().splitlines()
    out = []
    for tid in ("1000", "2000"):
        d = tmp_path / tid
        d.mkdir()
        lines = [r for r in rows if r.split(",")[0] == tid or r.split(",")[1] == tid]
        (d / "tweets.csv").write_text("\n".join([header, *lines]) + "\n")
        out.append([d / "tweets.csv", THESIS / "follows.csv"])
    return out


def test_it_alerts_by_inbox_email_and_webhook_when_an_upload_puts_accounts_in_the_top_k(
    page, login, ws_a, tmp_path, webhook, mailoutbox
):
    first, second = halves(tmp_path)
    login()
    upload(page, ws_a.slug, first, name="tweet 1000")  # publisher b exists from here on

    page.goto(reverse("alert-rules", kwargs={"ws": ws_a.slug}) + "new/")
    field(page, "Name").fill("b top 3")
    field(page, "Kind").select_option("top_k")
    field(page, "Publisher").select_option(label="@b (102)")
    field(page, "K").fill("3")
    field(page, "Email me").check()
    field(page, "Webhook URL").fill(webhook.url)
    screenshot(page, "alert-rule-form")
    page.get_by_role("button", name=re.compile("Create")).click()
    expect(page).to_have_url(re.compile(r"/alerts/rules/$"))
    expect(page.locator("main")).to_contain_text("b top 3")
    secret = re.search(r"secret[^:]*:\s*([0-9a-f]{64})", page.locator("main").inner_text())
    screenshot(page, "alert-rules")
    assert not mailoutbox and not webhook.received  # nothing raised before the second upload

    upload(page, ws_a.slug, second, name="tweet 2000")

    page.goto(reverse("alerts", kwargs={"ws": ws_a.slug}))
    rows = page.locator("table tbody tr").filter(has_text="b top 3")
    expect(rows).to_have_count(3)  # b, e and f enter the top 3 of b's (empty) previous week
    for name in ("@b", "@e", "@f"):
        expect(rows.filter(has_text=name).first).to_be_visible()
    screenshot(page, "alerts-inbox")

    assert len(mailoutbox) == 1, [m.subject for m in mailoutbox]
    mail = mailoutbox[0]
    assert mail.to == ["alice@example.com"]
    assert "b top 3" in mail.subject and "3 new alerts" in mail.subject
    assert "entered the top 3" in mail.body and "/alerts/unsubscribe/" in mail.body

    assert len(webhook.received) == 3, webhook.received
    for post in webhook.received:
        headers = {k.lower(): v for k, v in post["headers"].items()}
        assert post["path"] == "/hook"
        assert headers["content-type"] == "application/json"
        assert re.fullmatch(r"sha256=[0-9a-f]{64}", headers["x-spreadwatch-signature"])
        if secret:  # the page shows the secret once: the signature checks out with it
            from monitor.alerts.delivery import verify_signature

            assert verify_signature(secret.group(1), post["body"], headers["x-spreadwatch-signature"])
        data = json.loads(post["body"])
        assert data["kind"] == "top_k" and data["workspace"] == ws_a.slug
    names = sorted(json.loads(p["body"])["account"]["screen_name"] for p in webhook.received)
    assert names == ["b", "e", "f"]
