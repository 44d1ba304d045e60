"""Queueing Celery tasks from services: by the task's registered name, once the surrounding transaction commits.

Services never import ``monitor.tasks`` (the tasks import the services: the other way round would be an import
loop); they name the task here instead, and the task is looked up in the Celery app's registry, which
``MonitorConfig.ready`` fills by importing the task modules. ``task.delay`` keeps the app's settings: in eager
mode (no broker: ``make demo``, the tests) the task runs in the calling process when the transaction commits,
and with a broker it is routed to its queue by ``CELERY_TASK_ROUTES`` (ingest, cpu/gpu, default, webhooks).

**Queues by the length of the work.** A compute batch of a graph-wide analysis (network, counter-campaign
planner, who-to-follow: every algorithm but the per-cascade influence measure) goes to
``SPREADWATCH_ANALYSIS_QUEUE`` (``analysis``) with its own worker, the influence batches of uploads and recomputes
to ``SPREADWATCH_COMPUTE_QUEUE`` (cpu/gpu): an upload's ranking never waits behind another workspace's hour of
betweenness (:func:`queue_for`; every send goes through it, the outbox's and the stalled-work sweep's too).

**The outbox.** With a broker, a task that cannot be sent (Redis stopped, restarting, out of memory) is written
to :class:`~monitor.models.OutboxTask` in PostgreSQL instead of being lost after its transaction committed
(an upload's collection row would otherwise wait "queued" for ever); :func:`send_outbox`, run by beat every few
seconds, sends what it holds once the broker answers again. Every task is idempotent, so a task sent twice (the
broker took it and then failed to answer) costs work, not correctness.

**In the background (the demo).** With no broker and ``SPREADWATCH_EAGER_IN_BACKGROUND`` on (``make demo`` and
``make serve`` turn it on for the web server), a task is not run inside the request that queued it but on one
background thread of the web process, in the order they were queued (an import's compute batches after the
import; there are no separate queues there: an upload queued behind a long analysis waits for it), each
closing its database connections when it ends. So an upload answers at once and its collection page follows
the import live. Work queued there dies with the process; the next web process sends it again
before it serves its first request (``recovery.resume_in_process``). Off by default: the tests and
``manage.py`` commands run tasks where they are queued, and a command would end before a background thread
finished.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor

from celery import Task
from django.conf import settings
from django.db import DatabaseError, connections, transaction

from .celery import app

log = logging.getLogger(__name__)

__all__ = [
    "COMPUTE_BATCH",
    "DELIVER_WEBHOOK",
    "EVALUATE_ALERTS",
    "INGEST_COLLECTION",
    "args_repr",
    "eager",
    "enqueue_on_commit",
    "held_by_broker",
    "in_background",
    "background_idle",
    "queue_for",
    "queue_depths",
    "known_queues",
    "registered_task",
    "send",
    "send_outbox",
]

INGEST_COLLECTION = "monitor.tasks.ingest_collection"
COMPUTE_BATCH = "monitor.tasks.compute_batch"
EVALUATE_ALERTS = "monitor.alerts.tasks.evaluate_alerts"
DELIVER_WEBHOOK = "monitor.alerts.tasks.deliver_webhook"


def registered_task(name: str) -> Task:
    """The Celery task registered as ``name``; a clear error for a name no task module registered."""
    try:
        return app.tasks[name]
    except KeyError:
        raise LookupError(f"no Celery task is registered as {name!r}: is its module imported at startup?") from None


def enqueue_on_commit(name: str, *args: int) -> None:
    """Queue the task ``name`` with ``args`` (ids) when the current transaction commits (at once outside one)."""
    registered_task(name)  # looked up now: a wrong name fails in the caller, not in a commit hook
    # robust: in eager mode (no broker) a failing task must not undo the caller's work; it records its error
    transaction.on_commit(lambda: send(name, *args), robust=True)


def eager() -> bool:
    """Whether tasks run in the calling process (no broker): the demo, most tests."""
    return bool(app.conf.task_always_eager)


# the per-cascade measure an upload starts: its batches stay on the compute queue (cpu/gpu); every other
# algorithm is a graph-wide analysis, on the analysis queue
INTERACTIVE_ALGORITHMS = frozenset({"influence"})


def queue_for(name: str, args: tuple[int, ...]) -> str | None:
    """The queue a message of task ``name`` goes to where it is not the task's route: a compute batch of a
    graph-wide analysis goes to ``SPREADWATCH_ANALYSIS_QUEUE``. ``None``: the route in ``CELERY_TASK_ROUTES``
    (also when the batch cannot be looked up: the compute queue is a safe place for any batch)."""
    if name != COMPUTE_BATCH or not args:
        return None
    from .models import ComputeBatch

    try:
        algorithm = ComputeBatch.objects.filter(pk=args[0]).values_list("run__algorithm", flat=True).first()
    except DatabaseError:
        log.warning("could not look up batch %s's algorithm: sent to the compute queue", args[0], exc_info=True)
        return None
    if algorithm is None or algorithm in INTERACTIVE_ALGORITHMS:
        return None
    return getattr(settings, "SPREADWATCH_ANALYSIS_QUEUE", None) or None


def _publish(name: str, args: tuple[int, ...]) -> None:
    task = registered_task(name)
    queue = queue_for(name, args)
    options = {"queue": queue} if queue else {}
    # a short retry: the caller is a web request or a task's commit hook; the outbox is the long retry
    task.apply_async(
        args, retry=True, retry_policy={"max_retries": 2, "interval_start": 0, "interval_step": 0.5}, **options
    )


def in_background() -> bool:
    """Whether eager tasks run on the web process's background thread instead of in the caller (see above)."""
    return eager() and bool(getattr(settings, "SPREADWATCH_EAGER_IN_BACKGROUND", False))


