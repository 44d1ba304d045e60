"""The engine's results live in unlogged tables on PostgreSQL; after crash recovery emptied them, the recovery
sweep finds the mark gone and recomputes every workspace that had results (``monitor.services.derived_rows``)."""

from __future__ import annotations

import pytest
from django.db import connection

from monitor import partitions, services
from monitor.models import CascadeInfluence, ComputeRun, DailyInfluence, DerivedRowsMark, Notice, Tweet
from monitor.services.derived_rows import DERIVED_TABLES, derived_rows_check
from tests.webapp import EXPECTED_TOTAL, THESIS, total_by_name

pytestmark = pytest.mark.skipif(connection.vendor != "postgresql", reason="unlogged tables are PostgreSQL's")


@pytest.fixture
def computed(ws_a, alice, import_files):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    assert total_by_name(ws_a) == pytest.approx(EXPECTED_TOTAL)
    return ws_a


def _crash() -> None:
    """What PostgreSQL's crash recovery does to unlogged tables: empties every one of them, the mark too."""
    with connection.cursor() as cur:
        cur.execute(f"TRUNCATE {', '.join(DERIVED_TABLES)}, {DerivedRowsMark._meta.db_table}")


def test_the_engines_results_and_their_mark_are_unlogged_tables(computed):
    """The per-cascade and daily rows' parents are partitioned (they hold no rows: migrations 0046 and 0048); their
    partitions are unlogged."""
    tables = (*DERIVED_TABLES, DerivedRowsMark._meta.db_table)
    parents = ("monitor_cascadeinfluence", "monitor_dailyinfluence")
    parts = [partitions.name(t, computed.pk) for t in parents]
    with connection.cursor() as cur:
        cur.execute("SELECT relname, relpersistence FROM pg_class WHERE relname = ANY(%s)", [[*tables, *parts]])
        want = {**dict.fromkeys(tables, "u"), **dict.fromkeys(parents, "p"), **dict.fromkeys(parts, "u")}
        assert dict(cur.fetchall()) == want
    assert DerivedRowsMark.objects.filter(pk=1).exists()  # written by the migration


def test_results_lost_in_a_crash_are_recomputed_by_the_sweep_with_a_notice(computed, alice, run_tasks):
    version = type(computed).objects.get(pk=computed.pk).data_version
    _crash()
    assert total_by_name(computed) == {}

    out = run_tasks(services.stalled_requeue)

    assert out["derived_rows_recomputed"] == 1
    run = ComputeRun.objects.filter(workspace=computed).latest("pk")
    assert run.status == ComputeRun.Status.DONE and run.created_by is None
    assert total_by_name(computed) == pytest.approx(EXPECTED_TOTAL)
    assert type(computed).objects.get(pk=computed.pk).data_version > version  # the pages' cache built before: stale
    assert not Tweet.objects.filter(workspace=computed, compute_status=Tweet.ComputeStatus.PENDING).exists()
    notice = Notice.objects.get(workspace=computed, user=alice)
    assert f"Run {run.pk} computes every tweet again" in notice.message and notice.url.endswith(f"/runs/{run.pk}/")
    assert DerivedRowsMark.objects.filter(pk=1).exists()
    # repaired once: the next sweep finds the mark
    assert run_tasks(services.stalled_requeue)["derived_rows_recomputed"] == 0
    assert ComputeRun.objects.filter(workspace=computed).latest("pk") == run


def test_while_the_mark_is_there_nothing_is_touched(computed, django_assert_max_num_queries):
    runs = ComputeRun.objects.count()
    rows = CascadeInfluence.objects.count(), DailyInfluence.objects.count()
    with django_assert_max_num_queries(1):
        assert derived_rows_check() == []
    assert ComputeRun.objects.count() == runs
    assert (CascadeInfluence.objects.count(), DailyInfluence.objects.count()) == rows
    assert total_by_name(computed) == pytest.approx(EXPECTED_TOTAL)


def test_a_recompute_the_budget_refuses_leaves_the_tweets_pending_and_says_so(computed, alice, run_tasks, settings):
    _crash()
    settings.SPREADWATCH_BUDGET_RUN_SECONDS = 0  # every run is over it

    assert run_tasks(derived_rows_check) == []

    assert not Tweet.objects.filter(workspace=computed, compute_status=Tweet.ComputeStatus.COMPUTED).exists()
    notice = Notice.objects.get(workspace=computed, user=alice)
    assert "was refused" in notice.message and notice.url.endswith("/runs/")
    assert DerivedRowsMark.objects.filter(pk=1).exists()
