from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from compute.formats import InputError, ReadReport, iter_tweets, read
from compute.formats.timeparse import snowflake_time
from compute.tables import concat_tweets

# test extras, skipped where only the engine's dependencies are installed (the GPU machine: make test-gpu)
pytest.importorskip("hypothesis")
from hypothesis import given, settings
from hypothesis import strategies as st

ORIG, RT = 1050118621198921728, 1050120030000000000
T = 1539202764.0  # Wed Oct 10 20:19:24 UTC 2018
ROOT = Path(__file__).resolve().parents[3]

#: the tests that compare with msgspec's fast path (a GPU machine has only the stdlib backend)
NEEDS_MSGSPEC = pytest.mark.skipif(
    importlib.util.find_spec("msgspec") is None, reason="compares with msgspec, which is not installed here"
)


def test_it_reads_statuses_and_embedded_originals(fdata, json_backend):
    res = read("v1/good.jsonl")
    t = res.tweets
    assert res.format == "v1"
    assert t.tweet_id.tolist() == [ORIG, RT, ORIG, 1050121000000000000, 1050122000000000000, 1050123000000000000]
    assert t.retweeted_tweet_id.tolist() == [-1, ORIG, -1, -1, -1, -1]
    assert t.user_id.tolist() == [2244994945, 783214, 2244994945, 17, 18, 19]
    # the retweet line also yields the original as the retweet saw it (its author had 1001 followers by then)
    assert t.followers_count[:5].tolist() == [1000, 50, 1001, 3, 0] and np.isnan(t.followers_count[5])
    assert t.lines.tolist() == [1, 2, 2, 5, 6, 7]
    assert t.screen_name.tolist() == ["alice", "bob", "alice", "carol", "dave", "erin"]
    assert t.text[3] == "the whole long text"  # extended_tweet.full_text beats the truncated text
    assert t.created_at[0] == T and t.created_at[1] == T + 336
    assert t.created_at[3] == T + 636  # ISO form
    assert t.created_at[4] == 1539203400.0  # only timestamp_ms
    assert t.created_at[5] == snowflake_time(1050123000000000000)  # no time at all
    assert res.report.n_good == 5 and res.report.n_skipped == 1 and res.report.n_bad == 0  # a delete notice


def test_it_prefers_id_str_over_id(tmp_path, json_backend):
    # JSON readers that go through doubles corrupt 64-bit ids; id_str is what the API meant
    p = tmp_path / "ids.jsonl"
    p.write_text(
        '{"id": 1050118621198921700, "id_str": "1050118621198921728", "created_at": 1539202764,'
        ' "user": {"id": 5.0, "id_str": "12345678901234567", "followers_count": 2}}\n'
        '{"id": 1050118621198921729, "created_at": 1539202764, "user": {"id": 6}}\n'
    )
    t = read(p, "v1").tweets
    assert t.tweet_id.tolist() == [ORIG, 1050118621198921729]
    assert t.user_id.tolist() == [12345678901234567, 6]


@pytest.mark.parametrize(
    ("raw", "outcome"),
    [
        ("1e3", "not an integer id"),  # a lax int conversion would read 1000
        ("1.0", "not an integer id"),
        ("0x1f", "not an integer id"),
        ("-5", "negative id"),
        ("9223372036854775808", "id out of range"),  # 2**63
        (" 12 ", 12),  # surrounding blanks are forgiven
    ],
)
@pytest.mark.parametrize("where", ["id_str", "user.id_str"])
def test_it_reads_string_ids_the_same_way_with_every_backend(tmp_path, json_backend, raw, outcome, where):
    status = {"id_str": "1050118621198921728", "created_at": 1539202764,
              "user": {"id_str": "5", "followers_count": 2}}  # fmt: skip
    if where == "id_str":
        status["id_str"] = raw
    else:
        status["user"]["id_str"] = raw
    p = tmp_path / "ids.jsonl"
    p.write_text(json.dumps(status) + "\n")
    if isinstance(outcome, int):
        t = read(p, "v1").tweets
        assert (t.tweet_id if where == "id_str" else t.user_id).tolist() == [outcome]
        return
    with pytest.raises(InputError, match=rf"ids.jsonl:1: field '{where}': {outcome}"):
        read(p, "v1")
    assert read(p, "v1", mode="skip-bad").report.n_bad == 1


