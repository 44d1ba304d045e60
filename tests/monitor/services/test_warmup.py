"""Warming the read cache when a compute run finishes (``monitor.services.warmup``): after a run shows done the
busiest pages build nothing cold, and warming never fails or outlives the run."""

from __future__ import annotations

import logging
import time

import pytest
from django.core.cache import cache

from monitor import selectors, services
from monitor.models import ComputeRun
from tests.webapp import EXPECTED_TOTAL, THESIS, total_by_name


@pytest.fixture
def read_cache(settings):
    settings.SPREADWATCH_READ_CACHE_SECONDS = 60
    return settings


@pytest.fixture
def computed(ws_a, import_files, read_cache):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    return ws_a


def _built(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "monitor.cache" and "built" in r.getMessage()]


def _cold_builds(caplog) -> list[str]:
    """The reads a page built itself, less the who-amplifies-whom panels an account page computes when it opens:
    the warm-up leaves those to their first reader by design (docs/wtf.md: they would hold the run's "done" back
    by a computation per top account, for pages nobody may open)."""
    return [m for m in _built(caplog) if "built _panels_on_open" not in m]


def _busy_pages(ws) -> list[str]:
    """The pages the warm-up is for: the overview, the rankings (all publishers and each publisher's, as they
    open), the rankings API, the top accounts' pages and the largest cascade's explorer."""
    pubs = [p["twitter_id"] for p in selectors.publishers_summary(ws)]
    top = [r["twitter_id"] for r in selectors.ranking(ws, limit=20).rows]
    biggest = ws.tweets.filter(n_participants__gt=1).order_by("-n_participants", "pk").first()
    return [
        f"/w/{ws.slug}/",
        f"/w/{ws.slug}/ranking/",
        *[f"/w/{ws.slug}/publishers/{p}/" for p in pubs],
        f"/api/v1/workspaces/{ws.slug}/ranking/",
        *[f"/api/v1/workspaces/{ws.slug}/publishers/{p}/ranking/" for p in pubs],
        *[f"/w/{ws.slug}/accounts/{a}/" for a in top],
        f"/w/{ws.slug}/tweets/{biggest.tweet_id}/explore/",
    ]


def test_it_leaves_the_busiest_pages_nothing_to_build_after_a_compute_run(computed, alice, client, run_tasks, caplog):
    client.force_login(alice)
    pages = _busy_pages(computed)
    run = run_tasks(services.compute_run_start, workspace=computed, backend="cpu")  # bumps the data version
    run.refresh_from_db()
    assert run.status == ComputeRun.Status.DONE
    caplog.set_level(logging.DEBUG, logger="monitor.cache")
    for url in pages:
        assert client.get(url).status_code == 200, url
    assert _cold_builds(caplog) == []
    accounts = sum(1 for url in pages if "/accounts/" in url)
    assert sum("built _panels_on_open" in m for m in _built(caplog)) == accounts  # each computed on its first open
    assert total_by_name(computed) == EXPECTED_TOTAL


def test_the_pages_build_their_reads_after_a_run_when_warming_is_off(
    computed, alice, client, run_tasks, caplog, read_cache
):
    # the control of the test above: the same pages after a run that did not warm
    read_cache.SPREADWATCH_WARM_SECONDS = 0
    client.force_login(alice)
    pages = _busy_pages(computed)
    run_tasks(services.compute_run_start, workspace=computed, backend="cpu")
    caplog.set_level(logging.DEBUG, logger="monitor.cache")
    for url in pages:
        assert client.get(url).status_code == 200, url
    assert any("built ranking" in m for m in _cold_builds(caplog))


