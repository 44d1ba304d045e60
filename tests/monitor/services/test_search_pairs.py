"""The phrase search's index of common word pairs (``services.search_pairs``, migration 0039): which words it pairs,
when it is built, switched, kept and dropped, and that a search read through it finds exactly what the walk finds.
The collection is ``tests/claimed.py``'s; its six tweets stand for a large workspace by lowering the thresholds."""

from __future__ import annotations

import datetime as dt
import random

import psycopg
import pytest
from django.db import connection

from monitor import selectors, services
from monitor.models import SearchPairs, Workspace
from monitor.selectors import claims
from monitor.selectors.windows import ALL_TIME
from monitor.services import search_pairs
from tests.claimed import claimed_csv

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the pairs index is PostgreSQL's; SQLite searches without it"
)

#: a word in at least two of the six tweets is common here
SMALL = {"min_documents": 1, "sample": 100, "min_share": 0.3}


@pytest.fixture
def claimed(ws_a, import_files, tmp_path):
    import_files(ws_a, [claimed_csv(tmp_path / "tweets.csv")])
    return ws_a


def _one(sql: str, params=()):
    with connection.cursor() as cur:
        cur.execute(sql, params)
        return cur.fetchone()


def _index_of(ws) -> str:
    return SearchPairs.objects.get(workspace=ws).index_name


def _indexes() -> set[str]:
    with connection.cursor() as cur:
        cur.execute("SELECT indexname FROM pg_indexes WHERE indexname LIKE 'tweetdocument\\_pairs\\_%'")
        return {r[0] for r in cur.fetchall()}


#: 2020-03-01 00:00 UTC is in week 2617 since 1970-01-01 (a Thursday: weeks start on Thursdays)
MARCH_1 = "2020-03-01T00:00:00Z"


def test_the_pairs_of_a_document_are_its_adjacent_common_words_with_its_week(db):
    sql = "SELECT monitor_lexeme_pairs(to_tsvector('simple', %s), %s::timestamptz, '{a,b}')::text"
    assert _one(sql, ["a b c a b b a", MARCH_1]) == ("'a b@2617' 'b a@2617' 'b b@2617'",)  # no 'b c', 'c a'
    assert _one(sql, ["a c b", MARCH_1]) == ("",)
    assert _one(sql, ["a b", "2020-02-26T23:59:59Z"]) == ("'a b@2616'",)  # a Wednesday: the week before
    assert claims._week(dt.datetime(2020, 3, 1, tzinfo=dt.UTC)) == 2617
    assert claims._week(dt.datetime(2020, 2, 26, 23, 59, 59, tzinfo=dt.UTC)) == 2616


def test_a_pair_matches_exactly_the_documents_its_phrase_matches(db):
    """For random texts over a few words, ``pairs @@ 'x y@week'`` is ``search @@ 'x' <-> 'y'``, for every two common
    words: what lets the index answer a phrase (the search still tests the phrase on each document)."""
    rng = random.Random(7)
    words = ["al", "be", "co", "da", "ex"]
    common = ["al", "be", "co"]
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 9))) for _ in range(300)]
    with connection.cursor() as cur:
        for x in common:
            for y in common:
                cur.execute(
                    "SELECT count(*) FILTER (WHERE monitor_lexeme_pairs(d, %s::timestamptz, %s::text[]) @@ %s::tsquery "
                    "IS DISTINCT FROM d @@ to_tsquery('simple', %s)), "
                    "count(*) FILTER (WHERE d @@ to_tsquery('simple', %s)) "
                    "FROM (SELECT to_tsvector('simple', t) AS d FROM unnest(%s::text[]) t) s",
                    [MARCH_1, common, f"'{x} {y}@2617'", f"'{x} {y}'", f"'{x} {y}'", texts],
                )
                differ, matches = cur.fetchone()
                assert differ == 0 and matches > 0, (x, y)


def test_a_workspace_with_enough_documents_gets_an_index_of_its_common_words(claimed):
    out = services.search_pairs_refresh(workspace_id=claimed.pk, **SMALL)
    (done,) = out["workspaces"]
    assert done["action"] == "built"
    row = SearchPairs.objects.get(workspace=claimed)
    # in two or more of the six tweets' documents (text and hashtags; "5g" also as a hashtag)
    assert row.lexemes == sorted(row.lexemes) and {"towers", "cause", "virus", "the", "5g"} <= set(row.lexemes)
    assert "vaccines" not in row.lexemes  # in one tweet only
    assert row.index_name in _indexes() and search_pairs._index_valid(row.index_name)
    # no pending list for a search to read whole; no statistics for ANALYZE to compute
    assert _one("SELECT reloptions FROM pg_class WHERE relname = %s", [row.index_name]) == (["fastupdate=off"],)
    assert _one(
        "SELECT attstattarget FROM pg_attribute WHERE attrelid = %s::regclass AND attnum = 1", [row.index_name]
    ) == (0,)
    assert row.checked_version == Workspace.objects.get(pk=claimed.pk).data_version


