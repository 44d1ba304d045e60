"""``manage.py claims``: search, save, list and show from the command line answer what the pages show; a bad
query, workspace or claim ends with a message naming it and writes nothing."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from monitor import selectors
from monitor.models import Claim
from tests.claimed import claimed_csv


@pytest.fixture
def claimed(ws_a, import_files, tmp_path):
    import_files(ws_a, [claimed_csv(tmp_path / "tweets.csv")])
    return ws_a


def run(*args) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("claims", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_it_searches_saves_lists_and_shows_a_claim(claimed, alice):
    out, err = run("search", claimed.slug, "5g", "--sort", "newest", "--output", "json")
    assert [r["tweet_id"] for r in json.loads(out)] == ["5", "2", "1"]
    out, err = run("search", claimed.slug, "#5g")
    assert (
        "3 tweets match" not in err
        and "2 tweets match (hashtag #5g)" in err
        and out.splitlines()[0].split()[0] == "tweet_id"
    )
    assert run("save", claimed.slug, "5G", "5g", "--user", "alice")[0].startswith("saved claim")
    assert Claim.objects.get(workspace=claimed).created_by == alice
    assert json.loads(run("list", claimed.slug, "--output", "json")[0])[0]["name"] == "5G"
    days = json.loads(run("show", claimed.slug, "5G", "--output", "json")[0])
    assert next((d["day"], d["tweets"], d["retweets"], d["false"]) for d in days) == ("2020-03-01", 1, 0, 1)
    spreaders = json.loads(run("show", claimed.slug, "5G", "--part", "spreaders", "--output", "json")[0])
    assert [s["twitter_id"] for s in spreaders] == [s["twitter_id"] for s in selectors.claim_spreaders(claimed, "5g")]
    assert "pa" in run("show", claimed.slug, "5G", "--part", "publishers")[0]


@pytest.mark.parametrize(
    "args, message",
    [
        (("search", "nowhere", "5g"), "no workspace with the slug 'nowhere'"),
        (("search", "newsroom", "virus OR -towers"), "query: an excluded term"),
        (("save", "newsroom", "", "5g"), "name: give the claim a name"),
        (("save", "newsroom", "X", "5g", "--user", "nobody"), "--user: no user 'nobody'"),
        (("show", "newsroom", "Nothing"), "no claim named 'Nothing' in newsroom"),
    ],
)
def test_bad_input_ends_with_a_message_naming_it(claimed, args, message):
    with pytest.raises(CommandError, match=message.replace("(", r"\(")):
        run(*args)
    assert not Claim.objects.exists()


def test_pairs_builds_the_phrase_indexes_on_postgresql_and_says_why_not_elsewhere(claimed, monkeypatch):
    from django.db import connection

    out, _ = run("pairs", claimed.slug)
    if connection.vendor != "postgresql":
        assert out.startswith("nothing done: the pairs index is PostgreSQL's")
        return
    assert out == f"{claimed.slug}: no index: too few tweets for a phrase search to need one\n"
    assert run("pairs", claimed.slug)[0] == f"{claimed.slug}: no change since the last check (--force checks again)\n"
    monkeypatch.setattr("monitor.services.search_pairs.MIN_DOCUMENTS", 1)
    monkeypatch.setattr("monitor.services.search_pairs.MIN_SHARE", 0.3)
    out, _ = run("pairs", claimed.slug, "--force")
    assert out.startswith(f"{claimed.slug}: built tweetdocument_pairs_{claimed.pk}_") and "8 common words" in out
