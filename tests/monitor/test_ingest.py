"""Importing collections: every format, idempotent re-upload, strict / skip-bad / validate-only, the worked
example end to end (against PostgreSQL under ``make test``)."""

from __future__ import annotations

import shutil
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pytest

from monitor import selectors
from monitor.models import (
    CascadeInfluence,
    Collection,
    DailyInfluence,
    Follow,
    FollowerCount,
    GivenEdge,
    Publisher,
    Retweet,
    Tweet,
)
from tests.webapp import DATA, EXPECTED_TOTAL, THESIS, total_by_name

FORMATS = DATA / "formats"


def _table_counts(ws) -> dict:
    return {
        "tweets": Tweet.objects.filter(workspace=ws).count(),
        "retweets": Retweet.objects.filter(tweet__workspace=ws).count(),
        "follows": Follow.objects.filter(workspace=ws).count(),
        "counts": FollowerCount.objects.filter(account__workspace=ws).count(),
        "influence": CascadeInfluence.objects.filter(tweet__workspace=ws).count(),
        "daily": DailyInfluence.objects.filter(workspace=ws).count(),
        "publishers": Publisher.objects.filter(workspace=ws).count(),
    }


def test_it_computes_the_thesis_worked_example(ws_a, import_files):
    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    assert c.status == Collection.Status.DONE, c.error
    assert total_by_name(ws_a) == EXPECTED_TOTAL
    run = c.compute_runs.get()
    assert run.status == run.Status.DONE and run.n_cascades == 2 and run.n_edges == 11
    roles = dict(CascadeInfluence.objects.filter(tweet__tweet_id=1000).values_list("account__screen_name", "role"))
    assert roles == {"b": "publisher", "a": "spreader", "c": "spreader", "e": "spreader", "d": "leaf", "f": "leaf"}


def test_it_ranks_per_publisher_with_every_aggregate(ws_a, import_files):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    b = selectors.account_get(ws_a, 102)
    for aggregate, expect in (("mean", {"b": 59, "d": 4}), ("participation", {"b": 59, "d": 8})):
        page = selectors.ranking(ws_a, publisher=b, aggregate=aggregate)
        got = {r["screen_name"]: r[aggregate] for r in page.rows}
        assert {k: got[k] for k in expect} == expect
        assert page.tweets == 2


def test_it_windows_rankings_by_day(ws_a, import_files):
    import datetime as dt

    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    day1 = selectors.Window(dt.date(2020, 1, 1), dt.date(2020, 1, 1))
    page = selectors.ranking(ws_a, window=day1)
    assert page.tweets == 1
    assert {r["screen_name"]: r["total"] for r in page.rows}["d"] == 8.0
    assert "d" not in {
        r["screen_name"] for r in selectors.ranking(ws_a, window=selectors.Window(dt.date(2020, 1, 2))).rows
    }


def test_it_reimports_the_same_data_without_duplicates(ws_a, import_files):
    files = [THESIS / "tweets.csv", THESIS / "follows.csv"]
    import_files(ws_a, files)
    before = _table_counts(ws_a)
    c2 = import_files(ws_a, files)
    assert c2.status == Collection.Status.DONE
    assert c2.counts["tweets_new"] == 0 and c2.counts["retweets_stored"] == 0 and c2.counts["follows_new"] == 0
    assert _table_counts(ws_a) == before
    assert total_by_name(ws_a) == EXPECTED_TOTAL


def test_it_adds_follows_uploaded_later_and_recomputes_the_cascades_they_touch(ws_a, import_files):
    import_files(ws_a, [THESIS / "tweets.csv"])
    # no follower graph yet: everyone but the publisher is an orphan and keeps only their own followers
    assert total_by_name(ws_a)["b"] == 4.0
    c = import_files(ws_a, [THESIS / "follows.csv"])
    assert c.status == Collection.Status.DONE
    assert c.compute_runs.get().n_cascades == 2
    assert total_by_name(ws_a) == EXPECTED_TOTAL


