"""The merge's UPDATEs of stored rows on SQLite (the embedded default): a re-upload updates every stored retweet
it repeats, so the statement must reach each stored row through its key, not scan the staging table once per
stored row (a re-upload of the 818 Twitter16 trees did not finish in ten minutes that way).

Plain ``sqlite3`` here: the suite's Django connection is PostgreSQL, and these are the statements' own plans."""

from __future__ import annotations

import sqlite3

import pytest

from monitor.db import Dialect
from monitor.services.ingest.merge import _raise_counts_sql
from monitor.services.ingest.stored_retweets import update_retweets_sql

SQLITE = Dialect(postgres=False)
N = 20_000


def _sql(statement: str) -> str:
    """As Django's SQLite cursor passes it on: ``%%`` (escaped for its ``%s`` parameters) is ``%``."""
    return statement.replace("%%", "%")


@pytest.fixture
def db():
    con = sqlite3.connect(":memory:")
    con.executescript(
        """
        CREATE TABLE monitor_retweet (id INTEGER PRIMARY KEY, tweet_id INTEGER, retweeter_id INTEGER,
            retweet_id INTEGER, created_at TEXT, followers_count INTEGER, collection_id INTEGER);
        CREATE UNIQUE INDEX retweet_one_per_user ON monitor_retweet (tweet_id, retweeter_id);
        CREATE TABLE monitor_followercount (id INTEGER PRIMARY KEY, account_id INTEGER, observed_at TEXT,
            count INTEGER, collection_id INTEGER);
        CREATE UNIQUE INDEX fc_unique ON monitor_followercount (account_id, observed_at);
        CREATE TEMP TABLE upd (tweet INTEGER, account INTEGER, rid INTEGER, created_at REAL, followers REAL);
        CREATE TEMP TABLE own (account INTEGER, t REAL, n INTEGER);
        """
    )
    ts = _sql(SQLITE.epoch_to_ts("?"))
    con.executemany(
        f"INSERT INTO monitor_retweet (tweet_id, retweeter_id, created_at, followers_count) VALUES (?, ?, {ts}, 5)",
        [(i // 100, i, 1_600_000_000 + i) for i in range(N)],
    )
    # every stored retweet repeated, half of them said to have happened a minute earlier
    con.executemany(
        "INSERT INTO upd VALUES (?, ?, ?, ?, ?)",
        [(i // 100, i, 10_000 + i, 1_600_000_000 + i - (60 if i % 2 else -60), 7) for i in range(N)],
    )
    con.executemany(
        f"INSERT INTO monitor_followercount (account_id, observed_at, count) VALUES (?, {ts}, 3)",
        [(i, 1_600_000_000) for i in range(N)],
    )
    con.executemany("INSERT INTO own VALUES (?, ?, ?)", [(i, 1_600_000_000, 3 + i % 2) for i in range(N)])
    con.execute("ANALYZE")
    yield con
    con.close()


def _plan(con, sql: str) -> str:
    return "\n".join(row[-1] for row in con.execute("EXPLAIN QUERY PLAN " + sql))


def test_it_reaches_stored_retweets_through_their_key(db):
    sql = _sql(update_retweets_sql(SQLITE, 1, "upd"))
    plan = _plan(db, sql)
    assert "CORRELATED" not in plan, plan
    assert "retweet_one_per_user" in plan, plan


def test_it_moves_a_stored_retweet_earlier_and_only_earlier(db):
    db.execute(_sql(update_retweets_sql(SQLITE, 1, "upd")))
    rows = db.execute("SELECT retweeter_id, retweet_id, followers_count FROM monitor_retweet ORDER BY id").fetchall()
    moved = [r for r in rows if r[1] is not None]
    assert len(moved) == N // 2
    assert all(r[0] % 2 == 1 and r[1] == 10_000 + r[0] and r[2] == 7 for r in moved)


def test_it_raises_follower_counts_through_their_key(db):
    sql = _sql(_raise_counts_sql(SQLITE, 1, "own"))
    plan = _plan(db, sql)
    assert "CORRELATED" not in plan, plan
    db.execute(sql)
    counts = dict(db.execute("SELECT account_id, count FROM monitor_followercount"))
    assert sum(1 for a, c in counts.items() if c == 4) == N // 2
    assert all(c == (4 if a % 2 else 3) for a, c in counts.items())
