"""The pytest plugin of the web application's tests (registered once, in ``tests/conftest.py``): named
personas and workspaces, the settings every web test runs under, and the check that the suite runs against
the real services ``make test`` provides.

The settings fixtures (plain static files, a private media root, no read cache, eager Celery) apply to every
test under one of :data:`WEB_TESTS` by themselves, through :func:`_web_defaults`; a test module overrides one
by defining a fixture of the same name. The engine's tests (``tests/compute``) get none of them, so they run
where Django is not installed (the GPU machine).

Personas: ``alice`` is an analyst in workspace A ("Newsroom"), ``bob`` an analyst in workspace B ("Lab"),
``admin`` a superuser in neither.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from urllib.parse import urlparse

import pytest

TESTS = Path(__file__).parent
DATA = TESTS / "data"
#: the test folders of the web application (Django, PostgreSQL, Redis); the rest test the engine alone
WEB_TESTS = ("browser", "faults", "frontend", "monitor", "security")
THESIS = DATA / "thesis_example"
EXPECTED_TOTAL = {"b": 118.0, "e": 96.0, "f": 64.0, "c": 32.0, "a": 16.0, "d": 8.0}


def _reachable(url: str) -> bool:
    u = urlparse(url)
    try:
        with socket.create_connection((u.hostname or "127.0.0.1", u.port or 0), timeout=2):
            return True
    except OSError:
        return False


def require_services() -> None:
    """Under ``make test`` (SPREADWATCH_REQUIRE_SERVICES=1) the database must be PostgreSQL and Redis must
    answer; anything else stops the run with an error: service tests are never skipped silently."""
    if os.environ.get("SPREADWATCH_REQUIRE_SERVICES") != "1":
        return
    from django.db import connection

    problems = []
    if connection.vendor != "postgresql":
        problems.append(f"the database is {connection.vendor}, not PostgreSQL (DATABASE_URL is not set?)")
    redis_url = os.environ.get("REDIS_URL", "")
    if not redis_url or not _reachable(redis_url):
        problems.append(f"Redis is not reachable at REDIS_URL={redis_url!r}")
    if problems:
        pytest.exit("service tests cannot run: " + "; ".join(problems), returncode=3)


def is_web_test(path: Path) -> bool:
    try:
        return Path(path).resolve().relative_to(TESTS.resolve()).parts[0] in WEB_TESTS
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def _web_defaults(request):
    """The web tests' settings, for every test under :data:`WEB_TESTS` and no other."""
    if is_web_test(request.node.path):
        _tidy_after_flush()
        for name in ("_plain_static", "_media", "_no_read_cache", "_eager_celery"):
            request.getfixturevalue(name)


def _tidy_after_flush() -> None:
    """After a transactional test's flush, which empties every table but drops none, write the derived rows' mark
    again (``monitor.services.derived_rows``) and drop the partitions of the
    workspaces it deleted (``monitor.partitions``): each flush truncates every partition left, so without this
    the suite's flushes grew by about 1.4 ms per partition left behind (240 partitions: 0.3 s a flush). The flush
    ends with ``post_migrate``, sent once per app; monitor's is the one acted on."""
    from django.db.models.signals import post_migrate

    def tidy(sender, **kwargs):
        if sender.label == "monitor":
            from monitor import partitions
            from monitor.models import DerivedRowsMark

            partitions.drop_orphans()
            # the flush emptied the mark of the engine's unlogged results too; a fresh database has it (migration
            # 0043), and without it the recovery sweep would take the next test's results for lost ones
            DerivedRowsMark.objects.get_or_create(pk=1)

    post_migrate.connect(tidy, dispatch_uid="tests.webapp.tidy_after_flush", weak=False)


@pytest.fixture
def _plain_static(settings):
    # the manifest storage needs collectstatic; tests render templates without it
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }


@pytest.fixture
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.SPREADWATCH_UPLOAD_TEMP_DIR = str(tmp_path / "media" / ".incoming")  # where the settings put it, beside
    (tmp_path / "static").mkdir()
    settings.STATIC_ROOT = tmp_path / "static"


@pytest.fixture
def _no_read_cache(settings):
    # tests write aggregates directly at times; the read cache has its own test (test_read_cache.py)
    settings.SPREADWATCH_READ_CACHE_SECONDS = 0


@pytest.fixture
def _eager_celery():
    """Tasks run in the test's process unless a test starts a real worker (``tests/monitor/test_worker.py``)."""
    from monitor.celery import app

    old = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield app
    app.conf.task_always_eager = old


@pytest.fixture
def ws_a(db):
    from monitor import services

    return services.workspace_create(name="Newsroom", slug="newsroom")


@pytest.fixture
def ws_b(db):
    from monitor import services

    return services.workspace_create(name="Lab", slug="lab")


@pytest.fixture
def alice(ws_a, django_user_model):
    from monitor import services

    u = django_user_model.objects.create_user("alice", "alice@example.com", "alice-pass-123")
    services.membership_add(workspace=ws_a, user=u)
    return u


