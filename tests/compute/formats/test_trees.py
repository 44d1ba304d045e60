from __future__ import annotations

import ast
from collections import Counter

import numpy as np
import pytest

from compute.formats import InputError, iter_follows, iter_tweets, read
from compute.formats.timeparse import snowflake_time
from compute.formats.trees import RETWEET_ID
from compute.tables import concat_follows, concat_tweets

from .conftest import TWITTER16

SRC1, SRC2 = 1050118621198921728, 1050121000000000000


def test_it_reads_a_tree_folder(fdata):
    res = read("trees/good")
    t = res.tweets
    assert res.format == "trees" and res.report.n_bad == 0
    assert t.tweet_id.tolist() == [SRC1, RETWEET_ID, RETWEET_ID, RETWEET_ID, SRC2, RETWEET_ID]
    assert t.retweeted_tweet_id.tolist() == [-1, SRC1, SRC1, SRC1, -1, SRC2]
    assert t.user_id.tolist() == [100, 101, 102, 103, 200, 201]
    t1 = snowflake_time(SRC1)
    # 103 appears at delays 1.0 and 3.0: the smallest wins, even though it is before its parent's 1.5
    np.testing.assert_allclose(t.created_at[:4], t1 + 60 * np.array([0, 1.5, 2.0, 1.0]))
    assert np.isnan(t.followers_count).all()
    # child follows parent; the self line 101 -> 101 gives nothing
    f = res.follows
    assert list(zip(f.follower_id.tolist(), f.followee_id.tolist())) == [
        (101, 100),
        (102, 100),
        (103, 101),
        (103, 102),
        (201, 200),
    ]
    assert res.labels == {SRC1: "false", SRC2: "non-rumor"}
    assert res.report.n_good == 8 + 2  # tree lines + label lines


def test_it_reads_a_single_tree_file(fdata):
    res = read("trees/good/tree/1050121000000000000.txt")
    assert res.format == "trees" and res.tweets.user_id.tolist() == [200, 201]
    assert res.labels == {SRC1: "false", SRC2: "non-rumor"}  # label.txt beside tree/ is found


def test_it_names_malformed_tree_lines_in_strict_mode(fdata):
    with pytest.raises(InputError, match=r"^trees/bad/label.txt:2: malformed label line"):
        read("trees/bad")


def test_it_skips_malformed_lines_and_unusable_trees(fdata):
    res = read("trees/bad", mode="skip-bad")
    assert [str(r) for r in res.report.shown] == [
        "trees/bad/label.txt:2: malformed label line (want label:source_id): 'this line has no colon'",
        "trees/bad/tree/1050118621198921728.txt:6: field 'parent.delay': not a number: 'x'",
        "trees/bad/tree/1050118621198921728.txt:7: malformed tree line: 'garbage line'",
        "trees/bad/tree/1050121000000000000.txt: no ROOT line: the tree names no publisher",
        "trees/bad/tree/not_an_id.txt: tree file name is not a tweet id: 'not_an_id.txt'",
    ]
    # the first tree survives without its bad line (103 is still reached through 101)
    assert res.tweets.user_id.tolist() == [100, 101, 102, 103]
    assert res.labels == {SRC1: "false"}


def _oracle(path):
    """What a tree file should give, computed the slow obvious way."""
    source = int(path.stem)
    delay, order, follows = {}, [], []
    publisher = None
    for line in path.read_text().splitlines():
        parent, child = (ast.literal_eval(x) for x in line.split("->"))
        if parent[0] == "ROOT":
            publisher = int(child[0])
        for node in ([] if parent[0] == "ROOT" else [parent]) + [child]:
            uid, d = int(node[0]), float(node[2])
            if uid not in delay:
                order.append(uid)
            delay[uid] = min(delay.get(uid, d), d)
        if parent[0] != "ROOT" and parent[0] != child[0]:
            follows.append((int(child[0]), int(parent[0])))
    order.remove(publisher)
    return source, publisher, [publisher, *order], delay, follows


def test_it_reads_the_twitter16_sample_without_errors():
    res = read(TWITTER16)
    assert res.report.n_bad == 0
    files = sorted((TWITTER16 / "tree").glob("*.txt"))
    assert len(files) == 20
    t = res.tweets
    assert (t.retweeted_tweet_id == -1).sum() == 20
    assert Counter(res.labels.values()) == Counter({"unverified": 6, "true": 7, "false": 6, "non-rumor": 1})
    assert set(res.labels) == {int(f.stem) for f in files}
    pos = 0
    n_follows = 0
    for f in files:
        source, publisher, users, delay, follows = _oracle(f)
        n = len(users)
        rows = slice(pos, pos + n)
        assert t.tweet_id[pos] == source and t.user_id[pos] == publisher
        assert t.user_id[rows].tolist() == users
        assert (t.retweeted_tweet_id[pos + 1 : pos + n] == source).all()
        np.testing.assert_allclose(
            t.created_at[rows], snowflake_time(source) + 60 * np.array([delay[u] for u in users])
        )
        n_follows += len(follows)
        pos += n
    assert pos == len(t) and n_follows == len(res.follows)


def test_it_keeps_the_messy_parts_of_real_trees():
    """Backward-in-time lines, ties and self lines are data, not errors; dates are the snowflake dates."""
    res = read(TWITTER16)
    t = res.tweets
    originals = t.retweeted_tweet_id == -1
    years = [np.datetime64(int(s), "s").astype(object).year for s in t.created_at[originals]]
    assert min(years) >= 2014 and max(years) <= 2016
    # 692665281362202624.txt: the ROOT child has delay -4.7, the cascade began with an earlier tweet
    k = int(np.flatnonzero(t.tweet_id == 692665281362202624)[0])
    assert t.created_at[k] == pytest.approx(snowflake_time(692665281362202624) - 4.7 * 60)
    assert t.created_at[k] == pytest.approx(snowflake_time(692664097125601281), abs=1)  # the ROOT child's own id
    retweets = t.retweeted_tweet_id == 692665281362202624
    assert (t.created_at[retweets] >= t.created_at[k]).all()
    # a backward line (500378223977721856.txt:68, parent at 16.7 min, child at 11.0): both kept, edge kept
    line = (TWITTER16 / "tree" / "500378223977721856.txt").read_text().splitlines()[67]
    assert line == "['244033117', '500382426909392896', '16.7']->['66591925', '500380991035559937', '11.0']"
    src = 500378223977721856
    u = (t.retweeted_tweet_id == src) & (t.user_id == 66591925)
    assert t.created_at[u][0] == pytest.approx(snowflake_time(src) + 11.0 * 60)
    f = res.follows
    assert ((f.follower_id == 66591925) & (f.followee_id == 244033117)).any()
    # self lines give no follow edge
    assert not (f.follower_id == f.followee_id).any()


def test_it_streams_tweets_and_follows_separately():
    tweets = concat_tweets(list(iter_tweets(TWITTER16, chunk_size=500)))
    follows = concat_follows(list(iter_follows(TWITTER16, chunk_size=700)))
    whole = read(TWITTER16)
    assert np.array_equal(tweets.user_id, whole.tweets.user_id)
    assert np.array_equal(follows.follower_id, whole.follows.follower_id)
