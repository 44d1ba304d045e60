"""``TweetTable``'s optional object columns, the entity ones (``hashtags``, ``urls``) in particular: checked,
converted and carried like ``text`` through taking rows, concatenation, empty tables and the readers' helpers."""

from __future__ import annotations

import numpy as np
import pytest

from compute.formats._report import ReadReport, Sink
from compute.formats._tweets import CheckedRows, TweetBuilder, empty_tweets
from compute.tables import TweetTable, concat_tweets


def _table(n: int, **cols) -> TweetTable:
    ids = np.arange(1, n + 1)
    return TweetTable(ids, np.full(n, -1), ids * 10, np.full(n, 1.5e9), np.full(n, 3.0), **cols)


def test_the_entity_columns_are_optional_and_come_after_the_older_ones():
    t = _table(2)
    assert t.hashtags is None and t.urls is None
    # positional construction as callers wrote it before: lines is still the ninth column
    t = TweetTable([1], [-1], [2], [1.5e9], [3.0], None, None, None, [7])
    assert t.lines.tolist() == [7] and t.hashtags is None


def test_the_entity_columns_become_object_arrays_and_are_checked_for_length():
    t = _table(2, hashtags=["a b", ""], urls=np.array(["https://x", ""]))
    assert t.hashtags.dtype == object and t.urls.dtype == object
    assert t.hashtags.tolist() == ["a b", ""] and t.urls.tolist() == ["https://x", ""]
    with pytest.raises(ValueError, match="column hashtags has length 1, expected 2"):
        _table(2, hashtags=["a"])
    with pytest.raises(ValueError, match="column urls has length 3, expected 2"):
        _table(2, urls=["", "", ""])


def test_taking_rows_carries_the_entity_columns():
    t = _table(3, text=["x", "y", "z"], hashtags=["a", "", "b c"], urls=["u1", "u2", ""])
    s = t.take(np.array([2, 0]))
    assert s.hashtags.tolist() == ["b c", "a"] and s.urls.tolist() == ["", "u1"]
    m = t.take(np.array([False, True, False]))
    assert m.hashtags.tolist() == [""] and m.urls.tolist() == ["u2"]
    assert _table(2).take([0]).hashtags is None


def test_concatenation_carries_the_entity_columns_and_fills_none_where_a_part_could_not_say():
    a = _table(2, hashtags=["a", ""], urls=["u", ""])
    b = _table(1)  # e.g. a CSV without the columns
    t = concat_tweets([a, b, a])
    assert t.hashtags.tolist() == ["a", "", None, "a", ""]
    assert t.urls.tolist() == ["u", "", None, "u", ""]
    assert concat_tweets([b, b]).hashtags is None
    assert concat_tweets([a, _table(0)]).hashtags.tolist() == ["a", ""]


def test_from_rows_takes_the_entity_columns_after_the_label():
    t = TweetTable.from_rows([(1, None, 2, 1.5e9, None, "sn", "tx", None, "tag", "https://u")])
    assert t.hashtags.tolist() == ["tag"] and t.urls.tolist() == ["https://u"] and t.hashtags.dtype == object
    assert TweetTable.from_rows([(1, None, 2, 1.5e9, None)]).hashtags is None


def test_an_empty_table_has_no_entity_columns_and_empty_tweets_has_them_with_text():
    assert TweetTable.empty().hashtags is None
    e = empty_tweets(True)
    assert e.hashtags.tolist() == [] and e.urls.dtype == object
    assert empty_tweets(False).hashtags is None
    assert empty_tweets(False, True).hashtags is not None and empty_tweets(True, False).urls is None


def _builder(entities: bool) -> TweetBuilder:
    return TweetBuilder(Sink("x", "skip-bad", ReadReport()), entities=entities)


def test_a_builder_with_entities_fills_the_columns_and_one_without_leaves_them_out():
    for entities in (True, False):
        b = _builder(entities)
        b.add(1, 1, 5, -1, 7, 1539202764, "created_at", 3.0, "sn", "tx", "covid", "https://u")
        b.add(2, 2, 6, -1, 7, 1539202764, "created_at", 3.0, "sn", "tx")  # the older ten-value form
        t = b.flush()
        if entities:
            assert t.hashtags.tolist() == ["covid", None] and t.urls.tolist() == ["https://u", None]
        else:
            assert t.hashtags is None and t.urls is None
    b = _builder(False)
    b.rows.append((1, 1, 5, -1, 7, 1539202764, "created_at", 3.0, "sn", "tx"))  # rows may stop after the text
    assert len(b.flush()) == 1


def test_checked_rows_slice_and_concat_carry_the_entity_columns():
    b = _builder(True)
    for i in range(4):
        b.add(i, i + 1, 100 + i, -1, 7, 1539202764, "created_at", 3.0, None, None, f"t{i}", f"u{i}")
    c = b.checked()
    parts = [c.slice(0, 1), c.slice(1, 4)]
    assert parts[1].hashtags.tolist() == ["t1", "t2", "t3"]
    whole = CheckedRows.concat(parts)
    assert whole.hashtags.tolist() == ["t0", "t1", "t2", "t3"] and whole.urls.tolist() == ["u0", "u1", "u2", "u3"]
    t = _builder(True).commit(whole)
    assert t.hashtags.tolist() == ["t0", "t1", "t2", "t3"]
