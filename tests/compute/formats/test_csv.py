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


# --- quotes that are never closed, fields that are too long -----------------------------------------------------

H = "tweet_id,retweeted_tweet_id,user_id,created_at,followers_count,text\n"
ROWS = [
    '1000,,102,2020-01-01T00:00:00Z,2,"ok\nmulti"',  # lines 2-3: a quoted newline, closed: fine
    '1001,1000,104,2020-01-01T00:00:01Z,8,"open',  # line 4: never closed
    "1002,1000,101,2020-01-01T00:00:02Z,1,plain",
    '1003,1000,103,2020-01-01T00:00:03Z,4,"hello, world"',  # its first quote "closes" line 4's
    "1004,1000,105,2020-01-01T00:00:04Z,4,x",
]


def _write(tmp_path, rows, name="q.csv"):
    p = tmp_path / name
    p.write_text(H + "\n".join(rows) + "\n")
    return p


def test_it_reports_an_unclosed_quote_where_it_opened_and_keeps_the_rows_it_swallowed(tmp_path):
    p = _write(tmp_path, ROWS)
    with pytest.raises(
        InputError, match=rf"^{p}:4: unclosed quote: the quoted field begun on this line runs to line 6$"
    ):
        read(p)  # where the quote of row 1003 closes it: "',' expected after '\"'"
    res = read(p, mode="skip-bad")
    assert res.tweets.tweet_id.tolist() == [1000, 1002, 1003, 1004]
    assert res.tweets.lines.tolist() == [2, 5, 6, 7]
    assert res.tweets.text.tolist() == ["ok\nmulti", "plain", "hello, world", "x"]
    assert res.report.n_bad == 1


def test_it_reports_a_quote_open_at_the_end_of_the_file(tmp_path):
    for tail in ("\n", ""):  # with and without the last newline
        p = tmp_path / "end.csv"
        p.write_text(H + "\n".join([ROWS[0], '1001,1000,104,2020-01-01T00:00:01Z,8,"open', ROWS[2]]) + tail)
        with pytest.raises(InputError, match=rf"^{p}:4: unclosed quote: .* runs to the end of the file$"):
            read(p)
        assert read(p, mode="skip-bad").tweets.tweet_id.tolist() == [1000, 1002]


def test_it_takes_a_quoted_field_holding_a_row_for_an_unclosed_quote(tmp_path):
    # the quote closes cleanly at the end of a later line, so the csv module returns one long row of 6 fields
    rows = ['1001,1000,104,2020-01-01T00:00:01Z,8,"open', "1002,1000,101,2020-01-01T00:00:02Z,1,plain",
            '1003,1000,103,2020-01-01T00:00:03Z,4,closed"', "1004,1000,105,2020-01-01T00:00:04Z,4,x"]  # fmt: skip
    p = _write(tmp_path, rows)
    with pytest.raises(
        InputError, match=rf"^{p}:2: unclosed quote: the quoted field begun on this line runs to line 4$"
    ):
        read(p)
    res = read(p, mode="skip-bad")
    # read on from line 3: the quote that closed line 2's field is a literal one inside row 1003's last field
    assert res.tweets.tweet_id.tolist() == [1002, 1003, 1004]
    assert res.tweets.text[1] == 'closed"' and [r.line for r in res.report.shown] == [2]


def test_it_takes_a_row_of_over_a_thousand_lines_for_an_unclosed_quote(tmp_path):
    p = _write(tmp_path, ['1000,,102,2020-01-01T00:00:00Z,2,"' + "\n" * 1000 + '"', ROWS[2]])
    with pytest.raises(InputError, match=r":2: unclosed quote: .* spans 1,001 lines \(at most 1,000\)$"):
        read(p)
    p = _write(tmp_path, ['1000,,102,2020-01-01T00:00:00Z,2,"' + "\n" * 999 + '"', ROWS[2]])
    assert read(p).tweets.tweet_id.tolist() == [1000, 1002]  # 1,000 lines is allowed