def test_a_small_workspace_gets_none(claimed):
    out = services.search_pairs_refresh(workspace_id=claimed.pk)  # the defaults: 100,000 documents at least
    assert out["workspaces"][0]["action"] == "small"
    assert SearchPairs.objects.get(workspace=claimed).index_name == "" and not _indexes()
    assert claims._pairs_condition(claimed, claims.parse_query('"towers cause"')) is None


@pytest.mark.parametrize(
    "text",
    [
        '"towers cause"',  # tweets 1 and 3, not 5 ("Cause towers")
        '"cause towers"',
        '"the virus"',
        '"towers cause the virus"',  # a chain of three pairs: only tweet 1
        '"towers cause" OR "cause towers"',
        '"towers cause" -nothing',
        '"towers cause" virus',
        '"virus towers"',  # both common, never next to each other
    ],
)
@pytest.mark.parametrize("sort", ["relevance", "newest", "oldest", "reach"])
def test_a_phrase_of_common_words_is_read_through_the_index_and_finds_what_the_walk_finds(claimed, text, sort):
    query = claims.parse_query(text)
    walked = selectors.tweet_search(claimed, text, sort=sort)
    assert claims._pairs_condition(claimed, query) is None
    services.search_pairs_refresh(workspace_id=claimed.pk, **SMALL)
    assert claims._pairs_condition(claimed, query) is not None
    paired = selectors.tweet_search(claimed, text, sort=sort)
    assert [t.tweet_id for t in paired.rows] == [t.tweet_id for t in walked.rows]
    assert (paired.total, paired.capped) == (walked.total, walked.capped)


@pytest.mark.parametrize("sort", ["relevance", "reach"])
def test_the_index_is_read_in_time_slices_of_its_weeks_until_one_holds_enough(claimed, monkeypatch, sort):
    """With two candidates and a first slice of half a day: that slice (week 2617's pairs only) holds one of the
    query's three matches (tweet 5), the next, sized from it, two, and the last reaches past the oldest tweet and
    reads all time (the pairs in any week): the two newest, as the walk finds them."""
    from django.test.utils import CaptureQueriesContext

    text = '"cause towers" OR "towers cause"'  # tweets 1, 3 and 5
    monkeypatch.setattr(claims, "CANDIDATES", 2)
    monkeypatch.setattr(claims, "PAIRS_FIRST_DAYS", 0.5)
    walked = selectors.tweet_search(claimed, text, sort=sort)
    services.search_pairs_refresh(workspace_id=claimed.pk, **SMALL)
    with CaptureQueriesContext(connection) as ctx:
        paired = selectors.tweet_search(claimed, text, sort=sort)
    slices = [q["sql"] for q in ctx.captured_queries if "monitor_lexeme_pairs" in q["sql"]]
    assert len(slices) == 3
    # the six tweets are all of week 2617 (2020-02-27 to 03-04): the first two slices read its pairs, the last
    # reads the pairs of any week (a prefix)
    assert all("cause towers@2617''" in sql and "@2616" not in sql and ":*" not in sql for sql in slices[:2])
    assert "cause towers@'':*" in slices[2]
    assert {t.tweet_id for t in paired.rows} == {3, 5} and (paired.total, paired.capped) == (2, True)
    assert [t.tweet_id for t in paired.rows] == [t.tweet_id for t in walked.rows]
    with connection.cursor() as cur:
        cur.execute("SHOW max_parallel_workers_per_gather")
        assert cur.fetchone()[0] != "0"  # left as it was


@pytest.mark.parametrize("sort", ["relevance", "newest", "reach"])
def test_a_window_is_searched_through_the_index_as_by_the_walk(claimed, sort):
    window = selectors.Window(dt.date(2020, 3, 2), dt.date(2020, 3, 3))  # tweets 3 and 5 of the phrases' 1, 3, 5
    text = '"towers cause" OR "cause towers"'
    walked = selectors.tweet_search(claimed, text, sort=sort, window=window)
    services.search_pairs_refresh(workspace_id=claimed.pk, **SMALL)
    paired = selectors.tweet_search(claimed, text, sort=sort, window=window)
    assert {t.tweet_id for t in paired.rows} == {3, 5} and paired.total == 2
    assert [t.tweet_id for t in paired.rows] == [t.tweet_id for t in walked.rows]


