"""The index of adjacent pairs of common words that answers a phrase search on a large workspace (PostgreSQL).

**Why.** The tweet search finds a query's newest matches (``selectors.claims``). A phrase of two common words
("bo co", each word in a few per cent of the tweets) matches far fewer tweets than PostgreSQL estimates (it
estimates an AND of the words), so the search walks the documents newest first and tests each one: 224,000 of
them for the newest 1,001 matches at 1M tweets and at 10M alike, about 200 ms (benchmarks/claims.md). An index of
every document's adjacent word pairs answers such a phrase through its pair ("bo co") directly, but all pairs are
three times the size of the search index; pairs of common words only are a tenth of it, and a phrase with a rarer
word is fast without them (the AND of its words leaves few candidates).

**What.** For a workspace with at least :data:`MIN_DOCUMENTS` search documents, :func:`search_pairs_refresh` finds
its common words (in at least :data:`MIN_SHARE` of its newest :data:`SAMPLE` documents, by ``ts_stat``) and builds
a partial GIN index on ``monitor_lexeme_pairs(search, created_at, <those words>)`` (migration 0039: each
pair with its document's week) over the workspace's rows of
``monitor_tweetdocument``. The words are constants of the index's expression, so the index always holds every
document's pairs of exactly those words, whatever was inserted before or after it was built: PostgreSQL computes
them for each row it indexes. When words become common that the index lacks, a new index with the old and new
words is built beside the old one, the workspace's :class:`~monitor.models.SearchPairs` row is switched to it, and
the old one dropped: a search reads the index its row names, with that index's words, or none.

**Cost.** The index is built with ``CREATE INDEX CONCURRENTLY`` (imports and searches go on; a plain ``CREATE
INDEX`` inside a transaction, as in the tests): about 25 us a document for the pairs, plus the index's own writing
(678.6 s at 10M tweets; benchmarks/claims.md). Afterwards each tweet inserted into the workspace pays its pairs and
their index entries (100-125 us), written at once: the index has no pending list (``fastupdate = off``), which
every search would read whole. The index's column has no statistics (``SET STATISTICS 0``), or every ``ANALYZE``
of the documents would compute the pairs of its whole sample.

**When.** The beat task ``monitor.tasks.search_pairs_refresh`` checks every workspace whose data changed since its
last check (every ``SPREADWATCH_SEARCH_PAIRS_EVERY_S`` seconds); ``manage.py claims pairs <ws>`` does it now. One
refresh runs at a time in a database (an advisory lock); a second one returns at once. On SQLite it does nothing:
the search there matches by regular expressions.
"""

from __future__ import annotations

import logging
import math
import time

from django.db import connection, transaction
from django.utils import timezone

from ..models import SearchPairs, Workspace

log = logging.getLogger(__name__)

#: a workspace gets an index once it holds this many documents; below, the walk is short (it tests at most the
#: workspace's documents)
MIN_DOCUMENTS = 100_000
#: a word is common when it is in at least this share of the sampled documents
MIN_SHARE = 0.01
#: the newest documents whose words are counted (the search reads the newest first)
SAMPLE = 100_000
#: the most words one index pairs (words in 1 % of the documents are at most 100 times the words a document holds
#: on average, about 1,500 for tweets; the benchmark's Zipf text has 153)
MAX_LEXEMES = 500
#: longer words are never paired (a pair is one lexeme, and a lexeme is at most 2,046 bytes)
MAX_LEXEME_CHARS = 100
INDEX_PREFIX = "tweetdocument_pairs_"
PAIRS_LOCK_CLASS = 20_005
#: seconds between switching a workspace's row to a new index and dropping the old one: a search that read the row
#: just before the switch still plans with the old words, and without their index its statement would compute
#: every document's pairs (minutes at 10M) instead of reading them
SWITCH_GRACE_S = 60


