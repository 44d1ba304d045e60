from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

from compute.formats import InputError, read
from compute.formats.timeparse import snowflake_time

# test extras, skipped where only the engine's dependencies are installed (the GPU machine: make test-gpu)
pytest.importorskip("hypothesis")
from hypothesis import given, settings
from hypothesis import strategies as st

X, R1 = 1050118621198921728, 1050120030000000000
T = 1539202764.0

#: the tests that compare with msgspec's fast path (a GPU machine has only the stdlib backend)
NEEDS_MSGSPEC = pytest.mark.skipif(
    importlib.util.find_spec("msgspec") is None, reason="compares with msgspec, which is not installed here"
)


def test_it_reads_twarc2_pages_and_flattened_tweets(fdata, json_backend):
    res = read("v2/good.jsonl")
    t = res.tweets
    assert res.format == "v2" and res.report.n_bad == 0
    rows = list(zip(t.lines.tolist(), t.tweet_id.tolist(), t.retweeted_tweet_id.tolist(), t.user_id.tolist()))
    assert rows == [
        (1, 1050121000000000000, -1, 17),  # a quote tweet is an original
        (1, R1, X, 783214),  # a retweet ...
        (1, X, -1, 2244994945),  # ... and its original, from includes.tweets
        (2, X, -1, 2244994945),  # a page whose data is one object
        (3, 1050130000000000000, X, 17),  # flattened: author expanded ...
        (3, X, -1, 2244994945),  # ... and the original expanded into referenced_tweets
        (4, 1050131000000000000, X, 18),  # no author object, no users: followers unknown
    ]
    # followers: includes.users by author_id on pages, the expanded author when flattened
    assert t.followers_count[:6].tolist() == [3, 50, 1000, 1000, 3, 1000] and np.isnan(t.followers_count[6])
    assert t.screen_name[:6].tolist() == ["carol", "bob", "alice", "alice", "carol", "alice"]
    assert t.created_at[2] == T and t.created_at[1] == T + 336
    assert t.created_at[6] == snowflake_time(1050131000000000000)  # no created_at
    assert res.report.n_good == 7


def test_it_drops_only_the_bad_tweet_of_a_page(fdata, json_backend):
    res = read("v2/bad.jsonl", mode="skip-bad")
    assert res.tweets.tweet_id.tolist() == [1050121000000000000]
    assert [str(r) for r in res.report.shown][:2] == [
        "v2/bad.jsonl:1: field 'data[1].author_id': missing required field",
        "v2/bad.jsonl:1: field 'includes.users[1].public_metrics.followers_count': negative count: -1",
    ]
    assert [(r.line, r.kind) for r in res.report.shown[2:]] == [
        (2, "invalid JSON"),
        (3, "not a number"),
    ]
    assert res.report.shown[3].field == "author.public_metrics.followers_count"


def test_it_raises_on_the_first_bad_tweet_in_strict_mode(fdata):
    with pytest.raises(InputError, match=r"^v2/bad.jsonl:1: field 'data\[1\].author_id': missing required field$"):
        read("v2/bad.jsonl")


def test_it_blames_a_bad_time_on_the_tweet_that_has_it(tmp_path, json_backend):
    p = tmp_path / "t.jsonl"
    page = {
        "data": [
            {"id": "1050121000000000000", "author_id": "1", "created_at": "2018-10-10T20:30:00.000Z"},
            {"id": "1050121000000000001", "author_id": "1", "created_at": "10/10/2018"},
        ]
    }
    p.write_text(json.dumps(page) + "\n")
    with pytest.raises(InputError, match=r"^.*t.jsonl:1: field 'data\[1\].created_at': unparseable time: '10/10/2018'"):
        read(p, "v2")
    assert read(p, "v2", mode="skip-bad").tweets.tweet_id.tolist() == [1050121000000000000]


def test_it_skips_lines_without_tweets(tmp_path):
    p = tmp_path / "t.jsonl"
    p.write_text('{"errors": [{"title": "Not Found Error"}]}\n{"id": "1050121000000000000", "author_id": "3"}\n')
    res = read(p, "v2")
    assert res.report.n_skipped == 1 and res.tweets.user_id.tolist() == [3]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 2**63) | st.sampled_from(["", "x", "1050121000000000000", "17"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["id", "author_id", "created_at", "text", "author", "public_metrics", "followers_count",
                         "username", "referenced_tweets", "type", "data", "includes", "users", "tweets",
                         "entities", "hashtags", "tag", "urls", "unwound_url"]),
        inner, max_size=5),
    max_leaves=12,
)  # fmt: skip


