"""A web process imports its URL configuration and compiles its templates as it starts (monitor/boot.py), so the
first analysts after a deploy or restart do not pay for it."""

from __future__ import annotations

import gc
import importlib
import sys

import pytest
from django.template import engines

from monitor import boot


@pytest.fixture(autouse=True)
def _unfrozen():
    """Priming freezes the test process's objects (gc.freeze): thawed after each test, as the suite expects."""
    yield
    gc.unfreeze()


def _cached_names() -> set[str]:
    """The template names the engine's cached loader holds compiled (empty when the loader does not cache)."""
    loader = engines["django"].engine.template_loaders[0]
    return {key.split("-")[0] if "-" in key else key for key in getattr(loader, "get_template_cache", {})}


def test_priming_compiles_every_template_and_imports_the_urls(db, settings):
    settings.SPREADWATCH_PRIME_WEB = True
    engines["django"].engine.template_loaders[0].reset()
    names = boot._template_names()
    assert "frontend/overview.html" in names and "frontend/includes/ranking_results.html" in names
    out = boot.prime_web_process()
    assert out["urls"] > 0 and out["failed"] == 0
    assert out["templates"] == len(names) > 30
    assert set(names) <= _cached_names(), "templates left for their first request"


def test_priming_builds_the_all_time_snapshot_of_the_latest_computed_workspace(ws_a, import_files, settings):
    from monitor.cache import data_version
    from monitor.selectors import rankings
    from tests.webapp import THESIS

    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    settings.SPREADWATCH_READ_CACHE_SECONDS, settings.SPREADWATCH_PRIME_WEB = 60, True
    rankings._ALL_TIME.clear()
    out = boot.prime_web_process()
    assert out["snapshots"] == 1 and out["failed"] == 0
    snap = rankings._ALL_TIME[data_version(ws_a)]
    # the pages' default order (the spreaders, by total), built: the first overview or ranking only pages it
    assert (None, "total", True) in snap._orders
    settings.SPREADWATCH_PRIME_WEB_WORKSPACES = 0
    rankings._ALL_TIME.clear()
    assert boot.prime_web_process()["snapshots"] == 0 and not rankings._ALL_TIME


def test_priming_sorts_only_the_first_accounts_of_a_large_snapshot(ws_a, import_files, settings, monkeypatch):
    # a snapshot of more accounts than four times the top a page reads is not sorted whole as a process starts
    from monitor.cache import data_version
    from monitor.selectors import rankings
    from tests.webapp import THESIS

    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    settings.SPREADWATCH_READ_CACHE_SECONDS, settings.SPREADWATCH_PRIME_WEB = 60, True
    monkeypatch.setattr(rankings._AllTime, "TOP_MIN", 1)  # the sample's few accounts stand for millions
    rankings._ALL_TIME.clear()
    assert boot.prime_web_process()["snapshots"] == 1
    snap = rankings._ALL_TIME[data_version(ws_a)]
    key = (None, "total", True)
    assert key not in snap._orders and key in snap._tops
    ids, _, _ = snap.ordered(None, "total", True)
    assert snap._tops[key][0].tolist() == ids[: len(snap._tops[key][0])].tolist()


def test_priming_can_be_turned_off(db, settings):
    settings.SPREADWATCH_PRIME_WEB = False
    engines["django"].engine.template_loaders[0].reset()
    assert boot.prime_web_process() == {
        "urls": 0,
        "templates": 0,
        "frozen": 0,
        "snapshots": 0,
        "failed": 0,
        "seconds": 0.0,
    }
    assert "frontend/overview.html" not in _cached_names()


def test_the_wsgi_module_primes_the_process_before_serving(monkeypatch):
    calls = []
    monkeypatch.setattr(boot, "prime_web_process", lambda: calls.append(1) or {})
    monkeypatch.delitem(sys.modules, "monitor.wsgi", raising=False)
    wsgi = importlib.import_module("monitor.wsgi")
    assert calls == [1] and callable(wsgi.application)


def test_a_primed_web_process_and_a_ready_worker_freeze_their_start_up_objects(db, settings):
    """``gc.freeze``: what a process loaded as it started leaves the cyclic collector's passes (the explorer of a
    large cascade built its lists a third faster); ``SPREADWATCH_GC_FREEZE=0`` turns it off."""
    from monitor import celery

    settings.SPREADWATCH_PRIME_WEB = settings.SPREADWATCH_GC_FREEZE = True
    gc.unfreeze()
    out = boot.prime_web_process()
    assert out["frozen"] > 10_000 and gc.get_freeze_count() > 10_000 and out["failed"] == 0
    gc.unfreeze()
    celery._freeze_long_lived(sender=None)  # the handler of worker_ready and worker_process_init
    assert gc.get_freeze_count() > 10_000
    gc.unfreeze()
    settings.SPREADWATCH_GC_FREEZE = False
    assert boot.prime_web_process()["frozen"] == 0 and gc.get_freeze_count() == 0
    assert boot.freeze_long_lived() == 0  # (the autouse fixture thaws the process after the test)