def test_it_stores_nothing_when_a_strict_upload_has_a_bad_record(ws_a, import_files, tmp_path):
    bad = tmp_path / "tweets.csv"
    lines = (THESIS / "tweets.csv").read_text().splitlines()
    lines.insert(5, "1099,1000,107,not-a-time,3,g")
    bad.write_text("\n".join(lines) + "\n")
    c = import_files(ws_a, [bad, THESIS / "follows.csv"])
    assert c.status == Collection.Status.FAILED
    assert "tweets.csv:6" in c.error and "created_at" in c.error
    shown = c.report["read"]["shown"][0]
    assert (shown["path"], shown["line"], shown["field"]) == ("tweets.csv", 6, "created_at")
    assert _table_counts(ws_a) == dict.fromkeys(_table_counts(ws_a), 0)


def test_it_stores_the_good_records_and_reports_the_rest_with_skip_bad(ws_a, import_files, tmp_path):
    bad = tmp_path / "tweets.csv"
    lines = (THESIS / "tweets.csv").read_text().splitlines()
    lines.insert(5, "1099,1000,107,not-a-time,3,g")
    lines.insert(7, "1098,1000,oops,2020-01-01T00:00:09Z,3,h")
    bad.write_text("\n".join(lines) + "\n")
    c = import_files(ws_a, [bad, THESIS / "follows.csv"], mode="skip-bad")
    assert c.status == Collection.Status.DONE
    read = c.report["read"]
    assert read["n_bad"] == 2
    assert [(r["path"], r["line"]) for r in read["shown"]] == [("tweets.csv", 6), ("tweets.csv", 8)]
    assert total_by_name(ws_a) == EXPECTED_TOTAL


def test_it_validates_without_storing(ws_a, import_files):
    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"], validate_only=True)
    assert c.status == Collection.Status.VALIDATED
    assert c.report["read"]["n_good"] == 19 and c.report["read"]["n_bad"] == 0
    assert _table_counts(ws_a)["tweets"] == 0
    assert all(not f.file for f in c.files.all()) or all(not f.file.storage.exists(f.file.name) for f in c.files.all())


def test_it_says_which_file_is_unreadable(ws_a, import_files, tmp_path):
    junk = tmp_path / "notes.bin"
    junk.write_bytes(b"\x00\x01\x02 not a tweet file")
    c = import_files(ws_a, [junk])
    assert c.status == Collection.Status.FAILED
    assert c.error.startswith("notes.bin")


def _tar(folder, dest):
    with tarfile.open(dest, "w:gz") as tf:
        tf.add(folder, arcname=folder.name)
    return dest


def _zip(folder, dest):
    with zipfile.ZipFile(dest, "w") as zf:
        for p in folder.rglob("*"):
            zf.write(p, p.relative_to(folder.parent))
    return dest


@pytest.mark.parametrize(
    "name, make, expect_tweets",
    [
        ("csv", lambda tmp: [FORMATS / "csv" / "good.csv"], None),
        ("follows + csv", lambda tmp: [THESIS / "tweets.csv", FORMATS / "follows" / "edges.txt"], 2),
        ("v1", lambda tmp: [FORMATS / "v1" / "good.jsonl"], None),
        ("v2", lambda tmp: [FORMATS / "v2" / "good.jsonl"], None),
        ("trees (tar)", lambda tmp: [_tar(FORMATS / "trees" / "good", tmp / "trees.tar.gz")], 2),
        ("trees (zip)", lambda tmp: [_zip(FORMATS / "trees" / "good", tmp / "trees.zip")], 2),
        ("tudataset (zip)", lambda tmp: [_zip(FORMATS / "tudataset" / "good", tmp / "tud.zip")], 3),
    ],
)
@pytest.mark.parametrize("via", ["web upload", "command"])
def test_it_imports_every_format(
    ws_a, alice, client, tmp_path, name, make, expect_tweets, via, django_capture_on_commit_callbacks
):
    files = make(tmp_path)
    with django_capture_on_commit_callbacks(execute=True):
        if via == "web upload":
            client.force_login(alice)
            handles = [open(f, "rb") for f in files]  # noqa: SIM115  (closed below)
            try:
                r = client.post(
                    f"/w/{ws_a.slug}/collections/new/",
                    {"files": handles, "format": "auto", "mode": "strict", "compute": "on"},
                )
            finally:
                for h in handles:
                    h.close()
            assert r.status_code == 302, r.content[:2000]
        else:
            from django.core.management import call_command

            call_command("import_collection", ws_a.slug, *map(str, files))
    c = Collection.objects.get(workspace=ws_a)
    assert c.status == Collection.Status.DONE, (name, c.error, c.report)
    n = Tweet.objects.filter(workspace=ws_a).count()
    assert n > 0
    if expect_tweets is not None:
        assert n == expect_tweets
    assert Tweet.objects.filter(workspace=ws_a, compute_status="pending").count() == 0
    assert DailyInfluence.objects.filter(workspace=ws_a).exists()


