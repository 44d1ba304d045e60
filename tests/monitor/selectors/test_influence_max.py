"""The counter-campaign planner's reads: a publisher's plans and its newest finished one, a run looked up within
its workspace and algorithm, and a plan read in a fixed handful of queries whatever K is."""

from __future__ import annotations

import pytest
from django.http import Http404

from monitor import selectors, services
from monitor.models import Account, ComputeRun
from tests.webapp import THESIS


@pytest.fixture
def thesis(ws_a, import_files):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    return ws_a


def _plan(run_tasks, ws, twitter_id: int, **params) -> ComputeRun:
    pk = Account.objects.get(workspace=ws, twitter_id=twitter_id).pk
    run = run_tasks(
        services.compute_run_start,
        workspace=ws,
        backend="cpu",
        algorithm="influence_max",
        params={"publisher": pk, "evaluate": 500, "batches": 1, **params},
    )
    run.refresh_from_db()
    return run


def test_a_publisher_s_plans_and_its_newest_finished_one(thesis, run_tasks):
    b, e = (Account.objects.get(workspace=thesis, twitter_id=t) for t in (102, 105))
    first = _plan(run_tasks, thesis, 102, k=1)
    second = _plan(run_tasks, thesis, 102, k=2)
    of_e = _plan(run_tasks, thesis, 105, k=1)
    going = services.compute_run_start(workspace=thesis, algorithm="influence_max", params={"publisher": b.pk})
    assert [r.pk for r in selectors.influence_max_runs(thesis, publisher=b)] == [going.pk, second.pk, first.pk]
    assert [r.pk for r in selectors.influence_max_runs(thesis, publisher=e)] == [of_e.pk]
    assert selectors.influence_max_latest(thesis, b) == second  # the queued one has no result
    assert selectors.influence_max_plan(thesis, going) is None
    assert selectors.influence_max_publisher(thesis, second) == b


def test_runs_are_found_within_their_workspace_and_algorithm(thesis, ws_b, run_tasks):
    run = _plan(run_tasks, thesis, 102, k=1)
    assert selectors.influence_max_run_get(thesis, run.pk) == run
    with pytest.raises(Http404):
        selectors.influence_max_run_get(ws_b, run.pk)
    influence = ComputeRun.objects.filter(workspace=thesis, algorithm="influence").first()
    with pytest.raises(Http404):
        selectors.influence_max_run_get(thesis, influence.pk)


@pytest.mark.parametrize("k", [1, 4])
def test_a_plan_is_read_in_three_queries_whatever_k(thesis, run_tasks, django_assert_num_queries, k):
    run = _plan(run_tasks, thesis, 102, k=k, p=0.2)
    with django_assert_num_queries(3):  # the result with its publisher, the chosen accounts, the baseline's names
        plan = selectors.influence_max_plan(thesis, run)
    assert len(plan["seeds"]) == k and [s["rank"] for s in plan["seeds"]] == list(range(1, k + 1))
    assert len(plan["curve"]) == k and plan["curve"][-1][1] == plan["result"].estimate
    assert [b["twitter_id"] for b in plan["baseline"]] == [105, 106, 103, 101][:k]
    chosen = {s["account"] for s in plan["seeds"]}
    assert [b["chosen"] for b in plan["baseline"]] == [b["account"] in chosen for b in plan["baseline"]]
    c = plan["comparison"]
    assert c["difference"] == plan["result"].spread - c["baseline"]["spread"]
    assert c["overlap"] == len(chosen & {b["account"] for b in plan["baseline"]})
