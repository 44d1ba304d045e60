"""``python -m compute.precompile`` runs every kernel a compute run uses, on examples checked by hand."""

from __future__ import annotations

import pytest

from compute.precompile import main


def test_each_kernel_run_gives_the_hand_computed_influence_of_its_example():
    got = main()
    assert set(got) == {"follows, strict", "follows, attach", "given, times=True", "given, times=False"}
    # publisher 4 followers, then 2, then 1, in a chain: 7, 3, 1
    assert all(values == [7.0, 3.0, 1.0] for values in got.values()), got


@pytest.mark.gpu
def test_the_gpu_runs_of_the_same_examples_give_the_same_influence():
    from tests.conftest import _gpu_skip_reason

    if reason := _gpu_skip_reason():
        pytest.skip(reason)
    assert main("gpu") == main("cpu")


@pytest.mark.gpu
def test_the_generated_collection_warms_the_gpu_to_the_cpus_influence():
    from tests.conftest import _gpu_skip_reason

    if reason := _gpu_skip_reason():
        pytest.skip(reason)
    from compute.precompile import warm_gpu

    assert warm_gpu(scale=0.005) < 1e-9
