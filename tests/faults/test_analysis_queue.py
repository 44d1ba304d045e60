"""A long analysis of one workspace does not hold up another workspace's upload (issue 41: a small upload waited
more than 182 s behind a betweenness on the only cpu worker). The workers as ``docker/compose.yml`` runs them:
ingest, cpu+default and analysis. Workspace A's betweenness holds its worker (paused before it computes, for as
long as the test wants); workspace B's upload is imported and its ranking computed meanwhile, on the cpu worker."""

from __future__ import annotations

import time

import pytest

from monitor import services
from monitor.models import Collection, ComputeRun
from tests.webapp import THESIS

from .harness import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_upload_is_ranked_while_another_workspace_s_analysis_holds_its_worker(faults, stored, ws_b):
    ingest = faults.worker("ingest", queues="ingest").wait_ready()
    cpu = faults.worker("cpu", queues="cpu,default", FAULTS_PAUSE_ANALYSIS="1").wait_ready()
    analysis = faults.worker("analysis", queues="analysis", FAULTS_PAUSE_ANALYSIS="1").wait_ready()
    logs = [ingest, cpu, analysis]
    run = services.compute_run_start(workspace=stored, backend="cpu", algorithm="network", params={"samples": 0})
    wait_for(lambda: next(faults.dir.glob("analysis-*"), None), "the analysis to hold its worker", logs=logs)
    try:
        t0 = time.monotonic()
        c = services.collection_create(workspace=ws_b, files=[THESIS / "tweets.csv", THESIS / "follows.csv"])

        def ranked():
            c.refresh_from_db()
            assert c.status != Collection.Status.FAILED, c.error
            return c.status == Collection.Status.DONE

        try:
            wait_for(ranked, "workspace B's upload to be ranked", timeout=60, logs=logs)
        except AssertionError as exc:
            raise AssertionError(
                f"workspace B's upload was not ranked within 60 s while workspace A's analysis held its worker "
                f"(collection {c.status}): {str(exc)[:300]}"
            ) from None
        waited = time.monotonic() - t0
        assert waited < 60
        run.refresh_from_db()
        assert run.status == ComputeRun.Status.RUNNING and run.batches_done == 0  # still held
    finally:
        faults.release()
    wait_for(lambda: ComputeRun.objects.get(pk=run.pk).status == ComputeRun.Status.DONE, "the analysis", logs=logs)
