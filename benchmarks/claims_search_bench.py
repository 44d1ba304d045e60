"""The tweet search (``monitor.selectors.claims.tweet_search``, PostgreSQL full-text search on the stored
``monitor_tweet.search`` tsvector and its GIN index ``tweet_search``, migration 0035) on one workspace of
``--tweets`` generated tweets; the issue's goal is p95 <= 150 ms per search at 10M tweets.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/sw_claims_bench \\
        .venv/bin/python benchmarks/claims_search_bench.py \\
        --tweets 1000000 --json benchmarks/results/claims_search_1m_2026-11-30.json
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/sw_claims_bench \\
        .venv/bin/python benchmarks/claims_search_bench.py \\
        --tweets 10000000 --chunk 500000 --json benchmarks/results/claims_search_10m_2026-11-30.json --drop

The database is dropped and created afresh (``--reuse`` keeps a loaded one), migrated, and filled with one
workspace: ``--tweets``/20 accounts and the tweets, generated with NumPy in chunks (seeded) and loaded with
``COPY`` by ``--workers`` processes. Text: 4-25 words drawn from a Zipf (s=1) vocabulary of 50,000 made-up
words (rank 1 is ~9% of all words, as "the" is in English), then its hashtags as ``#tag`` and one
``https://t.co/...`` link per URL; 0-3 hashtags from a Zipf vocabulary of 5,000; 0-2 URLs to 2,000 Zipf domains
(``www.``, bare or a ``news.``/``m.``/``blog.``/``video.`` subdomain; a Zipf article path); ``domains`` by
``compute.entities.domains_of``; labels; times over two years (each chunk a slice of them, in order, as uploads
come; with ``--layout upload``, the default, in time order inside each chunk, as the import's merge writes an
upload; with ``overlap``, each chunk over the whole two years and in time order inside it, as uploads of the same
days lie one after the other; with ``scattered``, in random order inside each chunk, which the import no longer
writes: the worst case of a table whose rows lie in no order of time); 30% of the
tweets computed (a reach). The tweet table's secondary indexes are dropped for the load and
created again after it (their definitions read from the catalog, ``maintenance_work_mem`` 1GB for the session),
foreign-key triggers are skipped (``session_replication_role = replica``: the generated keys are consistent),
then ``VACUUM ANALYZE monitor_tweet`` (what autovacuum would do after such a load). Load time and sizes are
reported.

Before the searches, the workspace's index of common word pairs (``services.search_pairs``, the phrase search's) is
built as the beat task would build it, timed (``--pairs on``, the default; kept when it is there already), or
dropped (``--pairs off``: the searches as they are without it).

Then each query kind (``QUERIES``) with each ``--sorts`` is called through Django the way the search page calls
it (``tweet_search(ws, text, sort=..., limit=20)``; with ``--labels false,true`` filtered by those truth labels,
as the API's ``label`` parameter filters), read cache off (``SPREADWATCH_READ_CACHE_SECONDS=0``) and
``DEBUG`` off (no ``connection.queries``): one warm-up call, then ``--repeat`` timed calls; p50/p95/max per
kind and sort, and the p95 of all calls. For every (kind, sort) whose p95 is over ``--slow-ms``, the SQL the call
runs is captured (``CaptureQueriesContext``) with each statement's time, and the slower statements are run
again under ``EXPLAIN (ANALYZE, BUFFERS)``. With ``--claims``, each query a claim accepts is then timed as a
claim page's first view reads it (``run_claims``). Prints JSON lines, then a table; ``--json`` writes them all.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import multiprocessing as mp
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "monitor.settings")
os.environ["SPREADWATCH_READ_CACHE_SECONDS"] = "0"  # every call reaches PostgreSQL
os.environ["DEBUG"] = "0"  # no connection.queries

SLUG = "bench-claims"
SELECTOR = "monitor/selectors/claims.py"
N_WORDS, N_TAGS, N_DOMAINS, N_ARTICLES = 50_000, 5_000, 2_000, 10_000
START = dt.datetime(2024, 12, 1, tzinfo=dt.UTC)
SPAN_S = 730 * 86400
TWITTER_EPOCH_MS = 1288834974657
LABELS = np.array(["unknown", "false", "true", "unverified", "non-rumor"])
LABEL_P = [0.8, 0.05, 0.05, 0.05, 0.05]
TLDS = ["com", "org", "net", "co.uk", "de", "info", "news", "com.au"]
SUBDOMAINS = ["news", "m", "blog", "video"]
NULL = "\\N"
_CONS = "bcdfghjklmnprstvwz"  # no x: hashtags start with x, so no hashtag is also a word
_VOWELS = "aeiou"
SYLLABLES = [c + v for c in _CONS for v in _VOWELS]  # 90


def _spell(i: int) -> str:
    """A made-up word for rank ``i`` (0-based): short for the common ranks, as in real text."""
    out = []
    i += 1
    while i:
        i, r = divmod(i, len(SYLLABLES))
        out.append(SYLLABLES[r])
    return "".join(reversed(out))


def vocabularies():
    words = [_spell(i) for i in range(N_WORDS)]
    assert len(set(words)) == N_WORDS
    tags = ["x" + _spell(i) for i in range(N_TAGS)]
    domains = [f"{_spell(i + 500)}.{TLDS[i % len(TLDS)]}" for i in range(N_DOMAINS)]
    return words, tags, domains


def zipf_cdf(n: int, s: float = 1.0) -> np.ndarray:
    w = 1.0 / np.arange(1, n + 1) ** s
    c = np.cumsum(w)
    return c / c[-1]


def zipf_draw(rng, cdf: np.ndarray, size: int) -> np.ndarray:
    return np.minimum(np.searchsorted(cdf, rng.random(size)), len(cdf) - 1)


def doc_freq(cdf: np.ndarray, rank: int, draws_per_doc: float) -> float:
    """The expected share of documents with ``rank`` among ``draws_per_doc`` draws."""
    p = cdf[rank] - (cdf[rank - 1] if rank else 0.0)
    return 1.0 - (1.0 - p) ** draws_per_doc


# --- the load --------------------------------------------------------------------------------------------------

TWEET_COLUMNS = ("workspace_id", "tweet_id", "author_id", "created_at", "text", "hashtags", "urls", "domains",
                 "label", "author_followers", "graph_source", "times_known", "compute_status", "n_participants",
                 "n_edges", "n_orphans", "reach", "unit")  # fmt: skip


def _chunk_rows(job: tuple) -> tuple[int, float, float]:
    """Generate chunk ``k`` and COPY it into monitor_tweet over its own connection: (rows, generate s, copy s)."""
    (k, n_chunks, start, n, seed, ws_id, author_pks_path, url, layout) = job
    import dj_database_url
    import psycopg

    from compute.entities import domains_of

    t0 = time.perf_counter()
    words, tags, domains = vocabularies()
    words_np, tags_np = np.array(words, dtype=object), np.array(tags, dtype=object)
    author_pks = np.load(author_pks_path)
    rng = np.random.default_rng([seed, k])
    wcdf, tcdf, dcdf, acdf = zipf_cdf(N_WORDS), zipf_cdf(N_TAGS), zipf_cdf(N_DOMAINS), zipf_cdf(N_ARTICLES, 1.1)
    # times: this chunk's slice of the two years in time order, as the import's merge writes an upload's tweets
    # (--layout upload); the whole two years in time order (--layout overlap: uploads of the same days one after
    # the other); or the slice in random order (--layout scattered: rows in no order of time)
    if layout == "overlap":
        sec = np.sort(rng.random(n) * SPAN_S)
    else:
        sec = (k + rng.random(n)) / n_chunks * SPAN_S
        if layout == "upload":
            sec = np.sort(sec)
    ms = (START.timestamp() * 1000 + sec * 1000).astype(np.int64)
    tweet_ids = ((ms - TWITTER_EPOCH_MS) << 22) | ((start + np.arange(n)) % (1 << 22))
    created = np.datetime_as_string(ms.astype("datetime64[ms]"), unit="ms").tolist()
    authors = author_pks[rng.integers(0, len(author_pks), n)].tolist()
    labels = LABELS[rng.choice(len(LABELS), n, p=LABEL_P)].tolist()
    followers = np.round(rng.lognormal(6, 2, n)).tolist()
    computed = rng.random(n) < 0.3
    reach = np.where(computed, np.round(rng.lognormal(5, 2, n), 2), np.nan).tolist()
    participants = np.where(computed, rng.integers(1, 500, n), 0).tolist()
    status = np.where(computed, "computed", "pending").tolist()
    # words
    n_words = rng.integers(4, 26, n)
    w_off = np.concatenate([[0], np.cumsum(n_words)])
    w = words_np[zipf_draw(rng, wcdf, int(w_off[-1]))].tolist()
    # hashtags
    n_tags = rng.choice(4, n, p=[0.5, 0.3, 0.15, 0.05])
    t_off = np.concatenate([[0], np.cumsum(n_tags)])
    tg = tags_np[zipf_draw(rng, tcdf, int(t_off[-1]))].tolist()
    # URLs: domain, host form, article; t.co links in the text
    n_urls = rng.choice(3, n, p=[0.6, 0.3, 0.1])
    u_off = np.concatenate([[0], np.cumsum(n_urls)])
    m = int(u_off[-1])
    dom = zipf_draw(rng, dcdf, m)
    form = rng.choice(3, m, p=[0.5, 0.35, 0.15])
    sub = rng.integers(0, len(SUBDOMAINS), m)
    art = zipf_draw(rng, acdf, m) + 1
    hosts = [("www." + domains[d]) if f == 0 else domains[d] if f == 1 else f"{SUBDOMAINS[s]}.{domains[d]}"
             for d, f, s in zip(dom.tolist(), form.tolist(), sub.tolist())]  # fmt: skip
    urls = [f"https://{h}/story/{a}" for h, a in zip(hosts, art.tolist())]
    tco = [f"https://t.co/{x:010x}" for x in rng.integers(0, 1 << 40, m).tolist()]
    dom_cache: dict[tuple, str] = {}
    lines = []
    for i in range(n):
        a, b = u_off[i], u_off[i + 1]
        ta, tb = t_off[i], t_off[i + 1]
        tw = tg[ta:tb]
        text = " ".join(w[w_off[i] : w_off[i + 1]])
        if tw:
            text += " #" + " #".join(tw)
        if b > a:
            text += " " + " ".join(tco[a:b])
            key = tuple(hosts[a:b])
            ds = dom_cache.get(key)
            if ds is None:
                ds = dom_cache[key] = domains_of(" ".join(urls[a:b]))
            us = " ".join(urls[a:b])
        else:
            us = ds = ""
        r = reach[i]
        lines.append(
            f"{ws_id}\t{tweet_ids[i]}\t{authors[i]}\t{created[i]}+00\t{text}\t{' '.join(tw)}\t{us}\t{ds}\t"
            f"{labels[i]}\t{followers[i]}\tfollows\tt\t{status[i]}\t{participants[i]}\t0\t0\t"
            f"{NULL if r != r else r}\tfollowers\n"
        )
    t1 = time.perf_counter()
    cfg = dj_database_url.parse(url)
    with psycopg.connect(host=cfg["HOST"], port=cfg["PORT"] or 5432, user=cfg["USER"], dbname=cfg["NAME"],
                         **({"password": cfg["PASSWORD"]} if cfg["PASSWORD"] else {})) as conn:  # fmt: skip
        conn.execute("SET session_replication_role = replica")  # no FK trigger per row: the keys are ours
        with conn.cursor() as cur, cur.copy(f"COPY monitor_tweet ({', '.join(TWEET_COLUMNS)}) FROM STDIN") as cp:
            step = 50_000
            for j in range(0, n, step):
                cp.write("".join(lines[j : j + step]))
        conn.commit()
    return n, t1 - t0, time.perf_counter() - t1


def load(args, emit) -> int:
    """Create the workspace and its accounts and tweets; returns the workspace's pk."""
    from django.db import connection, connections

    from monitor.models import Workspace

    n = args.tweets
    ws = Workspace.objects.create(name=f"Claims bench {n:,}", slug=SLUG)
    t_all = time.perf_counter()
    n_accounts = max(1, n // 20)
    with connection.cursor() as cur:
        copy_sql = "COPY monitor_account (workspace_id, twitter_id, screen_name) FROM STDIN"
        with connection.connection.cursor().copy(copy_sql) as cp:
            step = 200_000
            for j in range(0, n_accounts, step):
                ids = range(j + 1, min(n_accounts, j + step) + 1)
                cp.write("".join(f"{ws.pk}\t{10_000_000 + i}\tuser{i}\n" for i in ids))
        cur.execute("SELECT id FROM monitor_account WHERE workspace_id = %s ORDER BY twitter_id", [ws.pk])
        author_pks = np.array([r[0] for r in cur.fetchall()], dtype=np.int64)
        # what every NOT NULL column without a default gets must be in TWEET_COLUMNS
        cur.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'monitor_tweet' AND "
            "is_nullable = 'NO' AND column_default IS NULL AND is_generated = 'NEVER' AND is_identity = 'NO'"
        )
        missing = {r[0] for r in cur.fetchall()} - set(TWEET_COLUMNS)
        assert not missing, f"NOT NULL columns not loaded: {missing}"
        # the secondary indexes and the unique constraint, dropped for the load and made again after it
        cur.execute(
            "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'monitor_tweet'::regclass "
            "AND contype = 'u'"
        )
        uniques = cur.fetchall()
        cur.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'monitor_tweet' AND indexname NOT IN "
            "(SELECT conname FROM pg_constraint WHERE conrelid = 'monitor_tweet'::regclass AND contype IN ('p', 'u'))"
        )
        indexes = cur.fetchall()
        for name, _ in uniques:
            cur.execute(f'ALTER TABLE monitor_tweet DROP CONSTRAINT "{name}"')
        for name, _ in indexes:
            cur.execute(f'DROP INDEX "{name}"')
    connections.close_all()
    pks_path = Path(f"/tmp/claims_bench_authors_{os.getpid()}.npy")
    np.save(pks_path, author_pks)
    chunk = args.chunk
    n_chunks = (n + chunk - 1) // chunk
    jobs = [(k, n_chunks, k * chunk, min(chunk, n - k * chunk), args.seed, ws.pk, str(pks_path), args.url, args.layout)
            for k in range(n_chunks)]  # fmt: skip
    t = time.perf_counter()
    gen_s = copy_s = 0.0
    with mp.get_context("fork").Pool(args.workers) as pool:
        for done, (rows, g, c) in enumerate(pool.imap_unordered(_chunk_rows, jobs), 1):
            gen_s, copy_s = gen_s + g, copy_s + c
            print(f"  chunk {done}/{n_chunks}: {rows:,} rows, generate {g:.1f} s, copy {c:.1f} s, "
                  f"{time.perf_counter() - t:.0f} s so far", flush=True)  # fmt: skip
    pks_path.unlink()
    copy_wall = time.perf_counter() - t
    t = time.perf_counter()
    index_s = {}
    with connection.cursor() as cur:
        cur.execute("SET maintenance_work_mem = '1GB'")
        for name, definition in indexes:
            ti = time.perf_counter()
            cur.execute(definition)
            index_s[name] = time.perf_counter() - ti
        for name, definition in uniques:
            ti = time.perf_counter()
            cur.execute(f'ALTER TABLE monitor_tweet ADD CONSTRAINT "{name}" {definition}')
            index_s[name] = time.perf_counter() - ti
    indexes_wall = time.perf_counter() - t
    # the search documents (migration 0038): PostgreSQL's trigger writes them with the tweets, but not under
    # session_replication_role = replica; written here from the tweets in the table's order, as the trigger would
    # have in the COPYs' order, their index made after them
    t = time.perf_counter()
    with connection.cursor() as cur:
        cur.execute("SET maintenance_work_mem = '1GB'")
        cur.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'tweetdocument_walk'")
        (walk_index,) = cur.fetchone()
        cur.execute("DROP INDEX tweetdocument_walk")
        cur.execute(
            "INSERT INTO monitor_tweetdocument (tweet_id, workspace_id, created_at, status_id, search) "
            "SELECT id, workspace_id, created_at, tweet_id, search FROM monitor_tweet WHERE workspace_id = %s",
            [ws.pk],
        )
        cur.execute(walk_index)
    documents_s = time.perf_counter() - t
    t = time.perf_counter()
    with connection.cursor() as cur:
        cur.execute("VACUUM ANALYZE monitor_tweet")
        cur.execute("VACUUM ANALYZE monitor_tweetdocument")
        cur.execute("ANALYZE monitor_account")
    vacuum_s = time.perf_counter() - t
    emit({"case": "load", "tweets": n, "accounts": n_accounts, "chunks": n_chunks, "layout": args.layout,
          "workers": args.workers,
          "copy_wall_s": round(copy_wall, 1), "generate_cpu_s": round(gen_s, 1), "copy_s": round(copy_s, 1),
          "indexes_s": round(indexes_wall, 1), "index_s": {k: round(v, 1) for k, v in index_s.items()},
          "documents_s": round(documents_s, 1), "vacuum_analyze_s": round(vacuum_s, 1),
          "total_s": round(time.perf_counter() - t_all, 1)})  # fmt: skip
    return ws.pk


