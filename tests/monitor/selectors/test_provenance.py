"""Whether a result's follower graph was inferred from cascade trees (``monitor.selectors.provenance``): the trees
format has no follower graph, so its reader makes each retweeter follow the account it retweeted from; a result
over such a graph partly restates the cascades. The counts are the uploads' own (follows stored first)."""

from __future__ import annotations

import shutil

import pytest
from django.utils import timezone

from monitor import selectors, services
from monitor.models import Collection, ComputeRun
from tests.webapp import DATA, THESIS

TREES = DATA / "formats" / "trees" / "good"


@pytest.fixture
def trees_zip(tmp_path):
    return shutil.make_archive(str(tmp_path / "trees"), "zip", TREES)


def test_a_workspace_of_uploaded_follows_has_nothing_inferred(ws_a, import_files):
    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    assert c.status == Collection.Status.DONE, c.error
    assert selectors.follower_graph_inferred(ws_a) is None


def test_cascade_trees_make_the_whole_graph_inferred(ws_a, import_files, trees_zip):
    c = import_files(ws_a, [trees_zip])
    assert c.status == Collection.Status.DONE and c.counts["follows_new"] > 0, c.error
    inferred = selectors.follower_graph_inferred(ws_a)
    assert inferred.inferred == inferred.uploaded == c.counts["follows_new"]
    assert inferred.whole and inferred.share == 1.0
    assert inferred.collections == ((c.pk, c.name),)
    assert inferred.to_json()["collections"] == [{"id": c.pk, "name": c.name}]


def test_trees_beside_uploaded_follows_make_it_partly_inferred(ws_a, import_files, trees_zip):
    follows = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    trees = import_files(ws_a, [trees_zip])
    inferred = selectors.follower_graph_inferred(ws_a)
    assert inferred.inferred == trees.counts["follows_new"]
    assert inferred.uploaded == trees.counts["follows_new"] + follows.counts["follows_new"]
    assert not inferred.whole and 0 < inferred.share < 1


def test_a_result_counts_only_the_uploads_made_before_its_run(ws_a, import_files, trees_zip):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    before = timezone.now()
    import_files(ws_a, [trees_zip])
    assert selectors.follower_graph_inferred(ws_a, before=before) is None
    run = ComputeRun.objects.create(workspace=ws_a, algorithm="wtf", params={})
    ComputeRun.objects.filter(pk=run.pk).update(created_at=before)
    run.refresh_from_db()
    assert selectors.run_graph_inferred(run, ws_a) is None
    assert selectors.run_graph_inferred(None, ws_a) is not None  # a page about to start a run: every upload


def test_runs_that_read_no_follower_graph_are_never_flagged(ws_a, import_files, trees_zip):
    import_files(ws_a, [trees_zip])
    interactions = ComputeRun(workspace=ws_a, algorithm="network", params={"graph": "interactions"})
    spreading = ComputeRun(workspace=ws_a, algorithm="network", params={"graph": "interactions", "spreading": True})
    follows = ComputeRun(workspace=ws_a, algorithm="network", params={"graph": "follows"})
    influence = ComputeRun(workspace=ws_a, algorithm="influence", params={})
    for run in (interactions, spreading, follows, influence):
        run.created_at = timezone.now()
    assert selectors.run_graph_inferred(interactions, ws_a) is None
    assert selectors.run_graph_inferred(influence, ws_a) is None
    # the spreading edges of cascades rebuilt from the inferred follows lean on them too
    assert selectors.run_graph_inferred(spreading, ws_a) is not None
    assert selectors.run_graph_inferred(follows, ws_a) is not None


def test_a_validation_stores_nothing_and_counts_nothing(ws_a, run_tasks, trees_zip):
    from pathlib import Path

    run_tasks(services.collection_create, workspace=ws_a, files=[Path(trees_zip)], validate_only=True)
    assert selectors.follower_graph_inferred(ws_a) is None