_executor: ThreadPoolExecutor | None = None
_pending = 0
_state = threading.Condition()


def _background() -> ThreadPoolExecutor:
    global _executor
    with _state:
        if _executor is None:
            # one thread: the tasks run one at a time, first queued first run (SQLite has one writer anyway)
            _executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="spreadwatch-task")
        return _executor


def _run_in_background(name: str, args: tuple[int, ...]) -> None:
    global _pending
    try:
        registered_task(name).delay(*args)
    except Exception:
        # the task recorded its own failure where it has one (a failed import, a failed batch); nobody waits
        # for this thread's result, so the log is where the rest goes
        log.exception("background task %s%s failed", name, args)
    finally:
        connections.close_all()  # this thread's connections only: the next task opens its own
        with _state:
            _pending -= 1
            _state.notify_all()


def _submit(name: str, args: tuple[int, ...]) -> None:
    global _pending
    with _state:
        _pending += 1
    try:
        _background().submit(_run_in_background, name, args)
    except BaseException:
        with _state:
            _pending -= 1
        raise


def background_idle(timeout: float | None = None) -> bool:
    """Wait until the background thread has run every task queued to it (those they queue too); returns
    whether it is idle (``False``: ``timeout`` seconds passed first)."""
    with _state:
        return _state.wait_for(lambda: _pending == 0, timeout=timeout)


def send(name: str, *args: int) -> bool:
    """Send the task now; when the broker refuses, keep it in the outbox. Returns whether it was sent."""
    if eager():
        if in_background():
            registered_task(name)  # a wrong name fails here, in the caller
            _submit(name, tuple(args))
            return True
        registered_task(name).delay(*args)  # runs here: its own errors are its own, not the broker's
        return True
    try:
        _publish(name, args)
        return True
    except Exception as exc:  # kombu and redis-py raise many kinds; any failure to hand it over is kept
        _keep(name, args, exc)
        return False


def _keep(name: str, args: tuple[int, ...], exc: BaseException) -> None:
    from .models import OutboxTask

    error = f"{exc.__class__.__name__}: {exc}"[:2000]
    try:
        OutboxTask.objects.create(name=name, args=list(args), error=error)
    except DatabaseError:
        # broker and database both unreachable: nothing can keep it; the stalled-work sweep still re-queues
        # batches and imports that no worker holds once they are back
        log.exception("task %s%s could not be sent (%s) nor kept in the outbox", name, args, error)
        return
    log.warning("task %s%s could not be sent (%s): kept in the outbox", name, args, error)


def held_by_broker(names: list[str]) -> set[tuple[str, str]] | None:
    """``(task name, args repr)`` of every message of the tasks ``names`` the broker holds now: waiting in its
    queue (at any priority) or delivered to a worker and not acknowledged yet. ``None`` where the broker cannot be
    looked into (eager mode, a broker other than Redis, Redis not answering): the caller must not conclude that
    anything was lost. Used by the sweep that sends again the tasks a broker lost (``services.recovery``)."""
    import json

    url = app.conf.get("broker_write_url") or app.conf.broker_url or ""
    if eager() or not url.startswith(("redis://", "rediss://")):
        return None
    routes = getattr(settings, "CELERY_TASK_ROUTES", {}) or {}
    queues = {routes.get(n, {}).get("queue", app.conf.task_default_queue) for n in names}
    if COMPUTE_BATCH in names:  # both compute queues and the analyses': a process set up otherwise may have sent it
        queues |= {"cpu", "gpu", getattr(settings, "SPREADWATCH_ANALYSIS_QUEUE", "") or "cpu"}
    unacked = (app.conf.broker_transport_options or {}).get("unacked_key", "unacked")
    wanted = set(names)
    held: set[tuple[str, str]] = set()

    def note(message) -> None:
        """``message``: a queued message's JSON, or an unacked entry's already decoded payload."""
        try:
            headers = (json.loads(message) if isinstance(message, (bytes, str)) else message)["headers"]
        except (ValueError, KeyError, TypeError):
            return  # not a Celery message of ours
        if headers.get("task") in wanted:
            held.add((headers["task"], str(headers.get("argsrepr", ""))))

    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1)  # one try: a sweep must not wait for a broker that is away
            client = conn.default_channel.client
            for q in sorted(queues):
                # kombu keeps one list per priority step: "<queue>" and "<queue>\x06\x16<step>"
                for key in [q.encode(), *client.scan_iter(match=f"{q}\x06\x16*".encode())]:
                    for raw in client.lrange(key, 0, -1):
                        note(raw)
            for value in client.hvals(unacked):
                try:
                    note(json.loads(value)[0])  # [payload, exchange, routing key]
                except (ValueError, IndexError, TypeError):
                    continue
    except Exception:  # kombu and redis-py raise many kinds: unknown is not "lost"
        log.warning("could not look into the broker's queues", exc_info=True)
        return None
    return held


