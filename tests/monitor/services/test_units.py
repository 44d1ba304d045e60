"""A workspace's unit (issue 40, ``monitor.services.units``): fixed by its first tweets, never changed by later
data. Streamed retweets carrying follower counts into the Twitter16 workspace, whose trees carry none, once turned
its biggest cascade's unit into followers with every earlier participant at 0, and were answered 202."""

from __future__ import annotations

import json
import tarfile

import pytest

from monitor import services
from monitor.models import CascadeInfluence, Collection, StreamEvent, Tweet, Workspace
from monitor.services.stream import stream_accept
from monitor.services.stream.apply import apply_events
from monitor.services.stream.unit_check import UnitRefused
from monitor.services.units import count_field, unit_fix, unit_for
from tests.monitor.services.stream.test_apply import add_events, write_upload
from tests.webapp import DATA

pytestmark = pytest.mark.django_db


def _twitter16(ws, import_files, tmp_path) -> Tweet:
    """The bundled Twitter16 sample (trees: no follower counts) imported into ``ws``; its biggest cascade."""
    archive = tmp_path / "twitter16.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(DATA / "twitter16", arcname="twitter16")
    c = import_files(ws, [archive])
    assert c.status == Collection.Status.DONE, c.error
    return Tweet.objects.filter(workspace=ws).order_by("-n_participants").first()


def _values(tweet: Tweet) -> dict[int, float]:
    return dict(CascadeInfluence.objects.filter(tweet=tweet).values_list("account__twitter_id", "influence"))


def _retweets_with_counts(tweet: Tweet) -> list[tuple[int, str]]:
    """The issue's body: two retweets carrying follower counts, by accounts new to the cascade, and a follow."""
    t = tweet.created_at.timestamp() + 3_600
    rts = [
        {"tweet_id": str(9_000_001 + k), "retweeted_tweet_id": str(tweet.tweet_id), "user_id": str(8_000_001 + k),
         "created_at": t + k, "followers_count": 500 + k}
        for k in range(2)
    ]  # fmt: skip
    follow = {"follower_id": "8000001", "followee_id": str(tweet.author.twitter_id)}
    return [(k, json.dumps(r)) for k, r in enumerate([*rts, follow], 1)]


def test_the_first_tweets_fix_the_unit_and_later_data_does_not_change_it(ws_a, ws_b):
    assert unit_for(True) == "followers" and unit_for(False) == "retweeters"
    assert unit_fix(ws_a.pk, has_counts=False) == "retweeters"
    assert unit_fix(ws_a.pk, has_counts=True) == "retweeters"  # fixed: counts arriving later change nothing
    assert unit_fix(ws_b.pk, has_counts=True) == "followers"
    assert unit_fix(ws_b.pk, has_counts=False) == "followers"
    assert dict(Workspace.objects.values_list("slug", "unit")) == {ws_a.slug: "retweeters", ws_b.slug: "followers"}


def test_follows_alone_fix_no_unit_and_the_first_streamed_tweets_do(ws_a):
    stream_accept(workspace=ws_a, lines=[(1, json.dumps({"follower_id": 1, "followee_id": 2}))])
    assert Workspace.objects.get(pk=ws_a.pk).unit == ""
    no_count = {"tweet_id": "10", "user_id": "1", "created_at": "2020-01-01T00:00:00Z"}
    stream_accept(workspace=ws_a, lines=[(1, json.dumps(no_count))])
    assert Workspace.objects.get(pk=ws_a.pk).unit == "retweeters"


@pytest.mark.parametrize(
    ("id_field", "line", "field"),
    [
        ("id_str", None, "user.followers_count"),
        ("retweeted_status.id_str", None, "retweeted_status.user.followers_count"),
        ("data.id", None, "data.author.public_metrics.followers_count"),
        (
            "data[1].id",
            json.dumps({"data": [{"id": "1", "author_id": "5"}, {"id": "2", "author_id": "6"}],
                        "includes": {"users": [{"id": "5"}, {"id": "6", "public_metrics": {"followers_count": 3}}]}}),
            "includes.users[1].public_metrics.followers_count",
        ),
        (  # a flattened v2 tweet names its id "id", as a v1.1 status without id_str does: the line tells them apart
            "id",
            json.dumps({"id": "2", "author": {"id": "6", "public_metrics": {"followers_count": 3}}}),
            "author.public_metrics.followers_count",
        ),
        ("id", json.dumps({"id": 2, "user": {"id": 6, "followers_count": 3}}), "user.followers_count"),
    ],
)  # fmt: skip
def test_it_names_the_field_that_carries_a_stream_row_s_count(id_field, line, field):
    assert count_field(id_field, line) == field