@pytest.fixture
def bob(ws_b, django_user_model):
    from monitor import services

    u = django_user_model.objects.create_user("bob", "bob@example.com", "bob-pass-123")
    services.membership_add(workspace=ws_b, user=u)
    return u


@pytest.fixture
def admin_user(db, django_user_model):
    return django_user_model.objects.create_superuser("admin", "admin@example.com", "admin-pass-123")


@pytest.fixture
def run_tasks(django_capture_on_commit_callbacks):
    """Run what the code queues on commit (eager Celery), like a real commit would."""

    def go(fn, *args, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            return fn(*args, **kwargs)

    return go


@pytest.fixture
def import_files(run_tasks):
    """``import_files(ws, [paths], **kw)`` -> the collection after its import and compute."""
    from monitor import services

    def go(ws, paths, **kw):
        c = run_tasks(services.collection_create, workspace=ws, files=[Path(p) for p in paths], **kw)
        c.refresh_from_db()
        return c

    return go


@pytest.fixture
def follow_row_reads(monkeypatch, settings, tmp_path):
    """The reads of a workspace's whole follow table from its rows (not from the follower graph's files), with
    the graphs' files in a folder of the test's own and the graphs processes keep forgotten first."""
    from monitor import graph_files
    from monitor.algorithms import influence

    settings.SPREADWATCH_GRAPH_DIR = tmp_path / "graphs"
    influence._GRAPHS.clear()
    reads = []
    real = graph_files.copy_out

    def spy(cur, sql, params, columns, **kw):
        if "FROM monitor_follow WHERE workspace_id" in sql:
            reads.append(params)
        return real(cur, sql, params, columns, **kw)

    monkeypatch.setattr(graph_files, "copy_out", spy)
    return reads


def follow_partition(ws) -> None:
    """What the merge does before a workspace's first follows and retweets (``monitor.partitions``), for a test
    that writes such rows itself into a workspace that has none yet: on PostgreSQL each workspace's live in
    partitions of their own."""
    _partitions_created(ws)


def daily_partition(ws) -> None:
    """What a workspace's first compute batch does before its daily aggregates (``monitor.partitions``), for a test
    that writes ``DailyInfluence`` rows itself: on PostgreSQL each workspace's live in a partition of their own,
    here created with its indexes."""
    _partitions_created(ws, ("monitor_dailyinfluence",))


def _partitions_created(ws, tables=None) -> None:
    from django.db import connection

    from monitor import partitions

    with connection.cursor() as cur:
        partitions.create(cur, ws.pk if hasattr(ws, "pk") else int(ws), tables or tuple(partitions.TABLES))


def follows_renewed(ws) -> None:
    """What every write to a workspace's follows does in its transaction (``monitor.db.renew_follows_token``), for a
    test that writes ``Follow`` rows itself: the follower graph's files are per token (monitor/graph_files.py)."""
    from django.db import connection

    from monitor.db import renew_follows_token

    with connection.cursor() as cur:
        renew_follows_token(cur, ws.pk if hasattr(ws, "pk") else int(ws))


def total_by_name(ws, publisher=None) -> dict[str, float]:
    from monitor import selectors

    page = selectors.ranking(ws, publisher=publisher, aggregate="total", limit=1000)
    return {r["screen_name"] or str(r["twitter_id"]): r["total"] for r in page.rows}


def token_client(user):
    """An API client that authenticates as ``user`` with a fresh token of the token service."""
    from rest_framework.test import APIClient

    from monitor.services import api_token_create

    c = APIClient()
    c.credentials(HTTP_AUTHORIZATION=f"Token {api_token_create(user=user)[1]}")
    return c


@pytest.fixture
def api(alice):
    """alice's API client (token authentication)."""
    return token_client(alice)


def publisher_day_lines(rng, *, publishers: int, days: int, tweets: int, accounts: int, retweets: tuple[int, int]):
    """A CSV upload's lines, its header first: ``publishers`` x ``days`` (from 2020-03-01) x ``tweets`` originals,
    each retweeted by ``retweets[0]`` to ``retweets[1] - 1`` of ``accounts`` accounts (Twitter ids from 100), drawn
    from the NumPy generator ``rng``; for tests whose runs need many cascades over several (publisher, day)
    pairs."""
    lines, tid = ["tweet_id,retweeted_tweet_id,user_id,created_at,followers_count,screen_name"], 10
    for pub in range(publishers):
        for day in range(days):
            for _ in range(tweets):
                root, tid = tid, tid + 1
                lines.append(f"{root},,{pub},2020-03-0{day + 1}T10:00:00Z,{10 + pub},p{pub}")
                for k, acc in enumerate(rng.choice(accounts, rng.integers(*retweets), replace=False)):
                    lines.append(f"{tid},{root},{100 + acc},2020-03-0{day + 1}T10:{k + 1:02d}:00Z,{acc + 1},a{acc}")
                    tid += 1
    return lines