@pytest.mark.parametrize(
    ("top", "embedded", "named"),
    [
        ({"created_at": "yesterday"}, {"id_str": "12a"}, ("retweeted_status.id_str", "not an integer id")),
        ({"user": {"id_str": "-3", "followers_count": 1}}, {"id_str": "12a"}, ("user.id_str", "negative id")),
        ({}, {"user": {"id_str": "x", "followers_count": 1}}, ("retweeted_status.user.id_str", "not an integer id")),
        ({"id_str": "1e3"}, {"created_at": "yesterday"}, ("id_str", "not an integer id")),
        ({"created_at": "yesterday"}, {}, ("created_at", "unparseable time")),
    ],
)
def test_a_retweet_line_with_two_problems_is_named_by_the_first_a_reader_meets(tmp_path, json_backend, top, embedded,
                                                                              named):  # fmt: skip
    """Ids are read before times, the retweet before its original: every backend names the same field, though
    msgspec's path converts the id strings and the times of a whole chunk after the line."""
    original = {**_v1(ORIG, 7), **embedded}
    status = {**_v1(RT, 8, retweeted_status=original), **top}
    p = tmp_path / "two.jsonl"
    p.write_text(json.dumps(_v1(ORIG + 5, 9)) + "\n" + json.dumps(status) + "\n")
    res = read(p, "v1", mode="skip-bad")
    assert [(r.line, r.field, r.kind) for r in res.report.shown] == [(2, *named)]
    assert res.tweets.tweet_id.tolist() == [ORIG + 5]


@pytest.mark.parametrize("count", [2**64 + 5, int("9" * 400)])
@pytest.mark.parametrize("where", ["user", "retweeted_status.user"])
def test_a_follower_count_too_large_for_a_float_is_a_bad_record(tmp_path, json_backend, count, where):
    """An int beyond any double (over 308 digits) is named like any count out of range, never a crash."""
    status = _v1(RT, 8, retweeted_status=_v1(ORIG, 7))
    (status if where == "user" else status["retweeted_status"])["user"]["followers_count"] = count
    p = tmp_path / "big.jsonl"
    p.write_text(json.dumps(_v1(ORIG + 5, 9)) + "\n" + json.dumps(status) + "\n")
    res = read(p, "v1", mode="skip-bad")
    assert res.tweets.tweet_id.tolist() == [ORIG + 5]
    shown = [(r.line, r.field, r.kind) for r in res.report.shown]
    if json_backend == "orjson":  # its own limits: past 64 bits a double, past a double's range invalid JSON
        assert [line for line, _, _ in shown] == [2]
        return
    assert shown == [(2, f"{where}.followers_count", "count out of range")]
    assert str(count)[:20] in res.report.shown[0].reason


def test_it_raises_on_the_first_bad_line_in_strict_mode(fdata, json_backend):
    with pytest.raises(InputError, match=r"^v1/bad.jsonl:2: invalid JSON: ") as exc:
        read("v1/bad.jsonl")
    assert exc.value.record.line == 2 and exc.value.record.field is None


def test_it_skips_bad_lines_naming_line_and_field(fdata, json_backend):
    res = read("v1/bad.jsonl", mode="skip-bad")
    assert res.tweets.tweet_id.tolist() == [ORIG, RT, ORIG]
    assert res.tweets.lines.tolist() == [1, 10, 10]
    rep = res.report
    assert (rep.n_good, rep.n_bad) == (2, 9)
    shown = [(r.line, r.field, r.kind) for r in rep.shown]
    assert shown == [
        (2, None, "invalid JSON"),
        (3, "user", "missing required field"),
        (4, "user.followers_count", "negative count"),
        (5, "id_str", "not an integer id"),
        (6, "user", "wrong type"),
        (7, "created_at", "unparseable time"),
        (8, None, "wrong type"),
        (9, "retweeted_status.user", "missing required field"),
        (11, None, "undecodable bytes (not UTF-8)"),
    ]
    assert str(rep.shown[2]) == "v1/bad.jsonl:4: field 'user.followers_count': negative count: -5"