def test_streamed_counts_into_the_twitter16_workspace_are_refused_and_its_cascade_keeps_its_reach(
    ws_a, import_files, tmp_path
):
    big = _twitter16(ws_a, import_files, tmp_path)
    assert Workspace.objects.get(pk=ws_a.pk).unit == "retweeters"
    before, reach = _values(big), big.reach
    assert len(before) > 100 and set(before.values()) >= {1.0} and reach == len(before)
    with pytest.raises(UnitRefused) as exc:
        stream_accept(workspace=ws_a, lines=_retweets_with_counts(big))
    r = exc.value.record
    assert (r.line, r.field) == (1, "followers_count") and "retweeters" in r.reason
    assert not StreamEvent.objects.filter(workspace=ws_a).exists()
    big.refresh_from_db()
    assert (big.unit, big.reach, _values(big)) == ("retweeters", reach, before)


def test_counted_events_queued_before_the_rule_are_dead_letters_and_the_cascade_keeps_its_reach(
    ws_a, import_files, tmp_path
):
    big = _twitter16(ws_a, import_files, tmp_path)
    before, reach = _values(big), big.reach
    records = [json.loads(text) for _, text in _retweets_with_counts(big)]
    records[2] = {"follower": int(records[2]["follower_id"]), "followee": int(records[2]["followee_id"])}
    ids = add_events(ws_a, records)  # stored as an older intake stored them: no unit check
    out = apply_events(workspace_id=ws_a.pk, event_ids=ids)
    big.refresh_from_db()
    after = _values(big)
    assert all(after[a] >= v for a, v in before.items()), "an earlier participant lost reach"
    assert (big.unit, big.reach) == ("retweeters", reach)
    assert set(after) == set(before)  # the refused retweeters are not participants
    assert (out["dead"], out["applied"]) == (2, 1)  # the follow is applied
    errors = list(StreamEvent.objects.filter(workspace=ws_a, status="dead").values_list("error", flat=True))
    assert len(errors) == 2 and all(e.startswith("field 'followers_count': ") and "retweeters" in e for e in errors)


def test_an_upload_carrying_counts_into_a_retweeters_workspace_is_refused_naming_file_line_and_field(
    ws_a, import_files, tmp_path
):
    big = _twitter16(ws_a, import_files, tmp_path)
    before, n_tweets = _values(big), Tweet.objects.filter(workspace=ws_a).count()
    rt = {"tweet_id": 9_000_001, "retweeted_tweet_id": big.tweet_id, "user_id": 8_000_001,
          "created_at": int(big.created_at.timestamp()) + 60}  # fmt: skip
    records = [dict(rt), dict(rt, tweet_id=9_000_002, user_id=8_000_002, followers_count=40)]
    c = import_files(ws_a, write_upload(tmp_path / "up", records))
    assert c.status == Collection.Status.FAILED
    assert "tweets.csv:3: field 'followers_count': a follower count" in c.error and "nothing was stored" in c.error
    assert Tweet.objects.filter(workspace=ws_a).count() == n_tweets and _values(big) == before
    # without the count, the same upload is taken, in the workspace's unit
    c = import_files(ws_a, write_upload(tmp_path / "up2", [rt]))
    assert c.status == Collection.Status.DONE, c.error
    big.refresh_from_db()
    after = _values(big)
    assert big.unit == "retweeters" and after[8_000_001] == 1.0  # n_v = 1 (an orphan: no follow explains it)
    assert {a: after[a] for a in before} == before


