"""The tweet search and the claims built on it: what a query means, the tweets it finds, and a claim's tweets (a
claim page's reads of them, its timeline, spreaders and publishers, are ``selectors.claim_reads``).

**The query language** (what the search box and a claim's query take): terms separated by spaces, all of which
a tweet must match; ``OR`` between two terms makes them alternatives (``vaccine OR vaccines autism`` is
(vaccine or vaccines) and autism); a leading ``-`` excludes a term.

* a word: a word of the tweet's text or a hashtag (case does not matter; words are matched whole, not stemmed);
* ``"a phrase"``: these words next to each other, in this order;
* ``#hashtag``: a hashtag of the tweet (from the upload's entities);
* a domain (``example.com``, or ``domain:example.com``): a link to that site or any of its subdomains;
* a URL (``https://example.com/story``): a link whose address starts with it (scheme and ``www.`` aside).

**On PostgreSQL** the tweets carry a stored ``tsvector`` (migration ``0035``: hashtags weighted A, domains B, the
links C, text unweighted; the ``simple`` configuration, so that every language is split the same way and nothing
is stemmed or dropped as a stop word) with a GIN index, and a query becomes one ``tsquery``. Relevance
(``ts_rank_cd``) and reach rank the :data:`CANDIDATES` newest matches, read with what orders them in one statement
and ranked here; a query matching more says so (``capped``), and counts stop there too. Newest and oldest first
page through every match. **On SQLite** (the embedded default) the same terms are matched by regular expressions
over the columns, and relevance is how often the terms occur, then time: the same tweets, but a scan of the
workspace's (fine for the demo's thousands, not for millions).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import itertools
import json
import re
from dataclasses import dataclass, field

from django.db import connection
from django.db.models import Max, Min, Q, QuerySet
from django.db.models.expressions import RawSQL

from compute.entities import host_of

from ..cache import cached
from ..db import int_array_param
from ..models import Claim, SearchPairs, Tweet, TweetDocument, Workspace
from .windows import ALL_TIME, Window

#: the matches ranked by relevance or reach (the newest ones), and the most a search counts: bounds a common
#: word's cost whatever the workspace (benchmarks/claims.md)
CANDIDATES = 1_000
#: the most tweets a claim's timeline, spreaders and publishers read; a broader query is refused with this number
CLAIM_MAX_TWEETS = 100_000
SORTS = ("relevance", "newest", "oldest", "reach")


def claims_sorts() -> tuple[str, ...]:
    """The orders the tweet search offers."""
    return SORTS


MAX_TERMS = 16
#: characters that are never part of a term (quotes are handled by the tokenizer)
_STRIP = re.compile(r"[\\'()&|!<>:*]")
_TOKEN = re.compile(r'(-?)"([^"]*)"?|(\S+)')
_DOMAIN = re.compile(r"^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z][a-z0-9-]*[a-z0-9]$")


class QueryError(ValueError):
    """The query cannot be searched; the message says why, for the person who typed it."""


@dataclass(frozen=True)
class Term:
    kind: str  # word, phrase, hashtag, domain, url
    value: str  # normalised: lowercased; a domain without "www."; a URL without its scheme
    negated: bool = False

    def __str__(self) -> str:
        text = {"phrase": f'"{self.value}"', "hashtag": f"#{self.value}"}.get(self.kind, self.value)
        return f"-{text}" if self.negated else text


@dataclass(frozen=True)
class Query:
    """A parsed query: every clause must match; a clause is one term or alternatives joined by ``OR``."""

    text: str
    clauses: tuple[tuple[Term, ...], ...]

    def tsquery(self) -> tuple[str, list[str]]:
        """The query as a PostgreSQL ``tsquery`` expression and its parameters. Each term but a URL goes through
        ``to_tsquery('simple', ...)`` quoted, so that PostgreSQL's parser splits it as it split the tweets;
        hashtags are restricted to weight A and domains to weight B. A URL is one lexeme prefix of weight C,
        written as a ``tsquery`` literal: through the parser it would become a phrase of its address, host and
        path, and the host's prefix matches every link of the site (a search of one article on a site of 595K
        links read them all: benchmarks/claims.md)."""
        clauses, params = [], []
        for clause in self.clauses:
            terms = []
            for t in clause:
                sql, p = _ts_term(t)
                terms.append(sql)
                params += p
            clauses.append("(" + " || ".join(terms) + ")" if len(terms) > 1 else terms[0])
        return "(" + " && ".join(clauses) + ")", params

    def describe(self) -> str:
        """The query as it was understood, for the page ("#vaccine and (5g or towers)")."""
        parts = [" or ".join(f"{t.kind} {t}" for t in clause) for clause in self.clauses]
        return " and ".join(f"({p})" if " or " in p and len(parts) > 1 else p for p in parts)


def _ts_term(t: Term) -> tuple[str, list[str]]:
    if t.kind == "url":  # an address that starts with it, with or without www. (the parser drops the scheme)
        sql, params = "(%s::tsquery || %s::tsquery)", [f"'{t.value}':*C", f"'www.{t.value}':*C"]
    else:
        weight = {"hashtag": ":A", "domain": ":B"}.get(t.kind, "")
        sql, params = "to_tsquery('simple', %s)", [f"'{t.value}'{weight}"]
    return ("!!" + sql if t.negated else sql), params


def _term(negated: bool, raw: str, quoted: bool) -> Term | None:
    if quoted:
        value = " ".join(_STRIP.sub(" ", raw).lower().split())
        return Term("phrase", value, negated) if value else None
    low = raw.lower()
    if low.startswith("#"):
        value = _STRIP.sub("", low.lstrip("#"))
        return Term("hashtag", value, negated) if value else None
    if low.startswith(("http://", "https://")):
        host = host_of(low)
        if host is None:
            return None
        rest = low.split("://", 1)[1]
        rest = rest[4:] if rest.startswith("www.") else rest
        # up to the first character the query syntax would read (a port, a query string's '&'): still a prefix
        rest = _STRIP.split(rest, maxsplit=1)[0].rstrip("/")
        return Term("url", rest, negated) if rest else None
    if low.startswith("domain:"):
        low = low[len("domain:") :]
        host = host_of(low)
        return Term("domain", host, negated) if host else None
    if _DOMAIN.match(low):
        host = host_of(low)
        if host:
            return Term("domain", host, negated)
    value = _STRIP.sub(" ", low).strip(' .,;?"')
    value = " ".join(value.split())
    if not value:
        return None
    return Term("phrase" if " " in value else "word", value, negated)


def parse_query(text: str) -> Query:
    """``text`` as a :class:`Query`; :class:`QueryError` when nothing in it can be searched for."""
    text = (text or "").strip()
    clauses: list[list[Term]] = []
    join_next = False
    n = 0
    for m in _TOKEN.finditer(text):
        neg_quoted, quoted, bare = m.group(1), m.group(2), m.group(3)
        if bare is not None and bare == "OR":
            join_next = bool(clauses)
            continue
        if quoted is not None:
            term = _term(bool(neg_quoted), quoted, True)
        else:
            negated = bare.startswith("-") and len(bare) > 1
            term = _term(negated, bare[1:] if negated else bare, False)
        if term is None:
            continue
        n += 1
        if n > MAX_TERMS:
            raise QueryError(f"a search takes at most {MAX_TERMS} terms")
        if join_next and clauses:
            clauses[-1].append(term)
        else:
            clauses.append([term])
        join_next = False
    if not clauses:
        raise QueryError('type a word, a "phrase", a #hashtag, a domain or a URL to search for')
    if all(all(t.negated for t in c) for c in clauses):
        raise QueryError("a search needs at least one term that is not excluded with '-'")
    for clause in clauses:
        if len(clause) > 1 and any(t.negated for t in clause):
            raise QueryError("an excluded term ('-') cannot be an alternative of OR")
    return Query(text=text, clauses=tuple(tuple(c) for c in clauses))


# --- matching ------------------------------------------------------------------------------------------------


def _postgres() -> bool:
    return connection.vendor == "postgresql"


def _url_pattern(value: str) -> str:
    """A link whose address starts with ``value`` (scheme and www. aside), as a regular expression."""
    return rf"(^| )([a-z]+://)?(www\.)?{re.escape(value)}"


def _listed(value: str) -> str:
    """One value of a space-separated column (hashtags, domains), as a regular expression."""
    return rf"(^| ){re.escape(value)}( |$)"


def _regex_q(t: Term) -> Q:
    """A term as a Django condition (the SQLite search)."""
    if t.kind == "hashtag":
        return Q(hashtags__iregex=_listed(t.value))
    if t.kind == "domain":
        return Q(domains__iregex=_listed(t.value))
    if t.kind == "url":
        return Q(urls__iregex=_url_pattern(t.value))
    q = Q(text__iregex=_word_pattern(t.value))
    if t.kind == "word":
        q |= Q(hashtags__iregex=_listed(t.value))
    return q


def _clause_q(clause: tuple[Term, ...]) -> Q:
    q = Q()
    for t in clause:
        q |= _regex_q(t)
    return ~q if clause[0].negated else q


def matching(ws: Workspace, query: Query) -> QuerySet:
    """The workspace's tweets ``query`` matches, unordered (a queryset, so it can be a subquery)."""
    qs = Tweet.objects.filter(workspace=ws)
    if _postgres():
        sql, params = query.tsquery()
        return qs.extra(where=[f"search @@ {sql}"], params=params)
    for clause in query.clauses:
        qs = qs.filter(_clause_q(clause))
    return qs


