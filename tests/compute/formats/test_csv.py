from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from compute.formats import InputError, iter_tweets, read
from compute.formats.timeparse import snowflake_time
from compute.tables import concat_tweets

from .conftest import THESIS

T0 = 1577836800.0  # 2020-01-01T00:00:00Z


def test_it_reads_columns_by_header_name(fdata):
    res = read("csv/good.csv")
    t = res.tweets
    assert res.format == "csv" and res.report.n_good == 6 and res.report.n_bad == 0
    assert t.tweet_id.tolist() == [1000, 1001, 1002, 1003, 1004, 1181244271339180033]
    assert t.retweeted_tweet_id.tolist() == [-1, 1000, 1000, 1000, 1000, -1]
    assert t.user_id.tolist() == [102, 104, 101, 103, 105, 106]
    # ISO Z, epoch s, epoch ms, ISO with offset, Twitter's form, and none at all (the snowflake time)
    np.testing.assert_allclose(t.created_at[:5], T0 + np.arange(5))
    assert t.created_at[5] == snowflake_time(1181244271339180033)
    assert np.isnan(t.followers_count[2]) and t.followers_count[[0, 1, 3, 4, 5]].tolist() == [2, 8, 4, 16, 32]
    assert t.screen_name.tolist() == ["b", "d", "a", "c", "e", "f"]
    assert t.text[0] == "hello, world" and t.text[1] == "multi\nline text"
    assert t.lines.tolist() == [2, 3, 5, 6, 7, 8]  # the quoted newline makes row 1001 two lines long
    assert res.labels == {1000: "false", 1181244271339180033: "true"}
    assert res.follows is None and res.graphs is None


def test_it_accepts_any_column_order_and_case(fdata):
    t = read("csv/reordered.csv").tweets
    assert (t.tweet_id[0], t.user_id[0], t.followers_count[0]) == (70, 7, 3.0)
    assert t.created_at[0] == pytest.approx(T0 - 3600 + 0.25)
    assert t.retweeted_tweet_id[0] == -1 and t.screen_name is None


def test_it_needs_only_tweet_and_user_ids(fdata):
    t = read("csv/minimal.csv").tweets
    assert t.created_at[0] == snowflake_time(1181244271339180033)
    assert np.isnan(t.followers_count[0]) and t.retweeted_tweet_id[0] == -1


def test_it_names_file_line_and_field_in_strict_mode(fdata):
    with pytest.raises(InputError) as exc:
        read("csv/tweets.csv")
    assert str(exc.value) == "csv/tweets.csv:7: field 'followers_count': not a number: 'abc'"
    rec = exc.value.record
    assert (rec.path, rec.line, rec.field) == ("csv/tweets.csv", 7, "followers_count")
    assert isinstance(exc.value, ValueError)


def test_it_raises_on_the_first_bad_row_in_strict_mode(fdata):
    with pytest.raises(InputError, match=r"^csv/bad.csv:3: field 'followers_count': negative count: '-3'$"):
        read("csv/bad.csv")


def test_it_skips_bad_rows_and_counts_them(fdata):
    res = read("csv/bad.csv", mode="skip-bad")
    assert res.tweets.tweet_id.tolist() == [1, 8]
    assert res.tweets.lines.tolist() == [2, 9]
    rep = res.report
    assert (rep.n_good, rep.n_bad) == (2, 6)
    assert [str(r) for r in rep.shown] == [
        "csv/bad.csv:3: field 'followers_count': negative count: '-3'",
        "csv/bad.csv:4: field 'user_id': not an integer id: 'x12'",
        "csv/bad.csv:5: field 'created_at': unparseable time: 'yesterday'",
        "csv/bad.csv:6: wrong number of fields: expected 5, got 6",
        "csv/bad.csv:7: field 'followers_count': not a number: 'abc'",
        "csv/bad.csv:8: field 'created_at': missing: no time and the tweet id is not a snowflake",
    ]
    assert rep.by_reason["field 'followers_count': not a number"] == 1
    assert rep.by_reason["wrong number of fields"] == 1
    assert json.loads(json.dumps(rep.to_dict()))["n_bad"] == 6
    assert "2 good, 6 bad record(s)" in str(rep)


