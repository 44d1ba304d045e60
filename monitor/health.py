"""``/healthz``: is this web process able to serve? No login (load balancers and orchestrators call it), no
data in the answer beyond which check failed.

200 ``{"status": "ok", "checks": {"database": "ok", "cache": "ok"}, "stream": {...}}``, or 503 with
``"status": "fail"`` and each failed check's error class (never its message: it could carry a host name or a
password).

``stream`` reports the live stream of every workspace that has anything queued, waiting or dead, keyed by
workspace id (numbers only): ``backlog``, ``lag_s`` (age of the oldest queued event), ``waiting``, ``dead``
and ``consumers`` (live consumers by heartbeat; null when Redis cannot say). It informs, it does not fail the
check: a lagging stream still serves pages (docs/live.md).
"""

from __future__ import annotations

import logging
import secrets

from django.core.cache import cache
from django.db import connection
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

log = logging.getLogger(__name__)


def _database() -> None:
    with connection.cursor() as cur:
        cur.execute("SELECT 1")
        row = cur.fetchone()
    if not row or row[0] != 1:
        raise RuntimeError("SELECT 1 did not answer 1")


def _cache() -> None:
    key = f"spreadwatch:healthz:{secrets.token_hex(8)}"
    value = secrets.token_hex(8)
    cache.set(key, value, timeout=30)
    try:
        if cache.get(key) != value:
            raise RuntimeError("the cache did not return what was written")
    finally:
        cache.delete(key)


CHECKS = {"database": _database, "cache": _cache}


@never_cache
@require_http_methods(["GET", "HEAD"])
def healthz(request):
    results: dict[str, str] = {}
    failed = []
    for name, check in CHECKS.items():
        try:
            check()
        except Exception as exc:  # any failure is a failed check, reported by name
            log.warning("health check %s failed: %s: %s", name, exc.__class__.__name__, exc)
            results[name] = f"fail: {exc.__class__.__name__}"
            failed.append(name)
        else:
            results[name] = "ok"
    if failed:
        return JsonResponse({"status": "fail", "failed": failed, "checks": results}, status=503)
    return JsonResponse({"status": "ok", "checks": results, "stream": _stream()})


def _stream() -> dict | str:
    from .selectors.stream import stream_health

    try:
        return stream_health()
    except Exception as exc:  # reported, never a 503: the page checks above decide that
        log.warning("stream health failed: %s: %s", exc.__class__.__name__, exc)
        return f"fail: {exc.__class__.__name__}"
