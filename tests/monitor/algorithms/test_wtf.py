"""Who amplifies whom as a compute-run algorithm: its parameters, its plan (accounts, or a publisher's top
spreaders, in batches of seeds), the stored rows against the engine's own result on the same graph, results reused
on the same graph, a cancelled batch storing nothing, a batch delivered twice storing once."""

from __future__ import annotations

import numpy as np
import pytest
from django.core.exceptions import ValidationError

from compute.algorithms import wtf as engine
from compute.graphs import graph_from_edges
from monitor import selectors, services
from monitor.algorithms import RunCancelled
from monitor.algorithms import wtf as web
from monitor.models import Account, ComputeBatch, Follow, WtfEntry, WtfResult
from monitor.services.runs import compute_batch_run
from tests.webapp import THESIS

WTF = web.WTF


@pytest.fixture
def thesis(ws_a, import_files):
    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    assert c.status == "done", c.error
    return ws_a


def pk(ws, twitter_id: int) -> int:
    return Account.objects.get(workspace=ws, twitter_id=twitter_id).pk


def start(run_tasks, ws, **params):
    return run_tasks(services.compute_run_start, workspace=ws, tweet_pks=[], algorithm="wtf", params=params)


def engine_lists(ws, seed_pk: int, direction: str, *, circle: int = 1000, top: int = 20) -> dict:
    """The engine's own result for the seed on the workspace's follows, as (account pk, score, ppr) lists."""
    src, dst = zip(*Follow.objects.filter(workspace=ws).values_list("follower_id", "followee_id"), strict=True)
    g = graph_from_edges(np.array(src), np.array(dst))
    (rec,) = engine.wtf(g, g.index_of([seed_pk]), direction=direction, circle=circle, top=top, backend="cpu")
    return {
        name: [
            (int(g.ids[n]), s, p)
            for n, s, p in zip(
                getattr(rec, name).tolist(),
                getattr(rec, f"{name}_score").tolist(),
                getattr(rec, f"{name}_ppr").tolist(),
            )
        ]
        for name in ("relevance", "similarity")
    } | {"iterations": rec.iterations, "money_iterations": rec.money_iterations, "circle": len(rec.circle)}


def stored_lists(result: WtfResult) -> dict:
    return {
        name: list(result.entries.filter(list=name).order_by("rank").values_list("account_id", "score", "ppr"))
        for name in ("relevance", "similarity")
    }


# --- parameters --------------------------------------------------------------------------------------------------


def test_it_fills_in_the_defaults_and_keeps_ids_as_strings():
    assert WTF.clean_params({"accounts": [102, "103", 102]}) == {
        "accounts": ["102", "103"],
        "direction": "both",
        "circle": 1000,
        "top": 20,
    }
    assert WTF.clean_params({"publisher": "102"}) == {
        "publisher": "102",
        "spreaders": 20,
        "direction": "followers",
        "circle": 1000,
        "top": 20,
    }


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, "either accounts or a publisher"),
        ({"accounts": ["1"], "publisher": "2"}, "either accounts or a publisher"),
        ({"accounts": ["1"], "seed": 3}, "unknown: seed"),
        ({"accounts": ["x"]}, "accounts: not a Twitter id"),
        ({"accounts": []}, "give 1 to 640 accounts"),
        ({"accounts": ["1"], "direction": "sideways"}, "direction must be one of both, follows, followers"),
        ({"accounts": ["1"], "circle": 0}, "circle must be between 1 and 100000"),
        ({"accounts": ["1"], "top": True}, "top must be an integer"),
        ({"accounts": ["1"], "spreaders": 5}, "spreaders goes with a publisher"),
        ({"publisher": "2", "spreaders": 641}, "spreaders must be between 1 and 640"),
        ({"accounts": ["1"], "max_iter": 0}, "max_iter must be between 1 and 1000"),
        ({"accounts": ["1"], "max_iter": "many"}, "max_iter must be an integer"),
    ],
)
def test_it_refuses_bad_parameters_naming_them(params, message):
    with pytest.raises(ValueError, match=message):
        WTF.clean_params(params)


