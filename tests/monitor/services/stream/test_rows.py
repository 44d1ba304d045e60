"""The tweet rows kept beside a stream body (monitor.services.stream._rows): what the intake encodes is what the
consumer decodes, an unknown count stays unknown, a retweet's text is not kept, records stay apart."""

from __future__ import annotations

import math

import numpy as np
import pytest

from compute.tables import NO_TWEET, TweetTable
from monitor.services.stream import _rows


def _table(rows):
    cols = list(zip(*rows))
    obj = [np.array(c, dtype=object) for c in cols[6:]]  # screen name, text (cols[5]: the id field)
    return TweetTable(*(np.array(c) for c in cols[:5]), screen_name=obj[0], text=obj[1])


def _encode(rows):
    """One record's rows, as the intake stores them."""
    return _rows.encode_runs(np.zeros(len(rows), np.int64), _table(rows), [r[5] for r in rows])[1][0]


ORIGINAL = (7, NO_TWEET, 5, 1_577_836_800.0, 12.0, "retweeted_status.id_str", "alice", "the claim")
RETWEET = (8, 7, 9, 1_577_836_860.5, math.nan, "id_str", None, "RT @alice: the claim")


def test_decoding_gives_back_the_rows_of_each_record_in_order():
    texts = [_encode([RETWEET, ORIGINAL]), _encode([ORIGINAL])]
    table, fields = _rows.decode(texts)
    assert table.lines.tolist() == [0, 0, 1]
    assert table.tweet_id.tolist() == [8, 7, 7]
    assert table.retweeted_tweet_id.tolist() == [7, NO_TWEET, NO_TWEET]
    assert table.created_at.tolist() == [1_577_836_860.5, 1_577_836_800.0, 1_577_836_800.0]
    assert math.isnan(table.followers_count[0]) and table.followers_count[1:].tolist() == [12.0, 12.0]
    assert list(table.screen_name) == [None, "alice", "alice"]
    assert list(table.text) == [None, "the claim", "the claim"]  # a retweet's text is not kept
    assert fields == ["id_str", "retweeted_status.id_str", "retweeted_status.id_str"]


def test_encoding_the_runs_of_a_table_equals_encoding_each_record_alone():
    rows = [RETWEET, ORIGINAL, ORIGINAL, (9, NO_TWEET, 4, 1.5e9, 0.0, "id_str", "bob", 'say "hi"\n')]
    keys = np.array([3, 3, 4, 6])
    got_keys, texts = _rows.encode_runs(keys, _table(rows), [r[5] for r in rows])
    assert got_keys == [3, 4, 6]
    assert texts == [_encode(rows[:2]), _encode(rows[2:3]), _encode(rows[3:])]
    assert _rows.encode_runs(np.zeros(0, np.int64), TweetTable.empty(), []) == ([], [])


def test_text_that_is_not_rows_in_this_layout_is_refused_naming_each_such_record():
    good = _encode([ORIGINAL])
    with pytest.raises(_rows.UnreadableRows) as e:
        _rows.decode([good, '{"layout": 2}', good, "[[1, 2]]", "not json", f"{good},{good}"])
    assert e.value.indices == [1, 3, 4, 5]
    with pytest.raises(_rows.UnreadableRows) as e:  # only the count gives this one away
        _rows.decode([f"{good},{good}", good])
    assert e.value.indices == [0]


def test_an_originals_hashtags_and_links_are_kept_and_a_retweets_are_not():
    rows = [RETWEET, ORIGINAL]
    table = _table(rows)
    table.hashtags = np.array(["ignored", "5g vaccine"], dtype=object)
    table.urls = np.array([None, "https://example.com/a"], dtype=object)
    _keys, texts = _rows.encode_runs(np.zeros(2, np.int64), table, [r[5] for r in rows])
    got, _fields = _rows.decode(texts)
    assert list(got.hashtags) == [None, "5g vaccine"]
    assert list(got.urls) == [None, "https://example.com/a"]


def test_rows_stored_before_the_entities_are_read_without_them_beside_todays():
    old = '[[7,-1,5,1577836800.0,12.0,"id_str","alice","the claim"]]'  # eight columns: no hashtags, no urls
    table, fields = _rows.decode([_encode([RETWEET]), old])
    assert table.tweet_id.tolist() == [8, 7] and table.lines.tolist() == [0, 1]
    assert list(table.text) == [None, "the claim"] and fields == ["id_str", "id_str"]
    assert list(table.hashtags) == [None, None] and list(table.urls) == [None, None]
