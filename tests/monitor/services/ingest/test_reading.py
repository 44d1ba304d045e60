"""An upload's large v1.1 JSONL file is parsed by ``SPREADWATCH_READ_WORKERS`` processes
(``monitor.services.ingest.reading``): the import stores, counts and reports exactly what one process does, the
bad records named by the file as uploaded and its line."""

from __future__ import annotations

import json
from pathlib import Path
from unittest import mock

import pytest

from compute.formats import _parallel
from monitor.models import Collection
from tests.compute.formats.test_parallel import _lines, _status
from tests.webapp import total_by_name


def _upload(tmp_path, name: str = "tweets.jsonl", lines: list[str] | None = None):
    p = tmp_path / name
    p.write_text("\n".join(_lines(150) if lines is None else lines) + "\n")
    f = tmp_path / "follows.csv"
    f.write_text("follower_id,followee_id\n" + "".join(f"{5000 + i},{1000 + i % 20}\n" for i in range(150)))
    return [p, f]


def _import_with(settings, import_files, ws, files, workers: int, **kw) -> Collection:
    """The import with ``workers`` processes, which must start (or not) for the v1.1 file."""
    started = []
    real = _parallel._readers
    settings.SPREADWATCH_READ_WORKERS = workers
    settings.SPREADWATCH_READ_PARALLEL_BYTES = 0  # every file: the tests' files are small
    settings.SPREADWATCH_READ_RANGE_BYTES = 2000
    with mock.patch.object(_parallel, "_readers", lambda *a: started.append(a[0]) or real(*a)):
        c = import_files(ws, files, **kw)
    assert [Path(p).suffix for p in started] == ([".jsonl"] if workers > 1 else [])  # stored under its own name
    return c


@pytest.mark.parametrize("validate_only", [False, True])
def test_it_imports_with_two_workers_what_it_imports_with_one(
    settings, import_files, ws_a, ws_b, tmp_path, validate_only
):
    files = _upload(tmp_path)
    one = _import_with(settings, import_files, ws_a, files, 1, mode="skip-bad", validate_only=validate_only)
    two = _import_with(settings, import_files, ws_b, files, 2, mode="skip-bad", validate_only=validate_only)
    assert one.status == two.status
    assert one.counts == two.counts and one.report == two.report
    shown = one.report["read"]["shown"]
    assert len(shown) > 20 and all(r["path"] == "tweets.jsonl" and r["line"] for r in shown)
    if not validate_only:
        assert total_by_name(ws_a) == total_by_name(ws_b) != {}


def test_a_strict_import_fails_on_the_same_line_with_two_workers(settings, import_files, ws_a, ws_b, tmp_path):
    good = _lines(150, bad=False)
    files = _upload(tmp_path, lines=[*good[:97], json.dumps(_status(1, 2, "not a time")), *good[97:]])
    one = _import_with(settings, import_files, ws_a, files, 1, mode="strict")
    two = _import_with(settings, import_files, ws_b, files, 2, mode="strict")
    assert one.status == two.status == Collection.Status.FAILED
    assert one.error == two.error and "tweets.jsonl:98" in one.error


def _follows_upload(tmp_path, bad_line: int | None = None):
    lines = [f"{5000 + i},{1000 + i % 20}\n" for i in range(400)]
    if bad_line is not None:
        lines[bad_line - 2] = "12,x\n"  # the header is line 1
    f = tmp_path / "follows.csv"
    f.write_text("follower_id,followee_id\n" + "".join(lines))
    return [f]


def _import_ahead(settings, import_files, ws, files, ahead: int, **kw) -> tuple[Collection, list]:
    """The import with follow edges parsed ``ahead`` rows ahead in a thread (0: in the import's), in parts."""
    from compute import formats

    used = []
    real = formats.read_ahead
    settings.SPREADWATCH_FOLLOWS_AHEAD_ROWS = ahead
    settings.SPREADWATCH_IMPORT_PART_ROWS = 150
    with mock.patch.object(formats, "read_ahead", lambda *a, **k: used.append(a[1]) or real(*a, **k)):
        c = import_files(ws, files, **kw)
    return c, used


def test_follows_parsed_ahead_in_a_thread_are_stored_counted_and_reported_as_without(
    settings, import_files, ws_a, ws_b, tmp_path
):
    from monitor.models import Follow

    files = _follows_upload(tmp_path)
    plain, used_plain = _import_ahead(settings, import_files, ws_a, files, 0)
    ahead, used_ahead = _import_ahead(settings, import_files, ws_b, files, 100)
    assert used_plain == [] and used_ahead == [100]
    assert plain.status == ahead.status == Collection.Status.DONE
    assert plain.counts == ahead.counts and plain.report["read"] == ahead.report["read"]
    pairs = [
        set(Follow.objects.filter(workspace=ws).values_list("follower__twitter_id", "followee__twitter_id"))
        for ws in (ws_a, ws_b)
    ]
    assert len(pairs[0]) == 400 and pairs[0] == pairs[1]


def test_a_bad_follows_line_parsed_ahead_fails_the_import_on_its_line_and_stores_nothing(
    settings, import_files, ws_a, tmp_path
):
    from monitor.models import Follow

    c, used = _import_ahead(settings, import_files, ws_a, _follows_upload(tmp_path, bad_line=321), 100, mode="strict")
    assert used == [100] and c.status == Collection.Status.FAILED
    assert c.error.startswith("follows.csv:321: field 'followee_id'"), c.error
    assert not Follow.objects.filter(workspace=ws_a).exists()
