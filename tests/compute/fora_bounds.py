"""What FORA's random walks may move its estimate by, for the CPU and GPU tests alike (no test here)."""

from __future__ import annotations

import numpy as np


def residual_spent_bound(delta: np.ndarray, walks: float, damping: float = 0.85) -> np.ndarray:
    """How far FORA's total mass may be from 1 when its walks spend the residual ``delta``: six standard deviations.
    Each walk deposits (1 - d) of its share at every visit and visits 1 / (1 - d) accounts on average (variance
    d / (1 - d)^2), so the mass is 1 in expectation with variance at most d * delta / walks (``ceil(r walks)``
    walks per account: at least ``walks * delta`` in all). A fixed share of delta is no bound: a seed the push
    nearly finishes gets a few hundred walks, whose mass moved by 7 % of its small residual on the GPU."""
    return 6.0 * np.sqrt(damping * delta / walks)