def test_it_gives_the_same_answer_with_every_json_backend(fdata, monkeypatch):
    from compute.formats._json import FORCE_ENV

    results = {}
    for name in ("msgspec", "orjson", "json"):
        monkeypatch.setenv(FORCE_ENV, name)
        try:
            res = read("v1/bad.jsonl", mode="skip-bad")
        except ValueError:
            continue  # not installed here
        t = res.tweets
        results[name] = (
            t.tweet_id.tolist(),
            t.created_at.tolist(),
            t.followers_count.tolist(),
            [(r.line, r.field, r.kind) for r in res.report.shown],
        )
    if len(results) < 2:
        pytest.skip("one JSON backend is installed here: nothing to compare")
    first = next(iter(results.values()))
    assert all(r == first for r in results.values())


def test_it_refuses_an_empty_file(fdata):
    with pytest.raises(InputError, match=r"^v1/empty.jsonl: empty file$"):
        read("v1/empty.jsonl", "v1")
    assert read("v1/empty.jsonl", "v1", mode="skip-bad").report.n_bad == 1


def test_it_streams_in_chunks(tmp_path, json_backend):
    p = tmp_path / "many.jsonl"
    with open(p, "w") as fh:
        for i in range(3000):
            st = {"id_str": str(ORIG + i), "created_at": 1539202764 + i, "user": {"id": i % 50, "followers_count": i}}
            if i % 2:
                st["retweeted_status"] = {
                    "id_str": str(ORIG),
                    "created_at": 1539202764,
                    "user": {"id": 0},
                }  # as line 1 says
            fh.write(json.dumps(st) + "\n")
    report = ReadReport()
    chunks = list(iter_tweets(p, chunk_size=500, report=report))
    assert len(chunks) >= 4 and report.n_good == 3000
    whole = read(p).tweets
    assert len(whole) == 4500
    assert np.array_equal(concat_tweets(chunks).tweet_id, whole.tweet_id)


def test_it_works_without_msgspec_or_orjson(fdata):
    """Only NumPy is required: with msgspec and orjson unimportable the stdlib json backend reads the same."""
    script = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('msgspec', 'orjson'):\n"
        "            raise ImportError('blocked: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import compute.formats as F\n"
        "from compute.formats._json import backend\n"
        "r = F.read('v1/good.jsonl')\n"
        "print(backend(), len(r.tweets), r.tweets.tweet_id[1])\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("SPREADWATCH_JSON_BACKEND", None)
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=fdata, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["json", "6", str(RT)]


_ID = st.one_of(
    st.integers(0, 2**63 - 1),
    st.integers(0, 2**63 - 1).map(str),
    st.sampled_from([None, -1, "12a", "", 1.5, "99999999999999999999", True, [1]]),
)
_TIME = st.one_of(
    st.sampled_from(["Wed Oct 10 20:19:24 +0000 2018", "2018-10-10T20:19:24Z", "1539202764", "yesterday", None]),
    st.integers(1_000_000_000, 2_000_000_000_000),
)
_COUNT = st.one_of(st.integers(0, 10**9), st.sampled_from([None, -3, 2.5, "7", "many", 1e300]))
# entities well formed and not: msgspec refuses the malformed ones, so their lines take the careful path
_ENTITIES = st.one_of(
    st.fixed_dictionaries(
        {},
        optional={
            "hashtags": st.lists(st.sampled_from([{"text": "Covid"}, {"text": "#covid"}, {"text": "News"},
                                                  {"text": 5}, {}, "x"]), max_size=3),
            "urls": st.lists(st.sampled_from([{"url": "https://t.co/1", "expanded_url": "https://e.example/1"},
                                              {"url": "https://t.co/2"}, {"expanded_url": "a b"}, 3]), max_size=3),
        },
    ),
    st.sampled_from([None, "x", [1], {"hashtags": "covid"}, {"urls": {"url": "u"}}]),
)  # fmt: skip


