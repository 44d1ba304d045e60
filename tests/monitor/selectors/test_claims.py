"""The tweet search (monitor/selectors/claims.py): how a query is read, what each kind of term finds (words, phrases,
hashtags, domains, URLs, OR, exclusions), the orders and the ways of reading the candidates. A claim's own reads are
in test_claim_reads.py. The collection is ``tests/claimed.py``'s (its table says which tweet has what)."""

from __future__ import annotations

import datetime as dt

import pytest

from monitor import selectors
from monitor.models import Tweet
from monitor.selectors.claims import QueryError, Term, parse_query


def found(ws, text, **kw) -> list[int]:
    hits = selectors.tweet_search(ws, text, **kw)
    assert hits.error is None, hits.error
    return [t.tweet_id for t in hits.rows]


def test_a_query_is_read_as_words_phrases_hashtags_domains_and_urls():
    q = parse_query('5G "Towers  Cause" #COVID19 domain:www.Example.com who.int https://www.example.com/Story/1/ -fake')
    assert q.clauses == (
        (Term("word", "5g"),),
        (Term("phrase", "towers cause"),),
        (Term("hashtag", "covid19"),),
        (Term("domain", "example.com"),),
        (Term("domain", "who.int"),),
        (Term("url", "example.com/story/1"),),
        (Term("word", "fake", negated=True),),
    )
    sql, params = q.tsquery()
    assert sql == (
        "(to_tsquery('simple', %s) && to_tsquery('simple', %s) && to_tsquery('simple', %s) && to_tsquery('simple', "
        "%s) && to_tsquery('simple', %s) && (%s::tsquery || %s::tsquery) && !!to_tsquery('simple', %s))"
    )
    assert params == ["'5g'", "'towers cause'", "'covid19':A", "'example.com':B", "'who.int':B",
                      "'example.com/story/1':*C", "'www.example.com/story/1':*C", "'fake'"]  # fmt: skip
    assert parse_query("vaccine OR vaccines autism").clauses == (
        (Term("word", "vaccine"), Term("word", "vaccines")),
        (Term("word", "autism"),),
    )


@pytest.mark.parametrize(
    "text, why",
    [
        ("", "type a word"),
        ("   ' ( ) ", "type a word"),
        ("-virus", "not excluded"),
        ("virus OR -towers", "cannot be an alternative"),
        (" ".join(f"w{i}" for i in range(17)), "at most 16 terms"),
    ],
)
def test_a_query_that_cannot_be_searched_says_why(text, why):
    with pytest.raises(QueryError, match=why):
        parse_query(text)


def test_quotes_and_operators_typed_in_a_term_cannot_break_the_search(claimed):
    assert found(claimed, "virus' | !towers") == found(claimed, "virus towers")
    assert found(claimed, "o'reilly") == []


@pytest.mark.parametrize(
    "text, tweets",
    [
        ("5g", {1, 2, 5}),  # any case; the word in the text or a hashtag
        ("#5G", {1, 2}),  # tweet 5 says 5G but has no such hashtag
        ("#covid19", {2, 5}),  # the CSV's hashtags in any case, with or without '#', comma-separated
        ('"towers cause"', {1, 3}),  # next to each other, in this order: not tweet 5's "Cause towers"
        ("towers cause", {1, 3, 5}),
        ("example.com", {1, 6}),  # the domain and its subdomains
        ("news.example.com", {1}),
        ("who.int", {4}),  # stored without www.
        ("https://example.com/story/1", {6}),  # an address that starts with it
        ("http://news.example.com/a?x=1&y=2", {1}),  # read up to the '&': still a prefix of tweet 1's link
        ("https://example.com/story/2", set()),
        ("https://example.com/st", {6}),
        ("virus -#5g", {3}),
        ("vaccines OR nothing", {3, 4, 6}),
        ("#5g OR who.int towers", {1, 2}),
        ("unicorns", set()),
    ],
)
def test_each_kind_of_term_finds_its_tweets(claimed, text, tweets):
    assert set(found(claimed, text)) == tweets


