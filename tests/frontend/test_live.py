"""The Live page and its JSON, the stream tokens page (owners only), the header link, and /healthz's stream."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from monitor import services
from monitor.models import Membership, StreamEvent, StreamToken
from monitor.selectors import stream as stream_selectors
from monitor.services.stream import channel, in_process, stream_accept
from monitor.services.stream.apply import apply_events
from monitor.services.stream.tokens import KEY_PREFIX
from tests.webapp import THESIS

pytestmark = pytest.mark.django_db


@pytest.fixture
def streamed(ws_a, import_files):
    """The thesis example computed, and stream events as the consumers would leave them: three retweets of
    tweet 1000 applied just now, one queued, one dead."""
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    lines = [
        json.dumps({"tweet_id": str(5000 + i), "retweeted_tweet_id": "1000", "user_id": str(101 + i),
                    "created_at": 1600000000 + i})
        for i in range(5)
    ]  # fmt: skip
    acc = stream_accept(workspace=ws_a, lines=list(enumerate(lines, 1)), source="feeder")
    ids = list(range(acc.first_id, acc.last_id + 1))
    apply_events(workspace_id=ws_a.pk, event_ids=ids[:3])  # as a consumer applies them
    StreamEvent.objects.filter(pk=ids[4]).update(status="dead", error="its original never came")
    return ws_a


@pytest.fixture
def owner(alice, ws_a):
    services.membership_add(workspace=ws_a, user=alice, role=Membership.Role.OWNER)
    return alice


def test_the_live_page_renders_the_numbers_server_side(client, alice, streamed):
    client.force_login(alice)
    r = client.get(reverse("live", kwargs={"ws": streamed.slug}))
    assert r.status_code == 200
    html = r.content.decode()
    assert 'data-live="backlog">1<' in html and 'data-live="dead">1<' in html
    assert reverse("tweet", kwargs={"ws": streamed.slug, "tweet_id": 1000}) in html
    assert "its original never came" in html
    assert reverse("live", kwargs={"ws": streamed.slug}) in html  # the header link
    assert "Stream tokens" not in html  # alice is an analyst


def test_the_live_json_gives_the_same_read_with_ids_as_strings(client, alice, streamed):
    client.force_login(alice)
    d = client.get(reverse("live-data", kwargs={"ws": streamed.slug})).json()
    assert (d["state"]["backlog"], d["state"]["dead"], d["state"]["waiting"]) == (1, 1, 0)
    assert d["state"]["lag_s"] >= 0
    [c] = d["growing"]
    assert (c["tweet_id"], c["new"], c["total"]) == ("1000", 3, 5)  # the thesis example has 5 retweets of it
    assert d["rising"] and all(isinstance(a["twitter_id"], str) and a["url"] for a in d["rising"])
    assert d["rising"] == sorted(d["rising"], key=lambda a: -a["influence"])


def test_another_workspaces_live_page_is_not_found(client, bob, streamed):
    client.force_login(bob)
    assert client.get(reverse("live", kwargs={"ws": streamed.slug})).status_code == 404
    assert client.get(reverse("live-data", kwargs={"ws": streamed.slug})).status_code == 404


def test_an_owner_creates_a_token_sees_its_key_once_and_revokes_it(client, owner, ws_a):
    client.force_login(owner)
    url = reverse("stream-tokens", kwargs={"ws": ws_a.slug})
    r = client.post(url, {"name": "firehose"}, follow=True)
    html = r.content.decode()
    token = StreamToken.objects.get(workspace=ws_a)
    assert token.name == "firehose" and token.created_by == owner
    key = html.split("copy it now: ")[1].split("<")[0].strip()
    assert key.startswith(KEY_PREFIX) and key.startswith(token.prefix)
    again = client.get(url).content.decode()
    assert key not in again and token.prefix in again and token.key_hash not in again
    client.post(reverse("stream-token-revoke", kwargs={"ws": ws_a.slug, "pk": token.pk}))
    token.refresh_from_db()
    assert token.revoked_at is not None


def test_analysts_may_not_manage_stream_tokens(client, alice, ws_a):
    client.force_login(alice)
    url = reverse("stream-tokens", kwargs={"ws": ws_a.slug})
    assert client.get(url).status_code == 403
    assert client.post(url, {"name": "x"}).status_code == 403
    assert not StreamToken.objects.exists()


def test_healthz_reports_each_busy_stream_by_workspace_id(client, streamed):
    d = client.get("/healthz").json()
    assert d["status"] == "ok"
    s = d["stream"][str(streamed.pk)]
    assert (s["backlog"], s["dead"], s["waiting"]) == (1, 1, 0) and s["lag_s"] >= 0
    assert "newsroom" not in json.dumps(d)


# --- who applies the records: the page says it in every mode, never "?" nor "within seconds" ----------------------


def _live(client, user, ws) -> str:
    client.force_login(user)
    return client.get(reverse("live", kwargs={"ws": ws.slug})).content.decode()


def _card(html: str) -> str:
    """The consumers card's value and label."""
    card = html.split('data-live-card="consumers"')[1].split("</article>")[0]
    return " ".join(part.split(">")[-1] for part in card.split("</span>")[:2])