@st.composite
def _status(draw, embedded=False):
    d = {}
    for key, strat in (("id", _ID), ("id_str", _ID), ("created_at", _TIME)):
        if draw(st.booleans()):
            d[key] = draw(strat)
    if draw(st.integers(0, 9)):
        user = {}
        for key, strat in (("id", _ID), ("id_str", _ID), ("followers_count", _COUNT)):
            if draw(st.booleans()):
                user[key] = draw(strat)
        if draw(st.booleans()):
            user["screen_name"] = draw(st.sampled_from(["bob", 5, None]))
        d["user"] = user if draw(st.integers(0, 9)) else "bob"
    if draw(st.booleans()):
        d["text"] = draw(st.sampled_from(["hi", "", None, 3]))
    if draw(st.booleans()):
        d["entities"] = draw(_ENTITIES)
    if draw(st.integers(0, 3)) == 0:
        d["extended_tweet"] = draw(st.sampled_from([{"full_text": "long"}, {"full_text": 5}, "x", None, [1]]))
        if type(d["extended_tweet"]) is dict and draw(st.booleans()):
            d["extended_tweet"] = {**d["extended_tweet"], "entities": draw(_ENTITIES)}
    if draw(st.integers(0, 5)) == 0:
        d["delete"] = {"status": {"id": 1}}
    if not embedded and draw(st.integers(0, 2)) == 0:
        d["retweeted_status"] = draw(_status(embedded=True)) if draw(st.integers(0, 9)) else 7
    return d


@NEEDS_MSGSPEC
@settings(max_examples=60, deadline=None)
@given(st.lists(_status(), min_size=1, max_size=12))
def test_it_reads_the_same_on_the_fast_and_careful_paths(tmp_path_factory, statuses):
    """msgspec's fast path and the stdlib backend's careful path agree on every row and every bad record."""
    import json as _json

    from compute.formats._json import FORCE_ENV

    p = tmp_path_factory.mktemp("v1") / "s.jsonl"
    p.write_text("\n".join(_json.dumps(s) for s in statuses) + "\n")
    out = {}
    for name in ("msgspec", "json"):
        os.environ[FORCE_ENV] = name
        try:
            res = read(p, "v1", mode="skip-bad")
        finally:
            del os.environ[FORCE_ENV]
        t = res.tweets
        out[name] = (
            t.tweet_id.tolist(), t.retweeted_tweet_id.tolist(), t.user_id.tolist(),
            np.nan_to_num(t.created_at, nan=-1).tolist(), np.nan_to_num(t.followers_count, nan=-1).tolist(),
            t.screen_name.tolist(), t.text.tolist(), t.hashtags.tolist(), t.urls.tolist(), t.lines.tolist(),
            [(r.line, r.field, r.kind) for r in res.report.shown], res.report.n_good, res.report.n_skipped,
        )  # fmt: skip
    assert out["msgspec"] == out["json"]


_ODD = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 2**64) | st.sampled_from(["", "x", "1050121000000000000", "17"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["id", "id_str", "created_at", "user", "followers_count", "screen_name", "text",
                         "full_text", "extended_tweet", "retweeted_status", "timestamp_ms", "delete",
                         "entities", "hashtags", "urls", "url", "expanded_url"]),
        inner, max_size=6),
    max_leaves=14,
)  # fmt: skip


@NEEDS_MSGSPEC
@settings(max_examples=300, deadline=None)
@given(st.lists(_ODD, min_size=1, max_size=6))
def test_it_never_crashes_on_odd_json_shapes(tmp_path_factory, objs):
    """Whatever the JSON holds, each line is read, skipped or reported, the same way by every backend."""
    import json as _json

    from compute.formats._json import FORCE_ENV

    p = tmp_path_factory.mktemp("v1") / "odd.jsonl"
    p.write_text("\n".join(_json.dumps(o) for o in objs) + "\n")
    seen = []
    for name in ("msgspec", "json"):
        os.environ[FORCE_ENV] = name
        try:
            res = read(p, "v1", mode="skip-bad")
        finally:
            del os.environ[FORCE_ENV]
        rep = res.report
        assert rep.n_good + rep.n_bad + rep.n_skipped == len(objs)
        t = res.tweets
        seen.append((t.tweet_id.tolist(), t.hashtags.tolist(), t.urls.tolist(),
                     [(r.line, r.field, r.kind) for r in rep.shown]))  # fmt: skip
    assert seen[0] == seen[1]