@NEEDS_MSGSPEC
@settings(max_examples=300, deadline=None)
@given(st.lists(_JSON, min_size=1, max_size=6))
def test_it_never_crashes_on_odd_json_shapes(tmp_path_factory, objs):
    """Whatever the JSON holds, every backend reads it or reports bad records; nothing raises but InputError."""
    import os

    from compute.formats._json import FORCE_ENV

    p = tmp_path_factory.mktemp("v2") / "odd.jsonl"
    p.write_text("\n".join(json.dumps(o) for o in objs) + "\n")
    for name in ("msgspec", "json"):
        os.environ[FORCE_ENV] = name
        try:
            res = read(p, "v2", mode="skip-bad")
        finally:
            del os.environ[FORCE_ENV]
        assert len(res.tweets) >= 0 and res.report.n_good + res.report.n_bad + res.report.n_skipped >= 1


def _tweet(tid: int, uid: int, **more) -> dict:
    return {"id": str(tid), "author_id": str(uid), "created_at": "2018-10-10T20:19:24.000Z", **more}


def _ents(tags: list[str], urls: list[dict]) -> dict:
    return {"hashtags": [{"start": 0, "end": 3, "tag": t} for t in tags], "urls": urls, "mentions": [{"id": "1"}]}


def test_it_reads_the_entities_of_data_and_includes_tweets(tmp_path, json_backend):
    page = {
        "data": [
            _tweet(R1, 2, text="RT @a: #Claim", referenced_tweets=[{"type": "retweeted", "id": str(X)}],
                   entities=_ents(["Claim"], [])),
            _tweet(R1 + 1, 3, text="no entities"),
        ],
        "includes": {"tweets": [_tweet(X, 1, text="#Claim #claim #Two", entities=_ents(["Claim", "claim", "Two"], [
            {"url": "https://t.co/1", "expanded_url": "https://bit.example/1", "unwound_url": "https://news.example/1"},
            {"url": "https://t.co/2", "expanded_url": "https://e.example/2"},
            {"url": "https://t.co/3"},
        ]))]},
    }  # fmt: skip
    ref = {"type": "retweeted", "id": str(X + 1), "author_id": "5", "created_at": "2018-10-10T20:19:24.000Z",
           "entities": _ents(["Orig"], [])}  # fmt: skip
    own = _ents(["RT"], [{"url": "https://t.co/4", "expanded_url": "https://e.example/4"}])
    flat = _tweet(R1 + 2, 4, referenced_tweets=[ref], entities=own)  # twarc2 flatten: the original expanded
    p = tmp_path / "p.jsonl"
    p.write_text(json.dumps(page) + "\n" + json.dumps(flat) + "\n")
    t = read(p, "v2").tweets
    assert t.tweet_id.tolist() == [R1, X, R1 + 1, R1 + 2, X + 1]
    # every row its own tweet's: a retweet the entities of its RT text
    assert t.hashtags.tolist() == ["claim", "claim two", "", "rt", "orig"]
    assert t.urls.tolist() == [
        "", "https://news.example/1 https://e.example/2 https://t.co/3", "", "https://e.example/4", ""
    ]  # fmt: skip


@pytest.mark.parametrize(
    "entities",
    ["x", [1], {"hashtags": "covid"}, {"hashtags": [1, {"tag": 5}], "urls": {"url": "u"}}, {"urls": ["u", {"url": 3}]}],
)
def test_malformed_entities_are_passed_over_never_a_bad_record(tmp_path, json_backend, entities):
    page = {"data": [_tweet(R1, 2, entities=entities, referenced_tweets=[{"type": "retweeted", "id": str(X)}])],
            "includes": {"tweets": [_tweet(X, 1, entities=_ents(["Ok"], []))]}}  # fmt: skip
    p = tmp_path / "m.jsonl"
    p.write_text(json.dumps(page) + "\n" + json.dumps(_tweet(X + 5, 7, entities=entities)) + "\n")
    res = read(p, "v2")  # strict: a bad record would raise
    t = res.tweets
    assert res.report.n_bad == 0 and t.tweet_id.tolist() == [R1, X, X + 5]
    assert t.hashtags.tolist() == ["", "ok", ""] and t.urls.tolist() == ["", "", ""]


def test_a_line_refused_for_more_than_its_entities_is_still_a_bad_record(tmp_path, json_backend):
    p = tmp_path / "b.jsonl"
    p.write_text(json.dumps({"data": [_tweet(R1, 2, entities="x")], "includes": "not an object"}) + "\n")
    res = read(p, "v2", mode="skip-bad")
    assert len(res.tweets) == 0 and res.report.n_bad == 1
