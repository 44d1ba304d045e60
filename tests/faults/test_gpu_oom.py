"""A GPU out of memory on a batch too large for it (simulated: the worker's fake GPU holds 5 participants): the
batch is split, a cascade that alone does not fit runs on the CPU, the run says so on its page, and the numbers
are those of the CPU."""

from __future__ import annotations

import pytest
from django.urls import reverse

from monitor.models import ComputeRun
from monitor.services.runs import compute_run_start
from tests.webapp import EXPECTED_TOTAL, total_by_name

from .harness import run_ended, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_splits_a_batch_the_gpu_cannot_hold_and_runs_a_cascade_too_big_for_it_on_the_cpu(
    thesis, alice, faults, client
):
    ws_a = thesis
    # one batch of two cascades (6 and 5 participants): 11 do not fit, 6 alone neither, 5 does
    w = faults.worker("gpu", FAULTS_FAKE_GPU_NODES="5").wait_ready()
    run = compute_run_start(workspace=ws_a, backend="auto")
    assert run.n_batches == 1
    wait_for(lambda: run_ended(run.pk), "the run to finish", logs=[w])
    run.refresh_from_db()
    assert run.status == ComputeRun.Status.DONE, run.error
    assert list(faults.dir.glob("oom-forward-11")) and list(faults.dir.glob("oom-forward-6"))
    assert total_by_name(ws_a) == EXPECTED_TOTAL
    notes = " ".join(run.notes)
    assert "GPU out of memory on 2 cascades (11 participants) at once: computed in 2 parts, 1 of them on the CPU" in (
        notes
    )
    assert "1 cascade(s) too large for the GPU alone ran on the CPU (tweets 1000)" in notes
    assert run.devices[0] == "fake GPU of 5 nodes" and run.devices[1].startswith("CPU (")
    client.force_login(alice)
    page = client.get(reverse("run", kwargs={"ws": ws_a.slug, "pk": run.pk})).content.decode()
    assert "too large for the GPU alone ran on the CPU (tweets 1000)" in page and "fake GPU of 5 nodes" in page