def test_it_lists_at_most_max_shown_bad_records(fdata):
    rep = read("csv/bad.csv", mode="skip-bad", max_shown=2).report
    assert rep.n_bad == 6 and len(rep.shown) == 2 and rep.max_shown == 2
    assert "... and 4 more" in str(rep)


def test_it_strips_a_utf8_bom(fdata):
    t = read("csv/bom.csv").tweets
    assert t.tweet_id.tolist() == [1] and t.created_at[0] == T0


def test_it_reports_undecodable_bytes_with_their_line(fdata):
    with pytest.raises(InputError, match=r"^csv/latin1.csv:3: undecodable bytes \(not UTF-8\)$"):
        read("csv/latin1.csv")
    res = read("csv/latin1.csv", mode="skip-bad")
    assert res.tweets.tweet_id.tolist() == [1, 3] and res.report.n_bad == 1


def test_it_refuses_an_empty_file_clearly(fdata):
    with pytest.raises(InputError, match=r"^csv/empty.csv: empty file$"):
        read("csv/empty.csv", "csv")
    res = read("csv/empty.csv", "csv", mode="skip-bad")
    assert len(res.tweets) == 0 and res.report.n_bad == 1 and "empty file" in str(res.report)


def test_it_reads_a_header_only_file_as_no_tweets(fdata):
    res = read("csv/header_only.csv")
    assert len(res.tweets) == 0 and res.report.n_bad == 0


def test_it_names_a_missing_required_column(fdata):
    with pytest.raises(InputError, match=r"^csv/missing_column.csv:1: field 'user_id': missing required column"):
        read("csv/missing_column.csv", "csv")
    assert read("csv/missing_column.csv", "csv", mode="skip-bad").report.n_bad == 1


def test_it_streams_in_chunks_with_the_same_rows(tmp_path):
    p = tmp_path / "many.csv"
    rows = ["tweet_id,retweeted_tweet_id,user_id,created_at,followers_count"]
    rows += [f"{i},{'' if i % 3 == 0 else i - i % 3},{i % 17},{1577836800 + i},{i % 5}" for i in range(2500)]
    rows[1000] = "999,,1,not a time,3"
    p.write_text("\n".join(rows) + "\n")
    chunks = list(iter_tweets(p, mode="skip-bad", chunk_size=300))
    assert len(chunks) >= 8 and all(len(c) <= 300 for c in chunks)
    whole = read(p, mode="skip-bad")
    assert np.array_equal(concat_tweets(chunks).tweet_id, whole.tweets.tweet_id)
    assert len(whole.tweets) == 2499 and whole.report.n_bad == 1


def test_it_reads_gzip_compressed_input(fdata, tmp_path):
    p = tmp_path / "tweets.csv.gz"
    p.write_bytes(gzip.compress((fdata / "csv/good.csv").read_bytes()))
    assert read(p).tweets.tweet_id.tolist() == read("csv/good.csv").tweets.tweet_id.tolist()


def test_it_reads_the_thesis_example():
    res = read(THESIS / "tweets.csv")
    t = res.tweets
    assert len(t) == 11 and (t.retweeted_tweet_id == -1).sum() == 2
    expected = json.loads((THESIS / "expected.json").read_text())
    users = {int(u) for inf in expected["influence"].values() for u in inf}
    assert set(t.user_id.tolist()) == users
    followers = dict(zip(t.user_id.tolist(), t.followers_count.tolist()))
    assert followers == {101: 1, 102: 2, 103: 4, 104: 8, 105: 16, 106: 32}
    first = t.retweeted_tweet_id == 1000
    assert t.user_id[first].tolist() == [104, 101, 103, 105, 106]  # d@1, a@2, c@3, e@4, f@5
    assert np.all(np.diff(t.created_at[first]) == 1)
