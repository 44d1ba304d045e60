"""One slow webhook receiver must not delay every workspace's webhooks: a real webhook worker (two prefork
processes, like the deployment's four) gets five deliveries for a receiver that takes 6 s to answer, then one for
another host that answers at once. With at most ``SPREADWATCH_WEBHOOK_PER_HOST`` deliveries per receiving host
at a time, a delivery that finds its host busy is sent again later instead of holding a worker process, and the
fast host's delivery goes through within a second or two (it waited for the slow ones before)."""

from __future__ import annotations

import http.server
import os
import subprocess
import sys
import threading
import time

import pytest

from monitor import jobs
from monitor.alerts.models import WebhookDelivery
from tests.security.test_webhook_delivery_limits import _pending_delivery

from . import harness
from .harness import ROOT, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

SLOW_S = 6.0
PORTS = (18510, 18511)  # this helper's range


class Receiver:
    """A local HTTP receiver that answers 200 after ``delay`` seconds, noting when each POST arrived and ended."""

    def __init__(self, port: int, delay: float):
        self.got: list[tuple[float, float]] = []
        me = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                t0 = time.time()
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                time.sleep(delay)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()
                me.got.append((t0, time.time()))

            def log_message(self, *a):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{port}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


class WebhookWorker(harness.Worker):
    """``celery worker -Q webhooks`` with ``n`` prefork processes (the harness's workers have one)."""

    def __init__(self, name, folder, env, n: int):
        self.name = name
        self.log = folder / f"{name}.log"
        argv = [sys.executable, "-m", "tests.faults._worker", "worker", "-Q", "webhooks", "--pool=prefork",
                "-c", str(n), "--without-heartbeat", "--without-mingle", "--without-gossip", "-l", "info",
                "-n", f"{name}-{os.getpid()}@%h"]  # fmt: skip
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)


def test_a_slow_receiver_does_not_delay_another_host_s_webhooks(faults, thesis, alice, settings, tmp_path):
    settings.SPREADWATCH_WEBHOOK_ALLOW_PRIVATE = True
    env = {
        **os.environ,
        "DATABASE_URL": harness_db_url(),
        "CELERY_BROKER_URL": faults.broker.url,
        "REDIS_URL": faults.broker.cache_url,
        "CELERY_TASK_ALWAYS_EAGER": "0",
        "FAULTS_DIR": str(faults.dir),
        "SPREADWATCH_WEBHOOK_ALLOW_PRIVATE": "1",
        "SPREADWATCH_WEBHOOK_TIMEOUT": "10",
        "SPREADWATCH_WEBHOOK_PER_HOST": "1",
    }
    w = WebhookWorker("webhooks", tmp_path, env, n=2)
    faults.workers.append(w)
    w.wait_ready()
    with Receiver(PORTS[0], SLOW_S) as slow, Receiver(PORTS[1], 0.0) as fast:
        slow_ones = [_pending_delivery(thesis, alice, slow.url) for _ in range(5)]
        quick = _pending_delivery(thesis, alice, fast.url)
        for d in slow_ones:
            jobs.send(jobs.DELIVER_WEBHOOK, d.pk)
        time.sleep(0.5)  # the slow ones are taken first
        t0 = time.time()
        jobs.send(jobs.DELIVER_WEBHOOK, quick.pk)
        wait_for(lambda: fast.got, "the fast host's delivery", timeout=60, logs=[w])
        waited = fast.got[0][0] - t0
        assert waited < 2.0, f"the fast host's webhook waited {waited:.1f} s behind the slow host's"
        quick.refresh_from_db()
        wait_for(
            lambda: WebhookDelivery.objects.get(pk=quick.pk).status == WebhookDelivery.Status.SENT,
            "the fast delivery to be recorded sent",
            timeout=30,
            logs=[w],
        )
        # the slow host still gets every delivery, one at a time, and nothing is counted as a failed attempt
        wait_for(lambda: len(slow.got) == 5, "every slow delivery", timeout=90, logs=[w])
        for a, b in zip(sorted(slow.got), sorted(slow.got)[1:], strict=False):
            assert b[0] >= a[1] - 0.2, "two deliveries to one host at once"
        wait_for(
            lambda: (
                set(WebhookDelivery.objects.filter(pk__in=[d.pk for d in slow_ones]).values_list("status", "attempts"))
                == {("sent", 1)}
            ),
            "the slow deliveries to be recorded sent on their first attempt",
            timeout=30,
            logs=[w],
        )


def harness_db_url() -> str:
    from .fixtures import database_url

    return database_url()