def pairs(args, ws_pk: int, emit) -> None:
    """Build (``--pairs on``) or drop (``off``) the workspace's index of common word pairs, timed."""
    from django.db import connection

    from monitor.models import SearchPairs
    from monitor.services import search_pairs

    t = time.perf_counter()
    if args.pairs == "off":
        done = search_pairs.search_pairs_drop(workspace_id=ws_pk)
        emit({"case": "pairs", "pairs": "off", "dropped": done, "seconds": round(time.perf_counter() - t, 1)})
        return
    done = search_pairs.search_pairs_refresh(workspace_id=ws_pk)
    row = SearchPairs.objects.filter(workspace_id=ws_pk).first()
    size = 0
    if row is not None and row.index_name:
        with connection.cursor() as cur:
            cur.execute("SELECT pg_relation_size(%s)", [row.index_name])
            size = cur.fetchone()[0]
    emit({"case": "pairs", "pairs": "on", "done": done, "lexemes": len(row.lexemes) if row else 0,
          "index_bytes": size, "seconds": round(time.perf_counter() - t, 1)})  # fmt: skip


def sizes(emit) -> dict:
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute("""SELECT pg_total_relation_size('monitor_tweet'), pg_relation_size('monitor_tweet'),
            pg_indexes_size('monitor_tweet'), pg_relation_size('tweet_search'),
            COALESCE(pg_total_relation_size(reltoastrelid), 0), pg_total_relation_size('monitor_account'),
            pg_database_size(current_database()), pg_relation_size('monitor_tweetdocument'),
            pg_total_relation_size('monitor_tweetdocument')
            FROM pg_class WHERE oid = 'monitor_tweet'::regclass""")
        r = cur.fetchone()
        cur.execute("SELECT count(*), avg(length(text)), avg(pg_column_size(search)) FROM monitor_tweet")
        count, text_len, tsv = cur.fetchone()
    row = {"case": "sizes", "tweets": count, "avg_text_chars": round(float(text_len), 1),
           "avg_search_bytes": round(float(tsv), 1), "tweet_total_bytes": r[0], "tweet_heap_bytes": r[1],
           "tweet_indexes_bytes": r[2], "tweet_search_gin_bytes": r[3], "tweet_toast_bytes": r[4],
           "account_total_bytes": r[5], "database_bytes": r[6], "document_heap_bytes": r[7],
           "document_total_bytes": r[8]}  # fmt: skip
    emit(row)
    return row