def _count_up_to(ws_id: int, most: int) -> int:
    with connection.cursor() as cur:
        cur.execute(
            "SELECT count(*) FROM (SELECT 1 FROM monitor_tweetdocument WHERE workspace_id = %s LIMIT %s) d",
            [ws_id, most],
        )
        return int(cur.fetchone()[0])


def common_lexemes(ws_id: int, *, sample: int, min_share: float) -> list[str]:
    """The words (lexemes) in at least ``min_share`` of the workspace's newest ``sample`` documents, most frequent
    first (at most :data:`MAX_LEXEMES`, none longer than :data:`MAX_LEXEME_CHARS`)."""
    n = _count_up_to(ws_id, sample)
    if not n:
        return []
    newest = (
        f"SELECT search FROM monitor_tweetdocument WHERE workspace_id = {int(ws_id)} "
        f"ORDER BY created_at DESC, status_id DESC LIMIT {int(sample)}"
    )
    with connection.cursor() as cur:
        cur.execute(
            "SELECT word FROM ts_stat(%s) WHERE ndoc >= %s AND length(word) <= %s ORDER BY ndoc DESC, word LIMIT %s",
            [newest, max(1, math.ceil(min_share * n)), MAX_LEXEME_CHARS, MAX_LEXEMES],
        )
        return [r[0] for r in cur.fetchall()]


def _index_valid(name: str) -> bool:
    with connection.cursor() as cur:
        cur.execute(
            "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = %s", [name]
        )
        row = cur.fetchone()
    return bool(row and row[0])


def _concurrently() -> str:
    """``CONCURRENTLY`` (imports and searches go on), except inside a transaction, where PostgreSQL refuses it."""
    return "" if connection.in_atomic_block else "CONCURRENTLY "


def _drop(name: str) -> None:
    with connection.cursor() as cur:
        cur.execute(f'DROP INDEX {_concurrently()}IF EXISTS "{name}"')


def _build(ws_id: int, lexemes: list[str]) -> str:
    """A new pairs index of ``lexemes`` over the workspace's documents; its name. A build that fails leaves no
    index behind (``CREATE INDEX CONCURRENTLY`` leaves an invalid one, dropped here)."""
    name = f"{INDEX_PREFIX}{int(ws_id)}_{time.time_ns() // 1000}"
    try:
        with connection.cursor() as cur:
            cur.execute(
                f'CREATE INDEX {_concurrently()}"{name}" ON monitor_tweetdocument USING gin '
                f"(monitor_lexeme_pairs(search, created_at, %s::text[])) WITH (fastupdate = off) "
                f"WHERE workspace_id = {int(ws_id)}",
                [lexemes],
            )
            # no statistics: ANALYZE would compute the pairs of every sampled document (600,000 at the documents'
            # statistics target), and the search decides by the words, not by the planner's estimate. No pending
            # list (fastupdate off): a search scans all of it, and 100,000 tweets inserted left one that made the
            # phrase 125 ms instead of 40 at 1M (benchmarks/claims.md)
            cur.execute(f'ALTER INDEX "{name}" ALTER COLUMN 1 SET STATISTICS 0')
    except Exception:
        if not connection.in_atomic_block:
            _drop(name)
        raise
    return name


def _orphans() -> list[str]:
    """Pairs indexes no workspace's row names: of deleted workspaces, or left by a refresh that died."""
    named = set(SearchPairs.objects.exclude(index_name="").values_list("index_name", flat=True))
    with connection.cursor() as cur:
        cur.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'monitor_tweetdocument' AND indexname LIKE %s",
            [INDEX_PREFIX.replace("_", r"\_") + "%"],
        )
        return sorted(r[0] for r in cur.fetchall() if r[0] not in named)