def _word_pattern(value: str) -> str:
    """A word or phrase as a regular expression: whole words, any run of non-word characters between them."""
    return r"(^|\W)" + r"\W+".join(re.escape(w) for w in value.split()) + r"(\W|$)"


def _score(tweet: Tweet, query: Query) -> int:
    """Relevance where there is no full-text index (SQLite): how often the positive terms occur in the text, a
    hashtag, domain or URL counting once."""
    text, tags, domains = tweet.text.lower(), tweet.hashtags.split(), tweet.domains.split()
    score = 0
    for clause in query.clauses:
        for t in clause:
            if t.negated:
                continue
            if t.kind == "hashtag":
                score += t.value in tags
            elif t.kind == "domain":
                score += t.value in domains
            elif t.kind == "url":
                score += re.search(_url_pattern(t.value), tweet.urls.lower()) is not None
            else:
                # lookarounds, so that neighbouring occurrences ("5G. 5G") are all counted
                score += len(re.findall(r"(?<!\w)" + r"\W+".join(map(re.escape, t.value.split())) + r"(?!\w)", text))
                score += t.kind == "word" and t.value in tags
    return score


# --- the search page -----------------------------------------------------------------------------------------


@dataclass
class TweetHits:
    query: Query | None
    sort: str
    rows: list[Tweet] = field(default_factory=list)
    total: int = 0  # matches, up to CANDIDATES + 1
    capped: bool = False  # more than CANDIDATES match: ranked among the newest CANDIDATES
    error: str | None = None