# --- the searches ----------------------------------------------------------------------------------------------


def queries(n_tweets: int) -> list[tuple[str, str, float]]:
    """(kind, query, expected share of tweets matching) — the mix, chosen by rank in the generated vocabularies."""
    words, tags, domains = vocabularies()
    wc, tc, dc = zipf_cdf(N_WORDS), zipf_cdf(N_TAGS), zipf_cdf(N_DOMAINS)
    wpd, tpd, upd = 14.5, 0.75, 0.5  # words, hashtags, URLs per tweet

    def fw(r):
        return doc_freq(wc, r, wpd)

    return [
        ("rare word", words[30_000], fw(30_000)),
        ("mid word", words[1_000], fw(1_000)),
        ("common word", words[10], fw(10)),
        ("very common word", words[0], fw(0)),
        ("two words (AND)", f"{words[4]} {words[300]}", fw(4) * fw(300)),
        ("phrase", f'"{words[2]} {words[7]}"', None),
        ("#hashtag common", f"#{tags[0]}", doc_freq(tc, 0, tpd)),
        ("#hashtag rare", f"#{tags[3_000]}", doc_freq(tc, 3_000, tpd)),
        ("domain", domains[3], doc_freq(dc, 3, upd)),
        ("URL", f"https://www.{domains[0]}/story/7", None),
        ("OR", f"{words[500]} OR {words[800]}", fw(500) + fw(800)),
        ("excluded -word", f"{words[20]} -{words[1]}", fw(20) * (1 - fw(1))),
    ]


