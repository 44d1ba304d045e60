"""Spreadwatch settings: every value comes from an environment variable with a safe local default.

With nothing set, Spreadwatch runs on an embedded SQLite file in ``var/``, runs Celery tasks eagerly in the
calling process and computes on the CPU (or on the GPU when CuPy sees one): the demo needs no services.
``DATABASE_URL`` switches to PostgreSQL, ``REDIS_URL`` to a Redis cache and result backend, and
``CELERY_BROKER_URL`` to real workers. ``.env.example`` lists every variable; ``monitor/checks.py`` warns
about dangerous combinations.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import dj_database_url

from .env import env_bool, env_choice, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(env_str("SPREADWATCH_DATA_DIR", str(BASE_DIR / "var"))).resolve()


def _secret_key() -> str:
    """SECRET_KEY, or one generated on first start and kept in the data dir (sessions survive restarts)."""
    key = env_str("SECRET_KEY")
    if key:
        return key
    path = DATA_DIR / "secret_key"
    if path.exists():
        return path.read_text().strip()
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(50)
    try:  # O_EXCL: of several processes starting at once, one writes the key and the others read it
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text().strip()
    with os.fdopen(fd, "w") as fh:
        fh.write(key)
    return key


SECRET_KEY = _secret_key()
SECRET_KEY_FROM_ENV = bool(env_str("SECRET_KEY"))
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "monitor.apps.MonitorConfig",
    "frontend.apps.FrontendConfig",
    "monitor.alerts.apps.AlertsConfig",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "monitor.middleware.ChunkedBodyMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "monitor.security.LoginRateLimitMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "monitor.middleware.MethodNotAllowedPageMiddleware",
]

ROOT_URLCONF = "monitor.urls"
WSGI_APPLICATION = "monitor.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- database --------------------------------------------------------------------------------------------


def postgres_options(options: dict, *, jit: str) -> dict:
    """``options`` (a PostgreSQL database's ``OPTIONS``) with ``jit`` set at connection start (``-c jit=...``
    appended to any ``options`` the URL gave), or unchanged for ``server``."""
    if jit == "server":
        return options
    given = str(options.get("options", "")).strip()
    return {**options, "options": f"{given} -c jit={jit}".strip()}


DATABASE_URL = env_str("DATABASE_URL") or f"sqlite:///{DATA_DIR / 'spreadwatch.sqlite3'}"
DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60))}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    # SQLite allows one writer at a time. Every transaction begins IMMEDIATE, taking the write lock at BEGIN:
    # a deferred transaction that read first and then wrote could not wait for the lock at all once another
    # connection had committed in between (SQLITE_BUSY at once, "database is locked", whatever the timeout), and
    # that is how an import failed as soon as another analyst logged in. With IMMEDIATE a writer waits up to the
    # busy timeout for the one before it; reads never wait (WAL). The timeout is long because an import holds the
    # lock for its whole store step: a login during a large import waits for it (README, "The embedded default").
    DATABASES["default"]["OPTIONS"] = {
        "timeout": env_int("SPREADWATCH_SQLITE_BUSY_TIMEOUT_S", 300),
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL;",
    }
    DATABASES["default"]["CONN_MAX_AGE"] = 0
elif DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # PostgreSQL compiles a plan costed over jit_above_cost with LLVM (50-210 ms each) before it runs it: the
    # import's merge, a batch's plan and the pages' reads of a large workspace were over that cost and under the
    # compile's time, and no statement of the product ran long enough for compiled expressions to repay it
    # (benchmarks/data_layer.md, "JIT"). ``server`` leaves it to the server's setting (a pooler that refuses
    # startup options: PgBouncer without ``ignore_startup_parameters = options``)
    DATABASES["default"]["OPTIONS"] = postgres_options(
        DATABASES["default"].get("OPTIONS", {}), jit=env_choice("SPREADWATCH_PG_JIT", "off", ("off", "on", "server"))
    )
if env_str("SPREADWATCH_TEST_DATABASE"):  # set by scripts/with_services.py: one test database per run
    DATABASES["default"]["TEST"] = {"NAME": env_str("SPREADWATCH_TEST_DATABASE")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- cache (progress of running imports lives here, so every process sees it) ----------------------------
REDIS_URL = env_str("REDIS_URL")
if REDIS_URL:
    # an unreachable Redis is a cache miss, not a 500 (monitor/softcache.py): every page answers from PostgreSQL
    CACHES = {"default": {"BACKEND": "monitor.softcache.SoftRedisCache", "LOCATION": REDIS_URL}}
else:
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.filebased.FileBasedCache", "LOCATION": DATA_DIR / "cache"}
    }
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # the embedded default keeps sessions out of SQLite, whose one write lock an import holds for its whole store
    # step: a login or a page that adds a message would wait for it (monitor/embedded.py). A file cache of their
    # own, so that culling the default cache never logs anyone out; a session expires by its own age.
    CACHES["sessions"] = {
        "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
        "LOCATION": DATA_DIR / "sessions",
        "TIMEOUT": None,
        "OPTIONS": {"MAX_ENTRIES": 1_000_000},
    }
    SESSION_ENGINE = "django.contrib.sessions.backends.cache"
    SESSION_CACHE_ALIAS = "sessions"

# --- auth --------------------------------------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# messages in the session, not a cookie: a rotated webhook secret is shown once through one
MESSAGE_STORAGE = "django.contrib.messages.storage.session.SessionStorage"
LOGIN_URL = "login"
# login rate limiting (monitor/security.py): after this many failed logins for one username from one address
# within the window, further attempts are refused until the window ends (0: no limit)
AUTHENTICATION_BACKENDS = ["monitor.security.RateLimitedModelBackend"]
SPREADWATCH_LOGIN_MAX_FAILURES = env_int("SPREADWATCH_LOGIN_MAX_FAILURES", 10)
SPREADWATCH_LOGIN_WINDOW_S = env_int("SPREADWATCH_LOGIN_WINDOW_S", 15 * 60)
# ... and for one username from any address (password spraying from many addresses), and for one address over any
# usernames (one client trying many accounts); API token failures count against the address too (0: no limit)
SPREADWATCH_LOGIN_MAX_FAILURES_PER_USER = env_int("SPREADWATCH_LOGIN_MAX_FAILURES_PER_USER", 30)
SPREADWATCH_LOGIN_MAX_FAILURES_PER_ADDRESS = env_int("SPREADWATCH_LOGIN_MAX_FAILURES_PER_ADDRESS", 30)
# password-reset requests: per address and per email address within the login window (0: no limit)
SPREADWATCH_PASSWORD_RESET_MAX = env_int("SPREADWATCH_PASSWORD_RESET_MAX", 5)
# REST API tokens (monitor/models/ops.py ApiToken): days until a new token expires
SPREADWATCH_API_TOKEN_DAYS = env_int("SPREADWATCH_API_TOKEN_DAYS", 90)
# workspace invitations (monitor/models/core.py Invitation): days until an invitation link expires
SPREADWATCH_INVITATION_DAYS = env_int("SPREADWATCH_INVITATION_DAYS", 7)
PASSWORD_RESET_TIMEOUT = env_int("PASSWORD_RESET_TIMEOUT", 3 * 24 * 3600)
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# --- files -------------------------------------------------------------------------------------------------
STATIC_URL = "static/"
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(DATA_DIR / "static")))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
# runserver without collectstatic still finds the app's files; a file missing from the manifest is served
# under its plain name instead of failing the page
WHITENOISE_USE_FINDERS = True
WHITENOISE_MANIFEST_STRICT = False
WHITENOISE_AUTOREFRESH = DEBUG
MEDIA_URL = "media/"
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(DATA_DIR / "media")))
# uploads above 2 MiB stream to a temporary file instead of memory, in a folder on the media folder's filesystem,
# so that storing the upload renames that file instead of copying it (monitor/uploads.py)
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
SPREADWATCH_UPLOAD_TEMP_DIR = env_str("SPREADWATCH_UPLOAD_TEMP_DIR", str(MEDIA_ROOT / ".incoming"))
FILE_UPLOAD_HANDLERS = [
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "monitor.uploads.MediaTemporaryFileUploadHandler",
]
DATA_UPLOAD_MAX_NUMBER_FILES = 20
SPREADWATCH_UPLOAD_MAX_BYTES = env_int("SPREADWATCH_UPLOAD_MAX_BYTES", 10 * 1024**3)
# zip / tar uploads are checked against these before anything is extracted (zip bombs, huge member lists)
SPREADWATCH_ARCHIVE_MAX_BYTES = env_int("SPREADWATCH_ARCHIVE_MAX_BYTES", 20 * 1024**3)
SPREADWATCH_ARCHIVE_MAX_MEMBERS = env_int("SPREADWATCH_ARCHIVE_MAX_MEMBERS", 100_000)
SPREADWATCH_ARCHIVE_MAX_RATIO = env_int("SPREADWATCH_ARCHIVE_MAX_RATIO", 1000)
# an uploaded v1.1 JSONL file of at least SPREADWATCH_READ_PARALLEL_BYTES is parsed by this many processes, in
# ranges of SPREADWATCH_READ_RANGE_BYTES (compute/formats/_parallel.py); 1 = one process, as for smaller files
SPREADWATCH_READ_WORKERS = max(1, env_int("SPREADWATCH_READ_WORKERS", min(2, os.cpu_count() or 1)))
SPREADWATCH_READ_PARALLEL_BYTES = env_int("SPREADWATCH_READ_PARALLEL_BYTES", 32 * 1024**2)
SPREADWATCH_READ_RANGE_BYTES = max(1, env_int("SPREADWATCH_READ_RANGE_BYTES", 8 * 1024**2))
# ... and, at the lowest priority, up to this many bytes of the file ahead of the import while it merges a part of a
# large upload into the database: their parsed rows wait in files of the temporary directory (56 % of the bytes
# read ahead on the benchmark's v1.1 files); 0 = about one range ahead (benchmarks/data_layer.md, 2026-12-02 (third))
SPREADWATCH_READ_AHEAD_BYTES = max(0, env_int("SPREADWATCH_READ_AHEAD_BYTES", 1024**3))

# --- Celery ------------------------------------------------------------------------------------------------
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL")
SPREADWATCH_HAS_BROKER = bool(CELERY_BROKER_URL)
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", not CELERY_BROKER_URL)
if not CELERY_BROKER_URL:
    CELERY_BROKER_URL = "memory://localhost/"  # eager: nothing is sent; this only keeps kombu from looking for AMQP
CELERY_TASK_EAGER_PROPAGATES = True
# no broker: run eager tasks on one background thread of the web process instead of inside the request that
# queued them, so an upload answers at once and its page follows the import (``make demo``/``make serve`` set it)
SPREADWATCH_EAGER_IN_BACKGROUND = env_bool("SPREADWATCH_EAGER_IN_BACKGROUND", False)
# ... and there, a new web process first sends again the imports and batches that the one before it left queued or
# running (the demo stopped with Ctrl-C during an import): monitor/services/recovery.py, resume_in_process
SPREADWATCH_RESUME_IN_PROCESS = env_bool("SPREADWATCH_RESUME_IN_PROCESS", SPREADWATCH_EAGER_IN_BACKGROUND)
if CELERY_BROKER_URL.startswith("filesystem://"):
    # kombu's file-based transport: queues as files in the data dir; one machine, no broker service (used by
    # benchmarks/gpu_worker.py on the GPU machine, which has no Redis)
    _queues = DATA_DIR / "broker"
    _queues.mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_queues),
        "data_folder_out": str(_queues),
        "control_folder": str(_queues / "control"),
    }
# Redis broker: a task taken by a worker that then died (kill -9, the OOM killer, a lost machine) is handed to
# another worker once it has gone unacknowledged this long. It must exceed the longest task and the longest retry
# countdown (webhook retries wait up to 480 s), or a task still running is handed out twice (harmless: the tasks
# are idempotent; wasted work). The sweep that finds such tasks runs every tenth of it (1 to 10 s).
SPREADWATCH_BROKER_VISIBILITY_TIMEOUT = env_int("SPREADWATCH_BROKER_VISIBILITY_TIMEOUT", 3600)
if CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": SPREADWATCH_BROKER_VISIBILITY_TIMEOUT,
        "unacked_restore_interval": max(1, min(10, SPREADWATCH_BROKER_VISIBILITY_TIMEOUT // 10)),
        "unacked_restore_throttle": 1,  # kombu's default 10 would make the sweep every 100 s
    }
CELERY_RESULT_BACKEND = REDIS_URL or None
CELERY_TASK_IGNORE_RESULT = True
# tasks are idempotent (they take ids and rewrite the same rows), so a worker lost mid-task may redo it
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_DEFAULT_QUEUE = "default"

# --- the engine ----------------------------------------------------------------------------------------------
SPREADWATCH_BACKEND = env_choice("SPREADWATCH_BACKEND", "auto", ("auto", "cpu", "gpu"))
SPREADWATCH_COMPUTE_QUEUE = env_choice(
    "SPREADWATCH_COMPUTE_QUEUE", "gpu" if SPREADWATCH_BACKEND == "gpu" else "cpu", ("cpu", "gpu")
)
# the queue of the graph-wide analyses' batches (network, counter-campaign planner, who-to-follow), with a worker of
# its own, so that an upload's influence batches (SPREADWATCH_COMPUTE_QUEUE) never wait behind a long analysis;
# set it to "cpu" (or "gpu") to run everything on one compute worker as before (docs/deploy.md)
SPREADWATCH_ANALYSIS_QUEUE = env_str("SPREADWATCH_ANALYSIS_QUEUE", "analysis") or "analysis"
# one batch per ~1M participants: per-batch work (loading follows, refreshing the touched aggregates) repeats
# for every batch, so on a small machine fewer, bigger batches finish sooner; more workers want more batches
SPREADWATCH_BATCH_NODES = env_int("SPREADWATCH_BATCH_NODES", 1_000_000)
# an import merges its upload in parts of this many staged rows (tweets and retweets, follow edges), inside its one
# transaction, so that its memory is bounded by a part, not by the upload (monitor/services/ingest/stager.py;
# about 200 bytes per row at the peak; 3M keeps the 10M benchmark's import under its compute's peak (1,666-1,731
# MiB), where 4M reached 1,832-1,928 MiB; smaller parts cost no checks since a later part checks in memory:
# benchmarks/data_layer.md); 0 = one part
SPREADWATCH_IMPORT_PART_ROWS = max(0, env_int("SPREADWATCH_IMPORT_PART_ROWS", 3_000_000))
# an import (on PostgreSQL, owning its transaction) stores a workspace's first follows on a second connection while
# its own stores the rest, and attaches them as the workspace's partition at its end (monitor/services/ingest/
# side_load.py); 0: on the import's connection
SPREADWATCH_SIDE_LOAD = env_bool("SPREADWATCH_SIDE_LOAD", True)
# the side's COPYs of one table spread over this many connections, and the parallel workers its index builds ask
# PostgreSQL for; 0 (copies) and -1 (workers): by the cores (none more on 2 cores, 4 and 4 on 16: side_load.py)
SPREADWATCH_SIDE_LOAD_COPIES = max(0, env_int("SPREADWATCH_SIDE_LOAD_COPIES", 0))
SPREADWATCH_SIDE_INDEX_WORKERS = max(-1, env_int("SPREADWATCH_SIDE_INDEX_WORKERS", -1))
# the follower graphs as memory-mapped CSR files, one per workspace and follows version, shared by every process of
# a machine (monitor/graph_files.py); a folder on local disk, or storage shared by the workers
SPREADWATCH_GRAPH_DIR = Path(env_str("SPREADWATCH_GRAPH_DIR", str(DATA_DIR / "graphs")))
# an import parses up to this many follow edges ahead, in a thread, while it merges the part before (numba's parse
# releases the GIL: compute/formats/_ahead.py); 30M edges and a stand-in merge on a 2-core host, the wait for the
# parse 2.9 -> 0.4-0.5 s (benchmarks/follows_ahead_bench.py); costs their memory, ~16 B an edge (the 10M upload's
# peak 1,807 -> 1,923 MiB). Off by default (0: parsed in the import's thread) until an upload shows a gain: on 2
# cores the import, its PostgreSQL backend and the side load's use both (the 10M run took 399 s with one part
# ahead against 361 s without, one pair), and on 16 the stand-in merge's wall did not drop (benchmarks/
# data_layer.md, 2026-12-06 (eighth)); 3000000 (one part) is the setting to measure on many cores
SPREADWATCH_FOLLOWS_AHEAD_ROWS = max(0, env_int("SPREADWATCH_FOLLOWS_AHEAD_ROWS", 0))
# rows per chunk of the streaming readers (0: theirs, 200,000 tweets and 1,000,000 follow edges): a part ends
# between two chunks, so a part can exceed SPREADWATCH_IMPORT_PART_ROWS by up to one chunk
SPREADWATCH_READ_CHUNK_ROWS = max(0, env_int("SPREADWATCH_READ_CHUNK_ROWS", 0))
# the workers a run's batches are spread over (one per GPU, or the CPU worker processes): with more than one,
# batches shrink to about total / (4 x workers) participants, never below SPREADWATCH_BATCH_MIN_NODES, and are
# queued largest first (compute/batching.py)
SPREADWATCH_RUN_WORKERS = env_int("SPREADWATCH_RUN_WORKERS", 1)
SPREADWATCH_BATCH_MIN_NODES = env_int("SPREADWATCH_BATCH_MIN_NODES", 50_000)
SPREADWATCH_ORPHANS = env_choice("SPREADWATCH_ORPHANS", "strict", ("strict", "attach"))
# a network run splits its betweenness sources into batches of at most this many blocks of 64 sources
# (compute.graphs.SOURCE_BLOCK), so several workers share them; fewer, bigger batches load the graph less often
SPREADWATCH_NETWORK_BLOCKS_PER_BATCH = env_int("SPREADWATCH_NETWORK_BLOCKS_PER_BATCH", 4)
# rankings, account pages, the explorer and the rendered results are cached per workspace and data version, which
# every compute commit and import bumps; this is only the longest an entry lives (a week: a quiet hour must not make
# the pages cold). Memory is bounded by the beat task "read-cache-prune", which drops superseded versions (0: off)
SPREADWATCH_READ_CACHE_SECONDS = env_int("SPREADWATCH_READ_CACHE_SECONDS", 7 * 24 * 3600)
# a web process imports its URL configuration and compiles its templates as it starts, not on its first requests
# (monitor/boot.py; 0: off)
SPREADWATCH_PRIME_WEB = env_bool("SPREADWATCH_PRIME_WEB", True)
# ... and builds the all-time ranking snapshot of this many most recently computed workspaces
SPREADWATCH_PRIME_WEB_WORKSPACES = env_int("SPREADWATCH_PRIME_WEB_WORKSPACES", 3)
# a primed web process, and a Celery worker when it is ready, move their start-up objects out of the cyclic garbage
# collector's passes (gc.freeze; monitor/boot.py; 0: off)
SPREADWATCH_GC_FREEZE = env_bool("SPREADWATCH_GC_FREEZE", True)
# a process that finds a value another process is building waits this many seconds for it before building it too
SPREADWATCH_READ_CACHE_WAIT = env_int("SPREADWATCH_READ_CACHE_WAIT", 10)
# when a compute run finishes, its worker stores what the busiest pages read for the new data version
# (monitor/services/warmup.py; PostgreSQL only), each part for at most this many seconds (0: off): before it marks
# the run done, the overview and the rankings across publishers and of this many busiest publishers; then (see
# SPREADWATCH_WARM_REST) the pages of this many top accounts, the explorer of this many largest cascades, then the
# rankings' variants
SPREADWATCH_WARM_SECONDS = env_int("SPREADWATCH_WARM_SECONDS", 30)
# an account page computes its who-amplifies-whom panels when it opens (exact method, a run's defaults; cached per
# data version) if the workspace's follower graph has at most this many follows: the exact method's work grows with
# them (benchmarks/wtf_on_open.md). Beyond it, or at 0, the panels wait for a run as before (docs/wtf.md)
SPREADWATCH_WTF_ON_OPEN_EDGES = max(0, env_int("SPREADWATCH_WTF_ON_OPEN_EDGES", 3_000_000))
SPREADWATCH_WARM_PUBLISHERS = env_int("SPREADWATCH_WARM_PUBLISHERS", 10)
SPREADWATCH_WARM_ACCOUNTS = env_int("SPREADWATCH_WARM_ACCOUNTS", 20)
SPREADWATCH_WARM_CASCADES = env_int("SPREADWATCH_WARM_CASCADES", 10)
# when the accounts' pages, the explorers and the rankings' variants are warmed (the overview and the rankings are
# always warmed before the run shows done): "before" it shows done too (every busy page warm at once); "thread":
# after its commit in a thread of the worker (done ~7 s sooner at 1M retweets, those pages cold meanwhile); "after":
# after its commit, in line
SPREADWATCH_WARM_REST = env_choice("SPREADWATCH_WARM_REST", "before", ("before", "thread", "after"))
# an import or compute batch that writes at least this many rows refreshes the planner statistics of its tables
SPREADWATCH_ANALYZE_MIN_ROWS = env_int("SPREADWATCH_ANALYZE_MIN_ROWS", 50_000)

# stalled work (monitor/services/recovery.py): a worker holding a batch or an import beats a heartbeat every quarter
# of this; work with no heartbeat for this long has lost its worker and is queued again, at most
# SPREADWATCH_STALL_MAX_ATTEMPTS deliveries in all (then it fails, saying why, and its analyst gets a notice)
SPREADWATCH_STALL_SECONDS = env_int("SPREADWATCH_STALL_SECONDS", 60)
SPREADWATCH_STALL_MAX_ATTEMPTS = env_int("SPREADWATCH_STALL_MAX_ATTEMPTS", 3)
# poison messages: a compute batch or an import that a delivery finds still marked running after this many
# deliveries that never ended (each ended its worker: killed, out of memory) is not run again; it fails, saying why
SPREADWATCH_MAX_DELIVERIES = env_int("SPREADWATCH_MAX_DELIVERIES", 3)

# --- cost budgets (issue 41; docs/reliability.md) -----------------------------------------------------------------
# every analysis run is estimated before it is queued (monitor/services/budgets.py); one whose estimate exceeds its
# workspace's budget is refused with a 400 naming the parameter and the limit. Per-workspace values (admin) win
# over these defaults. Seconds: the run's estimated worker time on this deployment's CPU worker
SPREADWATCH_BUDGET_RUN_SECONDS = env_int("SPREADWATCH_BUDGET_RUN_SECONDS", 1800)
# MB: the estimated peak memory of one batch in its worker, and the ceiling a batch is held to while it runs
SPREADWATCH_BUDGET_RUN_MEMORY_MB = env_int("SPREADWATCH_BUDGET_RUN_MEMORY_MB", 2048)
# that ceiling's hard backstop on a CPU worker (Linux, compute/memory.py): RLIMIT_DATA while a batch runs, so one huge
# allocation fails the batch with MemoryError instead of the OOM killer ending the worker (0: the soft check only)
SPREADWATCH_MEMORY_HARD_LIMIT = env_bool("SPREADWATCH_MEMORY_HARD_LIMIT", True)
# analysis runs of one workspace queued to workers at once; the rest wait, in order, until one ends (an upload's own
# influence run is not counted and never waits: monitor/services/runs.py)
SPREADWATCH_MAX_RUNS_IN_FLIGHT = env_int("SPREADWATCH_MAX_RUNS_IN_FLIGHT", 2)

# --- the live stream (issue 17; docs/live.md) ------------------------------------------------------------------
# events are partitioned by cascade into this many partitions; each partition is applied by one consumer at a
# time, in id order. Changing it moves cascades between partitions: drain the stream first (docs/live.md)
SPREADWATCH_STREAM_PARTITIONS = env_int("SPREADWATCH_STREAM_PARTITIONS", 8)
# a retweet whose original has not arrived waits this many seconds, then becomes a dead letter ("never arrived")
SPREADWATCH_STREAM_ORPHAN_WAIT = env_int("SPREADWATCH_STREAM_ORPHAN_WAIT", 600)
# a workspace with more queued events than this is refused new ones (429 with Retry-After) until consumers catch up
SPREADWATCH_STREAM_MAX_BACKLOG = env_int("SPREADWATCH_STREAM_MAX_BACKLOG", 200_000)
# one POST /api/v1/stream/ body: at most this many bytes and lines (follow_stream sends smaller batches)
SPREADWATCH_STREAM_MAX_BODY_BYTES = env_int("SPREADWATCH_STREAM_MAX_BODY_BYTES", 16 * 1024**2)
SPREADWATCH_STREAM_MAX_LINES = env_int("SPREADWATCH_STREAM_MAX_LINES", 50_000)
# a consumer's micro-batch: at most this many events, and it waits at most this long for a batch to fill
SPREADWATCH_STREAM_BATCH = env_int("SPREADWATCH_STREAM_BATCH", 10_000)
SPREADWATCH_STREAM_BATCH_WAIT_MS = env_int("SPREADWATCH_STREAM_BATCH_WAIT_MS", 200)
# PostgreSQL's parallel workers per statement in a micro-batch's transaction (max_parallel_workers_per_gather).
# 0: none. The apply's statements are short (10-50 ms); a parallel plan took the same wall time for twice the CPU,
# which the intake and the pages beside it needed on a small machine (benchmarks/stream_web.md)
SPREADWATCH_STREAM_PARALLEL_WORKERS = env_int("SPREADWATCH_STREAM_PARALLEL_WORKERS", 0)
# consumers look in PostgreSQL this often even without a wake-up (Redis down, a wake-up lost)
SPREADWATCH_STREAM_POLL_MS = env_int("SPREADWATCH_STREAM_POLL_MS", 2_000)
# a consumer not heard of for this long is dead: its partitions go to the others, which claim its wake-ups
SPREADWATCH_STREAM_CONSUMER_TIMEOUT_MS = env_int("SPREADWATCH_STREAM_CONSUMER_TIMEOUT_MS", 10_000)
# where the wake-ups go (Redis Streams); empty: REDIS_URL, else the broker's Redis, else none (consumers only poll)
SPREADWATCH_STREAM_REDIS_URL = (
    env_str("SPREADWATCH_STREAM_REDIS_URL")
    or REDIS_URL
    or (CELERY_BROKER_URL if CELERY_BROKER_URL.startswith(("redis://", "rediss://")) else "")
)

CELERY_TASK_ROUTES = {
    "monitor.tasks.ingest_collection": {"queue": "ingest"},
    "monitor.tasks.compute_batch": {"queue": SPREADWATCH_COMPUTE_QUEUE},
    "monitor.tasks.requeue_stalled": {"queue": "default"},
    "monitor.tasks.send_outbox": {"queue": "default"},
    "monitor.tasks.read_cache_prune": {"queue": "default"},
    # an index build takes minutes on a large workspace: beside the imports, not ahead of the beat's sweeps
    "monitor.tasks.search_pairs_refresh": {"queue": "ingest"},
    "monitor.alerts.tasks.evaluate_alerts": {"queue": "default"},
    "monitor.alerts.tasks.evaluate_all": {"queue": "default"},
    # a queue and worker of their own: a slow receiver never holds a worker that computes or evaluates
    "monitor.alerts.tasks.deliver_webhook": {"queue": "webhooks"},
}
# beat: alert rules are also evaluated on a schedule (rolling windows move even when nothing is computed); stalled
# work is re-queued and tasks the broker refused are sent again
CELERY_BEAT_SCHEDULE = {
    "alerts-evaluate-all": {
        "task": "monitor.alerts.tasks.evaluate_all",
        "schedule": env_int("SPREADWATCH_ALERTS_EVERY_S", 900),
    },
    "requeue-stalled": {
        "task": "monitor.tasks.requeue_stalled",
        "schedule": max(1, SPREADWATCH_STALL_SECONDS // 4),
    },
    "send-outbox": {
        "task": "monitor.tasks.send_outbox",
        "schedule": max(1, min(15, SPREADWATCH_STALL_SECONDS // 4)),
    },
    # stream retweets waiting for an original that an upload (not the stream) brought, and those past their wait
    "stream-sweep-waiting": {
        "task": "monitor.tasks.stream_sweep_waiting",
        "schedule": 60,
    },
    # the read cache's entries of superseded data versions (monitor.cache.prune_superseded)
    "read-cache-prune": {
        "task": "monitor.tasks.read_cache_prune",
        "schedule": env_int("SPREADWATCH_READ_CACHE_PRUNE_EVERY_S", 60),
    },
    # the phrase search's index of common word pairs, for workspaces whose data changed (services.search_pairs)
    "search-pairs-refresh": {
        "task": "monitor.tasks.search_pairs_refresh",
        "schedule": env_int("SPREADWATCH_SEARCH_PAIRS_EVERY_S", 900),
    },
}

# --- alerts: email and webhooks --------------------------------------------------------------------------------
EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "spreadwatch@localhost")
SPREADWATCH_BASE_URL = env_str("SPREADWATCH_BASE_URL", "http://127.0.0.1:8000")  # absolute links in emails
# the whole of one delivery (resolving, connecting, sending, the answer), not each socket read: a receiver that
# drips its answer is cut off at this many seconds
SPREADWATCH_WEBHOOK_TIMEOUT = env_int("SPREADWATCH_WEBHOOK_TIMEOUT", 10)
# deliveries to one receiving host (host and port) at once, across every webhook worker (a Redis semaphore): a
# delivery that finds its host busy is sent again a few seconds later instead of holding a worker, so one slow
# receiver never holds up the others' webhooks. 0: no limit (also without Redis)
SPREADWATCH_WEBHOOK_PER_HOST = max(0, env_int("SPREADWATCH_WEBHOOK_PER_HOST", 1))
# webhooks to loopback, link-local, private, multicast and unspecified addresses are refused unless this is true
# (monitor/security.py: checked when a rule is saved and again at every delivery)
SPREADWATCH_WEBHOOK_ALLOW_PRIVATE = env_bool("SPREADWATCH_WEBHOOK_ALLOW_PRIVATE", False)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # hashed, expiring, optionally one workspace, void after a password change (monitor/api/auth.py); first, so
        # that a refused or missing credential answers 401 with WWW-Authenticate: Token
        "monitor.api.auth.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated", "monitor.api.auth.TokenScope"],
    "DEFAULT_PAGINATION_CLASS": "monitor.api.paging.Pagination",  # page_size/page or limit/offset, at most 1000
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "monitor.api.schema.AutoSchema",  # a summary for every operation
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Spreadwatch API",
    "DESCRIPTION": "Rankings of the accounts that spread misinformation, per workspace. Twitter ids are strings.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": "/api/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    # two parameters named "method" (influence maximisation's and who amplifies whom's) get their own enums
    "ENUM_NAME_OVERRIDES": {"WtfMethodEnum": "compute.results.WTF_METHODS"},
}

# --- security headers and HTTPS ---------------------------------------------------------------------------------
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
# behind a reverse proxy that terminates TLS and sets X-Forwarded-Proto (and X-Forwarded-For, read by the login
# rate limit): only set it when the proxy overwrites those headers, or clients could forge them
SPREADWATCH_BEHIND_PROXY = env_bool("SPREADWATCH_BEHIND_PROXY", False)
if SPREADWATCH_BEHIND_PROXY:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# the site is served over HTTPS: redirect http to https, secure cookies, HSTS (not with DEBUG: runserver is http)
SPREADWATCH_HTTPS = env_bool("SPREADWATCH_HTTPS", False)
if SPREADWATCH_HTTPS and not DEBUG:
    SECURE_SSL_REDIRECT = True
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]  # a load balancer's plain-http probe gets its answer
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31_536_000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
    if not SECURE_HSTS_PRELOAD:
        # preloading is a commitment (browsers ship the domain; removal takes months): opt in deliberately
        SILENCED_SYSTEM_CHECKS = ["security.W021"]

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO").upper()},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}