def _untrue(html: str) -> None:
    assert "within seconds" not in html
    assert 'data-live="consumers">?<' not in html


def test_on_the_embedded_default_the_page_says_the_web_process_applies_the_records(
    client, alice, streamed, settings, monkeypatch
):
    settings.SPREADWATCH_EAGER_IN_BACKGROUND = True  # make demo's web server
    monkeypatch.setattr(in_process._applier, "on_request", lambda: None)  # no thread: this test only reads
    html = _live(client, alice, streamed)
    _untrue(html)
    assert _card(html) == "Web process applies the records"
    assert 'data-live-note="web"' in html and "applied by this web process as they arrive" in html
    d = client.get(reverse("live-data", kwargs={"ws": streamed.slug})).json()["state"]["applier"]
    assert (d["mode"], d["value"]) == ("web", "Web process")


def test_with_no_consumer_running_the_page_says_records_wait_and_names_stream_consume(client, alice, streamed):
    html = _live(client, alice, streamed)  # Redis answers, and no consumer beats
    _untrue(html)
    assert _card(html) == "0 consumers running"
    assert 'class="attention" data-live-card="consumers"' in html
    assert (
        "No consumer is running: records wait, queued, until one is started with <code>manage.py stream_consume</code>."
        in html
    )


def test_with_consumers_running_the_page_counts_them(client, alice, streamed):
    channel.heartbeat(streamed.pk, "host-a:1")
    channel.heartbeat(streamed.pk, "host-b:2")
    try:
        html = _live(client, alice, streamed)
        d = client.get(reverse("live-data", kwargs={"ws": streamed.slug})).json()["state"]
    finally:
        channel.leave(streamed.pk, "host-a:1")
        channel.leave(streamed.pk, "host-b:2")
    _untrue(html)
    assert _card(html) == "2 consumers running"
    assert "are applied by 2 running consumers (<code>manage.py stream_consume</code>)." in html
    assert (d["applier"]["mode"], d["consumers_running"]) == ("consumers", 2)


def test_where_consumers_cannot_be_counted_the_page_says_so(client, alice, streamed, monkeypatch):
    monkeypatch.setattr(stream_selectors, "consumers_running", lambda ws_id, live=None: None)  # SQLite, no Redis
    html = _live(client, alice, streamed)
    _untrue(html)
    assert _card(html) == "Not counted consumers (no Redis)"
    assert "records are applied only while <code>manage.py stream_consume</code> runs." in html


def test_without_redis_the_arriving_rate_counts_the_records_already_applied(client, alice, streamed, settings):
    """The embedded default has no Redis counters: the rate is counted in the database, where an applied record is
    no longer an event row but an arrival count."""
    settings.SPREADWATCH_STREAM_REDIS_URL = ""
    client.force_login(alice)
    st = client.get(reverse("live-data", kwargs={"ws": streamed.slug})).json()["state"]
    assert st["rate_1m"] == round(5 / 60, 1) and st["rate_10m"] == round(5 / 600, 1)  # 3 applied, 1 queued, 1 dead