def pct(times: list[float], q: float) -> float:
    return float(np.percentile(np.array(times) * 1000, q))


def run_searches(args, ws_pk: int, emit) -> list[dict]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from monitor.models import Tweet, Workspace
    from monitor.selectors.claims import parse_query, tweet_search

    ws = Workspace.objects.get(pk=ws_pk)
    mix = queries(args.tweets)
    for kind, text, share in mix:
        t = time.perf_counter()
        from monitor.selectors.claims import matching

        query = parse_query(text)
        sql, params = query.tsquery()
        n_match = matching(ws, query).count()
        emit({"case": "query", "kind": kind, "query": text, "tsquery": [sql, params], "matches": n_match,
              "expected_share": None if share is None else round(share, 6),
              "count_s": round(time.perf_counter() - t, 2)})  # fmt: skip
    results = []
    all_times = []
    labels = args.labels.split(",") if args.labels else None
    for kind, text, _ in mix:
        for sort in args.sorts.split(","):
            hits = tweet_search(ws, text, sort=sort, labels=labels, limit=20)  # warm-up
            times = []
            for _ in range(args.repeat):
                t = time.perf_counter()
                hits = tweet_search(ws, text, sort=sort, labels=labels, limit=20)
                times.append(time.perf_counter() - t)
            all_times += times
            row = {"case": "search", "kind": kind, "query": text, "sort": sort, "labels": labels, "runs": len(times),
                   "p50_ms": round(pct(times, 50), 1), "p95_ms": round(pct(times, 95), 1),
                   "max_ms": round(max(times) * 1000, 1), "rows": len(hits.rows), "total": hits.total,
                   "capped": hits.capped, "times_ms": [round(x * 1000, 1) for x in times]}  # fmt: skip
            if row["p95_ms"] > args.slow_ms:
                with CaptureQueriesContext(connection) as ctx:
                    t = time.perf_counter()
                    tweet_search(ws, text, sort=sort, labels=labels, limit=20)
                    row["captured_ms"] = round((time.perf_counter() - t) * 1000, 1)
                row["sql_ms"] = round(sum(float(q["time"]) for q in ctx.captured_queries) * 1000, 1)
                row["statements"] = [{"ms": round(float(q["time"]) * 1000, 1), "sql": q["sql"]}
                                     for q in ctx.captured_queries]  # fmt: skip
            emit(row)
            results.append(row)
    emit({"case": "overall", "calls": len(all_times), "p50_ms": round(pct(all_times, 50), 1),
          "p95_ms": round(pct(all_times, 95), 1), "max_ms": round(max(all_times) * 1000, 1),
          "goal_p95_ms": args.slow_ms, "met": pct(all_times, 95) <= args.slow_ms})  # fmt: skip
    # the plans of the slow statements, each SQL once
    seen: set[str] = set()
    with connection.cursor() as cur:
        for row in results:
            for st in sorted(row.get("statements", []), key=lambda s: -s["ms"]):
                if st["ms"] < args.explain_ms or st["sql"] in seen:
                    continue
                seen.add(st["sql"])
                cur.execute("EXPLAIN (ANALYZE, BUFFERS) " + st["sql"])
                plan = "\n".join(r[0] for r in cur.fetchall())
                emit({"case": "plan", "kind": row["kind"], "sort": row["sort"], "ms": st["ms"],
                      "sql": st["sql"][:4000], "plan": plan})  # fmt: skip
    _ = Tweet
    return results


