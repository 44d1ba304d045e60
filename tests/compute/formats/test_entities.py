"""A tweet's entities as the ``hashtags`` and ``urls`` strings (``compute.formats._entities``): the rules, the
three kinds of object the functions take (msgspec structs, ``Obj`` views, plain dicts), and the v1.1 reader's
fast path agreeing with the general one on any input."""

from __future__ import annotations

import json

import pytest

from compute.formats import _entities as E
from compute.formats._entities import (
    join_tags,
    join_urls,
    tags_from_cell,
    urls_from_cell,
    v1_entities,
    v1_struct_entities,
    v2_entities,
)
from compute.formats._json import Obj

# test extras, skipped where only the engine's dependencies are installed (the GPU machine: make test-gpu)
pytest.importorskip("hypothesis")
from hypothesis import given, settings
from hypothesis import strategies as st


def test_hashtags_are_lowercased_without_hash_distinct_in_first_order():
    assert join_tags(["Covid", "#vaccine", "COVID", "News", "##vaccine"]) == "covid vaccine news"
    assert join_tags([]) == ""


def test_hashtags_that_are_not_strings_empty_or_hold_blanks_are_passed_over():
    assert join_tags([5, None, "", "#", "a b", "tab\there", "nb\u00a0sp", ["x"], "Ok"]) == "ok"


def test_urls_are_distinct_in_order_and_dropped_when_they_hold_blanks():
    urls = ["https://b.example/1", "https://a.example/2", "https://b.example/1", "https://x y", "", 7, None]
    assert join_urls(urls) == "https://b.example/1 https://a.example/2"
    assert join_urls(["https://A.example/Case"]) == "https://A.example/Case"  # URLs keep their case


def test_a_v1_status_prefers_the_extended_tweets_entities():
    st = {
        "entities": {"hashtags": [{"text": "Short"}], "urls": []},
        "extended_tweet": {"full_text": "...", "entities": {"hashtags": [{"text": "Long"}], "urls": []}},
    }
    assert v1_entities(st) == ("long", "")
    del st["extended_tweet"]["entities"]
    assert v1_entities(st) == ("short", "")  # an extended tweet without entities: the status's own


def test_a_v1_url_is_the_expanded_one_else_the_short_one():
    st = {"entities": {"urls": [{"url": "https://t.co/1", "expanded_url": "https://e.example/1"},
                                {"url": "https://t.co/2", "expanded_url": None},
                                {"url": "https://t.co/3", "expanded_url": ""},
                                {"url": "https://t.co/4"}]}}  # fmt: skip
    assert v1_entities(st) == ("", "https://e.example/1 https://t.co/2 https://t.co/3 https://t.co/4")


def test_a_v2_url_is_the_unwound_one_else_the_expanded_one_else_the_short_one():
    tw = {"entities": {"hashtags": [{"tag": "Vax"}, {"tag": "vax"}],
                       "urls": [{"url": "https://t.co/1", "expanded_url": "https://e.example/1",
                                 "unwound_url": "https://final.example/1"},
                                {"url": "https://t.co/2", "expanded_url": "https://e.example/2"},
                                {"url": "https://t.co/3"}]}}  # fmt: skip
    assert v2_entities(tw) == ("vax", "https://final.example/1 https://e.example/2 https://t.co/3")


@pytest.mark.parametrize(
    "entities",
    [
        None,
        "not an object",
        [1, 2],
        {"hashtags": "covid", "urls": {"url": "https://x"}},
        {"hashtags": [1, "covid", None, ["x"]], "urls": ["https://x", 5]},
        {"hashtags": [{"text": 5}, {"tag": "v2 name"}], "urls": [{"url": None}, {"expanded_url": ["x"]}]},
    ],
)
def test_malformed_entities_are_passed_over(entities):
    st = {"entities": entities, "extended_tweet": {"entities": "bad"} if entities is None else None}
    assert v1_entities(st) == ("", "")
    assert v1_entities(Obj(st)) == ("", "")
    assert v2_entities({"entities": entities}) == ("", "")
    assert v2_entities("not a tweet") == ("", "") and v1_entities(None) == ("", "")