def test_in_a_followers_workspace_a_cascade_without_counts_counts_followers_and_its_first_count_takes_nothing(
    ws_a, import_files, tmp_path
):
    counted = {"tweet_id": 1000, "user_id": 1, "created_at": 1_600_000_000, "followers_count": 10}
    bare = [
        {"tweet_id": 2000, "user_id": 2, "created_at": 1_600_000_000},
        {"tweet_id": 2001, "retweeted_tweet_id": 2000, "user_id": 3, "created_at": 1_600_000_010},
    ]
    c = import_files(ws_a, write_upload(tmp_path / "a", [counted]))
    assert c.status == Collection.Status.DONE, c.error
    assert Workspace.objects.get(pk=ws_a.pk).unit == "followers"
    c = import_files(ws_a, write_upload(tmp_path / "b", [*bare, {"follower": 3, "followee": 2}]))
    assert c.status == Collection.Status.DONE, c.error
    t = Tweet.objects.get(workspace=ws_a, tweet_id=2000)
    assert (t.unit, t.reach) == ("followers", 0.0)  # not "retweeters" with reach 2: counts unknown, counted 0
    before = _values(t)
    late = {"tweet_id": 2002, "retweeted_tweet_id": 2000, "user_id": 4, "created_at": 1_600_000_020,
            "followers_count": 7}  # fmt: skip
    apply_events(workspace_id=ws_a.pk, event_ids=add_events(ws_a, [late]))
    t.refresh_from_db()
    after = _values(t)
    assert t.unit == "followers" and all(after[a] >= v for a, v in before.items())


def test_a_purge_that_keeps_the_workspace_unfixes_its_unit(ws_a):
    unit_fix(ws_a.pk, has_counts=False)
    services.workspace_purge(workspace=ws_a, delete_workspace=False)
    assert Workspace.objects.get(pk=ws_a.pk).unit == ""


def test_a_retweet_set_aside_for_its_original_fixes_no_unit_and_neither_does_an_upload_that_stores_none(
    ws_a, import_files, tmp_path
):
    orphan = {"tweet_id": 99_001, "retweeted_tweet_id": 99_000, "user_id": 101, "created_at": 1_600_000_000}
    c = import_files(ws_a, write_upload(tmp_path / "orphans", [orphan]))  # skipped: the original is not stored
    assert c.status == Collection.Status.DONE, c.error
    assert Workspace.objects.get(pk=ws_a.pk).unit == ""
    first = add_events(ws_a, [orphan])  # as an older intake stored it: the consumer sets it aside, waiting
    apply_events(workspace_id=ws_a.pk, event_ids=first)
    assert Workspace.objects.get(pk=ws_a.pk).unit == ""
    original = {"tweet_id": 2000, "user_id": 101, "created_at": 1_600_000_010, "followers_count": 0}
    out = apply_events(workspace_id=ws_a.pk, event_ids=add_events(ws_a, [original]))
    assert (out["applied"], out["dead"]) == (1, 0) and Workspace.objects.get(pk=ws_a.pk).unit == "followers"


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("first_counts", "refused"), [(False, True), (True, False)])
def test_two_writers_bringing_a_new_workspace_its_first_data_at_once_are_serialised(first_counts, refused):
    """The first writer fixes the unit in its transaction and holds the workspace's row to its commit; a stream body
    arriving meanwhile waits for it, then is checked against the unit it fixed (never both taken in two units)."""
    import threading

    from django.db import connection, transaction

    ws = services.workspace_create(name="Race", slug="race")
    held, release = threading.Event(), threading.Event()

    def first_writer() -> None:  # an import in the middle of its transaction, its first tweets just fixed the unit
        try:
            with transaction.atomic():
                unit_fix(ws.pk, has_counts=first_counts)
                held.set()
                release.wait(30)
        finally:
            connection.close()

    t = threading.Thread(target=first_writer)
    t.start()
    assert held.wait(30)
    timer = threading.Timer(1.0, release.set)  # the stream body below blocks on the row until then
    timer.start()
    counted = json.dumps({"tweet_id": "10", "user_id": "1", "created_at": "2020-01-01T00:00:00Z", "followers_count": 3})
    try:
        if refused:
            with pytest.raises(UnitRefused):
                stream_accept(workspace=Workspace.objects.get(pk=ws.pk), lines=[(1, counted)])
        else:
            stream_accept(workspace=Workspace.objects.get(pk=ws.pk), lines=[(1, counted)])
    finally:
        release.set()
        t.join(30)
        timer.cancel()
    assert release.is_set() and Workspace.objects.get(pk=ws.pk).unit == unit_for(first_counts)
    assert StreamEvent.objects.filter(workspace=ws).count() == (0 if refused else 1)