_ONLY = ("tweet_id", "created_at", "label", "text", "hashtags", "urls", "domains", "reach", "n_participants",
         "compute_status", "author__twitter_id", "author__screen_name")  # fmt: skip


def tweet_search(
    ws: Workspace,
    text: str,
    *,
    sort: str = "relevance",
    window: Window = ALL_TIME,
    labels: list[str] | None = None,
    limit: int = 20,
    offset: int = 0,
) -> TweetHits:
    """A page of the tweets ``text`` finds (see the module's docstring), sorted by ``sort`` (:data:`SORTS`)."""
    if sort not in SORTS:
        raise ValueError(f"sort must be one of {', '.join(SORTS)}")
    try:
        query = parse_query(text)
    except QueryError as e:
        return TweetHits(query=None, sort=sort, error=str(e))
    qs = unlabelled = matching(ws, query).filter(window.filter("created_at__date"))
    if labels:
        qs = qs.filter(label__in=labels)
    pairs = _pairs_condition(ws, query) if _postgres() else None
    if sort in ("newest", "oldest"):
        if pairs is not None:  # a phrase of common words: its matches through the workspace's pairs index
            total = _pairs_count(ws, query, window, pairs, CANDIDATES + 1, labels)
        else:
            # counted through the tweets' table, not the documents': the capped count of a phrase of common words
            # tests about as many tweets either way, and the choice cost two estimates (benchmarks/claims.md)
            total = qs.order_by()[: CANDIDATES + 1].count()
        order = ("-created_at", "-tweet_id") if sort == "newest" else ("created_at", "tweet_id")
        rows = list(qs.select_related("author").only(*_ONLY).order_by(*order)[offset : offset + limit])
    else:
        # the newest CANDIDATES + 1 matches with what orders them, in one statement; ranked here (a thousand rows)
        newest = qs.order_by("-created_at", "-tweet_id")

        def fetch(q: QuerySet) -> list[tuple]:
            """(pk, what orders it, time, tweet id) of the newest CANDIDATES + 1 tweets of ``q``."""
            if sort == "reach":
                rows = q.values_list("pk", "reach", "created_at", "tweet_id")[: CANDIDATES + 1]
                return [(pk, -1.0 if r is None else r, at, tid) for pk, r, at, tid in rows]
            if _postgres():
                newest_docs = q.extra(select={"doc": "search"})
                inner = newest_docs.values_list("pk", "doc", "created_at", "tweet_id")[: CANDIDATES + 1]
                return _ranked(*inner.query.sql_with_params(), query)
            tweets = q.select_related("author").only(*_ONLY)[: CANDIDATES + 1]
            return [(t.pk, _score(t, query), t.created_at, t.tweet_id) for t in tweets]

        if pairs is not None:  # a phrase of common words: its matches through the workspace's pairs index
            pool = _pairs_pool(ws, query, sort, window, pairs, labels)
        else:
            by_label = unlabelled if labels else None
            pool = _pool_by_index(ws, query, qs, newest, fetch, window, by_label) if _postgres() else None
        if pool is None:
            # the walk: through the documents' table on PostgreSQL, unless the labels need the tweets' rows
            pool = _walk_documents(ws, query, sort, window) if _postgres() and not labels else fetch(newest)
        total = len(pool)
        pool = pool[:CANDIDATES]
        pool.sort(key=lambda r: (-r[1], -r[2].timestamp(), -r[3]))
        page = [r[0] for r in pool[offset : offset + limit]]
        found = Tweet.objects.select_related("author").only(*_ONLY).in_bulk(page)
        rows = [found[pk] for pk in page]
    return TweetHits(query=query, sort=sort, rows=rows, total=min(total, CANDIDATES), capped=total > CANDIDATES)