def run_claims(args, ws_pk: int, emit) -> list[dict]:
    """A claim page's first view (``--claims``) for each query of the mix that a claim accepts (at most
    ``CLAIM_MAX_TWEETS`` matches): its timeline, provenance, spreaders and publishers, read in that order as the
    claim page reads them, with the read cache on and cold (the workspace's data version bumped before each view,
    as an upload or a run bumps it), ``--claims-repeat`` views after one unmeasured view; the median of each read
    and of the four together. The generated workspace has no retweets and no computed cascades, so what is timed
    is mostly finding the claim's tweets and grouping them."""
    from django.conf import settings

    from monitor import selectors
    from monitor.cache import bump_data_version
    from monitor.models import Workspace
    from monitor.selectors.claims import CLAIM_MAX_TWEETS

    ws = Workspace.objects.get(pk=ws_pk)
    reads = {
        "timeline": selectors.claim_timeline,
        "provenance": selectors.claim_provenance,
        "spreaders": selectors.claim_spreaders,
        "publishers": selectors.claim_publishers,
    }
    out = []
    settings.SPREADWATCH_READ_CACHE_SECONDS = 600
    try:
        for kind, text, _ in queries(args.tweets):
            bump_data_version(ws.pk)
            try:  # the product's own check of the claim's breadth, as its page makes it
                selectors.claim_tweets(ws, text)
            except selectors.ClaimTooBroad:
                emit({"case": "claim", "kind": kind, "query": text, "refused": f"over {CLAIM_MAX_TWEETS:,} tweets"})
                continue
            times: dict[str, list[float]] = {name: [] for name in [*reads, "page"]}
            for view in range(args.claims_repeat + 1):
                bump_data_version(ws.pk)
                t0 = time.perf_counter()
                for name, read in reads.items():
                    t = time.perf_counter()
                    read(ws, text)
                    if view:
                        times[name].append(time.perf_counter() - t)
                if view:
                    times["page"].append(time.perf_counter() - t0)
            row = {"case": "claim", "kind": kind, "query": text, "views": args.claims_repeat}
            row.update({f"{name}_ms": round(pct(xs, 50), 1) for name, xs in times.items()})
            emit(row)
            out.append(row)
    finally:
        settings.SPREADWATCH_READ_CACHE_SECONDS = 0
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tweets", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--chunk", type=int, default=250_000, help="tweets generated and copied per job")
    ap.add_argument(
        "--layout",
        choices=("upload", "overlap", "scattered"),
        default="upload",
        help="each chunk a slice of the time span in time order (as the import writes an upload), the whole span in "
        "time order (uploads of the same days), or a slice in random order",
    )
    ap.add_argument("--workers", type=int, default=2, help="processes generating and copying chunks at once")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--sorts", default="relevance,newest,reach")
    ap.add_argument("--labels", default="", help="comma-separated truth labels every search is filtered by (the API's)")
    ap.add_argument("--slow-ms", type=float, default=150.0, help="the goal; slower calls get their SQL explained")
    ap.add_argument("--explain-ms", type=float, default=20.0, help="explain the statements of a slow call over this")
    ap.add_argument("--reuse", action="store_true", help="keep the database if it holds the workspace already")
    ap.add_argument("--claims", action="store_true", help="time a claim page's first view for each query it accepts")
    ap.add_argument("--claims-repeat", type=int, default=3)
    ap.add_argument("--drop", action="store_true", help="drop the database at the end")
    ap.add_argument("--json", help="write the rows here too")
    ap.add_argument(
        "--pairs",
        choices=("on", "off"),
        default="on",
        help="on: build the workspace's index of common word pairs before the searches, as the beat task would "
        "(services.search_pairs; its time and size reported), or keep the one built; off: drop it, and search "
        "without it",
    )
    args = ap.parse_args()
    args.url = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/sw_claims_bench")
    os.environ["DATABASE_URL"] = args.url

    import dj_database_url
    import psycopg
    from _setup import django_on_postgres, json_lines

    cfg = dj_database_url.parse(args.url)
    admin = {"host": cfg["HOST"], "port": cfg["PORT"] or 5432, "user": cfg["USER"], "password": cfg["PASSWORD"]}
    admin = {k: v for k, v in admin.items() if v}
    if not args.reuse:
        with psycopg.connect(dbname="postgres", autocommit=True, **admin) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{cfg["NAME"]}"')
    rows, emit = json_lines()
    t = time.perf_counter()
    if not django_on_postgres(ap.prog, args.url):
        return 1
    from django.db import connection

    from monitor.models import Workspace

    with connection.cursor() as cur:
        cur.execute("SELECT version(), current_setting('shared_buffers'), current_setting('work_mem'), "
                    "current_setting('jit'), current_setting('random_page_cost')")  # fmt: skip
        version, sb, wm, jit, rpc = cur.fetchone()
    emit({"case": "setup", "migrate_s": round(time.perf_counter() - t, 1), "postgres": version,
          "shared_buffers": sb, "work_mem": wm, "jit": jit, "random_page_cost": rpc, "cores": os.cpu_count(),
          "tweets": args.tweets, "seed": args.seed, "repeat": args.repeat,
          "selector_sha256": hashlib.sha256((ROOT / SELECTOR).read_bytes()).hexdigest()})  # fmt: skip
    ws = Workspace.objects.filter(slug=SLUG).first()
    if ws is None:
        ws_pk = load(args, emit)
    else:
        ws_pk = ws.pk
    pairs(args, ws_pk, emit)
    sizes(emit)
    results = run_searches(args, ws_pk, emit)
    claim_rows = run_claims(args, ws_pk, emit) if args.claims else []
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    if args.drop:
        from django.db import connections

        connections.close_all()
        with psycopg.connect(dbname="postgres", autocommit=True, **admin) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{cfg["NAME"]}"')
    sorts = args.sorts.split(",")
    print(f"\n{args.tweets:,} tweets; p50 / p95 ms ({args.repeat} calls each)\n")
    print("| query kind | query | matches | " + " | ".join(sorts) + " |")
    print("| --- | --- | --- | " + " | ".join("---" for _ in sorts) + " |")
    matches = {r["kind"]: r["matches"] for r in rows if r["case"] == "query"}
    for kind in dict.fromkeys(r["kind"] for r in results):
        cells = {r["sort"]: r for r in results if r["kind"] == kind}
        q = next(r["query"] for r in results if r["kind"] == kind)
        print(f"| {kind} | `{q}` | {matches[kind]:,} | "
              + " | ".join(f"{cells[s]['p50_ms']:.0f} / {cells[s]['p95_ms']:.0f}" for s in sorts) + " |")  # fmt: skip
    if claim_rows:
        print(f"\na claim page's first view (read cache cold), median of {args.claims_repeat} views, ms\n")
        print("| query kind | matches | timeline | provenance | spreaders | publishers | all four |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for r in claim_rows:
            print(f"| {r['kind']} | {matches[r['kind']]:,} | {r['timeline_ms']:.0f} | {r['provenance_ms']:.0f} | "
                  f"{r['spreaders_ms']:.0f} | {r['publishers_ms']:.0f} | {r['page_ms']:.0f} |")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
