"""``{% load provenance %}{% inferred_graph_notice run "network" graph %}``: the notice that a result's follower
graph was (partly) inferred from cascade trees, on the pages whose results read that graph (network analytics,
the counter-campaign planner, who amplifies whom). The read is :func:`monitor.selectors.run_graph_inferred`
(one query over the workspace's uploads); the words are ``includes/inferred_graph_notice.html``."""

from __future__ import annotations

from django import template

from monitor import selectors

register = template.Library()

PAGES = ("network", "influence_max", "wtf")


@register.inclusion_tag("frontend/includes/inferred_graph_notice.html", takes_context=True)
def inferred_graph_notice(context, run, page: str, graph: str = "follows") -> dict:
    """``run``: the result shown (None: the page would start one, so every upload counts); ``page``: one of
    :data:`PAGES` (which results the notice names); ``graph``: the network page's graph tab (the interaction
    graph reads no follows)."""
    if page not in PAGES:
        raise template.TemplateSyntaxError(
            f"inferred_graph_notice: page must be one of {', '.join(PAGES)}, not {page!r}"
        )
    ws = context["ws"]
    inferred = None
    if run is not None or graph != "interactions":
        inferred = selectors.run_graph_inferred(run or None, ws)
    return {"inferred": inferred, "page": page, "run": run, "ws": ws}
