"""Both phases of the influence measure on the GPU in one pass: the twin of
:func:`compute.algorithms.influence.influence` (same signature, the same numbers as the two phases' twins).

The forward twin leaves each cascade's spreading edges on the device, sorted by ``(src, dst)``; here the backward
phase is prepared from those very arrays (:func:`compute.gpu.backward.prepare` with ``on_device``), so the
spreading graph never goes to the host and back. It comes to the host once, for the caller to store. The follower
graph stays resident between calls, as in the forward twin (:func:`compute.gpu.forward.device_graph`).

One pass needs the batch to fit the device at once: the forward phase's participants beside the follower
graph, then the backward phase's edges. A batch that does not is run as the two twins run it on their own
(each in chunks, uploading the edges between them), and what even that cannot hold is left to the dispatcher.
"""

from __future__ import annotations

import numpy as np

from ..results import BackwardResult, InfluenceResult, apply_cycle_policy
from ..structures import ORPHAN_POLICIES, Cascades, FollowerGraph
from ._device import Timer, memory_budget
from .backward import backward as backward_gpu
from .backward import device_bytes, prepare
from .forward import ForwardRun, device_graph, device_graph_bytes, forward_bytes
from .forward import forward as forward_gpu

__all__ = ["influence"]


def influence(
    cascades: Cascades,
    graph: FollowerGraph,
    *,
    orphans: str = "strict",
    backend: str = "auto",
    threads: int | None = None,
) -> InfluenceResult:
    """Spreading graphs and influence on the GPU (``threads`` is accepted and ignored; ``backend`` must not ask
    for the CPU). ``result.backward`` is ``None`` when the forward phase left cascades undone (named in
    ``result.graphs.deferred``): the dispatcher completes both phases then."""
    if backend not in ("gpu", "auto"):
        raise ValueError(
            f"compute.gpu.influence runs on the GPU; backend={backend!r} belongs to compute.algorithms.influence"
        )
    if orphans not in ORPHAN_POLICIES:
        raise ValueError(f"orphans must be one of {', '.join(ORPHAN_POLICIES)}, not {orphans!r}")
    if cascades.times is None:
        raise ValueError("the forward phase needs participation times; these cascades have none")
    fused = _one_pass(cascades, graph, orphans) if cascades.n_cascades else None
    if fused is not None:
        return fused
    graphs = forward_gpu(cascades, graph, orphans=orphans, backend="gpu")
    if len(graphs.deferred):
        return InfluenceResult(graphs, None)
    return InfluenceResult(graphs, backward_gpu(graphs, backend="gpu"))


def _one_pass(cascades: Cascades, graph: FollowerGraph, orphans: str) -> InfluenceResult | None:
    """Both phases with the edges kept on the device, or ``None`` where the batch does not fit at once."""
    sizes = np.diff(cascades.node_offsets)
    graph_bytes = device_graph_bytes(graph)
    budget = memory_budget()
    if graph_bytes > 0.7 * budget or forward_bytes(cascades).sum() > budget - graph_bytes or cascades.n_nodes >= 2**31:
        return None
    timer = Timer()
    run = ForwardRun(cascades, device_graph(graph), orphans, timer)
    src, dst, counts = run.run()
    graphs = run.to_graphs(src, dst, counts, orphans)  # the one download: the caller stores the edges
    if float(device_bytes(sizes, np.diff(graphs.edge_offsets)).sum()) > memory_budget():
        del src, dst, counts, run
        return InfluenceResult(graphs, backward_gpu(graphs, backend="gpu"))
    prepared, cyclic = prepare(graphs, timer, on_device=(run.node_off, src, dst))
    del src, dst, counts, run
    prepared.launch()
    prepared.check()
    result = BackwardResult(prepared.influence()[: cascades.n_nodes])
    del prepared
    if len(cyclic):  # edges the forward phase makes go forward in time: only a bug could get here
        apply_cycle_policy(graphs, np.sort(cyclic), result, solve=backward_gpu)
    return InfluenceResult(graphs, result)