def test_it_imports_npz_archives_and_keeps_given_graphs(ws_a, import_files, tmp_path):
    from compute.collection import save_collection
    from compute.formats import read
    from compute.structures import save_archive

    r = read(FORMATS / "tudataset" / "good")
    save_archive(r.graphs, tmp_path / "graphs.npz")
    c = import_files(ws_a, [tmp_path / "graphs.npz"])
    assert c.status == Collection.Status.DONE, c.error
    assert GivenEdge.objects.filter(tweet__workspace=ws_a).count() == r.graphs.n_edges
    # the given graphs' influence equals the engine's on the same graphs
    from compute.algorithms.backward import backward

    inf = backward(r.graphs, backend="cpu").influence
    c_ = r.graphs.cascades
    want = sorted(float(x) for x in inf[c_.publisher])
    got = sorted(Tweet.objects.filter(workspace=ws_a).values_list("reach", flat=True))
    assert np.allclose(got, want)

    from compute.generators import twitter_collection

    tweets, graph = twitter_collection(scale=0.0005, seed=3)
    save_collection(tmp_path / "coll.npz", tweets, graph)
    c2 = import_files(ws_a, [tmp_path / "coll.npz"])
    assert c2.status == Collection.Status.DONE, c2.error
    assert c2.counts["retweets_stored"] > 0


@pytest.mark.django_db(transaction=True)
def test_it_imports_a_folder_through_the_command(ws_a, tmp_path, capsys):
    from django.core.management import call_command

    folder = tmp_path / "t16"
    shutil.copytree(FORMATS / "trees" / "good", folder)
    call_command("import_collection", ws_a.slug, str(folder))
    out = capsys.readouterr().out
    assert "Done" in out and "trees" in out
    assert Tweet.objects.filter(workspace=ws_a).count() == 2
    labels = set(Tweet.objects.filter(workspace=ws_a).values_list("label", flat=True))
    assert labels == {"false", "non-rumor"}


@pytest.mark.django_db(transaction=True)
def test_it_exits_with_status_2_when_the_command_import_fails(ws_a, tmp_path):
    from django.core.management import call_command

    bad = tmp_path / "bad.jsonl"
    shutil.copy(FORMATS / "v1" / "bad.jsonl", bad)
    with pytest.raises(SystemExit) as exc:
        call_command("import_collection", ws_a.slug, str(bad))
    assert exc.value.code == 2


def test_it_reports_every_bad_record_when_validating_even_in_strict_mode(ws_a, import_files, tmp_path):
    bad = tmp_path / "tweets.csv"
    lines = (THESIS / "tweets.csv").read_text().splitlines()
    lines.insert(5, "1099,1000,107,not-a-time,3,g")
    lines.insert(7, "1098,1000,oops,2020-01-01T00:00:09Z,3,h")
    bad.write_text("\n".join(lines) + "\n")
    c = import_files(ws_a, [bad], validate_only=True, mode="strict")
    assert c.status == Collection.Status.VALIDATED
    assert [r["line"] for r in c.report["read"]["shown"]] == [6, 8]
    assert not Tweet.objects.filter(workspace=ws_a).exists()


