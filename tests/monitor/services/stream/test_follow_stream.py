"""``manage.py follow_stream``: a file or stdin into the stream, bad lines named by file:line, backpressure waited
out, and a followed file's appends, truncation and rotation."""

from __future__ import annotations

import io
import json
import os
import threading
import time

import pytest
from django.core.management import CommandError, call_command

from monitor.models import StreamEvent
from monitor.services.stream import Backpressure

CMD = "monitor.management.commands.follow_stream"


def _line(tid: int, uid: int = 1) -> str:
    return json.dumps({"tweet_id": str(tid), "user_id": str(uid), "created_at": "2020-01-01T00:00:00Z"}) + "\n"


def _run(*args, **kw) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("follow_stream", *args, stdout=out, stderr=err, **kw)
    return out.getvalue(), err.getvalue()


@pytest.mark.django_db
def test_it_sends_a_file_and_leaves_out_a_bad_line_naming_file_and_line(ws_a, tmp_path):
    f = tmp_path / "feed.jsonl"
    f.write_text(_line(1001) + _line(1002) + '{"tweet_id": "x"}\n' + _line(1004))
    out, err = _run(str(f), "--workspace", "newsroom", "--no-follow")
    assert f"{f}:3: field 'tweet_id'" in err
    assert "3 record(s) accepted" in out and "1 bad line(s)" in out
    assert sorted(StreamEvent.objects.values_list("cascade_key", flat=True)) == [1001, 1002, 1004]
    assert StreamEvent.objects.get(cascade_key=1004).source == "feed.jsonl:4"


@pytest.mark.django_db
def test_it_stops_at_a_bad_line_when_asked_having_sent_the_lines_before(ws_a, tmp_path):
    f = tmp_path / "feed.jsonl"
    f.write_text(_line(1001) + "{oops\n" + _line(1003))
    with pytest.raises(CommandError, match="bad line"):
        _run(str(f), "--workspace", "newsroom", "--no-follow", "--stop-on-bad")
    assert list(StreamEvent.objects.values_list("cascade_key", flat=True)) == [1001]


@pytest.mark.django_db
def test_it_reads_stdin_in_batches(ws_a, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO("".join(_line(2000 + i) for i in range(5)).encode())))
    out, _ = _run("-", "--workspace", "newsroom", "--batch", "2")
    assert "5 record(s) accepted in 3 batch(es)" in out
    assert StreamEvent.objects.count() == 5


@pytest.mark.django_db
def test_it_waits_out_backpressure_and_sends_again(ws_a, tmp_path, monkeypatch):
    from monitor.services.stream import stream_accept

    calls = []

    def flaky(**kw):
        calls.append(1)
        if len(calls) == 1:
            raise Backpressure(backlog=10, limit=5, retry_after=3)
        return stream_accept(**kw)

    slept = []
    monkeypatch.setattr(f"{CMD}.stream_accept", flaky)
    monkeypatch.setattr(f"{CMD}.time.sleep", slept.append)
    f = tmp_path / "feed.jsonl"
    f.write_text(_line(1001))
    _, err = _run(str(f), "--workspace", "newsroom", "--no-follow")
    assert "backpressure" in err and slept == [3]
    assert StreamEvent.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_it_follows_appends_truncation_and_rotation(ws_a, tmp_path):
    f = tmp_path / "feed.jsonl"
    f.write_text(_line(1))
    result = {}

    def follow():
        from django.db import connection

        try:
            result["out"] = _run(str(f), "--workspace", "newsroom", "--idle-ms", "50", "--stop-after", "6")
        finally:
            connection.close()  # this thread's own connection, or the test database cannot be dropped

    t = threading.Thread(target=follow)
    t.start()

    def wait_count(n):
        deadline = time.monotonic() + 20
        while StreamEvent.objects.count() < n and time.monotonic() < deadline:
            time.sleep(0.05)
        return StreamEvent.objects.count()

    try:
        assert wait_count(1) == 1
        with open(f, "a") as fh:
            fh.write(_line(2))
            fh.write(_line(3)[:20])  # half a line: waits for its end
            fh.flush()
            time.sleep(0.5)
            assert StreamEvent.objects.count() == 2
            fh.write(_line(3)[20:])
        assert wait_count(3) == 3
        f.write_text(_line(4))  # truncated and rewritten
        assert wait_count(4) == 4
        os.rename(f, tmp_path / "feed.jsonl.1")
        f.write_text(_line(5))  # a new file under the name
        assert wait_count(5) == 5
    finally:
        t.join(30)
    _, err = result["out"]
    assert "truncated" in err and "rotated" in err
    assert sorted(StreamEvent.objects.values_list("cascade_key", flat=True)) == [1, 2, 3, 4, 5]


@pytest.mark.django_db
def test_it_stops_at_the_first_follower_count_into_a_workspace_that_counts_retweeters(ws_a, tmp_path):
    from monitor.services.units import unit_fix

    unit_fix(ws_a.pk, has_counts=False)  # as after a Twitter15/16 upload
    counted = json.dumps({"tweet_id": "1002", "user_id": "2", "created_at": "2020-01-01T00:00:00Z",
                          "followers_count": 40})  # fmt: skip
    f = tmp_path / "feed.jsonl"
    f.write_text(_line(1001) + counted + "\n" + _line(1003) + counted.replace("1002", "1004") + "\n")
    with pytest.raises(CommandError, match=rf"{f}:2: field 'followers_count': .*counts retweeters reached.*stopped"):
        _run(str(f), "--workspace", "newsroom", "--no-follow")
    assert list(StreamEvent.objects.values_list("cascade_key", flat=True)) == [1001]  # the line before it only
