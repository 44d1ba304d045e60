"""``monitor.middleware``: a chunked body (``Transfer-Encoding: chunked``, no Content-Length) is read where the
server ended ``wsgi.input`` at the body's end (gunicorn; ``tests/faults/test_chunked_bodies.py`` runs the real
one), refused with 411 where it did not, and bounded by the view's limit (413 naming the setting). The test
client sends such a request as gunicorn hands it over: the decoded body in ``wsgi.input``, no CONTENT_LENGTH."""

from __future__ import annotations

import io
import json

import pytest
from django.test import Client

from monitor.models import Collection, StreamEvent
from monitor.services import api_token_create
from monitor.services.stream import stream_token_create
from tests.webapp import THESIS

pytestmark = pytest.mark.django_db

STREAM = "/api/v1/stream/"


def _chunked(client: Client, path: str, body: bytes, content_type: str, *, terminated: bool = True, **headers):
    """POST ``body`` as a chunked request arrives at the application: decoded, with no length."""
    environ = {
        "CONTENT_TYPE": content_type,
        "HTTP_TRANSFER_ENCODING": "chunked",
        "wsgi.input": io.BytesIO(body),
        **headers,
    }
    if terminated:
        environ["wsgi.input_terminated"] = True
    return client.generic("POST", path, b"", **environ)  # no data: the client sets no CONTENT_LENGTH


def _records(n: int) -> bytes:
    lines = [{"tweet_id": "5000", "user_id": "7", "created_at": "2026-11-24T06:00:00Z", "followers_count": 3}]
    lines += [
        {"tweet_id": str(5000 + i), "retweeted_tweet_id": "5000", "user_id": str(10 + i),
         "created_at": "2026-11-24T06:00:05Z", "followers_count": i}
        for i in range(1, n)
    ]  # fmt: skip
    return "".join(json.dumps(r) + "\n" for r in lines).encode()


@pytest.fixture
def stream_auth(ws_a):
    return {"HTTP_AUTHORIZATION": f"Bearer {stream_token_create(workspace=ws_a, name='feeder')[1]}"}


def test_a_chunked_stream_body_is_read_and_stored(client, ws_a, stream_auth):
    r = _chunked(client, STREAM, _records(100), "application/x-ndjson", **stream_auth)
    assert r.status_code == 202, r.content
    assert r.json()["accepted"] == 100
    assert StreamEvent.objects.filter(workspace=ws_a).count() == 100


def test_a_chunked_body_the_server_cannot_end_answers_411_and_stores_nothing(client, ws_a, stream_auth):
    r = _chunked(client, STREAM, _records(100), "application/x-ndjson", terminated=False, **stream_auth)
    assert r.status_code == 411, r.content
    assert "Content-Length" in r.json()["detail"] and "nothing was stored" in r.json()["detail"]
    assert not StreamEvent.objects.exists()


def test_a_chunked_stream_body_over_its_limit_answers_413_naming_the_setting(client, ws_a, stream_auth, settings):
    body = _records(100)
    settings.SPREADWATCH_STREAM_MAX_BODY_BYTES = len(body) - 1
    r = _chunked(client, STREAM, body, "application/x-ndjson", **stream_auth)
    assert r.status_code == 413, r.content
    assert r.json()["detail"] == (
        f"the body is over the limit of {len(body) - 1:,} bytes (SPREADWATCH_STREAM_MAX_BODY_BYTES): "
        "send it in several requests; nothing was stored"
    )
    assert not StreamEvent.objects.exists()
    settings.SPREADWATCH_STREAM_MAX_BODY_BYTES = len(body)  # exactly at the limit: taken
    assert _chunked(client, STREAM, body, "application/x-ndjson", **stream_auth).status_code == 202


def test_the_stream_view_refuses_a_chunked_body_it_cannot_read_without_the_middleware(
    client, ws_a, stream_auth, settings
):
    settings.MIDDLEWARE = [m for m in settings.MIDDLEWARE if m != "monitor.middleware.ChunkedBodyMiddleware"]
    r = _chunked(client, STREAM, _records(10), "application/x-ndjson", **stream_auth)
    assert r.status_code == 411 and "nothing was stored" in r.json()["detail"], r.content
    assert not StreamEvent.objects.exists()


def _multipart(boundary: str, fields: dict[str, str], name: str, data: bytes) -> bytes:
    out = b""
    for k, v in fields.items():
        out += f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
    out += (
        f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="{name}"\r\n'
        "Content-Type: text/csv\r\n\r\n"
    ).encode()
    return out + data + f"\r\n--{boundary}--\r\n".encode()


def test_a_chunked_upload_through_the_api_is_read(client, ws_a, alice, django_capture_on_commit_callbacks):
    auth = {"HTTP_AUTHORIZATION": f"Token {api_token_create(user=alice, name='t')[1]}"}
    body = _multipart("b0undary", {"validate_only": "true"}, "tweets.csv", (THESIS / "tweets.csv").read_bytes())
    url = f"/api/v1/workspaces/{ws_a.slug}/collections/"
    with django_capture_on_commit_callbacks(execute=True):
        r = _chunked(client, url, body, "multipart/form-data; boundary=b0undary", **auth)
    assert r.status_code == 201, r.content
    c = Collection.objects.get(pk=r.json()["id"])
    assert c.status == Collection.Status.VALIDATED and c.report["read"]["n_good"] == 11, (c.status, c.error)


def test_a_chunked_upload_over_the_upload_limit_answers_413(client, ws_a, alice, settings):
    auth = {"HTTP_AUTHORIZATION": f"Token {api_token_create(user=alice, name='t')[1]}"}
    body = _multipart("b0undary", {}, "tweets.csv", (THESIS / "tweets.csv").read_bytes())
    settings.SPREADWATCH_UPLOAD_MAX_BYTES = 100
    r = _chunked(
        client, f"/api/v1/workspaces/{ws_a.slug}/collections/", body, "multipart/form-data; boundary=b", **auth
    )
    assert r.status_code == 413 and "SPREADWATCH_UPLOAD_MAX_BYTES" in r.json()["detail"], r.content
    assert not Collection.objects.exists()


def test_a_chunked_json_body_is_read_and_bounded_by_django_s_limit(client, alice, settings):
    client.force_login(alice)  # tokens are made from a session
    body = json.dumps({"name": "from a chunked body"}).encode()
    r = _chunked(client, "/api/v1/tokens/", body, "application/json")
    assert r.status_code == 201 and r.json()["name"] == "from a chunked body", r.content
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = len(body) - 1
    r = _chunked(client, "/api/v1/tokens/", body, "application/json")
    assert r.status_code == 413 and "DATA_UPLOAD_MAX_MEMORY_SIZE" in r.json()["detail"], r.content


def test_a_chunked_form_post_on_a_page_is_read(client, alice):
    """The login form (read by the login rate limit before any view) posted in chunks logs in."""
    body = b"username=alice&password=alice-pass-123"
    r = _chunked(client, "/login/", body, "application/x-www-form-urlencoded")
    assert r.status_code == 302, r.content
    assert client.get("/").status_code in (200, 302)
    assert "_auth_user_id" in client.session


def test_a_chunked_page_post_the_server_cannot_end_answers_411_with_a_page(client):
    r = _chunked(client, "/login/", b"username=a&password=b", "application/x-www-form-urlencoded", terminated=False)
    assert r.status_code == 411 and r["Content-Type"].startswith("text/html")
    assert b"Content-Length" in r.content