# --- the candidates of a search, on PostgreSQL -----------------------------------------------------------------
#
# The newest CANDIDATES + 1 matches can be read three ways, and each is fast for some searches only (measured at
# 10M tweets, benchmarks/claims.md):
# * walking the time index backwards, testing each tweet: a few thousand rows for a common word, but hundreds of
#   thousands, in random order, for a search matching a few per cent (450-660 ms for an OR or a phrase);
# * every match through the GIN index, then the newest kept: right for up to some ten thousand matches (an AND of
#   two words: 53 ms), slow beyond (every match's row is read);
# * time slices back from the newest tweet, each by the GIN index and the time index together (a BitmapAnd): the
#   first sized from the estimate to hold enough matches, a next one (sized from what the last held) only where it
#   did not (an OR of 41K matches: 41 ms for its newest 27 days at 10M, where a week then a month took 58). The
#   newest CANDIDATES + 1 of such a slice are the newest of all: the same answer.
# The planner's estimate of the matches picks the way; for the last two the index walk is disabled for the
# statement, so that the planner cannot take it after all.

#: the rows the walk may read (about 100 ms of random reads at 10M); beyond, the GIN index is used
WALK_ROWS = 50_000
#: the matches read whole through the GIN index; beyond, time slices
GIN_ROWS = 20_000
#: the first time slice is sized to hold this many times CANDIDATES + 1 matches, were the estimated matches spread
#: evenly over the workspace's time span ...
SLICE_MARGIN = 1.5
#: ... within these bounds: at least a day, and at most the days of this many tweets (the time index's bitmap
#: costs about 65 ns a tweet at 10M: 27 ms for a month's 412,000)
SLICE_MIN_DAYS = 1.0
SLICE_MAX_ROWS = 500_000


def _estimate(qs: QuerySet) -> float:
    """PostgreSQL's estimate of the rows ``qs`` matches (its plan's top row count)."""
    sql, params = qs.order_by().values("pk").query.sql_with_params()
    with connection.cursor() as cur:
        cur.execute("EXPLAIN (FORMAT JSON) " + sql, params)
        plan = cur.fetchone()[0]
    plan = json.loads(plan) if isinstance(plan, str) else plan
    return float(plan[0]["Plan"]["Plan Rows"])


def _next_days(days: float, found: int) -> float:
    """The next time slice's length, after a slice of ``days`` held ``found`` matches (fewer than CANDIDATES + 1):
    a quarter more than it takes to reach CANDIDATES + 1 at that rate, and at least twice as long (16 times when
    it held none)."""
    return days * max(2.0, 1.25 * (CANDIDATES + 1) / found) if found else days * 16


def _first_days(matches: float, tweets: float, span_days: float) -> float:
    """The first time slice's length in days for a search PostgreSQL estimates at ``matches`` of the ``tweets``
    spread over ``span_days``: :data:`SLICE_MARGIN` times the days that hold CANDIDATES + 1 matches at that rate,
    within :data:`SLICE_MIN_DAYS` and the days of :data:`SLICE_MAX_ROWS` tweets."""
    wanted = span_days * SLICE_MARGIN * (CANDIDATES + 1) / matches
    most = span_days * SLICE_MAX_ROWS / max(tweets, 1.0)
    return max(SLICE_MIN_DAYS, min(wanted, most))