def test_it_skips_a_quoted_field_longer_than_the_limit_to_its_closing_quote(tmp_path):
    text = ("y" * 50 + '""' + "\n") * 30  # 1.6 KB over 30 lines, with escaped quotes
    p = _write(tmp_path, [ROWS[0], f'1001,1000,104,2020-01-01T00:00:01Z,8,"{text}"', ROWS[2], ROWS[4]])
    with pytest.raises(InputError, match=rf"^{p}:4: record longer than 1,000 bytes: a quoted field outgrows it$"):
        read(p, max_record_bytes=1000)
    res = read(p, mode="skip-bad", max_record_bytes=1000)
    assert res.tweets.tweet_id.tolist() == [1000, 1002, 1004]
    assert res.tweets.lines.tolist() == [2, 35, 36]
    # under a larger limit the field is read, escaped quotes and all
    assert read(p, max_record_bytes=2000).tweets.text[1] == text.replace('""', '"')


def test_a_stray_quote_on_one_line_is_still_a_malformed_line(tmp_path):
    p = _write(tmp_path, [ROWS[0], '1001,1000,104,2020-01-01T00:00:01Z,8,"a"b', ROWS[2]])
    with pytest.raises(InputError, match=rf"^{p}:4: malformed CSV: ',' expected after '\"'$"):
        read(p)
    assert read(p, mode="skip-bad").tweets.tweet_id.tolist() == [1000, 1002]


def test_it_keeps_the_csv_modules_field_limit_as_it_was(tmp_path):
    import csv

    before = csv.field_size_limit()
    read(_write(tmp_path, ROWS[:1]), max_record_bytes=5000)
    assert csv.field_size_limit() == before


def test_a_header_past_the_limit_makes_the_file_unusable(tmp_path):
    p = tmp_path / "h.csv"
    p.write_text("tweet_id,user_id," + "x" * 200 + "\n1,2\n")
    with pytest.raises(InputError, match=rf"^{p}:1: record longer than 100 bytes$"):
        read(p, "csv", max_record_bytes=100)
    res = read(p, "csv", mode="skip-bad", max_record_bytes=100)
    assert len(res.tweets) == 0 and res.report.skipped_files == [str(p)]


def test_it_reads_hashtags_and_urls_columns_in_several_spellings(tmp_path):
    p = tmp_path / "e.csv"
    p.write_text(
        "tweet_id,user_id, HashTags ,URLS,text,created_at\n"
        '1,10,"#Covid, vaccine;#covid",https://a.example/1 https://b.example/2,x,1577836800\n'
        '2,11,covid vaccine,"https://a.example/1,https://b.example/2;",x,1577836800\n'
        "3,12,#a#b  ##C,https://maps.example/@40.7;https://a.example/1,x,1577836800\n"
        "4,13,,,x,1577836800\n"
        '5,14," ; ","\t",x,1577836800\n'
    )
    t = read(p).tweets
    assert t.hashtags.tolist() == ["covid vaccine", "covid vaccine", "a b c", "", ""]
    assert t.urls.tolist() == [
        "https://a.example/1 https://b.example/2",
        "https://a.example/1 https://b.example/2",
        "https://maps.example/@40.7 https://a.example/1",
        "",
        "",
    ]
    assert t.hashtags.dtype == object and t.urls.dtype == object


def test_a_csv_without_the_entity_columns_has_none_for_them(fdata, tmp_path):
    t = read("csv/good.csv").tweets
    assert t.hashtags is None and t.urls is None
    p = tmp_path / "tags_only.csv"
    p.write_text("tweet_id,user_id,hashtags\n1181244271339180033,10,#A\n")
    t = read(p).tweets
    assert t.hashtags.tolist() == ["a"] and t.urls is None and t.text is None


def test_it_keeps_the_entity_columns_of_the_good_rows_and_across_chunks(tmp_path):
    p = tmp_path / "chunks.csv"
    rows = ["tweet_id,user_id,created_at,hashtags,urls"]
    rows += [f"{i},{i % 7},{1577836800 + i},#T{i % 3},https://u.example/{i}" for i in range(1, 100)]
    rows[10] = "10,3,not a time,#bad,https://bad.example"
    p.write_text("\n".join(rows) + "\n")
    chunks = list(iter_tweets(p, mode="skip-bad", chunk_size=13))
    t = concat_tweets(chunks)
    assert len(chunks) > 5 and len(t) == 98 and 10 not in t.tweet_id.tolist()
    assert t.hashtags.tolist() == [f"t{i % 3}" for i in range(1, 100) if i != 10]
    assert t.urls.tolist() == [f"https://u.example/{i}" for i in range(1, 100) if i != 10]