def test_a_warm_up_that_fails_does_not_fail_the_run(computed, alice, client, run_tasks, monkeypatch):
    from django.db import connection

    def broken(ws):  # an SQL error: the run's transaction must survive it (savepoint)
        with connection.cursor() as cur:
            cur.execute("SELECT 1 / 0")

    monkeypatch.setattr(selectors, "overview_page", broken)
    run = run_tasks(services.compute_run_start, workspace=computed, backend="cpu")
    run.refresh_from_db()
    assert run.status == ComputeRun.Status.DONE, run.error
    assert any("1 failed" in n for n in run.notes)
    monkeypatch.undo()
    assert total_by_name(computed) == EXPECTED_TOTAL
    client.force_login(alice)
    assert client.get(f"/w/{computed.slug}/").status_code == 200


def _run_leaving_pages_cold(computed, run_tasks, caplog) -> ComputeRun:
    """A run whose warm-up ran out of time: done, some pages left to their first reader, nothing failed or logged."""
    caplog.set_level(logging.WARNING, logger="monitor.services.warmup")
    run = run_tasks(services.compute_run_start, workspace=computed, backend="cpu")
    run.refresh_from_db()
    assert run.status == ComputeRun.Status.DONE, run.error
    assert any("left to their first reader" in n for n in run.notes), run.notes
    assert not any("failed" in n for n in run.notes), run.notes
    assert [r.getMessage() for r in caplog.records if r.name == "monitor.services.warmup"] == []
    return run


def test_a_warm_up_whose_bound_runs_out_before_it_chooses_the_next_pages_fails_nothing(
    computed, run_tasks, monkeypatch, caplog, read_cache
):
    # at 10M retweets the largest cascades' query ran after the bound, under the statement timeout the last read
    # had left set, outside any savepoint: it was cancelled, the warm-up's transaction aborted and the run logged
    # an error for a warm-up that had only run out of time
    import time

    from django.db import connection

    from monitor.services import warmup

    read_cache.SPREADWATCH_WARM_SECONDS = 1.0

    def late_top_accounts(ws, n):
        time.sleep(1.2)  # the bound runs out while the top accounts are chosen
        return []

    def slow_cascades(ws, n):
        with connection.cursor() as cur:
            cur.execute("SELECT pg_sleep(2)")
        return []

    monkeypatch.setattr(warmup, "_top_accounts", late_top_accounts)
    monkeypatch.setattr(warmup, "_largest_cascades", slow_cascades)
    run = _run_leaving_pages_cold(computed, run_tasks, caplog)
    assert run.timings["warm_s"] < 3.0  # the cascades' query was stopped, not given its 2 s after the 1.2


def test_a_read_stopped_by_the_warm_ups_bound_is_left_to_its_page_not_counted_failed(
    computed, run_tasks, monkeypatch, caplog, read_cache
):
    # the 10M run on the H200 logged a traceback and "1 failed" for the last read begun, which the statement
    # timeout of the bound had stopped: a read left cold, as those not reached are
    from django.db import connection

    from monitor.services import warmup

    read_cache.SPREADWATCH_WARM_SECONDS = 1.0

    def slow_overview(ws):
        with connection.cursor() as cur:
            cur.execute("SELECT pg_sleep(3)")

    monkeypatch.setattr(selectors, "overview_page", slow_overview)
    run = _run_leaving_pages_cold(computed, run_tasks, caplog)
    assert run.timings["warm_s"] < 2.5  # stopped at the bound, not given its 3 s
    assert warmup._one(lambda: 1 / 0, time.monotonic() + 60) is False  # before the bound: a failure


def test_a_warm_up_reads_the_all_time_sums_from_the_database_once_and_never_back_from_the_cache(
    computed, run_tasks, monkeypatch
):
    """The overview builds the all-time sums; the warm-up's own read of them must not fetch them back whole (at
    10M retweets a 95 MB entry, 173 MB before its columns were narrowed, unpickled for nothing)."""
    from django.core.cache import caches

    from monitor.selectors import rankings

    backend = type(caches["default"])
    hits: list[str] = []
    real_get = backend.get

    def get(self, key, *args, **kwargs):
        value = real_get(self, key, *args, **kwargs)
        if value is not None:
            hits.append(key)
        return value

    monkeypatch.setattr(backend, "get", get)
    rankings._ALL_TIME.clear()
    run = run_tasks(services.compute_run_start, workspace=computed, backend="cpu")
    run.refresh_from_db()
    assert run.status == ComputeRun.Status.DONE and "warm_s" in run.timings
    key = rankings.all_time_sums.key_for(computed)  # the version the run committed, which it warmed
    assert cache.has_key(key)
    assert key not in hits
    assert total_by_name(computed) == EXPECTED_TOTAL