def _pool_by_index(
    ws: Workspace,
    query: Query,
    qs: QuerySet,
    newest: QuerySet,
    fetch,
    window: Window,
    unlabelled: QuerySet | None = None,
) -> list | None:
    """``fetch``'s rows of the newest matches read through the GIN index (whole, or slice by slice); None where
    the walk of the time index is the cheap way (see above), or the window holds no tweet. ``unlabelled`` is ``qs``
    without its label filter, if it has one: the GIN index knows no label, so reading every
    match through it reads the rows of every match of the words, labelled or not (a common word filtered by one
    label at 1M tweets: 108,420 rows for 5,400 matches, 246 ms), while the walk and the slices are sized from the
    labelled matches."""
    matches = max(_estimate(qs), 1.0)
    tweets = _estimate(Tweet.objects.filter(workspace=ws))
    if (CANDIDATES + 1) * tweets / matches <= WALK_ROWS:
        return None
    # a URL is a lexeme prefix, whose matches PostgreSQL estimates from its most common lexemes only: 8,782 for
    # 25,751 at 10M tweets, and reading them all through the GIN index took 160 ms where the slices take 60
    prefix = any(t.kind == "url" and not t.negated for clause in query.clauses for t in clause)
    # with a label: so few labelled matches that the slices would reach back over half of the time, or all of it,
    # reading the rows of the first slices again: every match at once (an excluded word filtered by one label at
    # 1M tweets: 88 ms whole against 145 ms in slices)
    sparse = unlabelled is not None and matches <= 2 * (CANDIDATES + 1)
    if not prefix and (sparse or (matches if unlabelled is None else _estimate(unlabelled)) <= GIN_ROWS):
        with _no_walk():
            return fetch(newest)
    span = Tweet.objects.filter(Q(workspace=ws) & window.filter("created_at__date")).aggregate(
        first=Min("created_at"), last=Max("created_at")
    )
    if span["last"] is None:
        return None
    # slices back from the newest tweet: the first sized from the estimate (usually the only one: a domain in 1.5 %
    # of 10M tweets reads its newest 7 days, an OR of 41,000 matches its newest 27), each next one from the
    # matches the last held; a slice reaching back past the oldest tweet reads all time
    days = _first_days(matches, tweets, (span["last"] - span["first"]).total_seconds() / 86_400)
    rows: list = []
    with _no_walk():
        while True:
            after = span["last"] - dt.timedelta(days=days)
            rows = fetch(newest if after < span["first"] else newest.filter(created_at__gt=after))
            if len(rows) > CANDIDATES or after < span["first"]:
                return rows
            days = _next_days(days, len(rows))


@contextlib.contextmanager
def _settings(*settings: str):
    """PostgreSQL's planner ``settings`` ("name = value") for the statements run inside, reset after them."""
    with connection.cursor() as cur:
        for setting in settings:
            cur.execute(f"SET {setting}")
        try:
            yield
        finally:
            for setting in settings:
                cur.execute(f"RESET {setting.split(' = ')[0]}")


def _no_walk():
    """The statements run inside read through bitmaps of the indexes, not by walking the time index (which the
    planner may still prefer when it overestimates the matches)."""
    return _settings("enable_indexscan = off")


def _documents(ws: Workspace, query: Query, window: Window) -> QuerySet:
    """The workspace's search documents ``query`` matches in ``window``, newest first."""
    sql, params = query.tsquery()
    return (
        TweetDocument.objects.filter(workspace_id=ws.pk)
        .filter(window.filter("created_at__date"))
        .extra(where=[f"monitor_tweetdocument.search @@ {sql}"], params=params)
        .order_by("-created_at", "-status_id")
    )


#: the statements that read the pairs index run without JIT and parallel workers: with no statistics on the index,
#: PostgreSQL's estimate of a tsquery of many week lexemes was a hundred times the rows, and compiling the
#: statement (about 58 ms) or starting workers (about 30 ms) cost more than the few hundred rows it fetched
PAIRS_SETTINGS = ("jit = off", "max_parallel_workers_per_gather = 0")


def _pairs_sql(
    ws: Workspace,
    query: Query,
    window: Window,
    pairs: Pairs,
    weeks: range | None,
    after: dt.datetime | None,
    labels: list[str] | None = None,
) -> tuple[str, str, list]:
    """The documents whose pairs meet ``pairs`` in ``weeks`` (any week when None), tested for ``query``, ``window``
    and ``after``, and, given ``labels``, whose tweet has one of those truth labels: (FROM clause, WHERE clause,
    parameters) over the alias ``d``. The pairs are read in a subquery of their own (``OFFSET 0`` keeps PostgreSQL
    from merging it): with only the pairs and the workspace to go by, it reads the pairs index, where the whole
    statement was planned as a bitmap of the newest week's 95,000 documents by time with each document's pairs
    computed (97 ms at 10M, against 8 ms through the index). The documents carry no label: a candidate's is read
    from its tweet by key, after the phrase has kept it."""
    cond, params = pairs.condition(weeks)
    sql, query_params = query.tsquery()
    inner = (
        "(SELECT tweet_id, search, created_at, status_id FROM monitor_tweetdocument "
        f"WHERE workspace_id = %s AND {cond} OFFSET 0) d"
    )
    where, where_params = [f"d.search @@ {sql}"], list(query_params)
    if window.start is not None:
        where.append("d.created_at >= %s")
        where_params.append(dt.datetime.combine(window.start, dt.time(), dt.UTC))
    if window.end is not None:
        where.append("d.created_at < %s")
        where_params.append(dt.datetime.combine(window.end + dt.timedelta(days=1), dt.time(), dt.UTC))
    if after is not None:
        where.append("d.created_at > %s")
        where_params.append(after)
    if labels:
        where.append(f"EXISTS (SELECT 1 FROM {Tweet._meta.db_table} t WHERE t.id = d.tweet_id AND t.label = ANY(%s))")
        where_params.append(list(labels))
    return inner, " AND ".join(where), [ws.pk, *params, *where_params]