@pytest.mark.parametrize("labels", [["false"], ["true", "unverified"], ["non-rumor"]])
@pytest.mark.parametrize("sort", ["relevance", "newest", "reach"])
def test_a_label_filtered_phrase_is_read_through_the_index_and_finds_what_the_walk_finds(claimed, labels, sort):
    """The API's label filter: the phrases match tweets 1 (false), 3 (true) and 5 (unverified); through the index
    only the candidates whose tweet has one of the labels count, as in the walk of the tweets."""
    from django.test.utils import CaptureQueriesContext

    text = '"towers cause" OR "cause towers"'
    walked = selectors.tweet_search(claimed, text, sort=sort, labels=labels)
    services.search_pairs_refresh(workspace_id=claimed.pk, **SMALL)
    with CaptureQueriesContext(connection) as ctx:
        paired = selectors.tweet_search(claimed, text, sort=sort, labels=labels)
    assert any("monitor_lexeme_pairs" in q["sql"] for q in ctx.captured_queries)
    expected = {"false": {1}, "true": {3}, "unverified": {5}, "non-rumor": set()}
    assert {t.tweet_id for t in paired.rows} == set().union(*(expected[label] for label in labels))
    assert all(t.label in labels for t in paired.rows)
    assert [t.tweet_id for t in paired.rows] == [t.tweet_id for t in walked.rows]
    assert (paired.total, paired.capped) == (walked.total, walked.capped)


def test_the_search_reads_the_index_postgresql_built(claimed):
    """The condition is the index's own expression (the same words, in the same order), so the planner reads the
    index instead of computing each document's pairs."""
    services.search_pairs_refresh(workspace_id=claimed.pk, **SMALL)
    query = claims.parse_query('"towers cause"')
    pairs = claims._pairs_condition(claimed, query)
    inner, where, params = claims._pairs_sql(claimed, query, ALL_TIME, pairs, range(2617, 2619), None)
    with connection.cursor() as cur:
        # six tweets: a scan of the table or of the time index would be cheaper; without them the only way left
        # is the pairs index, if the condition is its expression (the test's transaction is rolled back)
        cur.execute("SET LOCAL enable_seqscan = off")
        cur.execute("DROP INDEX tweetdocument_walk")
        cur.execute(f"EXPLAIN SELECT d.tweet_id FROM {inner} WHERE {where}", params)
        plan = "\n".join(r[0] for r in cur.fetchall())
    assert f"Bitmap Index Scan on {_index_of(claimed)}" in plan
    # read by its condition (the pairs), not only scanned whole for its rows (its predicate is the workspace)
    lines = [line.strip() for line in plan.splitlines()]
    assert any(line.startswith("Index Cond: (monitor_lexeme_pairs(") for line in lines), plan
    assert not any(line.startswith("Filter:") and "monitor_lexeme_pairs" in line for line in lines), plan


@pytest.mark.parametrize("text", ['"towers cause"', '"towers cause" OR "cause towers"', '"the virus" -nothing'])
def test_a_claims_reads_find_through_the_index_what_they_find_without_it(claimed, text):
    """A claim of a phrase of common words: its tweets, timeline, provenance, spreaders and publishers are the same
    read through the pairs index (its tweets' keys once, then the tweets by key) as through the search index, and
    its tweets' queryset still serves as a subquery."""
    from django.test.utils import CaptureQueriesContext

    from monitor.models import Retweet

    def reads():
        tweets = selectors.claim_tweets(claimed, text)
        return (
            sorted(tweets.values_list("tweet_id", flat=True)),
            Retweet.objects.filter(tweet__in=tweets.values("pk")).count(),
            selectors.claim_timeline.__wrapped__(claimed, text),
            selectors.claim_provenance.__wrapped__(claimed, text),
            selectors.claim_spreaders.__wrapped__(claimed, text),
            selectors.claim_publishers.__wrapped__(claimed, text),
        )

    searched = reads()
    services.search_pairs_refresh(workspace_id=claimed.pk, **SMALL)
    with CaptureQueriesContext(connection) as ctx:
        paired = reads()
    assert paired == searched and searched[0]
    assert any("monitor_lexeme_pairs" in q["sql"] for q in ctx.captured_queries)
    # every test of the query is made on the documents the pairs index found, none through the tweets' index
    assert all("monitor_lexeme_pairs" in q["sql"] for q in ctx.captured_queries if "search @@" in q["sql"])


def test_a_claim_too_broad_is_refused_through_the_index_too(claimed, monkeypatch):
    services.search_pairs_refresh(workspace_id=claimed.pk, **SMALL)
    monkeypatch.setattr(claims, "CLAIM_MAX_TWEETS", 1)  # "towers cause": tweets 1 and 3
    with pytest.raises(claims.ClaimTooBroad, match="more than 1 tweets"):
        selectors.claim_tweets(claimed, '"towers cause"')
    monkeypatch.setattr(claims, "CLAIM_MAX_TWEETS", 2)
    assert sorted(selectors.claim_tweets(claimed, '"towers cause"').values_list("tweet_id", flat=True)) == [1, 3]