def _refresh_one(ws: Workspace, *, min_documents: int, sample: int, min_share: float, force: bool) -> dict:
    row = SearchPairs.objects.filter(workspace=ws).first()
    out = {"workspace": ws.pk, "action": "unchanged", "lexemes": len(row.lexemes) if row else 0}
    if row is not None and row.checked_version == ws.data_version and not force:
        return out
    documents = _count_up_to(ws.pk, min_documents)
    has_index = row is not None and row.index_name and _index_valid(row.index_name)
    if documents < min_documents and not has_index:
        out["action"] = "small"
        SearchPairs.objects.update_or_create(
            workspace=ws, defaults={"documents": documents, "checked_version": ws.data_version, "index_name": ""}
        )
        return out
    common = common_lexemes(ws.pk, sample=sample, min_share=min_share)
    old = list(row.lexemes) if has_index else []
    if has_index and set(common) <= set(old):
        SearchPairs.objects.filter(workspace=ws).update(documents=documents, checked_version=ws.data_version)
        out["action"] = "kept"
        return out
    lexemes = sorted(set(old) | set(common))
    if len(lexemes) > MAX_LEXEMES:  # start again from what is common now
        lexemes = sorted(common)
    t = time.perf_counter()
    name = _build(ws.pk, lexemes)
    seconds = time.perf_counter() - t
    with transaction.atomic():
        SearchPairs.objects.update_or_create(
            workspace=ws,
            defaults={"lexemes": lexemes, "index_name": name, "documents": documents,
                      "checked_version": ws.data_version, "built_at": timezone.now(), "build_seconds": seconds},
        )  # fmt: skip
    if has_index:
        time.sleep(SWITCH_GRACE_S)
        _drop(row.index_name)
    log.info("search pairs: workspace %s indexed %d common words in %.1f s (%s)", ws.pk, len(lexemes), seconds, name)
    return {**out, "action": "built", "lexemes": len(lexemes), "index": name, "seconds": round(seconds, 1)}


def search_pairs_refresh(
    *,
    workspace_id: int | None = None,
    min_documents: int | None = None,
    sample: int | None = None,
    min_share: float | None = None,
    force: bool = False,
) -> dict:
    """Check the workspace ``workspace_id`` (every workspace when None) and build, switch or keep its pairs index
    (see the module); drop the indexes no workspace names. Returns what was done per workspace. ``force`` checks
    a workspace even when its data did not change since the last check. The thresholds default to the module's
    :data:`MIN_DOCUMENTS`, :data:`SAMPLE` and :data:`MIN_SHARE`."""
    if connection.vendor != "postgresql":
        return {"skipped": "the pairs index is PostgreSQL's; SQLite searches by regular expressions"}
    with connection.cursor() as cur:
        cur.execute("SELECT pg_try_advisory_lock(%s, 0)", [PAIRS_LOCK_CLASS])
        if not cur.fetchone()[0]:
            return {"skipped": "another refresh is running"}
    try:
        workspaces = Workspace.objects.all() if workspace_id is None else Workspace.objects.filter(pk=workspace_id)
        thresholds = {
            "min_documents": MIN_DOCUMENTS if min_documents is None else min_documents,
            "sample": SAMPLE if sample is None else sample,
            "min_share": MIN_SHARE if min_share is None else min_share,
        }
        done = [_refresh_one(ws, force=force, **thresholds) for ws in workspaces.order_by("pk")]
        dropped = _orphans()
        for name in dropped:
            _drop(name)
        return {"workspaces": done, "dropped": dropped}
    finally:
        with connection.cursor() as cur:
            cur.execute("SELECT pg_advisory_unlock(%s, 0)", [PAIRS_LOCK_CLASS])


def search_pairs_drop(*, workspace_id: int) -> str | None:
    """Forget the workspace's pairs index and drop it now (the search walks again until a refresh builds one);
    the index's name, or None when it had none."""
    if connection.vendor != "postgresql":
        return None
    row = SearchPairs.objects.filter(workspace_id=workspace_id).first()
    if row is None:
        return None
    row.delete()
    if row.index_name:
        _drop(row.index_name)
    return row.index_name or None