def test_it_reports_progress_with_live_counts(ws_a, tmp_path):
    from django.db import transaction

    from monitor.models import Collection as C
    from monitor.services.ingest import load_files

    c = C.objects.create(workspace=ws_a, name="progress")
    seen: list[tuple[str, float]] = []
    with transaction.atomic():
        load_files(
            [(THESIS / "tweets.csv", "tweets.csv", "auto"), (THESIS / "follows.csv", "follows.csv", "auto")],
            workspace_id=ws_a.pk,
            collection_id=c.pk,
            mode="strict",
            store=True,
            progress=lambda stage, frac: seen.append((stage, frac)),
        )
    fracs = [f for _, f in seen]
    assert fracs == sorted(fracs) and fracs[-1] == 1.0
    assert ("read tweets.csv: 11 records", fracs[1]) in seen, seen
    assert any(stage == "read follows.csv: 8 records" for stage, _ in seen), seen
    assert any(stage.startswith("storing") for stage, _ in seen)


def _load_with_progress(ws, files: list[tuple]) -> tuple[object, list[tuple[str, float]]]:
    from django.db import transaction

    from monitor.models import Collection as C
    from monitor.services.ingest import load_files

    c = C.objects.create(workspace=ws, name="progress")
    seen: list[tuple[str, float]] = []
    with transaction.atomic():
        res = load_files(
            files,
            workspace_id=ws.pk,
            collection_id=c.pk,
            mode="strict",
            store=True,
            progress=lambda stage, frac: seen.append((stage, frac)),
        )
    return res, seen


def test_it_counts_the_lines_of_a_v11_file_once_each(ws_a):
    # issue 40: "Rows read 1,196,902" for a 599,196-line file: a v1.1 retweet's line stages two rows (itself and
    # the original it embeds). What an analyst counts is the file's lines
    path = FORMATS / "v1" / "good.jsonl"
    lines = sum(1 for line in path.read_text().splitlines() if line.strip())
    res, seen = _load_with_progress(ws_a, [(path, "good.jsonl", "auto")])
    skipped = res.report.n_skipped  # a delete notice: not a tweet
    assert skipped == 1 and res.counts["records_read"] == lines - skipped == 5
    assert "rows_read" not in res.counts
    assert res.counts["retweets_in_upload"] > 0  # the file has retweets: the old count was more than its lines
    assert any(stage == "read good.jsonl: 5 records" for stage, _ in seen), seen


def test_reading_a_tree_archive_counts_its_records_as_it_goes(ws_a, tmp_path):
    # issue 40: a Twitter15/16 archive is read whole, and the progress said "0 tweets and retweets" until the
    # end; it counts the tree files' records as each file is read
    archive = Path(shutil.make_archive(str(tmp_path / "trees"), "zip", FORMATS / "trees" / "good"))
    res, seen = _load_with_progress(ws_a, [(archive, "trees.zip", "auto")])
    reading = [int(stage.rsplit(": ", 1)[1].split()[0]) for stage, _ in seen if stage.startswith("reading trees.zip")]
    assert len(reading) >= 2 and reading == sorted(reading) and reading[0] > 0, seen  # counted file by file
    total = res.counts["records_read"]
    assert total == res.report.n_good and total >= reading[-1]
    assert any(stage.startswith("read trees.zip") and stage.endswith(f": {total:,} records") for stage, _ in seen)


# --- conflicts with what is stored, whole-file problems ---------------------------------------------------------

CSV_HEAD = "tweet_id,retweeted_tweet_id,user_id,created_at,followers_count,screen_name\n"


def _later(tmp_path, rows: str, name: str = "later.csv"):
    p = tmp_path / name
    p.write_text(CSV_HEAD + rows)
    return p


def test_a_reupload_may_repeat_stored_tweets_to_the_second_in_any_form(ws_a, import_files, tmp_path):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    before = _table_counts(ws_a)
    # tweet 1000 again: epoch seconds with a fraction, another follower count (a snapshot) and a new retweet
    again = _later(tmp_path, "1000,,102,1577836800.25,3,b\n1006,1000,107,2020-01-01T00:00:06Z,1,g\n")
    c = import_files(ws_a, [again])
    assert c.status == Collection.Status.DONE, c.error
    assert c.counts["conflicts_with_stored"] == 0 and c.counts["tweets_new"] == 0 and c.counts["retweets_stored"] == 1
    assert _table_counts(ws_a)["tweets"] == before["tweets"]


