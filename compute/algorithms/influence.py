"""The influence measure's two phases in one call (docs/measure.md): :func:`forward` then :func:`backward`.

A compute batch needs both phases for the cascades rebuilt from follows; calling them as one lets the GPU twin
(:mod:`compute.gpu.influence`) keep the spreading graph where the forward phase made it: the backward phase reads
the forward phase's edges on the device, and the edges come to the host once, for storing (issue 18). The CPU
reference is nothing more than the two references in order, so this module defines no new numbers: every
result equals ``backward(forward(...))`` on the same backend.
"""

from __future__ import annotations

import logging

from ..backends import resolve_backend
from ..results import InfluenceResult, complete_backward, complete_forward
from ..structures import ORPHAN_POLICIES, Cascades, FollowerGraph
from .backward import backward, backward_cpu
from .forward import forward_cpu

__all__ = ["InfluenceResult", "influence", "influence_cpu"]

log = logging.getLogger(__name__)


def influence(
    cascades: Cascades,
    graph: FollowerGraph,
    *,
    orphans: str = "strict",
    backend: str = "auto",
    threads: int | None = None,
) -> InfluenceResult:
    """The spreading graphs of ``cascades`` over ``graph`` and every participant's influence along them (the
    public dispatcher). Arguments as :func:`compute.algorithms.forward.forward`; ``result.graphs`` is what the
    forward dispatcher returns and ``result.backward`` what the backward dispatcher returns on those graphs.

    On the GPU, cascades the device cannot hold run on the CPU reference, logged, as in either phase alone."""
    if orphans not in ORPHAN_POLICIES:
        raise ValueError(f"orphans must be one of {', '.join(ORPHAN_POLICIES)}, not {orphans!r}")
    if cascades.times is None:
        raise ValueError("the forward phase needs participation times; these cascades have none")
    if resolve_backend(backend) != "gpu":
        return influence_cpu(cascades, graph, orphans=orphans, threads=threads)
    from ..gpu.influence import influence as influence_gpu

    res = influence_gpu(cascades, graph, orphans=orphans, backend="gpu", threads=threads)
    if res.backward is None:  # the forward phase left cascades too large for the device: both phases again
        log.warning("running %d cascade(s) the GPU could not hold on the CPU reference", len(res.graphs.deferred))
        graphs = complete_forward(
            cascades, res.graphs, lambda c: forward_cpu(c, graph, orphans=orphans, threads=threads)
        )
        return InfluenceResult(graphs, backward(graphs, backend="gpu", threads=threads))
    if len(res.backward.deferred):
        complete_backward(res.graphs, res.backward, solve=lambda g: backward_cpu(g, threads=threads))
    return res


def influence_cpu(
    cascades: Cascades, graph: FollowerGraph, *, orphans: str = "strict", threads: int | None = None
) -> InfluenceResult:
    """The CPU reference: the forward reference, then the backward reference on its graphs."""
    graphs = forward_cpu(cascades, graph, orphans=orphans, threads=threads)
    return InfluenceResult(graphs, backward_cpu(graphs, threads=threads))