def known_queues() -> list[str]:
    """Every queue a task of this deployment can be sent to: the routes', the compute queues and the analyses'."""
    routes = getattr(settings, "CELERY_TASK_ROUTES", {}) or {}
    names = {r.get("queue") for r in routes.values() if r.get("queue")}
    names |= {app.conf.task_default_queue or "default", "cpu", "gpu"}
    names.add(getattr(settings, "SPREADWATCH_ANALYSIS_QUEUE", "") or "cpu")
    return sorted(names)


def queue_depths() -> dict[str, dict[str, int]] | None:
    """Per queue of :func:`known_queues`: ``waiting`` (messages in Redis, every priority list kombu keeps for it:
    ``<queue>`` and ``<queue>\\x06\\x16<step>``), ``unacked`` (delivered to a worker and not acknowledged yet:
    running, or held for a countdown) and ``by_priority`` (waiting per priority step, where any is not 0).
    ``None`` where the broker cannot be looked into (eager mode, not Redis, Redis not answering)."""
    import json

    url = app.conf.get("broker_write_url") or app.conf.broker_url or ""
    if eager() or not url.startswith(("redis://", "rediss://")):
        return None
    unacked_key = (app.conf.broker_transport_options or {}).get("unacked_key", "unacked")
    out: dict[str, dict] = {}
    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1)
            client = conn.default_channel.client
            for q in known_queues():
                by_priority = {}
                for key in [q.encode(), *client.scan_iter(match=f"{q}\x06\x16*".encode())]:
                    n = int(client.llen(key))
                    step = key[len(q) + 2 :].decode() if key != q.encode() else "0"
                    if n:
                        by_priority[step] = by_priority.get(step, 0) + n
                out[q] = {"waiting": sum(by_priority.values()), "unacked": 0, "by_priority": by_priority}
            for value in client.hvals(unacked_key):
                try:
                    routing_key = json.loads(value)[2]
                except (ValueError, IndexError, TypeError):
                    continue
                if isinstance(routing_key, str):
                    row = out.setdefault(routing_key, {"waiting": 0, "unacked": 0, "by_priority": {}})
                    row["unacked"] += 1
    except Exception:  # kombu and redis-py raise many kinds
        log.warning("could not look into the broker's queues", exc_info=True)
        return None
    return out


def args_repr(*args: int) -> str:
    """How Celery writes a task's arguments in its message headers (``argsrepr``): ``(5,)``."""
    return repr(tuple(args))


def send_outbox(*, limit: int = 500) -> dict[str, int]:
    """Send the tasks the outbox holds, oldest first (the body of the ``send_outbox`` beat task). Each is
    deleted in the transaction that sent it, so two sweeps at once never send one twice (``skip_locked``). Stops
    at the first refusal: the broker is still away, the rest waits for the next sweep."""
    from django.db.models import F

    from .models import OutboxTask

    sent = left = 0
    ids = list(OutboxTask.objects.order_by("pk").values_list("pk", flat=True)[:limit])
    for pk in ids:
        with transaction.atomic():
            row = OutboxTask.objects.select_for_update(skip_locked=True).filter(pk=pk).first()
            if row is None:
                continue  # another sweep has it
            try:
                if eager():
                    registered_task(row.name).delay(*row.args)
                else:
                    _publish(row.name, tuple(row.args))
            except Exception as exc:
                OutboxTask.objects.filter(pk=pk).update(
                    attempts=F("attempts") + 1, error=f"{exc.__class__.__name__}: {exc}"[:2000]
                )
                left = OutboxTask.objects.count()
                log.warning("outbox: the broker still refuses (%s); %d tasks wait", exc, left)
                return {"sent": sent, "left": left}
            row.delete()
            sent += 1
    if sent:
        log.info("outbox: sent %d kept tasks", sent)
    return {"sent": sent, "left": OutboxTask.objects.count()}
