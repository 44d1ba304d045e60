"""Applying stream events (monitor.services.stream.apply): idempotent redelivery, two consumers on the same ids,
retweets waiting for their original (applied when it comes, dead when it never does), a late follow, bad bodies
as dead letters naming the field -- each checked against a batch upload of the same records."""

from __future__ import annotations

import csv
import datetime as dt
import json
import threading
from pathlib import Path

import pytest
from django.db import connection
from django.db.models import Sum
from django.utils import timezone

from monitor import partitions
from monitor.models import (
    Account,
    CascadeGraph,
    CascadeInfluence,
    DailyInfluence,
    Follow,
    FollowerCount,
    PublisherDay,
    Retweet,
    StreamArrival,
    StreamEvent,
    Tweet,
    Workspace,
)
from monitor.services.stream.apply import apply_events, sweep_waiting
from tests.webapp import EXPECTED_TOTAL, THESIS, total_by_name

pytestmark = pytest.mark.services

TWEET_COLUMNS = ("tweet_id", "retweeted_tweet_id", "user_id", "created_at", "followers_count", "screen_name",
                 "text", "label")  # fmt: skip


# --- helpers (the replay tests use them too) ----------------------------------------------------------------------


def kind_of(rec: dict) -> str:
    if "follower" in rec:
        return StreamEvent.Kind.FOLLOW
    return StreamEvent.Kind.RETWEET if rec.get("retweeted_tweet_id") not in (None, "") else StreamEvent.Kind.TWEET


def add_events(ws, records: list) -> list[int]:
    """Accept ``records`` (dicts, or raw body strings) as stream events, in this order; returns their ids."""
    now = timezone.now()
    rows = []
    for rec in records:
        body = rec if isinstance(rec, str) else json.dumps(rec)
        kind = StreamEvent.Kind.TWEET if isinstance(rec, str) else kind_of(rec)
        key = None
        if not isinstance(rec, str) and kind != StreamEvent.Kind.FOLLOW:
            key = int(rec.get("retweeted_tweet_id") or rec["tweet_id"])
        rows.append(StreamEvent(workspace=ws, kind=kind, cascade_key=key, body=body, received_at=now))
    return [e.pk for e in StreamEvent.objects.bulk_create(rows)]


def thesis_records() -> tuple[list[dict], list[dict]]:
    """The worked example as stream records: (tweets CSV rows as JSON objects, follow records)."""
    with open(THESIS / "tweets.csv", newline="") as f:
        tweets = [{k: v for k, v in row.items() if v != ""} for row in csv.DictReader(f)]
    with open(THESIS / "follows.csv", newline="") as f:
        follows = [{"follower": int(r["follower_id"]), "followee": int(r["followee_id"])} for r in csv.DictReader(f)]
    return tweets, follows


