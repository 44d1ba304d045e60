"""``POST /api/v1/stream/``: stream tokens only, a body taken whole or not at all, limits, backpressure."""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from monitor.models import StreamEvent
from monitor.services.stream import stream_token_create, stream_token_revoke
from monitor.services.stream.records import partition_of
from tests.webapp import token_client

pytestmark = pytest.mark.django_db

URL = "/api/v1/stream/"


def _body(*objs) -> bytes:
    return "".join(json.dumps(o) + "\n" for o in objs).encode()


def _tweet(tid, uid, rt=None, t="2020-01-01T00:00:00Z"):
    d = {"tweet_id": str(tid), "user_id": str(uid), "created_at": t, "followers_count": 10}
    if rt is not None:
        d["retweeted_tweet_id"] = str(rt)
    return d


@pytest.fixture
def key(ws_a):
    return stream_token_create(workspace=ws_a, name="feeder")[1]


def _client(key: str, keyword: str = "Bearer") -> APIClient:
    c = APIClient()
    c.credentials(HTTP_AUTHORIZATION=f"{keyword} {key}")
    return c


def _post(c: APIClient, body: bytes):
    return c.generic("POST", URL, body, content_type="application/x-ndjson")


def test_it_accepts_a_body_and_answers_202_with_counts_and_ids(key, ws_a):
    body = _body(_tweet(1001, 7), _tweet(1002, 8, rt=1001), {"follower_id": 8, "followee_id": 7})
    r = _post(_client(key), body)
    assert r.status_code == 202, r.content
    d = r.json()
    assert (d["accepted"], d["tweets"], d["retweets"], d["follows"]) == (3, 1, 1, 1)
    events = list(StreamEvent.objects.filter(workspace=ws_a).order_by("pk"))
    assert [e.pk for e in events] == list(range(d["first_id"], d["last_id"] + 1))
    assert [(e.kind, e.cascade_key, e.status) for e in events] == [
        ("tweet", 1001, "queued"),
        ("retweet", 1001, "queued"),
        ("follow", None, "queued"),
    ]
    assert events[0].partition == events[1].partition == partition_of(1001, 8)
    assert events[2].partition == partition_of(8, 8)
    assert events[0].source == "feeder:1" and json.loads(events[1].body)["retweeted_tweet_id"] == "1001"


def test_a_bad_line_answers_400_naming_line_and_field_and_stores_nothing(key, ws_a):
    body = _body(_tweet(1001, 7), _tweet(1002, 8, rt=1001), {"tweet_id": "1003", "user_id": "zz"})
    r = _post(_client(key), body)
    assert r.status_code == 400
    d = r.json()
    assert (d["line"], d["field"]) == (3, "user_id")
    assert "body:3" in d["detail"] and "nothing" in d["detail"]
    assert not StreamEvent.objects.exists()


def test_it_refuses_a_body_over_the_limits_and_stores_nothing(key, settings):
    settings.SPREADWATCH_STREAM_MAX_LINES = 2
    r = _post(_client(key), _body(_tweet(1001, 7), _tweet(1002, 7), _tweet(1003, 7)))
    assert r.status_code == 413 and "3 lines" in r.json()["detail"]
    settings.SPREADWATCH_STREAM_MAX_LINES = 100
    settings.SPREADWATCH_STREAM_MAX_BODY_BYTES = 50
    r = _post(_client(key), _body(_tweet(1001, 7)))
    assert r.status_code == 413 and "SPREADWATCH_STREAM_MAX_BODY_BYTES" in r.json()["detail"]
    assert not StreamEvent.objects.exists()


def test_a_full_backlog_answers_429_with_retry_after_and_stores_nothing(key, ws_a, settings):
    settings.SPREADWATCH_STREAM_MAX_BACKLOG = 2
    c = _client(key)
    assert _post(c, _body(_tweet(1001, 7), _tweet(1002, 7))).status_code == 202
    r = _post(c, _body(_tweet(1003, 7)))
    assert r.status_code == 429
    assert int(r["Retry-After"]) >= 1 and r.json()["backlog"] == 2
    assert StreamEvent.objects.count() == 2
    StreamEvent.objects.update(status=StreamEvent.Status.APPLIED)
    assert _post(c, _body(_tweet(1003, 7))).status_code == 202


def test_the_token_appends_to_its_own_workspace_only(key, ws_a, ws_b):
    other = stream_token_create(workspace=ws_b)[1]
    assert _post(_client(other), _body(_tweet(1001, 7))).status_code == 202
    assert StreamEvent.objects.get().workspace_id == ws_b.pk
    assert not StreamEvent.objects.filter(workspace=ws_a).exists()


@pytest.mark.parametrize("path", ["/api/v1/workspaces/", "/api/v1/workspaces/newsroom/collections/", "/api/v1/tokens/"])
def test_a_stream_token_is_refused_on_every_other_endpoint(key, path):
    assert _client(key).get(path).status_code == 401


def test_api_tokens_sessions_and_revoked_tokens_are_refused_here(alice, key, ws_a, client):
    assert _post(token_client(alice), _body(_tweet(1001, 7))).status_code == 401
    client.force_login(alice)
    assert client.post(URL, _body(_tweet(1001, 7)), content_type="application/x-ndjson").status_code == 401
    assert _post(APIClient(), _body(_tweet(1001, 7))).status_code == 401
    token = ws_a.stream_tokens.get()
    stream_token_revoke(token=token)
    r = _post(_client(key), _body(_tweet(1001, 7)))
    assert r.status_code == 401 and "revoked" in r.json()["detail"]
    assert not StreamEvent.objects.exists()


