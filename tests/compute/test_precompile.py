"""``python -m compute.precompile`` runs every kernel a compute run uses, on examples checked by hand."""

from __future__ import annotations

from compute.precompile import main


def test_each_kernel_run_gives_the_hand_computed_influence_of_its_example():
    got = main()
    assert set(got) == {"follows, strict", "follows, attach", "given, times=True", "given, times=False"}
    # publisher 4 followers, then 2, then 1, in a chain: 7, 3, 1
    assert all(values == [7.0, 3.0, 1.0] for values in got.values()), got