def write_upload(tmp: Path, records: list[dict]) -> list[Path]:
    """The same records as the files an analyst uploads: a tweets CSV (in this order) and a follows CSV."""
    tmp.mkdir(parents=True, exist_ok=True)
    tweets = [r for r in records if "follower" not in r]
    follows = [r for r in records if "follower" in r]
    paths = []
    if tweets:
        p = tmp / "tweets.csv"
        with open(p, "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(TWEET_COLUMNS)
            for r in tweets:
                w.writerow(["" if r.get(c) is None else r.get(c) for c in TWEET_COLUMNS])
        paths.append(p)
    if follows:
        p = tmp / "follows.csv"
        with open(p, "w", newline="") as f:
            f.write("follower_id,followee_id\n" + "".join(f"{r['follower']},{r['followee']}\n" for r in follows))
        paths.append(p)
    return paths


def snapshot(ws) -> dict:
    """Everything a compute stores, keyed by Twitter ids (account primary keys differ between workspaces)."""
    tw = dict(Account.objects.filter(workspace=ws).values_list("pk", "twitter_id"))
    tid = dict(Tweet.objects.filter(workspace=ws).values_list("pk", "tweet_id"))
    edges = {}
    for g in CascadeGraph.objects.filter(tweet__workspace=ws):
        src, dst = g.edge_arrays()
        edges[tid[g.tweet_id]] = sorted(zip((tw[s] for s in src.tolist()), (tw[d] for d in dst.tolist())))
    influence = {
        (tid[t], tw[a]): (round(i, 9), r, f)
        for t, a, i, r, f in CascadeInfluence.objects.filter(tweet__workspace=ws).values_list(
            "tweet_id", "account_id", "influence", "role", "followers"
        )
    }
    daily = {
        (tw[p], tw[a], d, lab): (round(i, 9), c)
        for p, a, d, lab, i, c in DailyInfluence.objects.filter(workspace=ws).values_list(
            "publisher_id", "account_id", "day", "label", "influence", "cascades"
        )
    }
    pubday = {
        (tw[p], d, lab): (n, round(r, 9))
        for p, d, lab, n, r in PublisherDay.objects.filter(workspace=ws).values_list(
            "publisher_id", "day", "label", "tweets", "reach"
        )
    }
    columns = ("tweet_id", "compute_status", "n_participants", "n_edges", "n_orphans", "reach", "unit", "label",
               "hashtags", "urls", "domains")  # fmt: skip
    tweets = {
        t: (s, n, e, o, None if r is None else round(r, 9), u, lab, tags, urls, domains)
        for t, s, n, e, o, r, u, lab, tags, urls, domains in Tweet.objects.filter(workspace=ws).values_list(*columns)
    }
    return {"edges": edges, "influence": influence, "daily": daily, "publisherday": pubday, "tweets": tweets}


def assert_same(stream: dict, batch: dict) -> None:
    for key in batch:
        assert stream[key] == batch[key], key


GONE = "applied and deleted"


def statuses(ids: list[int]) -> list[str]:
    """Each event's status, or ``GONE`` once it is applied cleanly (such events are deleted)."""
    by_pk = dict(StreamEvent.objects.filter(pk__in=ids).values_list("pk", "status"))
    return [by_pk.get(i, GONE) for i in ids]


def arrivals(ws) -> dict[int, tuple[int, int]]:
    """The workspace's arrival counts summed per cascade key: (events, retweets)."""
    rows = StreamArrival.objects.filter(workspace=ws).values("cascade_key").annotate(e=Sum("events"), r=Sum("retweets"))
    return {r["cascade_key"]: (r["e"], r["r"]) for r in rows}


# --- behaviour ------------------------------------------------------------------------------------------------------


def test_it_applies_the_worked_example_as_the_batch_upload_stores_it(ws_a, ws_b, import_files, tmp_path):
    tweets, follows = thesis_records()
    ids = add_events(ws_a, follows + tweets)
    out = apply_events(workspace_id=ws_a.pk, event_ids=ids)
    assert (out["applied"], out["waiting"], out["dead"], out["cascades"]) == (len(ids), 0, 0, 2)
    assert out["edges"] == 11 and out["retweets"] == 9
    assert set(out["seconds"]) >= {"lock", "parse", "store", "compute", "results", "aggregates", "mark", "total"}
    assert total_by_name(ws_a) == EXPECTED_TOTAL
    import_files(ws_b, write_upload(tmp_path, tweets + follows))
    assert_same(snapshot(ws_a), snapshot(ws_b))
    # applied cleanly, the events are gone; their arrivals are counted once, per cascade (follows: key 0)
    assert set(statuses(ids)) == {GONE}
    assert arrivals(ws_a) == {0: (len(follows), 0), 1000: (6, 5), 2000: (5, 4)}
    # the stream's rows belong to no collection, the upload's to its own; times, counts and ids are the same
    for model, key in ((Retweet, "tweet__workspace"), (FollowerCount, "account__workspace"), (Follow, "workspace")):
        assert not model.objects.filter(**{key: ws_a}).exclude(collection=None).exists(), model
        assert not model.objects.filter(**{key: ws_b}, collection=None).exists(), model
    fields = ("tweet__tweet_id", "retweeter__twitter_id", "retweet_id", "created_at", "followers_count")
    retweets = [sorted(Retweet.objects.filter(tweet__workspace=ws).values_list(*fields)) for ws in (ws_a, ws_b)]
    assert retweets[0] == retweets[1] and len(retweets[0]) == 9
    fields = ("account__twitter_id", "observed_at", "count")
    snapshots = [sorted(FollowerCount.objects.filter(account__workspace=w).values_list(*fields)) for w in (ws_a, ws_b)]
    assert snapshots[0] == snapshots[1] and snapshots[0]


@pytest.mark.skipif(
    connection.vendor != "postgresql", reason="only PostgreSQL's apply rewrites just the changed rows (SQLite: all)"
)
def test_a_micro_batch_rewrites_only_the_rows_it_changed_and_its_aggregates_equal_the_batch_upload(
    ws_a, ws_b, import_files, tmp_path
):
    tweets, follows = thesis_records()
    # a third tweet of publisher b on the second day, retweeted by e, who retweeted that day's tweet 2000 too:
    # e's daily row for (b, day 2) sums two cascades, and the second micro-batch touches only one of them
    third = [
        {"tweet_id": 3000, "user_id": 102, "created_at": "2020-01-02T01:00:00Z", "followers_count": 2,
         "screen_name": "b"},
        {"tweet_id": 3001, "retweeted_tweet_id": 3000, "user_id": 105, "created_at": "2020-01-02T01:00:01Z",
         "followers_count": 16, "screen_name": "e"},
    ]  # fmt: skip
    g_follows_d = {"follower": 107, "followee": 104}
    first = tweets + third + follows + [g_follows_d]
    apply_events(workspace_id=ws_a.pk, event_ids=add_events(ws_a, first))
    before = {
        (t, a): (pk, i, f, r)
        for pk, t, a, i, f, r in CascadeInfluence.objects.filter(tweet__workspace=ws_a).values_list(
            "pk", "tweet__tweet_id", "account__twitter_id", "influence", "followers", "role"
        )
    }
    late = [
        # f (who follows e) retweets 3000: e's row in it changes; g (who follows d) retweets 1000: d's and b's do
        {"tweet_id": 3002, "retweeted_tweet_id": 3000, "user_id": 106, "created_at": "2020-01-02T01:00:02Z",
         "followers_count": 32, "screen_name": "f"},
        {"tweet_id": 1006, "retweeted_tweet_id": 1000, "user_id": 107, "created_at": "2020-01-01T00:00:06Z",
         "followers_count": 64, "screen_name": "g"},
    ]  # fmt: skip
    out = apply_events(workspace_id=ws_a.pk, event_ids=add_events(ws_a, late))
    assert out["cascades"] == 2
    after = {
        (t, a): (pk, i, f, r)
        for pk, t, a, i, f, r in CascadeInfluence.objects.filter(tweet__workspace=ws_a).values_list(
            "pk", "tweet__tweet_id", "account__twitter_id", "influence", "followers", "role"
        )
    }
    assert set(after) - set(before) == {(3000, 106), (1000, 107)}
    kept = {k for k in before if after[k][0] == before[k][0]}
    unchanged = {k for k in before if after[k][1:] == before[k][1:]}
    assert kept == unchanged  # a row is rewritten exactly when something in it changed
    assert {(1000, 101), (1000, 103), (1000, 105), (1000, 106)} <= kept  # not upstream of g in cascade 1000
    assert {(1000, 102), (1000, 104), (3000, 102), (3000, 105)}.isdisjoint(kept)
    import_files(ws_b, write_upload(tmp_path, first + late))
    assert_same(snapshot(ws_a), snapshot(ws_b))


def test_a_redelivered_micro_batch_changes_nothing(ws_a):
    tweets, follows = thesis_records()
    ids = add_events(ws_a, tweets + follows)
    apply_events(workspace_id=ws_a.pk, event_ids=ids)
    before = snapshot(ws_a)
    version = Workspace.objects.get(pk=ws_a.pk).data_version
    again = apply_events(workspace_id=ws_a.pk, event_ids=ids)
    assert (again["events"], again["skipped"], again["applied"]) == (0, len(ids), 0)
    assert snapshot(ws_a) == before
    assert Workspace.objects.get(pk=ws_a.pk).data_version == version
    assert sum(e for e, _ in arrivals(ws_a).values()) == len(ids)  # counted once


def test_an_older_retweet_arriving_late_is_inserted_and_its_cascade_recomputed(ws_a, ws_b, import_files, tmp_path):
    tweets, follows = thesis_records()
    # the first retweet of cascade 1000 (d at 00:00:01) arrives after every other record
    late = [r for r in tweets if r["tweet_id"] == "1001"]
    rest = [r for r in tweets if r["tweet_id"] != "1001"]
    apply_events(workspace_id=ws_a.pk, event_ids=add_events(ws_a, follows + rest))
    without = snapshot(ws_a)
    out = apply_events(workspace_id=ws_a.pk, event_ids=add_events(ws_a, late))
    assert out["cascades"] == 1 and out["applied"] == 1
    assert snapshot(ws_a)["edges"] != without["edges"]
    import_files(ws_b, write_upload(tmp_path, tweets + follows))
    assert_same(snapshot(ws_a), snapshot(ws_b))
    assert total_by_name(ws_a) == EXPECTED_TOTAL


def test_a_follow_arriving_late_recomputes_the_cascades_of_both_accounts(ws_a, ws_b, import_files, tmp_path):
    tweets, follows = thesis_records()
    # a follow whose follower retweeted: e follows c (e and c both retweeted 1000; e alone retweeted 2000 too)
    late = [f for f in follows if (f["follower"], f["followee"]) == (105, 103)]
    assert late, "the worked example has the follow e -> c"
    apply_events(workspace_id=ws_a.pk, event_ids=add_events(ws_a, tweets + [f for f in follows if f not in late]))
    without = snapshot(ws_a)
    out = apply_events(workspace_id=ws_a.pk, event_ids=add_events(ws_a, late))
    assert out["follows"] == 1 and out["cascades"] >= 1
    assert snapshot(ws_a)["edges"] != without["edges"]
    import_files(ws_b, write_upload(tmp_path, tweets + follows))
    assert_same(snapshot(ws_a), snapshot(ws_b))


def test_micro_batches_without_follows_use_the_kept_graph_and_see_follows_uploaded_in_between(
    ws_a, ws_b, import_files, tmp_path
):
    from monitor.algorithms import influence

    tweets, follows = thesis_records()
    late = [f for f in follows if (f["follower"], f["followee"]) == (105, 103)]  # e follows c
    of_e = [r for r in tweets if r.get("user_id") == "105"]
    assert late and of_e
    import_files(ws_a, write_upload(tmp_path / "follows", [f for f in follows if f not in late]))
    influence._GRAPHS.clear()
    apply_events(workspace_id=ws_a.pk, event_ids=add_events(ws_a, [r for r in tweets if r not in of_e]))
    token = Workspace.objects.get(pk=ws_a.pk).follows_token
    assert [k[1:] for k in influence._GRAPHS] == [(ws_a.pk, token)]  # the micro-batch read the graph and kept it
    import_files(ws_a, write_upload(tmp_path / "late", late))  # a new follow between two micro-batches
    out = apply_events(workspace_id=ws_a.pk, event_ids=add_events(ws_a, of_e))
    assert out["cascades"] >= 1
    new_token = Workspace.objects.get(pk=ws_a.pk).follows_token
    assert new_token != token and (ws_a.pk, new_token) in [k[1:] for k in influence._GRAPHS]
    import_files(ws_b, write_upload(tmp_path / "batch", tweets + follows))
    assert_same(snapshot(ws_a), snapshot(ws_b))
    assert total_by_name(ws_a) == EXPECTED_TOTAL


def test_a_retweet_waits_for_its_original_and_is_applied_when_it_comes(ws_a, settings):
    settings.SPREADWATCH_STREAM_ORPHAN_WAIT = 60
    tweets, follows = thesis_records()
    rts = [r for r in tweets if r["tweet_id"].startswith("100") and r["tweet_id"] != "1000"]
    early = add_events(ws_a, follows + rts)
    now = timezone.now()
    out = apply_events(workspace_id=ws_a.pk, event_ids=early, now=now)
    assert out["waiting"] == len(rts) and out["applied"] == len(follows)
    waiting = StreamEvent.objects.filter(pk__in=early, status=StreamEvent.Status.WAITING)
    assert waiting.count() == len(rts)
    e = waiting.first()
    assert e.cascade_key == 1000 and e.wait_until == now + dt.timedelta(seconds=60)
    assert "waiting for original 1000" in e.error
    assert not Retweet.objects.filter(tweet__workspace=ws_a).exists()
    # the original arrives (with the other cascade): its waiting retweets are applied in the same transaction
    orig = add_events(ws_a, [r for r in tweets if r not in rts])
    out = apply_events(workspace_id=ws_a.pk, event_ids=orig, now=now + dt.timedelta(seconds=30))
    assert out["picked_up"] == len(rts) and out["waiting"] == 0
    assert set(statuses(early + orig)) == {GONE}
    assert total_by_name(ws_a) == EXPECTED_TOTAL


def test_a_retweet_whose_original_never_arrives_is_a_dead_letter(ws_a, settings):
    settings.SPREADWATCH_STREAM_ORPHAN_WAIT = 60
    rt = {"tweet_id": "77", "retweeted_tweet_id": "999", "user_id": "5", "created_at": "2020-01-01T00:00:00Z"}
    ids = add_events(ws_a, [rt])
    now = timezone.now()
    apply_events(workspace_id=ws_a.pk, event_ids=ids, now=now)
    assert statuses(ids) == [StreamEvent.Status.WAITING]
    assert sweep_waiting(workspace_id=ws_a.pk, now=now + dt.timedelta(seconds=30))["events"] == 0
    out = sweep_waiting(workspace_id=ws_a.pk, now=now + dt.timedelta(seconds=61))
    assert out["dead"] == 1
    e = StreamEvent.objects.get(pk=ids[0])
    assert e.status == StreamEvent.Status.DEAD and e.error.startswith("original 999 never arrived")
    assert not Account.objects.filter(workspace=ws_a).exists()


def test_sweep_applies_a_waiting_retweet_whose_original_was_stored_meanwhile(ws_a, import_files, tmp_path):
    tweets, _ = thesis_records()
    rt = add_events(ws_a, [r for r in tweets if r["tweet_id"] == "2001"])
    apply_events(workspace_id=ws_a.pk, event_ids=rt)
    assert statuses(rt) == [StreamEvent.Status.WAITING]
    # the original is stored by an upload, not by a micro-batch that would have picked the retweet up
    import_files(ws_a, write_upload(tmp_path, [r for r in tweets if r["tweet_id"] == "2000"]))
    assert statuses(rt) == [StreamEvent.Status.WAITING]
    out = sweep_waiting(workspace_id=ws_a.pk)
    assert (out["events"], out["applied"], out["cascades"]) == (1, 1, 1)
    assert Retweet.objects.filter(tweet__tweet_id=2000).count() == 1
    assert sweep_waiting(workspace_id=ws_a.pk)["events"] == 0


def test_a_bad_body_is_a_dead_letter_naming_its_field_and_the_rest_is_applied(ws_a):
    tweets, _ = thesis_records()
    bad_count = dict(tweets[1], followers_count="lots")
    v1_bad_user = json.dumps({"id_str": "5", "user": "nobody", "created_at": "Wed Jan 01 00:00:00 +0000 2020"})
    bodies = [tweets[0], bad_count, *tweets[2:6], {"follower": "x1", "followee": 2}, "{not json", '{"hello": 1}',
              v1_bad_user]  # fmt: skip
    ids = add_events(ws_a, bodies)
    out = apply_events(workspace_id=ws_a.pk, event_ids=ids)
    assert (out["applied"], out["dead"]) == (5, 5)
    errors = dict(StreamEvent.objects.filter(pk__in=ids, status="dead").values_list("pk", "error"))
    assert errors[ids[1]] == "cannot be read: field 'followers_count': not a number: 'lots'"
    assert errors[ids[6]].startswith("cannot be read: field 'follower': not an integer id")
    assert errors[ids[7]].startswith("cannot be read: invalid JSON")
    assert "cannot tell the record's format" in errors[ids[8]]
    assert "field 'user'" in errors[ids[9]]
    assert Retweet.objects.filter(tweet__workspace=ws_a).count() == 4  # 1002..1005; 1001 was dead


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL strings cannot hold NUL (SQLite keeps it)")
def test_a_first_name_with_a_nul_is_stored_without_it_and_the_micro_batch_applies(ws_a):
    apply_events(workspace_id=ws_a.pk, event_ids=add_events(ws_a, [{"follower": 11, "followee": 10}]))
    user = {"id_str": "11", "screen_name": "a\u0000b", "followers_count": 1}
    body = json.dumps({"id_str": "7001", "created_at": "Wed Jan 01 00:00:00 +0000 2020", "text": "x", "user": user})
    out = apply_events(workspace_id=ws_a.pk, event_ids=add_events(ws_a, [body]))
    assert (out["applied"], out["dead"]) == (1, 0)
    assert Account.objects.get(workspace=ws_a, twitter_id=11).screen_name == "ab"


def test_a_record_contradicting_a_stored_tweet_is_a_dead_letter(ws_a):
    tweets, _ = thesis_records()
    apply_events(workspace_id=ws_a.pk, event_ids=add_events(ws_a, tweets[:1]))
    other_author = dict(tweets[0], user_id="999")
    ids = add_events(ws_a, [other_author])
    out = apply_events(workspace_id=ws_a.pk, event_ids=ids)
    assert out["dead"] == 1
    assert "conflicts with a stored tweet: tweet 1000" in StreamEvent.objects.get(pk=ids[0]).error


@pytest.mark.skipif(
    connection.vendor != "postgresql", reason="concurrent consumers need row locks (SKIP LOCKED); SQLite locks tables"
)
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("overlap", ["same ids", "overlapping halves"])
def test_two_consumers_applying_the_same_ids_at_once_apply_each_event_once(overlap):
    from monitor import services

    ws = services.workspace_create(name="Live", slug="live")
    tweets, follows = thesis_records()
    ids = add_events(ws, tweets + follows)
    given = [ids, ids] if overlap == "same ids" else [ids[: 2 * len(ids) // 3], ids[len(ids) // 3 :]]
    start = threading.Barrier(2)
    results, errors = [], []

    def consumer(mine: list[int]) -> None:
        try:
            start.wait()
            results.append(apply_events(workspace_id=ws.pk, event_ids=mine))
        except Exception as exc:  # reported below: a thread's exception would otherwise vanish
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=consumer, args=(mine,)) for mine in given]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    # every event was handled by exactly one of the two (the other skipped it)
    assert sum(r["events"] for r in results) == len(ids)
    waited = sum(r["waiting"] for r in results)
    assert sum(r["applied"] for r in results) + waited == len(ids)
    # a retweet handled while the other consumer held its original waited; the next call applies it
    assert apply_events(workspace_id=ws.pk, event_ids=ids)["applied"] == waited
    assert set(statuses(ids)) == {GONE}
    assert sum(e for e, _ in arrivals(ws).values()) == len(ids)  # each event counted once, by one of the two
    assert Retweet.objects.filter(tweet__workspace=ws).count() == 9
    assert total_by_name(ws) == EXPECTED_TOTAL


@pytest.mark.skipif(
    connection.vendor != "postgresql", reason="concurrent consumers need row locks (SKIP LOCKED); SQLite locks tables"
)
@pytest.mark.django_db(transaction=True)
def test_events_another_consumer_holds_are_skipped_not_waited_for():
    from django.db import transaction

    from monitor import services

    ws = services.workspace_create(name="Live", slug="live")
    tweets, follows = thesis_records()
    ids = add_events(ws, tweets + follows)
    held, release = threading.Event(), threading.Event()

    def holder() -> None:  # a consumer in the middle of its micro-batch: the rows are locked, nothing committed
        try:
            with transaction.atomic():
                list(StreamEvent.objects.select_for_update().filter(pk__in=ids[:5]).values_list("pk", flat=True))
                held.set()
                release.wait(30)
        finally:
            connection.close()

    t = threading.Thread(target=holder)
    t.start()
    assert held.wait(30)
    try:
        out = apply_events(workspace_id=ws.pk, event_ids=ids)
    finally:
        release.set()
        t.join(30)
    assert (out["events"], out["skipped"]) == (len(ids) - 5, 5)
    assert statuses(ids[:5]) == [StreamEvent.Status.QUEUED] * 5
    # the held events include original 1000: its last retweet (1005, not held) waits for it
    assert out["waiting"] == 1 and statuses(ids[5:6]) == [StreamEvent.Status.WAITING]
    out = apply_events(workspace_id=ws.pk, event_ids=ids)
    assert (out["events"], out["skipped"], out["applied"]) == (6, len(ids) - 6, 6)
    assert total_by_name(ws) == EXPECTED_TOTAL


def test_an_event_whose_rows_are_in_another_layout_is_read_from_its_body(ws_a, ws_b, import_files, tmp_path):
    from monitor.services.stream import stream_accept

    user = {"id_str": "11", "screen_name": "eleven", "followers_count": 4}
    original = {"id_str": "7001", "created_at": "Wed Jan 01 00:00:00 +0000 2020", "text": "x", "user": user}
    retweeter = {"id_str": "12", "screen_name": "twelve", "followers_count": 9}
    retweet = {"id_str": "7002", "created_at": "Wed Jan 01 00:01:00 +0000 2020", "text": "RT x", "user": retweeter,
               "retweeted_status": original}  # fmt: skip
    acc = stream_accept(workspace=ws_a, lines=[(1, json.dumps(original)), (2, json.dumps(retweet))])
    ids = [acc.first_id, acc.last_id]
    # as if an intake of another version had written them: one event's rows in a layout this code does not read
    StreamEvent.objects.filter(pk=ids[1]).update(rows='{"layout": 2, "rows": []}')
    out = apply_events(workspace_id=ws_a.pk, event_ids=ids)
    assert (out["applied"], out["dead"], out["retweets"]) == (2, 0, 1)
    assert set(statuses(ids)) == {GONE}
    upload = tmp_path / "statuses.jsonl"
    upload.write_text(json.dumps(original) + "\n" + json.dumps(retweet) + "\n")
    c = import_files(ws_b, [upload])
    assert c.status == c.Status.DONE, c.error
    assert_same(snapshot(ws_a), snapshot(ws_b))


@pytest.mark.skipif(connection.vendor != "postgresql", reason="only PostgreSQL's store counts the rows it adds")
def test_a_consumer_s_statistics_refresh_is_handed_over_after_the_commit_not_run_inside_it(
    ws_a, monkeypatch, django_capture_on_commit_callbacks
):
    """The ANALYZE of a due table held the workspace's store lock for 0.1-0.2 s inside the micro-batch."""
    import monitor.algorithms.influence as influence

    inline: list[tuple[list[str], int]] = []
    monkeypatch.setattr(
        influence.store, "analyze_after_bulk_write", lambda cur, tables, rows: inline.append((tables, rows))
    )
    # on PostgreSQL the workspace's partitions of the per-cascade and daily rows, which the micro-batch created
    # (monitor/partitions.py)
    pg = connection.vendor == "postgresql"
    tables = [
        partitions.name("monitor_cascadeinfluence", ws_a.pk) if pg else "monitor_cascadeinfluence",
        "monitor_cascadegraph",
        partitions.name("monitor_dailyinfluence", ws_a.pk) if pg else "monitor_dailyinfluence",
        "monitor_publisherday",
    ]
    tweets, follows = thesis_records()
    handed: list[tuple[list[str], int]] = []
    with django_capture_on_commit_callbacks(execute=False) as hooks:
        apply_events(
            workspace_id=ws_a.pk,
            event_ids=add_events(ws_a, follows + tweets),
            analyze_later=lambda tables, rows: handed.append((tables, rows)),
        )
    assert inline == [] and handed == []  # neither in the transaction nor before its commit
    for hook in hooks:
        hook()
    assert handed == [(tables, 11)]  # the worked example's 11 per-cascade rows (6 + 5 participants), all new
    assert total_by_name(ws_a) == EXPECTED_TOTAL

    # without a taker the micro-batch checks its tables itself, in its transaction (counting its one new row)
    more = [{"tweet_id": 1009, "retweeted_tweet_id": 1000, "user_id": 109, "created_at": "2020-01-01T00:00:09Z",
             "followers_count": 5, "screen_name": "i"}]  # fmt: skip
    apply_events(workspace_id=ws_a.pk, event_ids=add_events(ws_a, more))
    assert inline == [(tables, 1)] and len(handed) == 1