def _v1(tid: int, uid: int, **more) -> dict:
    return {"id_str": str(tid), "created_at": 1539202764, "user": {"id_str": str(uid), "followers_count": 3}, **more}


def test_it_reads_hashtags_and_urls_preferring_the_extended_tweets(tmp_path, json_backend):
    p = tmp_path / "e.jsonl"
    statuses = [
        _v1(ORIG, 1, text="short #NoNo", entities={"hashtags": [{"text": "NoNo"}], "urls": []},
            extended_tweet={"full_text": "long #Covid #covid #News", "entities": {
                "hashtags": [{"text": "Covid", "indices": [5, 11]}, {"text": "covid"}, {"text": "News"}],
                "urls": [{"url": "https://t.co/1", "expanded_url": "https://example.com/a"},
                         {"url": "https://t.co/2"},
                         {"url": "https://t.co/3", "expanded_url": "https://example.com/a"}]}}),
        _v1(ORIG + 1, 2, entities={"hashtags": [], "urls": [], "user_mentions": [{"screen_name": "x"}]}),
        _v1(ORIG + 2, 3),  # no entities at all
        _v1(ORIG + 3, 4, entities={"hashtags": [{"text": "Ünï"}], "urls": []}, extended_tweet={"full_text": "x"}),
    ]  # fmt: skip
    p.write_text("".join(json.dumps(s) + "\n" for s in statuses))
    t = read(p, "v1").tweets
    assert t.hashtags.tolist() == ["covid news", "", "", "ünï"]
    assert t.urls.tolist() == ["https://example.com/a https://t.co/2", "", "", ""]
    assert t.hashtags.dtype == object and t.urls.dtype == object


def test_a_retweet_line_gives_both_its_rows_the_originals_entities(tmp_path, json_backend):
    orig = _v1(
        ORIG,
        1,
        text="#Claim https://t.co/9",
        entities={
            "hashtags": [{"text": "Claim"}],
            "urls": [{"url": "https://t.co/9", "expanded_url": "https://news.example/9"}],
        },
    )
    rt = _v1(RT, 2, text="RT @a: #Claim", entities={"hashtags": [{"text": "Claim"}, {"text": "RTonly"}], "urls": []},
             retweeted_status=orig)  # fmt: skip
    p = tmp_path / "rt.jsonl"
    p.write_text(json.dumps(rt) + "\n")
    t = read(p, "v1").tweets
    assert t.tweet_id.tolist() == [RT, ORIG]
    assert t.hashtags.tolist() == ["claim", "claim"]
    assert t.urls.tolist() == ["https://news.example/9", "https://news.example/9"]


@pytest.mark.parametrize(
    "entities",
    [
        "not an object",
        [1, 2],
        {"hashtags": "covid", "urls": []},
        {"hashtags": ["covid", 5], "urls": "https://x"},
        {"hashtags": [{"text": 5}, {"text": ["x"]}, {"text": "Ok"}], "urls": [{"url": None}, {"expanded_url": 7}]},
    ],
)
def test_malformed_entities_are_passed_over_never_a_bad_record(tmp_path, json_backend, entities):
    p = tmp_path / "m.jsonl"
    orig = _v1(ORIG, 1, entities=entities)
    p.write_text(json.dumps(orig) + "\n" + json.dumps(_v1(RT, 2, retweeted_status=orig)) + "\n")
    res = read(p, "v1")  # strict: any bad record would raise
    t = res.tweets
    assert res.report.n_bad == 0 and res.report.n_good == 2 and t.tweet_id.tolist() == [ORIG, RT, ORIG]
    want = "ok" if isinstance(entities, dict) and entities["hashtags"][-1:] == [{"text": "Ok"}] else ""
    assert t.hashtags.tolist() == [want] * 3 and t.urls.tolist() == [""] * 3


def test_an_empty_v1_read_still_has_the_entity_columns(fdata):
    t = read("v1/empty.jsonl", "v1", mode="skip-bad").tweets
    assert len(t) == 0 and t.hashtags is not None and t.urls is not None