def test_the_functions_take_dicts_views_and_structs_alike():
    msgspec = pytest.importorskip("msgspec")
    from compute.formats import _msgspec_types as T

    urls = [{"url": "https://t.co/1", "expanded_url": "https://e/1"}]
    line = {"id_str": "1", "entities": {"hashtags": [{"text": "A"}, {"text": "b"}], "urls": urls}}
    raw = json.dumps(line).encode()
    want = ("a b", "https://e/1")
    assert v1_entities(line) == v1_entities(Obj(line)) == want
    st = T.v1_decoder().decode(raw)
    assert v1_entities(st) == v1_struct_entities(st) == want
    tw = {"id": "1", "entities": {"hashtags": [{"tag": "A"}], "urls": [{"url": "https://t.co/1"}]}}
    assert v2_entities(tw) == v2_entities(Obj(tw)) == ("a", "https://t.co/1")
    page = msgspec.json.decode(json.dumps({"data": [tw]}).encode(), type=T.V2Line)
    assert v2_entities(page.data[0]) == ("a", "https://t.co/1")


@pytest.mark.parametrize(
    ("cell", "want"),
    [
        ("#Covid, vaccine;#covid", "covid vaccine"),
        ("covid vaccine", "covid vaccine"),
        ("#a#b  ##c", "a b c"),
        (" ;, ", ""),
        ("", ""),
        (None, ""),
    ],
)
def test_a_csv_hashtags_cell_is_split_on_blanks_commas_semicolons_and_hashes(cell, want):
    assert tags_from_cell(cell) == want


@pytest.mark.parametrize(
    ("cell", "want"),
    [
        ("https://a.example/1 https://b.example/2", "https://a.example/1 https://b.example/2"),
        ("https://a.example/1,https://b.example/2;", "https://a.example/1 https://b.example/2"),
        ("https://a.example/1; https://a.example/1", "https://a.example/1"),
        # a comma or semicolon inside a URL stays: only the next URL's start (or the end) makes it a separator
        ("https://maps.example/@40.7,-74.0;http://x.example/?q=1;2", "https://maps.example/@40.7,-74.0 http://x.example/?q=1;2"),
        ("https://a.example/x,www.b.example", "https://a.example/x www.b.example"),
        ("a.example,b.example;c.example", "a.example b.example c.example"),  # no scheme: every one separates
        ("\t", ""),
        (None, ""),
    ],
)  # fmt: skip
def test_a_csv_urls_cell_is_split_on_blanks_commas_and_semicolons(cell, want):
    assert urls_from_cell(cell) == want


_text = st.one_of(
    st.sampled_from(["Covid", "covid", "#News", "", "a b", "x\u00a0y", "Ünïcode", "ß", "tag_1", "#", "日本"]),
    st.text(max_size=6),
    st.none(),
    st.integers(-2, 2),
)
_url = st.fixed_dictionaries({}, optional={"url": _text, "expanded_url": _text})
_ents = st.fixed_dictionaries(
    {},
    optional={
        "hashtags": st.lists(st.fixed_dictionaries({}, optional={"text": _text}), max_size=4),
        "urls": st.lists(_url, max_size=4),
    },
)


@settings(max_examples=300, deadline=None)
@given(ents=_ents, ext=st.one_of(st.none(), _ents), memo=st.booleans())
def test_the_fast_path_gives_what_the_general_one_gives(ents, ext, memo):
    pytest.importorskip("msgspec")
    from compute.formats import _msgspec_types as T

    status = {"id_str": "1", "entities": ents}
    if ext is not None:
        status["extended_tweet"] = {"entities": ext}
    if not memo:  # the first sight of a value and a remembered one give the same
        E._TAG_MEMO.clear()
        E._URL_MEMO.clear()
    st_ = T.v1_decoder().decode(json.dumps(status).encode())
    assert v1_struct_entities(st_) == v1_entities(status) == v1_entities(Obj(status))
    assert v1_struct_entities(st_) == v1_entities(status)  # again, from the memo


def test_the_memos_stay_bounded(monkeypatch):
    monkeypatch.setattr(E, "_MEMO_MAX", 3)
    pytest.importorskip("msgspec")
    from compute.formats import _msgspec_types as T

    dec = T.v1_decoder().decode
    for i in range(10):
        st_ = dec(json.dumps({"entities": {"hashtags": [{"text": f"T{i}"}], "urls": [{"url": f"u{i}"}]}}).encode())
        assert v1_struct_entities(st_) == (f"t{i}", f"u{i}")
        assert len(E._TAG_MEMO) <= 3 and len(E._URL_MEMO) <= 3