def test_a_warm_up_stops_at_its_time_limit_and_says_what_it_left(computed, run_tasks, read_cache):
    read_cache.SPREADWATCH_WARM_SECONDS = 1e-9
    run = run_tasks(services.compute_run_start, workspace=computed, backend="cpu")
    run.refresh_from_db()
    assert run.status == ComputeRun.Status.DONE and "warm_s" in run.timings
    assert any("left to their first reader" in n for n in run.notes), run.notes


def test_no_other_process_sees_the_new_version_before_the_run_commits(computed, run_tasks, monkeypatch):
    from monitor import cache as read_cache
    from monitor.services import warmup

    seen = {}

    def warm_and_look(**kw):
        out = real(**kw)
        # what another process would read now: the version copy in the cache, else the committed row
        seen["copy"] = cache.get(read_cache._version_key(computed.pk))
        return out

    real = warmup.read_cache_warm
    monkeypatch.setattr("monitor.services.runs.read_cache_warm", warm_and_look)
    before = computed.__class__.objects.get(pk=computed.pk).data_version
    run_tasks(services.compute_run_start, workspace=computed, backend="cpu")
    assert seen["copy"] is None  # the warm-up read the new version inside the transaction and did not copy it
    assert computed.__class__.objects.get(pk=computed.pk).data_version == before + 1


def test_the_values_warmed_for_a_run_that_did_not_commit_are_dropped(computed, run_tasks, monkeypatch):
    from monitor import jobs
    from monitor.services import runs, warmup

    warmed = {}

    def warm(**kw):
        out = warmup.read_cache_warm(**kw)
        warmed["keys"] = out.keys
        return out

    def enqueue(task, *args):
        if task == jobs.EVALUATE_ALERTS:  # queued after the warm-up, in the run's last transaction
            raise RuntimeError("the run's transaction fails after the warm-up")

    monkeypatch.setattr(runs, "read_cache_warm", warm)
    monkeypatch.setattr(runs.jobs, "enqueue_on_commit", enqueue)
    with pytest.raises(RuntimeError):
        services.compute_batch_run(
            batch_id=services.compute_run_start(workspace=computed, backend="cpu").batches.get().pk
        )
    assert warmed["keys"]
    assert cache.get_many(warmed["keys"]) == {}  # the version they were for was rolled back: its number comes again


def test_the_progress_bar_shows_the_aggregates_phase_while_the_run_warms_the_cache(ws_a, run_tasks, monkeypatch):
    from monitor.selectors import collection_progress
    from monitor.services import runs
    from monitor.services.warmup import WarmResult

    seen = []

    def warm(*, workspace, rest=False):
        c = workspace.collections.get()
        c.refresh_from_db()
        seen.append((c.status, collection_progress(c)["phase"]))  # what the collection page polls meanwhile
        return WarmResult()

    monkeypatch.setattr(runs, "read_cache_warm", warm)
    run_tasks(services.collection_create, workspace=ws_a, files=[THESIS / "tweets.csv", THESIS / "follows.csv"])
    assert seen == [("computing", "aggregates")]