def test_its_batches_are_the_engines_block():
    assert web.SEEDS_PER_BATCH == engine.BATCH


def test_it_refuses_an_account_of_another_workspace(thesis, ws_b, run_tasks):
    with pytest.raises(ValidationError, match="accounts: not in this workspace: 102"):
        start(run_tasks, ws_b, accounts=["102"])


# --- runs --------------------------------------------------------------------------------------------------------


def test_it_stores_what_the_engine_computes_in_both_directions(thesis, run_tasks):
    run = start(run_tasks, thesis, accounts=["105"], top=5)
    run.refresh_from_db()
    assert run.status == "done", run.error
    assert run.n_batches == 1 and run.params["accounts"] == ["105"]
    c = pk(thesis, 105)
    for direction in ("follows", "followers"):
        r = WtfResult.objects.get(workspace=thesis, seed_id=c, direction=direction)
        want = engine_lists(thesis, c, direction, top=5)
        assert stored_lists(r) == {k: want[k] for k in ("relevance", "similarity")}
        assert (r.ppr_iterations, r.money_iterations, r.circle_size) == (
            want["iterations"],
            want["money_iterations"],
            want["circle"],
        )
        assert r.in_graph and r.run_id == run.pk and r.circle == 1000 and r.top == 5 and r.backend == "cpu"
        assert r.n_nodes == 6 and r.n_edges == 8
    # e follows b and c, who both follow a: a is the account to follow, and a look-alike (it follows b too)
    a = pk(thesis, 101)
    follows = stored_lists(WtfResult.objects.get(seed_id=c, direction="follows"))
    assert [x[0] for x in follows["relevance"]] == [a] and [x[0] for x in follows["similarity"]] == [a]


def test_it_plans_a_publishers_top_spreaders_in_batches_of_seeds(thesis, run_tasks, monkeypatch):
    monkeypatch.setattr(web, "SEEDS_PER_BATCH", 2)
    run = start(run_tasks, thesis, publisher="102", spreaders=5)
    run.refresh_from_db()
    b = pk(thesis, 102)
    spreaders = [r["account"] for r in selectors.top_spreaders(thesis, publisher=Account.objects.get(pk=b), limit=6)]
    want = [s for s in spreaders if s != b][:5]
    batches = list(ComputeBatch.objects.filter(run=run).order_by("index").values_list("params", flat=True))
    assert [p["seeds"] for p in batches] == [want[0:2], want[2:4], want[4:5]]
    assert run.status == "done" and run.n_batches == 3
    # the watch list walks the followers only
    assert set(WtfResult.objects.filter(run=run).values_list("direction", flat=True)) == {"followers"}
    assert set(WtfResult.objects.filter(run=run).values_list("seed_id", flat=True)) == set(want)


def test_a_publisher_without_spreaders_plans_nothing(ws_a, import_files, run_tasks):
    import_files(ws_a, [THESIS / "follows.csv"])
    Account.objects.get_or_create(workspace=ws_a, twitter_id=102)
    run = start(run_tasks, ws_a, publisher="102")
    assert run.status == "done" and run.n_batches == 0
    assert not WtfResult.objects.exists()


def test_it_reuses_a_result_computed_on_the_same_graph(thesis, run_tasks):
    first = start(run_tasks, thesis, accounts=["103"])
    before = {r.pk: r.computed_at for r in WtfResult.objects.all()}
    second = start(run_tasks, thesis, accounts=["103", "105"])
    second.refresh_from_db()
    assert second.status == "done"
    assert any("2 seed result(s) reused" in n for n in second.notes), second.notes
    for r in WtfResult.objects.filter(seed_id=pk(thesis, 103)):
        assert r.computed_at == before[r.pk] and r.run_id == first.pk  # left as the first run stored it
    assert WtfResult.objects.filter(seed_id=pk(thesis, 105), run=second).count() == 2