def _pairs_count(
    ws: Workspace, query: Query, window: Window, pairs: Pairs, most: int, labels: list[str] | None = None
) -> int:
    """How many documents ``query`` matches in ``window`` (of tweets labelled one of ``labels``, when given), read
    through the pairs index, counted up to ``most``."""
    inner, where, params = _pairs_sql(ws, query, window, pairs, None, None, labels)
    with _settings(*PAIRS_SETTINGS), connection.cursor() as cur:
        cur.execute(f"SELECT count(*) FROM (SELECT 1 FROM {inner} WHERE {where} LIMIT %s) c", [*params, most])
        return int(cur.fetchone()[0])


#: the pairs index's first slice, in days before the newest tweet; the next is sized from its matches
PAIRS_FIRST_DAYS = 7


def _pairs_pool(
    ws: Workspace, query: Query, sort: str, window: Window, pairs: Pairs, labels: list[str] | None = None
) -> list[tuple]:
    """``_walk_documents``'s rows for a query read through the pairs index, in time slices: a phrase of common
    words matches 43,000 tweets at 10M, and fetching every match's row to sort them by time took 250 ms
    (benchmarks/claims.md). Each slice reads the pairs of its weeks only (the index's lexemes carry their
    document's week), so the rows fetched are about the slice's matches. The first slice is the newest
    :data:`PAIRS_FIRST_DAYS` days; the next is sized from the matches it held, a quarter more than it takes to
    reach :data:`CANDIDATES` + 1 at that rate (at least twice as long); a slice reaching back past the oldest
    tweet reads all time. Usually two statements; their rows are the newest matches, as the walk's. Given
    ``labels``, only the matches whose tweet has one of them count (a rarer label reaches further back)."""
    docs = TweetDocument.objects.filter(workspace_id=ws.pk).filter(window.filter("created_at__date"))
    span = docs.aggregate(first=Min("created_at"), last=Max("created_at"))
    if span["last"] is None:
        return []
    days: float | None = PAIRS_FIRST_DAYS
    rows: list[tuple] = []
    with _settings(*PAIRS_SETTINGS), connection.cursor() as cur:
        while True:
            after = None if days is None else span["last"] - dt.timedelta(days=days)
            if after is not None and after < span["first"]:
                after = None
            weeks = None if after is None else range(_week(after), _week(span["last"]) + 1)
            inner, where, params = _pairs_sql(ws, query, window, pairs, weeks, after, labels)
            columns = "d.tweet_id, d.created_at" if sort == "reach" else "d.tweet_id, d.search, d.created_at"
            newest = (
                f"SELECT {columns}, d.status_id FROM {inner} WHERE {where} "
                "ORDER BY d.created_at DESC, d.status_id DESC LIMIT %s"
            )
            if sort == "reach":
                cur.execute(newest, [*params, CANDIDATES + 1])
                rows = [tuple(r) for r in cur.fetchall()]
            else:
                rows = _ranked(newest, [*params, CANDIDATES + 1], query)
            if len(rows) > CANDIDATES or after is None:
                break
            days = _next_days(days, len(rows))
    return _with_reach(rows) if sort == "reach" else rows


def _ranked(newest: str, params: list, query: Query) -> list[tuple]:
    """(pk, relevance, time, id) of the rows of the statement ``newest``, which selects (pk, search document, time,
    id) of the newest matches, newest first, with ``params``; in that order. The relevance (``ts_rank_cd``) is
    computed on those rows alone: in the statement that sorts the matches, PostgreSQL computed it for every match
    before keeping the newest (an AND of two words at 10M tweets: 10,419 ranks, 24 of its 61 ms)."""
    sql, query_params = query.tsquery()
    with connection.cursor() as cur:
        cur.execute(
            f"SELECT s.pk, ts_rank_cd(s.doc, {sql}), s.at, s.id FROM ({newest}) AS s(pk, doc, at, id) "
            "ORDER BY s.at DESC, s.id DESC",
            [*query_params, *params],
        )
        return [tuple(r) for r in cur.fetchall()]


