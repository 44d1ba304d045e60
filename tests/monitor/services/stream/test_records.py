"""Reading stream lines: every format of docs/formats.md that is line-shaped, checked by the file readers' field logic,
classified by kind and cascade, the first bad line named by line and field."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from compute.formats import read
from compute.tables import NO_TWEET
from monitor.services.stream.records import InputError, partition_of, read_lines

DATA = Path(__file__).resolve().parents[3] / "data" / "formats"


def _lines(*objs) -> list[tuple[int, str]]:
    return [(i, o if isinstance(o, str) else json.dumps(o)) for i, o in enumerate(objs, 1)]


def _good_lines(path: Path) -> list[tuple[int, str]]:
    return list(enumerate(path.read_text().splitlines(), 1))


@pytest.mark.parametrize("fmt", ["v1", "v2"])
def test_it_reads_the_good_files_as_the_file_readers_do(fmt):
    path = DATA / fmt / "good.jsonl"
    got = read_lines(_good_lines(path))
    table = read(path, format=fmt, mode="strict").tweets
    rt = table.retweeted_tweet_id
    want_retweets = sorted(rt[rt != NO_TWEET].tolist())
    assert sorted(r.cascade_key for r in got.records if r.kind == "retweet") == want_retweets
    originals = set(table.tweet_id[rt == NO_TWEET].tolist())
    assert {r.cascade_key for r in got.records if r.kind == "tweet"} <= originals
    assert all(r.key == r.cascade_key for r in got.records)


def test_it_reads_the_tweets_csv_fields_as_json_objects():
    got = read_lines(
        _lines(
            {"tweet_id": "1001", "user_id": 7, "created_at": "2020-01-01T00:00:00Z", "followers_count": 12},
            {"tweet_id": 1002, "retweeted_tweet_id": "1001", "user_id": "8", "created_at": 1577836805},
            {"tweet_id": "1003", "retweeted_tweet_id": "", "user_id": "9", "created_at": "2020-01-01T00:00:09Z"},
        )
    )
    assert [(r.kind, r.cascade_key, r.format) for r in got.records] == [
        ("tweet", 1001, "csv"),
        ("retweet", 1001, "csv"),
        ("tweet", 1003, "csv"),
    ]


def test_it_reads_a_follow_keyed_by_its_follower():
    [r] = read_lines(_lines({"follower_id": "8", "followee_id": 7})).records
    assert (r.kind, r.cascade_key, r.key) == ("follow", None, 8)


def test_it_splits_a_v2_page_into_one_record_per_tweet_each_with_what_it_needs():
    page = {
        "data": [
            {"id": "1300000000000000001", "author_id": "1", "created_at": "2020-09-01T00:00:00Z", "text": "a"},
            {
                "id": "1300000000000000002",
                "author_id": "2",
                "created_at": "2020-09-01T00:00:05Z",
                "referenced_tweets": [{"type": "retweeted", "id": "1200000000000000000"}],
            },
        ],
        "includes": {
            "users": [{"id": "1", "public_metrics": {"followers_count": 5}}, {"id": "2"}, {"id": "3"}],
            "tweets": [{"id": "1200000000000000000", "author_id": "3", "created_at": "2020-08-01T00:00:00Z"}],
        },
    }
    a, b = read_lines(_lines(page)).records
    assert (a.kind, a.cascade_key, b.kind, b.cascade_key) == (
        "tweet",
        1300000000000000001,
        "retweet",
        1200000000000000000,
    )
    body = json.loads(b.body)
    assert body["data"]["id"] == "1300000000000000002"
    assert [t["id"] for t in body["includes"]["tweets"]] == ["1200000000000000000"]
    assert sorted(u["id"] for u in body["includes"]["users"]) == ["2", "3"]
    # each part reads back alone, as the same single record
    assert [r.cascade_key for r in read_lines([(1, b.body)]).records] == [1200000000000000000]


def test_it_skips_stream_notices_and_blank_lines():
    got = read_lines(_lines({"delete": {"status": {"id": 1}}}, "", "   "))
    assert got.records == [] and got.n_skipped == 1


@pytest.mark.parametrize(
    ("objs", "line", "field", "reason"),
    [
        ([{"tweet_id": "1", "user_id": "2", "created_at": "2020-01-01"}, "{nope"], 2, None, "invalid JSON"),
        ([{"tweet_id": "x1", "user_id": "2"}], 1, "tweet_id", "not an integer id"),
        ([{"tweet_id": "1001", "user_id": "2", "created_at": "2020-01-01"}, {"tweet_id": "5"}], 2, "user_id",
         "missing"),
        ([{"tweet_id": "1001", "user_id": "2", "created_at": "yesterday"}], 1, "created_at", "unparseable time"),
        ([{"tweet_id": "1001", "user_id": "2", "created_at": "2020-01-01", "followers_count": -3}], 1,
         "followers_count", "negative count"),
        ([{"follower_id": "8"}], 1, "followee_id", "missing"),
        ([[1, 2]], 1, None, "wrong type"),
        ([{"hello": 1}], 1, None, "unknown record"),
        ([{"id_str": "1", "user": {"id_str": "u"}}], 1, "user.id_str", "not an integer id"),
        # the same tweet id with another author in one body
        ([{"tweet_id": "1001", "user_id": "2", "created_at": "2020-01-01"},
          {"tweet_id": "1001", "user_id": "3", "created_at": "2020-01-01"}], 2, "tweet_id", "conflicting duplicate"),
    ],
)  # fmt: skip
def test_it_names_the_first_bad_line_and_field(objs, line, field, reason):
    with pytest.raises(InputError) as e:
        read_lines(_lines(*objs))
    r = e.value.record
    assert (r.line, r.field) == (line, field)
    assert r.reason.startswith(reason), r.reason


def test_partitions_spread_snowflake_ids_evenly_and_are_stable():
    keys = (np.arange(20_000, dtype=np.int64) << 22) + (1 << 40)  # snowflakes with zero low bits
    counts = np.bincount([partition_of(int(k), 8) for k in keys], minlength=8)
    assert counts.min() > 0.9 * counts.mean()
    assert partition_of(1200000000000000000, 8) == partition_of(1200000000000000000, 8)
    assert partition_of(1200000000000000000, 8) == 1  # fixed: a change would move every cascade


def _status(tid, uid, rt=None, fol=5):
    st = {"id_str": str(tid), "created_at": 1600000000, "user": {"id_str": str(uid), "followers_count": fol}}
    if rt is not None:
        st["retweeted_status"] = {"id_str": str(rt), "created_at": 1599990000,
                                  "user": {"id_str": "1", "followers_count": 9}}  # fmt: skip
    return st


def test_v1_lines_among_others_are_classified_and_their_errors_keep_the_bodys_line_numbers():
    good = read_lines(_lines(_tw := {"tweet_id": "5", "user_id": "2", "created_at": 1600000000},
                             _status(11, 3, rt=10), {"delete": {}}, _status(12, 4)))  # fmt: skip
    assert [(r.line, r.format, r.kind, r.cascade_key) for r in good.records] == [
        (1, "csv", "tweet", 5), (2, "v1", "retweet", 10), (4, "v1", "tweet", 12)
    ]  # fmt: skip
    assert good.n_skipped == 1
    with pytest.raises(InputError) as e:
        read_lines(_lines(_tw, _status(11, 3), _status(12, 4, fol=-1), {"tweet_id": "x"}))
    assert (e.value.record.line, e.value.record.field) == (3, "user.followers_count")
    with pytest.raises(InputError) as e:  # the earlier error wins, whichever reader found it
        read_lines(_lines(_tw, {"tweet_id": "x"}, _status(12, 4, fol=-1)))
    assert (e.value.record.line, e.value.record.field) == (2, "tweet_id")
    with pytest.raises(InputError) as e:  # the same tweet id with another author, across formats
        read_lines(_lines({"tweet_id": "12", "user_id": "9", "created_at": 1600000000}, _status(12, 4)))
    assert (e.value.record.line, e.value.record.reason.split(":")[0]) == (2, "conflicting duplicate")


# --- the rows kept beside each body (monitor.services.stream._rows) ---------------------------------------------


def _same_tables(a, b, *, retweet_text: bool = False) -> None:
    for col in ("tweet_id", "retweeted_tweet_id", "user_id", "created_at", "followers_count", "lines"):
        assert np.array_equal(getattr(a, col), getattr(b, col), equal_nan=True), col
    assert list(a.screen_name) == list(b.screen_name)
    originals = a.retweeted_tweet_id == NO_TWEET
    assert list(a.text[originals]) == list(b.text[originals])
    if not retweet_text:  # a retweet's text is not kept: the workspace stores the texts of originals only
        assert all(t is None for t in a.text[~originals])


@pytest.mark.parametrize("fmt", ["v1", "v2"])
def test_the_rows_kept_at_intake_are_what_the_consumer_reads_from_the_bodies(fmt):
    from monitor.services.stream._apply_parse import parse_bodies, parse_events

    got = read_lines(_good_lines(DATA / fmt / "good.jsonl")).records
    assert got and all(r.rows is not None for r in got)
    bodies, rows = [r.body for r in got], [r.rows for r in got]
    kept = parse_events(bodies, rows, list(range(100, 100 + len(got))))
    read_again = parse_bodies(bodies)
    _same_tables(kept.tweets, read_again.tweets)
    assert (kept.bad, kept.empty, read_again.bad) == ({}, set(), {})


def test_csv_fields_and_follows_keep_no_rows_and_the_consumer_reads_their_bodies_with_the_rows_of_the_rest():
    from monitor.services.stream._apply_parse import parse_bodies, parse_events

    v1 = _good_lines(DATA / "v1" / "good.jsonl")
    csv_row = {"tweet_id": "1001", "user_id": 7, "created_at": "2020-01-01T00:00:00Z", "followers_count": 12,
               "label": "false"}  # fmt: skip
    lines = [(1, v1[0][1]), (2, json.dumps(csv_row)), (3, json.dumps({"follower_id": 8, "followee_id": 7})),
             *[(k + 3, t) for k, (_, t) in enumerate(v1[1:], 1)]]  # fmt: skip
    got = read_lines(lines).records
    assert [r.rows is None for r in got[:3]] == [False, True, True]
    bodies, rows = [r.body for r in got], [r.rows for r in got]
    mixed = parse_events(bodies, rows, list(range(len(got))))
    read_again = parse_bodies(bodies)
    _same_tables(mixed.tweets, read_again.tweets)
    assert list(mixed.tweets.label) == list(read_again.tweets.label)
    assert mixed.tweets.label[list(mixed.tweets.lines).index(1)] == "false"
    assert (mixed.follows.follower_id.tolist(), mixed.follows.followee_id.tolist()) == ([8], [7])
    assert mixed.follow_event.tolist() == [2]


def _v1_status(tid, uid, when, rt=None, followers=3):
    st = {"id_str": str(tid), "created_at": when, "text": f"status {tid}",
          "user": {"id_str": str(uid), "screen_name": f"u{uid}", "followers_count": followers}}  # fmt: skip
    if rt is not None:
        st["retweeted_status"] = rt
    return st


def test_a_tweet_two_events_of_a_micro_batch_tell_differently_kills_the_later_event_naming_the_earlier():
    from monitor.services.stream._apply_parse import parse_events

    when = "Wed Jan 01 00:00:00 +0000 2020"
    original = _v1_status(7, 5, when)
    liar = dict(original, user={"id_str": "6", "screen_name": "u6", "followers_count": 1})
    # accepted in two requests (one request with both is refused whole at intake)
    a = read_lines(_lines(_v1_status(8, 9, "Wed Jan 01 00:01:00 +0000 2020", rt=original))).records
    b = read_lines(_lines(_v1_status(10, 11, "Wed Jan 01 00:02:00 +0000 2020", rt=liar))).records
    c = read_lines(_lines(_v1_status(12, 13, "Wed Jan 01 00:03:00 +0000 2020", rt=original))).records
    events = a + b + c
    parsed = parse_events([r.body for r in events], [r.rows for r in events], [501, 502, 503])
    assert set(parsed.bad) == {1}
    assert parsed.bad[1].startswith(
        "field 'retweeted_status.id_str': conflicting duplicate: tweet 7 was read before (event 501)"
    )
    assert sorted(set(parsed.tweets.lines.tolist())) == [0, 2]
    assert sorted(parsed.tweets.tweet_id.tolist()) == [7, 7, 8, 12]
