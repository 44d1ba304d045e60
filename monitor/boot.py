"""What a fresh web process would build on its first requests, built as it starts instead.

A gunicorn worker that has just started (a deploy, a restart, ``--max-requests``) paid about 0.2 s on its first
page at the 1M-retweet benchmark before this: importing the URL configuration (every view module, the REST API
and its schema generator) and compiling the dashboard's templates, each once per process. Under 50 analysts after a
restart that put the overview's p95 at 590 ms (docs/reliability.md). :func:`prime_web_process` does that work
when ``monitor.wsgi`` loads, before the worker takes a request (its first overview then took 33 ms instead of
194 ms); then it builds the process's all-time snapshot (``selectors.all_time_prime``, about 0.2 s each) of the
``SPREADWATCH_PRIME_WEB_WORKSPACES`` (3) most recently computed workspaces, from the columns the run's warm-up
put in the read cache. It never raises: without a database or Redis only the snapshots are left to the first
request. ``SPREADWATCH_PRIME_WEB=0`` turns it off.

**The long-lived objects out of the cyclic collector** (:func:`freeze_long_lived`, ``gc.freeze``): once a process
has imported what it serves with (a web process after its URLs and templates, a Celery worker when it is ready), the
objects alive then live as long as the process, yet every full pass of Python's cyclic garbage collector walked
them all again. A page that builds a large answer allocates enough containers to trigger such passes: the
explorer of a 17,000-account cascade at the 1M-retweet benchmark spent about a third of its 225-265 ms in them
(turning its 92,000 edges into lists: 94 ms with the collector, 8 ms without), and 160-180 ms in all once they
were frozen (benchmarks/data_layer.md). Frozen objects are still freed by reference counting; only a reference
cycle among them would stay (none is built at start-up). ``SPREADWATCH_GC_FREEZE=0`` turns it off.
"""

from __future__ import annotations

import gc
import logging
import time
from pathlib import Path

log = logging.getLogger(__name__)

__all__ = ["freeze_long_lived", "prime_web_process"]


def freeze_long_lived() -> int:
    """Collect the garbage there is, then move every object alive now to the collector's permanent generation,
    where its passes no longer walk them (see the module). Returns how many objects are frozen; 0 when
    ``SPREADWATCH_GC_FREEZE`` is off."""
    from django.conf import settings

    if not getattr(settings, "SPREADWATCH_GC_FREEZE", True):
        return 0
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


def _template_names() -> list[str]:
    """Every template of the project's apps (``frontend/templates``), by the name the views render it by."""
    import frontend

    root = Path(frontend.__file__).resolve().parent / "templates"
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.html"))


def _prime_snapshots(workspaces: int) -> int:
    """The all-time snapshots (``selectors.all_time_prime``) of the ``workspaces`` most recently computed
    workspaces; how many were built. Their columns come from the read cache, where the run's warm-up put them."""
    if workspaces <= 0:
        return 0
    from django.db.models import Max

    from monitor import selectors
    from monitor.models import Workspace

    recent = (
        Workspace.objects.annotate(last=Max("compute_runs__finished_at"))
        .filter(last__isnull=False)
        .order_by("-last")[:workspaces]
    )
    return sum(1 for ws in recent if selectors.all_time_prime(ws))


def prime_web_process() -> dict:
    """Import the URL configuration and compile every template into the cached loader (see the module). Returns
    what it did: ``urls`` (the URL patterns' count), ``templates``, ``frozen`` (:func:`freeze_long_lived`),
    ``snapshots``, ``failed`` and ``seconds``."""
    from django.conf import settings

    out = {"urls": 0, "templates": 0, "frozen": 0, "snapshots": 0, "failed": 0, "seconds": 0.0}
    if not getattr(settings, "SPREADWATCH_PRIME_WEB", True):
        return out
    t = time.perf_counter()
    try:
        from django.urls import get_resolver

        resolver = get_resolver()
        out["urls"] = len(resolver.url_patterns)  # imports monitor.urls and every module it includes
        resolver.reverse_dict  # noqa: B018 - populates the reverse lookup that every {% url %} and reverse() use
        from django.template import TemplateDoesNotExist, TemplateSyntaxError
        from django.template.loader import get_template

        for name in _template_names():
            try:
                get_template(name)
                out["templates"] += 1
            except (TemplateDoesNotExist, TemplateSyntaxError) as exc:  # its page reports it when asked for
                out["failed"] += 1
                log.warning("priming the web process: template %s: %s", name, exc)
        out["frozen"] = freeze_long_lived()  # before the snapshots: they are replaced when the data changes
        out["snapshots"] = _prime_snapshots(getattr(settings, "SPREADWATCH_PRIME_WEB_WORKSPACES", 3))
    except Exception as exc:  # a process that could not prime still serves: the first request does the work
        out["failed"] += 1
        log.warning("priming the web process stopped (%s: %s)", exc.__class__.__name__, exc)
    finally:
        from django.db import connection

        connection.close()  # the snapshots' queries opened it outside a request: the first request opens its own
    out["seconds"] = round(time.perf_counter() - t, 3)
    log.info("web process primed: %s", out)
    return out