def test_it_marks_the_token_used(key, ws_a):
    assert ws_a.stream_tokens.get().last_used_at is None
    _post(_client(key, "Token"), _body(_tweet(1001, 7)))
    assert ws_a.stream_tokens.get().last_used_at is not None


def test_the_schema_documents_the_endpoint(api):
    r = api.get("/api/v1/schema/", HTTP_ACCEPT="application/json")
    assert r.status_code == 200
    schema = r.json()
    assert "post" in schema["paths"]["/api/v1/stream/"]
    assert "streamTokenAuth" in schema["components"]["securitySchemes"]


def test_the_worked_example_streamed_in_reverse_order_ranks_as_a_batch_upload_does(key, ws_a, settings):
    """End to end: records posted to the endpoint (follows first, the tweets newest first so every retweet
    arrives before its original), taken by a consumer with the product's apply, end in the thesis' ranking."""
    import csv

    from monitor.services.stream.consumer import Consumer
    from tests.webapp import EXPECTED_TOTAL, THESIS, total_by_name

    settings.SPREADWATCH_STREAM_BATCH_WAIT_MS = 0
    follows = [dict(r) for r in csv.DictReader((THESIS / "follows.csv").open())]
    tweets = [{k: v for k, v in r.items() if v != ""} for r in csv.DictReader((THESIS / "tweets.csv").open())]
    c = _client(key)
    assert _post(c, _body(*follows)).status_code == 202
    assert _post(c, _body(*reversed(tweets))).status_code == 202
    consumer = Consumer(workspace=ws_a)
    for _ in range(3):  # a retweet that came before its original waits for it, then applies with it
        for p in range(settings.SPREADWATCH_STREAM_PARTITIONS):
            consumer.drain(ws_a.pk, p)
    assert not StreamEvent.objects.filter(workspace=ws_a).exists()  # every event applied, so deleted
    assert total_by_name(ws_a) == EXPECTED_TOTAL


# --- a workspace's unit (issue 40): counts into a workspace that counts retweeters are refused with a 400 ---------


def _v1_retweet(followers: int | None) -> dict:
    user = {"id_str": "8", "screen_name": "b"} | ({} if followers is None else {"followers_count": followers})
    original = {"id_str": "1001", "created_at": "Wed Jan 01 00:00:00 +0000 2020", "text": "claim",
                "user": {"id_str": "7", "screen_name": "a"}}  # fmt: skip
    return {
        "id_str": "1002",
        "created_at": "Wed Jan 01 00:05:00 +0000 2020",
        "user": user,
        "retweeted_status": original,
    }


def _v2_page(followers: int) -> dict:
    tweet = {"id": "1003", "author_id": "9", "created_at": "2020-01-01T00:06:00Z", "text": "RT",
             "referenced_tweets": [{"type": "retweeted", "id": "1001"}]}  # fmt: skip
    users = [{"id": "9", "username": "c", "public_metrics": {"followers_count": followers}}]
    return {"data": [tweet], "includes": {"users": users}}


def test_counts_into_a_workspace_that_counts_retweeters_answer_400_naming_line_and_field_and_store_nothing(key, ws_a):
    from monitor.models import Workspace

    c = _client(key)
    first = {"tweet_id": "1001", "user_id": "7", "created_at": "2020-01-01T00:00:00Z"}  # no count: retweeters
    assert _post(c, _body(first, _v1_retweet(None))).status_code == 202
    assert Workspace.objects.get(pk=ws_a.pk).unit == "retweeters"
    n = StreamEvent.objects.count()
    follow = {"follower_id": "8", "followee_id": "7"}
    for body, line, field in [
        (_body(follow, _v1_retweet(500)), 2, "user.followers_count"),
        (_body(follow, _v2_page(40)), 2, "includes.users[0].public_metrics.followers_count"),
        (_body(follow, _tweet(1004, 10, rt=1001)), 2, "followers_count"),
    ]:
        r = _post(c, body)
        assert r.status_code == 400, r.content
        d = r.json()
        assert (d["line"], d["field"]) == (line, field)
        assert f"body:{line}: field '{field}'" in d["detail"] and "counts retweeters reached" in d["detail"]
        assert "nothing of this body was stored" in d["detail"]
        assert StreamEvent.objects.count() == n  # not even the follow
    assert Workspace.objects.get(pk=ws_a.pk).unit == "retweeters"


def test_a_workspace_that_counts_followers_takes_records_with_and_without_counts(key, ws_a):
    from monitor.models import Workspace

    c = _client(key)
    assert _post(c, _body(_tweet(1001, 7))).status_code == 202  # its first tweet carries a count
    assert Workspace.objects.get(pk=ws_a.pk).unit == "followers"
    r = _post(c, _body(_v1_retweet(None), _v1_retweet(500) | {"id_str": "1005"}, _v2_page(40)))
    assert r.status_code == 202, r.content
    assert Workspace.objects.get(pk=ws_a.pk).unit == "followers"


def test_the_workspaces_api_says_each_workspace_s_unit(api, ws_a):
    from monitor.services.units import unit_fix

    assert [w["unit"] for w in api.get("/api/v1/workspaces/").json()] == [""]
    unit_fix(ws_a.pk, has_counts=False)
    assert [w["unit"] for w in api.get("/api/v1/workspaces/").json()] == ["retweeters"]
