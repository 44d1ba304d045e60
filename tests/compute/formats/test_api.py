from __future__ import annotations

import json

import numpy as np
import pytest

import compute.formats as F
from compute.formats import BadRecord, InputError, ReadReport, iter_follows, iter_tweets, read, read_many

from .conftest import THESIS


def test_it_exposes_the_agreed_api():
    assert tuple(F.FORMATS) == ("csv", "follows", "v1", "v2", "trees", "tudataset", "npz")
    for name in (
        "BadRecord",
        "ReadReport",
        "InputError",
        "ReadResult",
        "detect_format",
        "read",
        "iter_tweets",
        "iter_follows",
        "read_many",
    ):
        assert hasattr(F, name)
    assert issubclass(InputError, ValueError)


def test_it_formats_bad_records():
    assert (
        str(BadRecord("t.csv", 7, "followers_count", "not a number: 'abc'"))
        == "t.csv:7: field 'followers_count': not a number: 'abc'"
    )
    assert str(BadRecord("x.jsonl", 3, None, "invalid JSON: oops")) == "x.jsonl:3: invalid JSON: oops"
    assert str(BadRecord("d", None, None, "empty file")) == "d: empty file"
    err = InputError(BadRecord("t.csv", 2, "user_id", "missing required field"))
    assert str(err) == "t.csv:2: field 'user_id': missing required field" and err.record.line == 2


def test_it_sums_reports():
    a, b = ReadReport(max_shown=2), ReadReport()
    a.add(BadRecord("a", 1, "f", "not a number: 'x'", "not a number"))
    b.n_good = 5
    for i in range(3):
        b.add(BadRecord("b", i, "f", "not a number: 'y'", "not a number"))
    a.merge(b)
    assert (a.n_good, a.n_bad, len(a.shown)) == (5, 4, 2)
    assert a.by_reason == {"field 'f': not a number": 4}
    assert json.loads(json.dumps(a.to_dict()))["by_reason"] == {"field 'f': not a number": 4}


def test_it_merges_several_inputs(fdata):
    res = read_many([THESIS / "tweets.csv", THESIS / "follows.csv", "trees/good"])
    assert res.format == "mixed"
    assert len(res.tweets) == 11 + 6
    assert len(res.follows) == 8 + 5
    assert res.labels == {1050118621198921728: "false", 1050121000000000000: "non-rumor"}
    assert res.report.n_good == 11 + 8 + 10 and res.report.n_bad == 0
    assert len(res.report.files) == 3


def test_it_merges_reports_of_bad_inputs(fdata):
    res = read_many(["csv/bad.csv", "follows/bad_edges.txt"], mode="skip-bad", max_shown=7)
    assert res.report.n_bad == 6 + 5 and len(res.report.shown) == 7
    assert res.report.shown[-1].path == "follows/bad_edges.txt"
    with pytest.raises(InputError, match=r"^csv/bad.csv:3:"):
        read_many(["csv/bad.csv", "follows/bad_edges.txt"])


def test_it_appends_spreading_graphs(fdata):
    res = read_many(["tudataset/good", "tudataset/labels_only"])
    c = res.graphs.cascades
    assert c.node_offsets.tolist() == [0, 4, 5, 8, 11]
    assert c.publisher.tolist() == [0, 4, 5, 8]
    assert res.graphs.edge_src.tolist()[-2:] == [9, 10]
    assert c.unit == "retweeters" and (c.followers == 1).all()  # one set without counts: the unit is retweeters


def test_it_reports_progress(fdata):
    calls = []
    read("v1/good.jsonl", progress=lambda done, total: calls.append((done, total)))
    size = (fdata / "v1/good.jsonl").stat().st_size
    assert calls and calls[-1] == (size, size)
    assert all(t == size for _, t in calls) and [d for d, _ in calls] == sorted(d for d, _ in calls)
    calls.clear()
    read_many(["csv/good.csv", "trees/good", "tudataset/good"], progress=lambda d, t: calls.append((d, t)))
    total = calls[-1][1]
    assert calls[-1] == (total, total) and all(0 <= d <= total for d, _ in calls)


def test_it_checks_its_arguments(fdata):
    with pytest.raises(ValueError, match="mode must be one of"):
        read("csv/good.csv", mode="lenient")
    with pytest.raises(ValueError, match="unknown format 'xml'"):
        read("csv/good.csv", "xml")
    with pytest.raises(ValueError, match="holds no tweets"):
        next(iter_tweets("follows/edges.txt"))
    with pytest.raises(ValueError, match="holds no follow edges"):
        next(iter_follows("csv/good.csv"))


def test_it_reads_with_an_explicit_format_whatever_the_name(fdata):
    assert len(read("v2/good.jsonl", "v2").tweets) == 7
    with pytest.raises(InputError):
        read("v2/good.jsonl", "csv")  # what the caller asked for, reported as bad input


def test_it_keeps_strict_and_skip_bad_identical_on_good_input(fdata):
    for p in ("csv/good.csv", "v1/good.jsonl", "v2/good.jsonl", "trees/good"):
        a, b = read(p), read(p, mode="skip-bad")
        assert np.array_equal(a.tweets.tweet_id, b.tweets.tweet_id)
        np.testing.assert_array_equal(a.tweets.created_at, b.tweets.created_at)