def test_the_orders_relevance_newest_oldest_and_reach(claimed):
    assert found(claimed, "5g", sort="newest") == [5, 2, 1]
    assert found(claimed, "5g", sort="oldest") == [1, 2, 5]
    assert found(claimed, "5g")[0] == 2  # 5G three times, and a hashtag
    reach = {t.tweet_id: t.reach for t in Tweet.objects.filter(workspace=claimed)}
    assert found(claimed, "5g", sort="reach") == sorted([1, 2, 5], key=lambda t: (-reach[t], -t))
    assert found(claimed, "5g", sort="newest", limit=1, offset=1) == [2]
    hits = selectors.tweet_search(claimed, "5g")
    assert (hits.total, hits.capped) == (3, False)


def test_the_search_is_bounded_to_a_window_and_labels(claimed):
    window = selectors.Window(dt.date(2020, 3, 2), dt.date(2020, 3, 2))
    assert set(found(claimed, "5g", window=window)) == {2}
    assert set(found(claimed, "5g", labels=["unverified"])) == {5}


def test_a_search_is_per_workspace(claimed, ws_b):
    assert found(ws_b, "5g") == []


def test_a_query_matching_more_than_the_candidates_ranks_the_newest(claimed, monkeypatch):
    monkeypatch.setattr("monitor.selectors.claims.CANDIDATES", 2)
    hits = selectors.tweet_search(claimed, "5g", sort="oldest")
    assert (hits.total, hits.capped) == (2, True)
    assert [t.tweet_id for t in hits.rows] == [1, 2, 5]  # time orders read the index: every match
    assert {t.tweet_id for t in selectors.tweet_search(claimed, "5g").rows} == {2, 5}  # the two newest


@pytest.mark.parametrize("sort", ["relevance", "reach"])
def test_the_three_ways_to_read_the_candidates_find_the_same(claimed, monkeypatch, sort):
    """The time index walked, the GIN index read whole and read in time slices give the same newest matches."""
    from django.db import connection

    monkeypatch.setattr("monitor.selectors.claims.CANDIDATES", 2)
    walked = [(t.tweet_id, hits.total) for hits in [selectors.tweet_search(claimed, "5g OR nothing", sort=sort)]
              for t in hits.rows]  # fmt: skip
    monkeypatch.setattr("monitor.selectors.claims.WALK_ROWS", -1)  # always too long: the GIN index
    whole = [(t.tweet_id, hits.total) for hits in [selectors.tweet_search(claimed, "5g OR nothing", sort=sort)]
             for t in hits.rows]  # fmt: skip
    monkeypatch.setattr("monitor.selectors.claims.GIN_ROWS", -1)  # and too many matches for it: slices
    monkeypatch.setattr("monitor.selectors.claims._first_days", lambda *a: 0.5)  # holds 2 matches, not 3: a next
    sliced = [(t.tweet_id, hits.total) for hits in [selectors.tweet_search(claimed, "5g OR nothing", sort=sort)]
              for t in hits.rows]  # fmt: skip
    assert sliced == whole == walked and {t for t, _ in walked} == {5, 6}
    with connection.cursor() as cur:
        cur.execute("SHOW enable_indexscan")
        assert cur.fetchone()[0] == "on"  # left as it was


def test_the_first_time_slice_is_sized_from_the_estimate_and_the_next_from_what_it_held(monkeypatch):
    """A search estimated at 152,000 of 10M tweets over two years reads its newest week (1.5 times the days of
    CANDIDATES + 1 matches), one at 10,000 is held to the days of SLICE_MAX_ROWS tweets; a slice that held too
    few is followed by one a quarter longer than that rate needs, at least twice as long."""
    from monitor.selectors import claims

    monkeypatch.setattr(claims, "CANDIDATES", 1_000)
    assert claims._first_days(152_000, 10_000_000, 730) == pytest.approx(730 * 1.5 * 1_001 / 152_000)  # 7.2 days
    assert claims._first_days(10_000, 10_000_000, 730) == pytest.approx(730 * 500_000 / 10_000_000)  # 36.5, not 110
    assert claims._first_days(10**7, 10_000_000, 730) == 1.0  # at least a day
    assert claims._first_days(1, 1, 0.0) == 1.0  # every tweet at one time
    assert claims._next_days(10.0, 500) == pytest.approx(10 * 1.25 * 1_001 / 500)  # 25 days
    assert claims._next_days(10.0, 900) == 20.0  # at least twice
    assert claims._next_days(10.0, 0) == 160.0


