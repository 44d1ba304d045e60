"""Where a result's follower graph came from: follows an upload listed (a follows file, a collection archive, the
live stream) or follows inferred from cascade trees. The Twitter15/16 trees format has no follower graph: its
reader makes each retweeter follow the account it retweeted from (docs/formats.md), so in a workspace with such
an upload the follower graph is partly made of the very cascades it is then used to explain. The network
analytics of that graph, the planner's audience and spread, and who amplifies whom are then partly circular,
and their pages and API answers say so (:func:`follower_graph_inferred`).

An upload's ``counts["follows_new"]`` is the follow edges it stored first (an edge already stored by an earlier
upload is not counted again), so the inferred share is exact for the uploads; follows the live stream added
(no upload) are not counted in either number.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from ..models import Collection, ComputeRun, Workspace

__all__ = ["TREES_FORMAT", "InferredGraph", "follower_graph_inferred", "run_graph_inferred"]

#: the input format whose follow edges are inferred (compute.formats: ``trees``)
TREES_FORMAT = "trees"

# the algorithms whose results read the follower graph, and the network run's params that make it read it
_FOLLOWER_GRAPH_ALGORITHMS = ("network", "influence_max", "wtf")


@dataclass(frozen=True)
class InferredGraph:
    """The follows of a follower graph that were inferred from cascade trees.

    ``inferred``: follow edges stored first by trees uploads; ``uploaded``: follow edges stored first by any
    upload (the trees ones included); ``collections``: the trees uploads that brought them, ``(pk, name)``,
    oldest first."""

    inferred: int
    uploaded: int
    collections: tuple[tuple[int, str], ...]

    @property
    def share(self) -> float:
        """The inferred follows' share of the uploaded follows (0 to 1)."""
        return self.inferred / self.uploaded if self.uploaded else 1.0

    @property
    def whole(self) -> bool:
        """Every uploaded follow was inferred: the graph is the cascades' own."""
        return self.inferred >= self.uploaded

    def to_json(self) -> dict:
        return {
            "inferred_follows": self.inferred,
            "uploaded_follows": self.uploaded,
            "share": self.share,
            "collections": [{"id": pk, "name": name} for pk, name in self.collections],
        }


def _is_trees(fmt: str, formats) -> bool:
    # the report holds every detected format; ``format`` is their "+"-joined name cut to 16 characters
    if isinstance(formats, list) and formats:
        return TREES_FORMAT in formats
    return TREES_FORMAT in (fmt or "").split("+")


def follower_graph_inferred(ws: Workspace, *, before: datetime | None = None) -> InferredGraph | None:
    """The part of ``ws``'s follower graph inferred from cascade trees, or None when none of it was.

    ``before``: count only the uploads created before then (a result computed then read only those); None: every
    upload so far. One query over the workspace's uploads (a handful of rows), never over the follows."""
    rows = Collection.objects.filter(workspace=ws, status=Collection.Status.DONE, validate_only=False)
    if before is not None:
        rows = rows.filter(created_at__lt=before)
    inferred = uploaded = 0
    trees: list[tuple[int, str]] = []
    for pk, name, fmt, formats, new in rows.order_by("created_at", "pk").values_list(
        "pk", "name", "format", "report__formats", "counts__follows_new"
    ):
        new = new if isinstance(new, int) and new > 0 else 0
        uploaded += new
        if new and _is_trees(fmt, formats):
            inferred += new
            trees.append((pk, name))
    if not inferred:
        return None
    return InferredGraph(inferred=inferred, uploaded=uploaded, collections=tuple(trees))


def run_graph_inferred(run: ComputeRun | None, ws: Workspace) -> InferredGraph | None:
    """:func:`follower_graph_inferred` for what ``run`` read: the uploads made before it started (every upload
    when ``run`` is None: a page about to start one). None for a run that read no follower graph: a network run
    of the interaction graph without spreading edges (retweeter -> author, all observed)."""
    if run is not None:
        if run.algorithm not in _FOLLOWER_GRAPH_ALGORITHMS:
            return None
        params = run.params or {}
        if run.algorithm == "network" and params.get("graph") == "interactions" and not params.get("spreading"):
            return None
    return follower_graph_inferred(ws, before=run.created_at if run is not None else None)
