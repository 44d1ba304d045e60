"""A request body sent with ``Transfer-Encoding: chunked`` (no Content-Length; ``curl -T -`` sends one) through
the deployment's server, gunicorn with DEBUG off, as a real process on the test database.

gunicorn decodes the chunks and hands the application a ``wsgi.input`` that ends where the body ends; Django
reads ``CONTENT_LENGTH`` bytes of it, none when the header is absent. The stream endpoint answered such a body
``202 {"accepted": 0}`` and dropped every record. Now the body is read (up to the endpoint's limit, beyond it
413), and a server that cannot say where a chunked body ends gets 411; never a 2xx for data not stored."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys

import pytest

from monitor.models import Collection, Retweet, StreamEvent, Tweet
from monitor.services import api_token_create
from monitor.services.stream import stream_token_create
from tests.webapp import THESIS

from . import harness
from .fixtures import database_url

pytestmark = pytest.mark.django_db(transaction=True)

STREAM_LIMIT = 64 * 1024  # the server's SPREADWATCH_STREAM_MAX_BODY_BYTES here


class Gunicorn:
    """``gunicorn monitor.wsgi:application`` as docker/Dockerfile starts it (one worker), on a free port."""

    def __init__(self, folder, env: dict[str, str]):
        self.port = harness.ws_script._free_port()
        self.log = folder / "gunicorn.log"
        argv = [sys.executable, "-m", "gunicorn", "monitor.wsgi:application", "--bind", f"127.0.0.1:{self.port}",
                "--workers", "1", "--timeout", "120", "--access-logfile", "-"]  # fmt: skip
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen(argv, cwd=harness.ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        up = harness.ws_script._wait_for_tcp(self.port, alive=lambda: self.proc.poll() is None)
        assert up, f"gunicorn did not start:\n{self.tail()}"

    def tail(self, n: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-n:]

    def stop(self) -> None:
        harness.stop_process(self.proc)

    def post_chunked(self, path: str, chunks, headers: dict[str, str]) -> tuple[int, bytes]:
        """POST ``chunks`` (an iterable of bytes) as a chunked body, with no Content-Length."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        try:
            conn.request("POST", path, body=iter(chunks), headers={**headers, "Transfer-Encoding": "chunked"},
                         encode_chunked=True)  # fmt: skip
            r = conn.getresponse()
            return r.status, r.read()
        finally:
            conn.close()


@pytest.fixture
def gunicorn(tmp_path, settings):
    pytest.importorskip("gunicorn", reason="gunicorn is the deployment's server: pip install gunicorn")
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "DEBUG": "0",
        "SECRET_KEY": settings.SECRET_KEY,  # the API tokens made here are bound to it
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
        "CELERY_TASK_ALWAYS_EAGER": "1",  # an upload's import runs in the request, when it commits
        "SPREADWATCH_PRIME_WEB": "0",
        "SPREADWATCH_STREAM_MAX_BODY_BYTES": str(STREAM_LIMIT),
        "PYTHONUNBUFFERED": "1",
    }
    server = Gunicorn(tmp_path, env)
    try:
        yield server
    finally:
        server.stop()


def _records(n: int) -> list[bytes]:
    """``n`` good records, one NDJSON line each: an original and its retweets."""
    base = 1_400_000_000_000_000_000
    out = [{"tweet_id": str(base), "user_id": "7", "created_at": "2026-11-24T06:00:00Z", "followers_count": 120}]
    for i in range(1, n):
        out.append({"tweet_id": str(base + i), "retweeted_tweet_id": str(base), "user_id": str(100 + i),
                    "created_at": "2026-11-24T06:00:05Z", "followers_count": i})  # fmt: skip
    return [json.dumps(r).encode() + b"\n" for r in out]


def test_a_chunked_stream_body_is_stored_whole(gunicorn, ws_a):
    key = stream_token_create(workspace=ws_a, name="feeder")[1]
    lines = _records(100)
    chunks = [b"".join(lines[i : i + 7]) for i in range(0, len(lines), 7)]  # chunk edges inside the lines too
    chunks = [c[:10] for c in chunks] + [c[10:] for c in chunks]
    chunks = [b for pair in zip(chunks[: len(chunks) // 2], chunks[len(chunks) // 2 :]) for b in pair]
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/x-ndjson"}
    status, body = gunicorn.post_chunked("/api/v1/stream/", chunks, headers)
    assert status == 202, (status, body, gunicorn.tail())
    assert json.loads(body)["accepted"] == 100, body
    assert StreamEvent.objects.filter(workspace=ws_a).count() == 100


def test_a_chunked_stream_body_over_the_limit_answers_413_and_stores_nothing(gunicorn, ws_a):
    key = stream_token_create(workspace=ws_a, name="feeder")[1]
    lines = _records(1000)
    assert sum(map(len, lines)) > STREAM_LIMIT
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/x-ndjson"}
    status, body = gunicorn.post_chunked("/api/v1/stream/", lines, headers)
    assert status == 413, (status, body, gunicorn.tail())
    detail = json.loads(body)["detail"]
    assert "SPREADWATCH_STREAM_MAX_BODY_BYTES" in detail and f"{STREAM_LIMIT:,}" in detail, detail
    assert not StreamEvent.objects.filter(workspace=ws_a).exists()


def test_a_chunked_upload_through_the_api_is_imported(gunicorn, ws_a, alice):
    key = api_token_create(user=alice, name="chunked")[1]
    boundary = "spreadwatch-chunked-test"
    data = (THESIS / "tweets.csv").read_bytes()
    form = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="mode"\r\n\r\nstrict\r\n'
            f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="tweets.csv"\r\n'
            "Content-Type: text/csv\r\n\r\n"
        ).encode()
        + data
        + f"\r\n--{boundary}--\r\n".encode()
    )
    chunks = [form[i : i + 100] for i in range(0, len(form), 100)]
    headers = {"Authorization": f"Token {key}", "Content-Type": f"multipart/form-data; boundary={boundary}"}
    status, body = gunicorn.post_chunked(f"/api/v1/workspaces/{ws_a.slug}/collections/", chunks, headers)
    assert status == 201, (status, body, gunicorn.tail())
    c = Collection.objects.get(pk=json.loads(body)["id"])
    assert c.status in (Collection.Status.DONE, Collection.Status.COMPUTING), (c.status, c.error)
    # the thesis example: 2 original tweets and 9 retweets of them
    assert Tweet.objects.filter(workspace=ws_a).count() == 2
    assert Retweet.objects.filter(tweet__workspace=ws_a).count() == 9