def _with_reach(rows: list[tuple]) -> list[tuple]:
    """(pk, time, status id) rows as (pk, reach, time, status id), the reach read from their tweets by key in one
    statement (-1 for a tweet not computed)."""
    reach = dict(Tweet.objects.filter(pk__in=[r[0] for r in rows]).values_list("pk", "reach"))
    return [(pk, -1.0 if reach.get(pk) is None else reach[pk], at, sid) for pk, at, sid in rows]


def _walk_documents(ws: Workspace, query: Query, sort: str, window: Window) -> list[tuple]:
    """What ``tweet_search``'s ``fetch`` reads, (pk, what orders it, time, status id) of the newest
    :data:`CANDIDATES` + 1 matches, by walking the search documents' table (``TweetDocument``) newest first and
    testing each document: the same tweets, times and scores as the walk of the tweets' table (the same tsvector,
    kept by triggers), in about a third of the pages (benchmarks/claims.md). The reach order reads the candidates'
    reach from their tweets by key afterwards, one statement for all of them."""
    sql, params = query.tsquery()
    docs = _documents(ws, query, window)
    if sort == "reach":
        return _with_reach(list(docs.values_list("tweet_id", "created_at", "status_id")[: CANDIDATES + 1]))
    docs = docs.extra(select={"score": f"ts_rank_cd(monitor_tweetdocument.search, {sql})"}, select_params=params)
    return list(docs.values_list("tweet_id", "score", "created_at", "status_id")[: CANDIDATES + 1])


# --- a phrase of common words, through the workspace's pairs index (services.search_pairs) ----------------------
#
# A phrase of two common words matches a few tweets in a thousand, but PostgreSQL estimates it as the AND of its
# words, tens of times more, and the newest matches are found by walking the documents: 224,000 tested for the
# newest 1,001 (benchmarks/claims.md). A large workspace has a GIN index of each document's adjacent pairs of its
# common words, each with the document's week (``monitor_lexeme_pairs(search, created_at, <words>)``, migration
# 0039); a query whose every phrase-like clause is made of those words reads its candidates through it: each
# clause's pairs must all be there (``'bo co@2870'`` for "bo co" in week 2870, ``'bo co@':*`` in any week), and the
# query itself is still tested on each document, so the answer is the walk's.

_LEXEME = re.compile(r"'((?:[^'\\]|'')*)'")
_SPLIT = re.compile(r"\W")  # a term PostgreSQL may split into several lexemes (a phrase, "covid-19", "5g.")
_WEEK_S = 7 * 86_400