@pytest.mark.parametrize(
    "row, here",
    [
        ("1000,,105,2020-01-01T00:00:00Z,2,e", "here by user 105"),
        ("1000,,102,2020-01-01T00:00:05Z,2,b", "here at 2020-01-01T00:00:05Z"),
        ("1000,2000,102,2020-01-02T00:00:05Z,2,b", "here it is a retweet of 2000"),
    ],
)
def test_an_upload_that_contradicts_a_stored_tweet_is_refused_naming_the_stored_value(
    ws_a, import_files, tmp_path, row, here
):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    before = _table_counts(ws_a)
    later = _later(tmp_path, f"1006,1000,107,2020-01-01T00:00:06Z,1,g\n{row}\n")
    c = import_files(ws_a, [later])
    assert c.status == Collection.Status.FAILED
    assert c.error == (
        "later.csv:3: conflicts with a stored tweet: tweet 1000 is stored as an original by user 102 at "
        f"2020-01-01T00:00:00Z; {here}"
    ), c.error
    assert c.report["read"]["shown"][0]["line"] == 3
    assert _table_counts(ws_a) == before
    # a validation says so too, and stores nothing
    c = import_files(ws_a, [later], validate_only=True)
    assert c.status == Collection.Status.VALIDATED
    assert [r["reason"].split(":")[0] for r in c.report["read"]["shown"]] == ["conflicts with a stored tweet"]
    assert _table_counts(ws_a) == before

    # skip-bad: that tweet's rows are left out, the rest is stored (the retweet of the stored tweet included)
    c = import_files(ws_a, [later], mode="skip-bad")
    assert c.status == Collection.Status.DONE, c.error
    assert c.counts["conflicts_with_stored"] == 1 and c.counts["retweets_stored"] == 1
    assert [(r["path"], r["line"]) for r in c.report["read"]["shown"]] == [("later.csv", 3)]
    assert any("contradicting tweets already stored" in n for n in c.report["notes"]), c.report["notes"]
    stored = Tweet.objects.get(workspace=ws_a, tweet_id=1000)
    assert stored.author.twitter_id == 102 and stored.created_at.isoformat() == "2020-01-01T00:00:00+00:00"
    assert not Retweet.objects.filter(tweet__workspace=ws_a, retweet_id=1000).exists()


def test_conflicts_between_the_files_of_one_upload_name_both(ws_a, import_files, tmp_path):
    a = _later(tmp_path, "1000,,102,2020-01-01T00:00:00Z,2,b\n", "a.csv")
    b = _later(tmp_path, "1001,1000,104,2020-01-01T00:00:01Z,8,d\n1000,,105,2020-01-01T00:00:00Z,2,e\n", "b.csv")
    c = import_files(ws_a, [a, b])
    assert c.status == Collection.Status.FAILED
    assert c.error == (
        "b.csv:3: field 'tweet_id': conflicting duplicate: tweet 1000 was read before (a.csv:2) by user 102; "
        "here by user 105"
    )
    assert _table_counts(ws_a)["tweets"] == 0
    c = import_files(ws_a, [a, b], mode="skip-bad")
    assert c.status == Collection.Status.DONE and c.counts["retweets_stored"] == 1
    assert Tweet.objects.get(workspace=ws_a, tweet_id=1000).author.twitter_id == 102


