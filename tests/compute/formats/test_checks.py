"""What every tweet reader refuses beyond unparseable values: times out of range, absurd follower counts, tweet ids
that contradict themselves; and the one rule for problems of a whole file."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from compute.formats import InputError, SeenTweets, iter_tweets, read, read_many
from compute.formats.limits import FOLLOWERS_MAX, FUTURE_SKEW_S, TIME_MIN, fmt_time, time_max, time_problems
from compute.tables import NO_TWEET, concat_tweets

H = "tweet_id,retweeted_tweet_id,user_id,created_at,followers_count\n"
ORIG = 1050118621198921728
T = 1539202764  # Wed Oct 10 20:19:24 UTC 2018


def _csv(tmp_path, rows: list[str], name: str = "t.csv"):
    p = tmp_path / name
    p.write_text(H + "\n".join(rows) + "\n")
    return p


def _v1(tmp_path, statuses: list[dict], name: str = "t.jsonl"):
    p = tmp_path / name
    p.write_text("".join(json.dumps(s) + "\n" for s in statuses))
    return p


def _st(tid, uid, t=T, fol=3, rt=None):
    s = {"id_str": str(tid), "created_at": t, "user": {"id_str": str(uid), "followers_count": fol}}
    if rt is not None:
        s["retweeted_status"] = rt
    return s


# --- times ----------------------------------------------------------------------------------------------------


def test_the_time_range_runs_from_twitters_first_day_to_a_day_ahead():
    now = time_max() - FUTURE_SKEW_S
    t = np.array([TIME_MIN, TIME_MIN - 1, now + 3600, now + 2 * 86400, np.nan, 0.0])
    idx, reasons = time_problems(t)
    assert idx.tolist() == [1, 3, 5]
    assert reasons[0] == "time out of range: 2006-03-20T23:59:59Z is before Twitter existed (2006-03-21)"
    assert reasons[1].endswith("is in the future") and reasons[2].startswith("time out of range: 1970-01-01T00")
    assert fmt_time(TIME_MIN) == "2006-03-21T00:00:00Z"


@pytest.mark.parametrize(
    ("value", "outcome"),
    [
        ("2006-03-21T00:00:00Z", None),
        ("2006-03-20T23:59:59Z", "is before Twitter existed (2006-03-21)"),
        ("1142899199", "is before Twitter existed"),  # epoch seconds
        ("0", "1970-01-01T00:00:00Z is before"),
        ("2099-01-01T00:00:00Z", "2099-01-01T00:00:00Z is in the future"),
        ("4070908800000", "2099-01-01T00:00:00Z is in the future"),  # epoch milliseconds
    ],
)
def test_it_refuses_times_outside_the_range_in_csv(tmp_path, value, outcome):
    p = _csv(tmp_path, [f"1000,,102,{value},2", "1001,1000,104,2020-01-01T00:00:01Z,8"])
    if outcome is None:
        assert len(read(p).tweets) == 2
        return
    with pytest.raises(InputError, match=rf":2: field 'created_at': time out of range: .*{re.escape(outcome)}"):
        read(p)
    res = read(p, mode="skip-bad")
    assert res.tweets.tweet_id.tolist() == [1001] and res.report.by_reason == {
        "field 'created_at': time out of range": 1
    }


def test_a_snowflake_time_is_range_checked_and_blames_the_id(tmp_path):
    p = tmp_path / "s.csv"
    p.write_text(f"tweet_id,user_id\n{ORIG},1\n9000000000000000000,2\n")
    with pytest.raises(
        InputError, match=r":3: field 'created_at': .*in the future \(the snowflake time of the tweet id\)$"
    ):
        read(p)


def test_it_refuses_times_outside_the_range_in_json(tmp_path, json_backend):
    rt = _st(ORIG + 1, 2, t="Wed Oct 10 20:25:00 +0000 2099", rt=_st(ORIG, 1))
    p = _v1(tmp_path, [_st(ORIG, 1), rt, _st(ORIG + 2, 3, t="1999-01-01T00:00:00Z")])
    with pytest.raises(InputError, match=r"t.jsonl:2: field 'created_at': time out of range: 2099-10-10T20:25:00Z"):
        read(p)
    res = read(p, mode="skip-bad")
    assert res.tweets.tweet_id.tolist() == [ORIG]  # line 2's embedded original goes with its retweet
    assert [(r.line, r.field) for r in res.report.shown] == [(2, "created_at"), (3, "created_at")]
    # the embedded original's own time is checked and named too
    p = _v1(tmp_path, [_st(ORIG + 1, 2, rt=_st(ORIG, 1, t="Wed Oct 10 20:25:00 +0000 2005"))], "e.jsonl")
    with pytest.raises(InputError, match=r"e.jsonl:1: field 'retweeted_status.created_at': time out of range"):
        read(p)
    tw = {"data": [{"id": str(ORIG), "author_id": "1", "created_at": "2001-01-01T00:00:00Z"}]}
    p = _v1(tmp_path, [tw], "v2.jsonl")
    with pytest.raises(InputError, match=r"v2.jsonl:1: field 'data\[0\].created_at': time out of range: 2001"):
        read(p)


# --- follower counts --------------------------------------------------------------------------------------------


def test_follower_counts_up_to_a_billion_are_accepted(tmp_path, json_backend):
    assert FOLLOWERS_MAX == 1e9
    p = _csv(tmp_path, ["1000,,102,2020-01-01T00:00:00Z,1000000000", "1001,1000,104,2020-01-01T00:00:01Z,1e9"])
    assert read(p).tweets.followers_count.tolist() == [1e9, 1e9]
    p = _v1(tmp_path, [_st(ORIG, 1, fol=10**9)])
    assert read(p).tweets.followers_count.tolist() == [1e9]


@pytest.mark.parametrize("value", ["1000000001", "1e300", "9223372036854775807"])
def test_it_refuses_absurd_follower_counts_in_csv(tmp_path, value):
    p = _csv(tmp_path, ["1000,,102,2020-01-01T00:00:00Z,2", f"1001,1000,104,2020-01-01T00:00:01Z,{value}"])
    with pytest.raises(InputError, match=rf":3: field 'followers_count': count out of range: '{value}' is more than"):
        read(p)
    assert read(p, mode="skip-bad").tweets.tweet_id.tolist() == [1000]


@pytest.mark.parametrize("value", [10**9 + 1, 10**12, 2**63 - 1, 1e300, "5000000000"])
def test_it_refuses_absurd_follower_counts_in_json(tmp_path, json_backend, value):
    # the fast path (an int), the careful path (a float, a string), the top status and the embedded one
    for where, field in (("top", "user.followers_count"), ("embedded", "retweeted_status.user.followers_count")):
        top = _st(ORIG + 1, 2, fol=value if where == "top" else 3, rt=_st(ORIG, 1, fol=value if where != "top" else 3))
        p = _v1(tmp_path, [_st(ORIG + 5, 9), top], f"{where}.jsonl")
        with pytest.raises(InputError, match=rf"{where}.jsonl:2: field '{field}': count out of range"):
            read(p)
        assert read(p, mode="skip-bad").tweets.tweet_id.tolist() == [ORIG + 5]
    page = {"data": [{"id": str(ORIG), "author_id": "1", "created_at": "2018-10-10T20:19:24Z"}],
            "includes": {"users": [{"id": "1", "public_metrics": {"followers_count": value}}]}}  # fmt: skip
    p = _v1(tmp_path, [page], "v2.jsonl")
    with pytest.raises(InputError, match=r"'includes.users\[0\].public_metrics.followers_count': count out of range"):
        read(p)


def test_tudataset_follower_counts_are_bounded_on_both_paths(tmp_path):
    ds = tmp_path / "ds"
    ds.mkdir()
    (ds / "DS_A.txt").write_text("2, 1\n3, 1\n")
    (ds / "DS_graph_indicator.txt").write_text("1\n1\n1\n")
    for attrs in ("10, 1\n11, 5000000000\n12, 3\n", "10, 1\n11, 5000000000\n12, x3\n"):  # plain block; careful path
        (ds / "DS_node_attributes.txt").write_text(attrs)
        with pytest.raises(InputError, match=r"DS_node_attributes.txt:2: field 'followers_count': count out of range"):
            read(ds)


# --- conflicting duplicates -------------------------------------------------------------------------------------


def test_seen_tweets_keeps_the_first_row_of_each_id_and_names_it():
    seen = SeenTweets()
    a = seen.file("a.csv")
    ids = np.array([5, 6, 5, 0, 0])
    rt = np.array([NO_TWEET, 5, NO_TWEET, 5, 5])
    uid = np.array([1, 2, 1, 3, 4])
    t = np.array([100.2, 101.0, 100.9, 102.0, 103.0])  # 100.2 and 100.9: the same second
    lines = np.array([2, 3, 4, 5, 6])
    assert seen.check(a, ids, rt, uid, t, lines) == []  # id 0 (unknown) is never a duplicate
    seen.add(a, ids, rt, uid, t, lines)
    assert len(seen) == 2
    b = seen.file("b.csv")
    got = seen.check(b, np.array([6, 5, 5, 7, 7]), np.array([7, NO_TWEET, NO_TWEET, NO_TWEET, NO_TWEET]),
                     np.array([2, 9, 1, 4, 5]), np.array([101.0, 100.0, 200.0, 1.0, 1.0]),
                     np.array([2, 3, 4, 5, 6]))  # fmt: skip
    assert got == [
        (0, "tweet 6 was read before (a.csv:3) as a retweet of 5; here it is a retweet of 7"),
        (1, "tweet 5 was read before (a.csv:2) by user 1; here by user 9"),
        (2, "tweet 5 was read before (a.csv:2) at 1970-01-01T00:01:40Z; here at 1970-01-01T00:03:20Z"),
        (4, "tweet 7 was read before (line 5) by user 4; here by user 5"),  # within the chunk: its first row
    ]
    seen.rename("a.csv", "upload.zip:a.csv")
    assert "upload.zip:a.csv:2" in seen.check(b, np.array([5]), np.array([3]), np.array([1]), np.array([100.0]),
                                              None)[0][1]  # fmt: skip


def test_it_drops_a_conflicting_duplicate_and_keeps_identical_ones(tmp_path):
    p = _csv(tmp_path, [
        "1000,,102,2020-01-01T00:00:00Z,2",
        "1001,1000,104,2020-01-01T00:00:01Z,8",
        "1000,,102,2020-01-01T00:00:00.5Z,5",  # the same tweet, the same second, another follower count: fine
        "1000,,102,2020-01-01T00:00:01Z,2",  # another second
        "1001,1000,104,2020-01-01T00:00:01Z,8",
    ])  # fmt: skip
    with pytest.raises(InputError, match=r"t.csv:5: field 'tweet_id': conflicting duplicate: tweet 1000 was read "
                       r"before \(line 2\) at 2020-01-01T00:00:00Z; here at 2020-01-01T00:00:01Z$"):  # fmt: skip
        read(p)
    res = read(p, mode="skip-bad")
    assert res.tweets.lines.tolist() == [2, 3, 4, 6] and res.report.n_bad == 1


def test_conflicts_are_found_across_chunks_and_in_line_order(tmp_path, json_backend):
    rows = [_st(ORIG + i, i % 7, T + i) for i in range(40)]
    rows[25] = _st(ORIG + 3, 99, T + 3)  # line 26 contradicts line 4, two chunks later
    rows[30] = _st(ORIG + 100, 5, T + 31, rt=_st(ORIG + 10, 1, T + 10))  # its embedded original: user 1, not 3
    p = _v1(tmp_path, rows)
    with pytest.raises(InputError, match=r"t.jsonl:26: field 'id_str': conflicting duplicate: tweet \d+ was read "
                       r"before \(line 4\) by user 3; here by user 99$"):  # fmt: skip
        list(iter_tweets(p, chunk_size=10))
    res = read(p, mode="skip-bad")
    assert [(r.line, r.field) for r in res.report.shown] == [(26, "id_str"), (31, "retweeted_status.id_str")]
    assert 26 not in res.tweets.lines and 31 not in res.tweets.lines  # the whole line goes (retweet and original)
    chunks = list(iter_tweets(p, mode="skip-bad", chunk_size=10))
    assert np.array_equal(concat_tweets(chunks).lines, res.tweets.lines)


def test_read_many_names_the_earlier_file(tmp_path):
    a = _csv(tmp_path, ["1000,,102,2020-01-01T00:00:00Z,2"], "a.csv")
    b = _csv(tmp_path, ["1001,1000,104,2020-01-01T00:00:01Z,8", "1000,1001,102,2020-01-01T00:00:00Z,2"], "b.csv")
    with pytest.raises(InputError, match=rf"b.csv:3: .*tweet 1000 was read before \({a}:2\) as an original; here it "
                       r"is a retweet of 1001$"):  # fmt: skip
        read_many([a, b])
    assert read(b).report.n_bad == 0  # each file on its own is fine


# --- whole files ----------------------------------------------------------------------------------------------


def _whole_file_problems(tmp_path):
    (tmp_path / "empty.csv").write_text(H)
    (tmp_path / "nocol.csv").write_text("tweet_id,created_at\n1,2020-01-01T00:00:00Z\n")
    (tmp_path / "blank.jsonl").write_text("\n  \n")
    (tmp_path / "comments.txt").write_text("# a\n# b\n")
    (tmp_path / "nocols.csv").write_text("follower,followee_id\n1,2\n")
    tree = tmp_path / "trees" / "tree"
    tree.mkdir(parents=True)
    (tree / f"{ORIG}.txt").write_text(f"['1', '{ORIG}', '0.0']->['2', '{ORIG}', '1.0']\n")
    (tree / "9000000000000000000.txt").write_text("['ROOT', 'ROOT', '0.0']->['1', '9000000000000000000', '0.0']\n")
    return [
        ("empty.csv", "csv", None),  # a header only is valid: no problem
        ("nocol.csv", "csv", "nocol.csv:1: field 'user_id': missing required column"),
        ("blank.jsonl", "v1", "blank.jsonl: empty file"),
        ("blank.jsonl", "v2", "blank.jsonl: empty file"),
        ("comments.txt", "follows", "comments.txt: empty file"),
        ("nocols.csv", "follows", "nocols.csv:1: field 'follower_id': missing required column"),
        (f"trees/tree/{ORIG}.txt", "trees", f"{ORIG}.txt: no ROOT line"),
        ("trees/tree/9000000000000000000.txt", "trees", "9000000000000000000.txt: time out of range: the tweet id"),
    ]


def test_a_whole_file_problem_fails_strict_and_lists_the_file_as_skipped_in_skip_bad(tmp_path):
    for name, fmt, problem in _whole_file_problems(tmp_path):
        p = tmp_path / name
        if problem is None:
            assert read(p, fmt).report.skipped_files == []
            continue
        with pytest.raises(InputError) as exc:
            read(p, fmt)
        assert str(exc.value).startswith(str(p)[: -len(problem.split(":")[0])] + problem), (name, exc.value)
        rep = read(p, fmt, mode="skip-bad").report
        assert rep.n_bad == 1 and rep.skipped_files == [rep.shown[0].path], (name, rep)
        assert rep.to_dict()["skipped_files"] == rep.skipped_files


def test_a_cut_short_npz_is_called_that(tmp_path):
    from compute.formats import detect_format

    p = tmp_path / "cut.npz"
    p.write_bytes(b"PK\x03\x04" + b"\0" * 100)
    with pytest.raises(ValueError, match=r"cut.npz: a zip/.npz archive that cannot be read \(cut short\?\)"):
        detect_format(p)
