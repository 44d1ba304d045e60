"""An import's memory does not grow with the upload (``monitor.services.ingest.stager``): the stager copies each
chunk into partitioned temporary tables and keeps none of it, the upload-wide duplicate check keeps its
references in the database, and the merge reads back one partition at a time. Counted, not timed: rows held,
Python allocations (tracemalloc, which sees NumPy's arrays), the duplicate check's table."""

from __future__ import annotations

import tracemalloc

import pytest
from django.db import connection

from compute.formats import ReadReport
from monitor.models import Collection
from monitor.services.ingest import load_files, reading
from monitor.services.ingest.reading import detect, read_into
from monitor.services.ingest.seen import StagedSeenTweets
from monitor.services.ingest.stager import Stager

from .synthetic import write_v1

pytestmark = pytest.mark.django_db

CHUNK = 200


def _read(files, *, seen=None) -> Stager:
    st = Stager(connection.cursor(), mode="strict", report=ReadReport())
    for path in files:
        st.names.append(path.name)
        fmt = detect(path, path.name, "auto")
        # 16 KiB reads (no line here is longer): the smaller file spans several reads too, so both hold as much
        read_into(st, path, path.name, fmt, "strict", st.report, lambda b, t: None, seen=seen, max_record=1 << 14)
    return st


def _held_between_chunks(files, monkeypatch) -> int:
    """The most memory held (traced Python and NumPy allocations) as the stager is handed each chunk."""
    held = []

    def sampled(method):
        def call(self, *args, **kw):
            held.append(tracemalloc.get_traced_memory()[0])
            return method(self, *args, **kw)

        return call

    with monkeypatch.context() as m:
        m.setattr(Stager, "add_tweets", sampled(Stager.add_tweets))
        m.setattr(Stager, "add_follows", sampled(Stager.add_follows))
        with connection.cursor() as cur:
            temps: list[str] = []
            tracemalloc.start()
            try:
                st = _read(files, seen=StagedSeenTweets(cur, temps))
            finally:
                tracemalloc.stop()
            st.temps += temps
            st.drop()
    return max(held)


def test_it_reads_four_times_the_rows_in_the_same_memory(tmp_path, monkeypatch):
    monkeypatch.setattr(reading, "TWEET_CHUNK", CHUNK)
    monkeypatch.setattr(reading, "FOLLOW_CHUNK", CHUNK)
    small = write_v1(tmp_path / "small", retweets=1_000, seed=1)
    big = write_v1(tmp_path / "big", retweets=4_000, seed=1)
    _held_between_chunks(small, monkeypatch)  # one-off costs (lazy imports, caches) paid here
    held_small, held_big = _held_between_chunks(small, monkeypatch), _held_between_chunks(big, monkeypatch)
    # holding the rows read (the stager's parts, the duplicate check's arrays, a names dict) makes it grow
    # with the upload: 4x the rows, ~4x the memory
    assert held_big < 1.3 * held_small, (held_small, held_big)


def test_it_holds_at_most_one_chunk_and_keeps_no_rows(tmp_path, monkeypatch):
    monkeypatch.setattr(reading, "TWEET_CHUNK", CHUNK)
    monkeypatch.setattr(reading, "FOLLOW_CHUNK", CHUNK)
    files = write_v1(tmp_path, retweets=2_000, seed=2)
    with connection.cursor() as cur:
        seen = StagedSeenTweets(cur, [])
        st = _read(files, seen=seen)
        try:
            assert st.rows > 4 * CHUNK and st.n_follows > 4 * CHUNK
            # a chunk is CHUNK records; a v1.1 retweet line gives two statuses (it embeds its original)
            assert 0 < st.peak_chunk_rows <= 2 * CHUNK + 2
            # follow edges come in 4 MiB blocks of lines (a chunk is CHUNK edges and the rest of its block)
            assert 0 < st.peak_chunk_follows <= st.n_follows
            assert not st.edge_parts and not st.given  # the streamed formats leave nothing in memory
            # the duplicate check's references are rows of its table, not arrays in this process
            assert len(seen) > 2_000 and len(seen._tid) == 0 and seen._n == 0
            cur.execute(f"SELECT count(*) FROM {seen.table}")
            assert cur.fetchone()[0] == len(seen)
        finally:
            st.drop()


def test_it_merges_one_partition_at_a_time(ws_a, tmp_path, settings, monkeypatch):
    import monitor.services.ingest as ingest

    settings.SPREADWATCH_INGEST_PARTITIONS = 4
    files = write_v1(tmp_path, retweets=3_000, seed=3)
    coll = Collection.objects.create(workspace=ws_a, name="partitions")
    seen = {}
    real_merge = ingest.merge

    def merge_and_look(cur, st, ws, c, progress=None):
        out = real_merge(cur, st, ws, c, progress)
        seen["rows"], seen["follows"], seen["peak"], seen["k"] = st.rows, st.n_follows, st.peak_loaded_rows, st.k
        return out

    monkeypatch.setattr(ingest, "merge", merge_and_look)
    res = load_files(
        [(p, p.name, "auto") for p in files], workspace_id=ws_a.pk, collection_id=coll.pk, mode="strict", store=True
    )
    assert res.counts["retweets_stored"] > 2_000 and seen["k"] == 4
    biggest = max(seen["rows"], seen["follows"])
    # a partition holds about a quarter of the rows (the hash spreads them; 0.4: room for its unevenness)
    assert 0 < seen["peak"] < 0.4 * biggest, seen