def test_by_default_every_busy_page_is_warmed_before_the_run_shows_done(
    computed, alice, client, run_tasks, caplog, monkeypatch, settings
):
    from monitor.services import runs, warmup

    settings.SPREADWATCH_WARM_REST = "before"
    calls = []
    monkeypatch.setattr(runs, "read_cache_warm", lambda **kw: calls.append(kw) or warmup.read_cache_warm(**kw))
    monkeypatch.setattr(runs, "warm_rest_on_commit", lambda ws: calls.append("after the commit"))
    client.force_login(alice)
    pages = _busy_pages(computed)
    run = run_tasks(services.compute_run_start, workspace=computed, backend="cpu")
    run.refresh_from_db()
    assert [c["rest"] for c in calls] == [True]  # one warm-up, in the run's transaction, nothing after it
    caplog.set_level(logging.DEBUG, logger="monitor.cache")
    for url in pages:
        assert client.get(url).status_code == 200, url
    assert _cold_builds(caplog) == []


def test_the_pages_opened_first_are_warm_when_the_run_shows_done_and_the_rest_only_after_its_commit(
    computed, alice, client, run_tasks, caplog, monkeypatch, settings
):
    # SPREADWATCH_WARM_REST=after: what the run's transaction warms, and what waits for its commit: the ranking
    # pages are warm when it commits, the account pages, explorers and variants are warmed by the commit's hook
    from monitor.services import runs, warmup

    settings.SPREADWATCH_WARM_REST = "after"

    order = []
    monkeypatch.setattr(runs, "read_cache_warm", lambda **kw: order.append("part 1") or warmup.read_cache_warm(**kw))
    real_rest = warmup.read_cache_warm_rest
    monkeypatch.setattr(warmup, "read_cache_warm_rest", lambda **kw: order.append("rest") or real_rest(**kw))
    client.force_login(alice)
    pages = _busy_pages(computed)
    with_hooks = []
    monkeypatch.setattr(runs, "warm_rest_on_commit", lambda ws: with_hooks.append(ws) or warmup.warm_rest_on_commit(ws))
    run = run_tasks(services.compute_run_start, workspace=computed, backend="cpu")
    run.refresh_from_db()
    assert order == ["part 1", "rest"] and with_hooks == [computed.pk]
    caplog.set_level(logging.DEBUG, logger="monitor.cache")
    for url in pages:
        assert client.get(url).status_code == 200, url
    assert _cold_builds(caplog) == []


def test_the_rest_is_not_warmed_for_a_run_that_did_not_commit(computed, run_tasks, monkeypatch, settings):
    from monitor import jobs
    from monitor.services import runs, warmup

    settings.SPREADWATCH_WARM_REST = "after"

    rest = []
    monkeypatch.setattr(warmup, "read_cache_warm_rest", lambda **kw: rest.append(kw))

    def enqueue(task, *args):
        if task == jobs.EVALUATE_ALERTS:
            raise RuntimeError("the run's transaction fails after the warm-up")

    monkeypatch.setattr(runs.jobs, "enqueue_on_commit", enqueue)
    with pytest.raises(RuntimeError):
        services.compute_batch_run(
            batch_id=services.compute_run_start(workspace=computed, backend="cpu").batches.get().pk
        )
    assert rest == []


@pytest.mark.django_db(transaction=True)
def test_a_worker_thread_warms_the_rest_after_the_commit(ws_a, alice, client, run_tasks, caplog, settings):
    # the production path: committed data, the rest warmed by a thread with its own connection
    from monitor.services import warmup

    settings.SPREADWATCH_READ_CACHE_SECONDS = 60
    settings.SPREADWATCH_WARM_REST = "thread"
    ws_a.refresh_from_db()
    services.collection_create(
        workspace=ws_a, files=[THESIS / "tweets.csv", THESIS / "follows.csv"], user=alice, name="thesis"
    )
    assert warmup.wait_for_rest(timeout=60)
    client.force_login(alice)
    pages = _busy_pages(ws_a)
    caplog.set_level(logging.DEBUG, logger="monitor.cache")
    for url in pages:
        assert client.get(url).status_code == 200, url
    assert _cold_builds(caplog) == []
    assert total_by_name(ws_a) == EXPECTED_TOTAL