def test_a_higher_iteration_cap_computes_a_capped_result_again_and_converges(thesis, run_tasks):
    # from e, walking the accounts it follows reaches the cycle a <-> b: PageRank's change shrinks 0.85 times per
    # iteration and is still above 1e-10 at the default cap of 100; at most 147 iterations bring it below
    first = start(run_tasks, thesis, accounts=["105"], direction="follows")
    capped = WtfResult.objects.get(seed_id=pk(thesis, 105), direction="follows")
    assert (capped.ppr_converged, capped.ppr_iterations, capped.max_iter) == (False, 100, 100)
    assert capped.run_id == first.pk
    second = start(run_tasks, thesis, accounts=["105"], direction="follows", max_iter=150)
    second.refresh_from_db()
    assert second.params["max_iter"] == 150 and not any("reused" in n for n in second.notes), second.notes
    again = WtfResult.objects.get(seed_id=pk(thesis, 105), direction="follows")  # replaced, not added
    assert again.run_id == second.pk and again.max_iter == 150
    assert again.ppr_converged and 100 < again.ppr_iterations <= 147 and again.money_converged


def test_it_computes_again_when_the_follows_changed(thesis, run_tasks, import_files, tmp_path):
    start(run_tasks, thesis, accounts=["103"], direction="follows")
    old = WtfResult.objects.get()
    extra = tmp_path / "more_follows.csv"
    extra.write_text("follower_id,followee_id\n103,106\n")
    import_files(thesis, [extra])  # bumps the data version: the graph is read again
    start(run_tasks, thesis, accounts=["103"], direction="follows")
    new = WtfResult.objects.get()
    assert new.pk == old.pk and new.fingerprint != old.fingerprint and new.n_edges == old.n_edges + 1
    assert stored_lists(new) == {
        k: v
        for k, v in engine_lists(thesis, pk(thesis, 103), "follows").items()
        if k
        in (
            "relevance",
            "similarity",
        )
    }


def test_a_seed_without_follows_gets_an_empty_result(thesis, run_tasks):
    Account.objects.create(workspace=thesis, twitter_id=999, screen_name="loner")
    run = start(run_tasks, thesis, accounts=["999"])
    run.refresh_from_db()
    assert run.status == "done"
    rows = WtfResult.objects.filter(seed__twitter_id=999)
    assert rows.count() == 2 and not any(r.in_graph for r in rows)
    assert not WtfEntry.objects.filter(result__in=rows).exists()
    assert any("no follow edge" in n for n in run.notes)


def test_a_cancelled_batch_stores_nothing(thesis, run_tasks):
    run = start(run_tasks, thesis, accounts=["103"])
    WtfResult.objects.all().delete()
    batch = run.batches.get()
    with pytest.raises(RunCancelled):
        WTF.compute(run=run, batch=batch, backend="cpu", stop=lambda: True)
    assert not WtfResult.objects.exists()


def test_a_batch_delivered_twice_stores_once(thesis, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):  # the batch is not run on commit
        run = services.compute_run_start(workspace=thesis, tweet_pks=[], algorithm="wtf", params={"accounts": ["105"]})
    batch = run.batches.get()
    compute_batch_run(batch_id=batch.pk)
    rows = sorted(WtfEntry.objects.values_list("result__direction", "list", "rank", "account_id", "score"))
    ComputeBatch.objects.filter(pk=batch.pk).update(status=ComputeBatch.Status.RUNNING)  # a redelivery after a crash
    WtfResult.objects.update(fingerprint="another graph")  # so that it computes and stores again, not reuses
    compute_batch_run(batch_id=batch.pk)
    assert sorted(WtfEntry.objects.values_list("result__direction", "list", "rank", "account_id", "score")) == rows
    assert WtfResult.objects.count() == 2
    run.refresh_from_db()
    assert run.status == "done" and run.batches_done == 1


def test_purging_a_workspaces_data_deletes_its_results(thesis, run_tasks):
    start(run_tasks, thesis, accounts=["105"])
    assert WtfEntry.objects.exists()
    services.workspace_purge(workspace=thesis, delete_workspace=False)
    assert not WtfResult.objects.exists() and not WtfEntry.objects.exists()