def test_a_phrase_with_a_word_that_is_not_common_is_not_read_through_the_index(claimed):
    services.search_pairs_refresh(workspace_id=claimed.pk, **SMALL)
    for text in ('"vaccines are"', "towers", '"towers cause" OR vaccines', '-"towers cause" virus', "#5g"):
        assert claims._pairs_condition(claimed, claims.parse_query(text)) is None, text
    # a word PostgreSQL splits in two is a phrase of its parts (here both common)
    assert claims._chains(["towers-cause", "towers cause", "towers"]) == [
        ["towers-cause", "towers", "cause"],
        ["towers", "cause"],
        None,
    ]


def test_the_index_is_kept_while_no_word_becomes_common_and_switched_when_one_does(
    claimed, import_files, tmp_path, monkeypatch
):
    steps: list[str] = []
    monkeypatch.setattr(search_pairs.time, "sleep", lambda s: steps.append(f"wait {s}"))
    drop = search_pairs._drop
    monkeypatch.setattr(search_pairs, "_drop", lambda name: steps.append(f"drop {name}") or drop(name))
    services.search_pairs_refresh(workspace_id=claimed.pk, **SMALL)
    first = _index_of(claimed)
    out = services.search_pairs_refresh(workspace_id=claimed.pk, **SMALL)
    assert out["workspaces"][0]["action"] == "unchanged"  # the data did not change
    out = services.search_pairs_refresh(workspace_id=claimed.pk, force=True, **SMALL)
    assert out["workspaces"][0]["action"] == "kept" and _index_of(claimed) == first

    more = tmp_path / "more.csv"
    more.write_text(
        "tweet_id,retweeted_tweet_id,user_id,created_at,followers_count,screen_name,text\n"
        "7,,904,2020-03-04T08:00:00Z,10,pd,Vaccines are tested\n"
        "8,,904,2020-03-04T09:00:00Z,10,pd,vaccines are everywhere\n"
    )
    import_files(claimed, [more])
    out = services.search_pairs_refresh(workspace_id=claimed.pk, **SMALL)
    assert out["workspaces"][0]["action"] == "built"
    row = SearchPairs.objects.get(workspace=claimed)
    assert {"vaccines", "are", "towers"} <= set(row.lexemes)  # the old words stay: the set only grows
    assert row.index_name != first and _indexes() == {row.index_name}
    # the old index dropped a grace period after the row was switched (a search may have just read the old row)
    assert steps == [f"wait {search_pairs.SWITCH_GRACE_S}", f"drop {first}"]
    assert [t.tweet_id for t in selectors.tweet_search(claimed, '"vaccines are"', sort="newest").rows] == [8, 7, 4]


def test_an_index_no_workspace_names_is_dropped(claimed):
    services.search_pairs_refresh(workspace_id=claimed.pk, **SMALL)
    name = _index_of(claimed)
    SearchPairs.objects.filter(workspace=claimed).delete()  # as when the workspace is deleted
    out = services.search_pairs_refresh(workspace_id=-1)
    assert out["dropped"] == [name] and not _indexes()


def test_a_workspaces_index_can_be_dropped_and_the_search_walks_again(claimed):
    services.search_pairs_refresh(workspace_id=claimed.pk, **SMALL)
    name = _index_of(claimed)
    assert services.search_pairs_drop(workspace_id=claimed.pk) == name
    assert not _indexes() and not SearchPairs.objects.filter(workspace=claimed).exists()
    assert claims._pairs_condition(claimed, claims.parse_query('"towers cause"')) is None
    assert services.search_pairs_drop(workspace_id=claimed.pk) is None


def test_a_second_refresh_returns_while_one_runs(claimed):
    settings = connection.settings_dict
    with psycopg.connect(
        host=settings["HOST"] or "127.0.0.1", port=settings["PORT"] or 5432, user=settings["USER"],
        dbname=settings["NAME"], password=settings["PASSWORD"] or None, autocommit=True,
    ) as other:  # fmt: skip
        other.execute("SELECT pg_advisory_lock(%s, 0)", [search_pairs.PAIRS_LOCK_CLASS])
        out = services.search_pairs_refresh(workspace_id=claimed.pk, **SMALL)
    assert out == {"skipped": "another refresh is running"}
    assert not SearchPairs.objects.filter(workspace=claimed).exists()


def test_the_refresh_runs_on_beat_beside_the_imports(settings):
    from monitor.tasks import search_pairs_refresh

    entry = [e for e in settings.CELERY_BEAT_SCHEDULE.values() if e["task"] == search_pairs_refresh.name]
    assert entry and entry[0]["schedule"] >= 60
    assert settings.CELERY_TASK_ROUTES[search_pairs_refresh.name] == {"queue": "ingest"}