def test_skip_bad_skips_an_unreadable_file_and_stores_the_rest(ws_a, import_files, tmp_path):
    junk = tmp_path / "notes.bin"
    junk.write_bytes(b"\x00\x01\x02 not a tweet file")
    empty = tmp_path / "edges.txt"
    empty.write_text("# nothing yet\n")
    c = import_files(ws_a, [THESIS / "tweets.csv", junk, empty], mode="skip-bad")
    assert c.status == Collection.Status.DONE, c.error
    shown = c.report["read"]["shown"]
    assert [(r["path"], r["line"]) for r in shown] == [("notes.bin", None), ("edges.txt", None)]
    assert shown[0]["reason"].startswith("cannot tell the format") and shown[1]["reason"] == "empty file"
    assert c.report["read"]["skipped_files"] == ["notes.bin", "edges.txt"]
    assert any("could not be read at all" in n and "notes.bin, edges.txt" in n for n in c.report["notes"])
    assert c.counts["retweets_stored"] == 9
    # strict mode stops at the first of them, and so does skip-bad when nothing else is left to store
    c = import_files(ws_a, [THESIS / "tweets.csv", junk], mode="strict")
    assert c.status == Collection.Status.FAILED and c.error.startswith("notes.bin: cannot tell the format")
    c = import_files(ws_a, [junk, empty], mode="skip-bad")
    assert c.status == Collection.Status.FAILED
    assert c.error.startswith("notes.bin: cannot tell the format")
    assert c.error.endswith("(skip-bad skipped this file and 1 more; nothing else in the upload could be stored)")


def test_a_validation_reports_whole_file_problems_instead_of_failing(ws_a, import_files, tmp_path):
    empty = tmp_path / "edges.txt"
    empty.write_text("# nothing yet\n")
    c = import_files(ws_a, [empty], validate_only=True)
    assert c.status == Collection.Status.VALIDATED, c.error
    assert [(r["path"], r["reason"]) for r in c.report["read"]["shown"]] == [("edges.txt", "empty file")]


def test_the_record_limit_comes_from_the_settings(ws_a, import_files, tmp_path, settings):
    p = _later(tmp_path, "1000,,102,2020-01-01T00:00:00Z,2," + "b" * 300 + "\n")
    settings.SPREADWATCH_MAX_RECORD_BYTES = 200
    c = import_files(ws_a, [p])
    assert c.status == Collection.Status.FAILED and c.error == "later.csv:2: record longer than 200 bytes"
    settings.SPREADWATCH_MAX_RECORD_BYTES = 400
    assert import_files(ws_a, [p]).status == Collection.Status.DONE


# --- one registry of input formats ---------------------------------------------------------------------------

_NEW_FORMAT = r"""
import dataclasses, json, os, sys
from pathlib import Path

from compute.formats.registry import FORMATS, Sniff

# a format registered before anything else is imported: every place must offer it and ingest must read it
FORMATS["csv-twin"] = dataclasses.replace(FORMATS["csv"], name="csv-twin", label="A new format", sniff=Sniff())

import django

django.setup()
from compute.cli import build_parser
from frontend.forms import UploadForm
from monitor.api.serializers import CollectionUploadSerializer
from monitor.services.ingest.reading import detect, read_into
from monitor.services.ingest.stager import Stager
from compute.formats import ReadReport

path = Path(sys.argv[1])
st = Stager(None)
st.names.append(path.name)
read_into(st, path, path.name, detect(path, path.name, "csv-twin"), "strict", ReadReport(), lambda b, t: None)
print(json.dumps({
    "cli": build_parser().parse_args(["rank", str(path), "--format", "csv-twin"]).format,
    "form": dict(UploadForm().fields["format"].choices).get("csv-twin"),
    "api": "csv-twin" in CollectionUploadSerializer().fields["format"].choices,
    "ingest_rows": st.rows,
}))
"""


def test_it_offers_and_reads_every_registered_format_everywhere():
    """The CLI, the upload form and the API offer exactly the registry's formats, and a format added to the
    registry alone is offered by each of them and read by ingest (a place keeping its own list fails here)."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    from compute.cli import build_parser
    from compute.formats import AUTO
    from compute.formats import FORMATS as REGISTRY
    from frontend.forms import UploadForm
    from monitor.api.serializers import CollectionUploadSerializer

    want = [AUTO, *REGISTRY]
    cli = next(a for a in build_parser()._subparsers._group_actions[0].choices["rank"]._actions if a.dest == "format")
    assert list(cli.choices) == want
    assert [k for k, _ in UploadForm().fields["format"].choices] == want
    assert [*CollectionUploadSerializer().fields["format"].choices] == want

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    out = subprocess.run(
        [sys.executable, "-c", _NEW_FORMAT, str(THESIS / "tweets.csv")],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got == {"cli": "csv-twin", "form": "A new format", "api": True, "ingest_rows": 11}