def _week(at: dt.datetime) -> int:
    """The week of ``at`` as the pairs index numbers it: whole weeks since 1970-01-01 UTC."""
    return int(at.timestamp() // _WEEK_S)


def _quote(lexeme: str) -> str:
    return "'" + lexeme.replace("'", "''") + "'"


@dataclass(frozen=True)
class Pairs:
    """What a query needs of the workspace's pairs index: the index's words (its expression's constant) and, per
    clause read through it, each alternative's chain of lexemes."""

    lexemes: tuple[str, ...]
    clauses: tuple[tuple[tuple[str, ...], ...], ...]

    def condition(self, weeks: range | None = None) -> tuple[str, list]:
        """The condition on the index, as SQL and parameters (the index's own expression, so that PostgreSQL reads
        the index): each clause's pairs in one of ``weeks``, or in any week when None."""

        def pair(a: str, b: str) -> str:
            if weeks is None:
                return _quote(f"{a} {b}@") + ":*"
            return "(" + " | ".join(_quote(f"{a} {b}@{w}") for w in weeks) + ")"

        def chain(lexemes: tuple[str, ...]) -> str:
            return "(" + " & ".join(pair(a, b) for a, b in itertools.pairwise(lexemes)) + ")"

        parts = ["(" + " | ".join(chain(ch) for ch in clause) + ")" for clause in self.clauses]
        sql = (
            "monitor_lexeme_pairs(monitor_tweetdocument.search, monitor_tweetdocument.created_at, %s::text[]) "
            "@@ %s::tsquery"
        )
        return sql, [list(self.lexemes), " & ".join(parts)]


def _chains(values: list[str]) -> list[list[str] | None]:
    """Each term's lexemes in order as PostgreSQL's parser splits it (the term's own ``to_tsquery``), or None where
    that is not a chain of two or more lexemes next to each other."""
    with connection.cursor() as cur:
        cur.execute("SELECT " + ", ".join(["to_tsquery('simple', %s)::text"] * len(values)), [f"'{v}'" for v in values])
        texts = cur.fetchone()
    out: list[list[str] | None] = []
    for text in texts:
        words = [w.replace("''", "'") for w in _LEXEME.findall(text)]
        rebuilt = " <-> ".join(_quote(w) for w in words)
        out.append(words if len(words) >= 2 and rebuilt == text else None)
    return out


def _pairs_condition(ws: Workspace, query: Query) -> Pairs | None:
    """What ``query`` needs of the workspace's pairs index; None when the workspace has no index or no clause of
    the query is a phrase of its common words. A clause counts when it is not excluded and each of its alternatives
    is a word or phrase that splits into two or more lexemes, all of them common."""
    clauses = [
        c for c in query.clauses
        if not c[0].negated and all(t.kind in ("word", "phrase") and _SPLIT.search(t.value) for t in c)
    ]  # fmt: skip
    if not clauses:
        return None
    lexemes = (
        SearchPairs.objects.filter(workspace_id=ws.pk).exclude(index_name="").values_list("lexemes", flat=True).first()
    )
    if not lexemes:
        return None
    common = set(lexemes)
    chains = iter(_chains([t.value for c in clauses for t in c]))
    kept = []
    for clause in clauses:
        alternatives = [next(chains) for _ in clause]
        if all(ch is not None and common.issuperset(ch) for ch in alternatives):
            kept.append(tuple(tuple(ch) for ch in alternatives))
    return Pairs(tuple(lexemes), tuple(kept)) if kept else None


# --- claims ---------------------------------------------------------------------------------------------------


def claims_of(ws: Workspace) -> list[Claim]:
    return list(Claim.objects.filter(workspace=ws).select_related("created_by"))


def claim_get(ws: Workspace, pk: int) -> Claim | None:
    return Claim.objects.filter(workspace=ws, pk=pk).select_related("created_by").first()


class ClaimTooBroad(ValueError):
    """The query matches more than :data:`CLAIM_MAX_TWEETS` tweets."""


@cached
def _matches_up_to(ws: Workspace, text: str, most: int) -> int:
    """How many tweets ``text`` matches, counted up to ``most``: a claim page's five reads check its breadth once
    per data version, not once each."""
    return matching(ws, parse_query(text)).order_by()[:most].count()


@cached
def _claim_keys(ws: Workspace, text: str) -> list[int]:
    """The keys of the tweets ``text`` matches, at most :data:`CLAIM_MAX_TWEETS` + 1, read through the workspace's
    pairs index (the caller has checked that ``text`` can be): once per data version for a claim page's reads."""
    query = parse_query(text)
    pairs = _pairs_condition(ws, query)
    inner, where, params = _pairs_sql(ws, query, ALL_TIME, pairs, None, None)
    with _settings(*PAIRS_SETTINGS), connection.cursor() as cur:
        cur.execute(f"SELECT d.tweet_id FROM {inner} WHERE {where} LIMIT %s", [*params, CLAIM_MAX_TWEETS + 1])
        return [r[0] for r in cur.fetchall()]


def claim_tweets(ws: Workspace, text: str) -> QuerySet:
    """The tweets of the claim whose query is ``text``, now (a queryset): :class:`QueryError` if it does not parse,
    :class:`ClaimTooBroad` beyond :data:`CLAIM_MAX_TWEETS`.

    A query with a phrase of the workspace's common words (its pairs index, below) is matched through that index,
    once per data version, and the queryset names the tweets by key: through the search index, PostgreSQL reads
    every tweet holding both words to test the phrase (at 10M tweets, 542,784 of them for the 43,478 matches of
    "bo co"), in each of a claim page's reads and each evaluation of its alert rules."""
    query = parse_query(text)
    pairs = _pairs_condition(ws, query) if _postgres() else None
    keys = _claim_keys(ws, text) if pairs is not None else None
    found = len(keys) if keys is not None else _matches_up_to(ws, text, CLAIM_MAX_TWEETS + 1)
    if found > CLAIM_MAX_TWEETS:
        raise ClaimTooBroad(
            f"the query matches more than {CLAIM_MAX_TWEETS:,} tweets; narrow it (add a term, or a phrase in quotes)"
        )
    if keys is None:
        return matching(ws, query)
    # the keys as one array parameter, not a list of parameters; unaliased, so the queryset can be a subquery
    return Tweet.objects.filter(workspace=ws, pk__in=RawSQL("SELECT unnest(%s::bigint[])", [int_array_param(keys)]))