@pytest.mark.parametrize(
    ("labelled", "unlabelled", "sliced"),
    [
        (5_000, 100_000, True),  # the labelled matches dense enough for slices
        (2_003, 100_000, True),
        (2_002, 100_000, False),  # at most twice CANDIDATES + 1: the slices would reach back over half the time
        (500, 100_000, False),
        (5_000, 10_000, False),  # the words' own matches within GIN_ROWS: every one read at once
        (None, 100_000, True),  # no label: as before
    ],
)
def test_a_label_filtered_search_reads_the_gin_index_as_its_words_and_its_labels_need(
    claimed, monkeypatch, labelled, unlabelled, sliced
):
    """The GIN index knows no label: reading every match through it reads the rows of every match of the words,
    so that choice is made on the words' estimate, while the walk and the slices are sized from the labelled
    matches; labelled matches too few for slices to pay are read whole (estimates given here: 10M tweets over the
    collection's two days)."""
    from monitor.selectors import claims
    from monitor.selectors.windows import ALL_TIME

    def estimate(q):
        sql = str(q.query)
        if "search" not in sql and "REGEXP" not in sql.upper():
            return 10_000_000.0  # the workspace's tweets
        return float(labelled if labelled is not None and '"label" IN' in sql else unlabelled)

    monkeypatch.setattr(claims, "_estimate", estimate)
    monkeypatch.setattr(claims, "CANDIDATES", 1_000)
    query = parse_query("towers")
    words = claims.matching(claimed, query)
    qs = words.filter(label__in=["false", "true"]) if labelled is not None else words
    seen: list[str] = []

    def fetch(q):
        seen.append(str(q.query))
        return list(q.values_list("pk", "created_at", "created_at", "tweet_id"))

    by_label = words if labelled is not None else None
    newest = qs.order_by("-created_at", "-tweet_id")
    rows = claims._pool_by_index(claimed, query, qs, newest, fetch, ALL_TIME, by_label)
    assert [r[0] for r in rows] == list(newest.values_list("pk", flat=True))
    assert ('"monitor_tweet"."created_at" >' in seen[0]) is sliced


def test_a_url_is_read_in_time_slices_whatever_postgresqls_estimate_of_its_matches(claimed, monkeypatch):
    """PostgreSQL estimates a lexeme prefix from its most common lexemes only (8,782 for 25,751 matches at 10M
    tweets): a URL is never read through the GIN index whole, a word within GIN_ROWS is."""
    from monitor.selectors import claims
    from monitor.selectors.windows import ALL_TIME

    monkeypatch.setattr(claims, "WALK_ROWS", -1)  # never the walk
    monkeypatch.setattr(claims, "GIN_ROWS", 10**9)  # every estimate is within the GIN index's
    monkeypatch.setattr(claims, "SLICE_MAX_ROWS", 1)  # a slice of a day, not the two days of all six tweets
    for text, sliced in (("https://www.who.int/news", True), ("vaccines", False)):
        query = parse_query(text)
        qs = claims.matching(claimed, query)
        seen: list[str] = []

        def fetch(q, seen=seen):
            seen.append(str(q.query))
            return list(q.values_list("pk", "created_at", "created_at", "tweet_id"))

        rows = claims._pool_by_index(claimed, query, qs, qs.order_by("-created_at"), fetch, ALL_TIME)
        assert [r[0] for r in rows] == list(qs.order_by("-created_at").values_list("pk", flat=True))
        assert ('"monitor_tweet"."created_at" >' in seen[0]) is sliced, text
