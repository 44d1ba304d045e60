"""What the web-side benchmarks share: their own PostgreSQL database (created when the server has none of that
name) and Django set up and migrated on it, and the generated v1.1 benchmark collection. No side effects on
import: each benchmark decides itself whether tasks run eagerly."""

from __future__ import annotations

import sys
import time
from pathlib import Path


def ensure_database(url: str) -> None:
    """Create ``url``'s database when the server has none of that name yet (PostgreSQL URLs only)."""
    if not url.startswith(("postgres://", "postgresql://")):
        return
    import dj_database_url
    import psycopg

    cfg = dj_database_url.parse(url)
    kw = {"host": cfg["HOST"], "port": cfg["PORT"] or 5432, "user": cfg["USER"], "password": cfg["PASSWORD"]}
    with psycopg.connect(dbname="postgres", autocommit=True, **{k: v for k, v in kw.items() if v}) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [cfg["NAME"]]).fetchone():
            conn.execute(f'CREATE DATABASE "{cfg["NAME"]}"')


def django_on_postgres(prog: str, url: str) -> bool:
    """Set Django up on ``url`` (created if missing) and migrate it; False, with a message, when it is not
    PostgreSQL (the benchmarks measure PostgreSQL)."""
    ensure_database(url)
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    if connection.vendor != "postgresql":
        print(f"{prog}: DATABASE_URL must point at PostgreSQL", file=sys.stderr)
        return False
    call_command("migrate", verbosity=0)
    return True


def web_bench_workspace(prog: str):
    """Django set up on ``DATABASE_URL`` (with the read cache off: every read is measured) and the ``bench-1m``
    workspace ``benchmarks/web_bench.py`` left there; None, with a message, when there is none. For the benchmarks
    that time one read of that workspace (the explorer, the rank chart, the snapshot's pages)."""
    import os

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "monitor.settings")
    os.environ["SPREADWATCH_READ_CACHE_SECONDS"] = "0"
    import django

    django.setup()
    from django.db import DatabaseError

    from monitor.models import Workspace

    try:
        ws = Workspace.objects.filter(slug="bench-1m").first()
    except DatabaseError as exc:  # no such database, or not migrated
        print(f"{prog}: cannot read the workspaces of DATABASE_URL's database: {exc}".rstrip(), file=sys.stderr)
        return None
    if ws is None:
        print(f"{prog}: no bench-1m workspace: run benchmarks/web_bench.py on this database first", file=sys.stderr)
    return ws


def generated_collection(data: Path, retweets: int, *, seed: int = 0) -> list[Path]:
    """The ``twitter`` preset's v1.1 collection of ``retweets`` retweets in ``data`` (generated once)."""
    if not (data / "tweets.jsonl").exists():
        from compute.generators import generate

        t = time.perf_counter()
        generate("twitter", data, fmt="v1", retweets=retweets, seed=seed)
        print(f"generated {data} in {time.perf_counter() - t:.1f} s", flush=True)
    return [data / "tweets.jsonl", data / "follows.csv"]


def full_graph_collection(data: Path, scale: float, *, seed: int = 0) -> list[Path]:
    """The ``twitter`` preset at ``scale`` as an analyst would upload it with its whole follower graph (generated
    once): the v1.1 ``tweets.jsonl`` and every follow of the graph in ``follows.csv``, not only those among the
    cascades' participants (:func:`generated_collection`). At scale 1.0 the size of CRGP's ``bigger4``: 3.68M
    retweets and 341.7M follows (about 7 GB of files)."""
    if not (data / "tweets.jsonl").exists():
        from compute.generators.export import write_follows_csv, write_v1_jsonl
        from compute.generators.twitter import twitter_collection

        t = time.perf_counter()
        tweets, graph = twitter_collection(scale=scale, seed=seed)
        data.mkdir(parents=True, exist_ok=True)
        follower, followee = graph.to_edges()
        write_follows_csv(data / "follows.csv.tmp", follower, followee)
        del follower, followee
        (data / "follows.csv.tmp").rename(data / "follows.csv")
        write_v1_jsonl(data / "tweets.jsonl.tmp", tweets)
        (data / "tweets.jsonl.tmp").rename(data / "tweets.jsonl")  # last: its presence says the folder is whole
        print(f"generated {data} (scale {scale}, {graph.n_edges:,} follows) in {time.perf_counter() - t:.1f} s")
    return [data / "tweets.jsonl", data / "follows.csv"]


def twitter_graph(scale: float, seed: int, emit) -> object:
    """The ``twitter`` preset's follower graph (``compute.graphs.Graph``), generated; ``emit`` gets a row with its
    size, the time it took and the cores (the WTF benchmarks' first line)."""
    import os

    from compute.generators.twitter import follower_graph as generate
    from compute.graphs import follower_graph

    t = time.perf_counter()
    fg, _ = generate(scale=scale, seed=seed)
    g = follower_graph(fg)
    emit({"case": "graph", "users": g.n_nodes, "follows": g.n_edges, "generate_s": time.perf_counter() - t,
          "cores": os.cpu_count()})  # fmt: skip
    return g


#: the exact method's tolerance (L1 change 1e-10): PPR values below it are not told from zero by the exact method
#: itself, so where a seed reaches fewer accounts than its circle holds, those below it are not asked of a local one
EXACT_FLOOR = 1e-10


def add_input_argument(parser) -> None:
    """The WTF benchmarks' ``--input PATH`` (repeat): a follower graph from files instead of the generated one."""
    parser.add_argument(
        "--input",
        action="append",
        metavar="PATH",
        help="a follower graph from files instead of the generated one (repeat; what `python -m compute wtf` reads)",
    )


def bench_graph(inputs: list[str] | None, scale: float, seed: int, emit) -> object:
    """The follower graph of ``inputs`` (a follows CSV, an edge list, a Twitter15/16 trees folder: what ``python -m
    compute wtf`` reads) or, without any, the ``twitter`` preset's at ``scale`` (:func:`twitter_graph`); ``emit``
    gets its row."""
    if not inputs:
        return twitter_graph(scale, seed, emit)
    from compute.cli import _follower_graph

    t = time.perf_counter()
    g = _follower_graph(inputs, "auto", None)
    emit({"case": "graph", "inputs": inputs, "users": g.n_nodes, "follows": g.n_edges,
          "read_s": time.perf_counter() - t})  # fmt: skip
    return g


def json_lines():
    """``(rows, emit)``: ``emit(row)`` prints ``row`` as a JSON line at once (a stopped run keeps what it printed)
    and appends it to ``rows`` (for ``--out``)."""
    import json

    rows: list[dict] = []

    def emit(row: dict) -> None:
        rows.append(row)
        print(json.dumps(row), flush=True)

    return rows, emit


def wtf_runs(spec: str) -> list[tuple[str, float | None, float]]:
    """The local WTF methods of a ``--runs`` option: ``push:EPSILON``, ``fora:EPSILON:WALKS`` or ``walks:WALKS``,
    comma-separated, as ``(method, epsilon, walks)`` (walks 0 for the push, epsilon None for plain walks)."""
    runs = []
    for item in spec.split(","):
        method, *numbers = item.split(":")
        if method == "walks":
            runs.append((method, None, float(numbers[0])))
        else:
            runs.append((method, float(numbers[0]), float(numbers[1]) if len(numbers) > 1 else 0.0))
    return runs


def wtf_run_name(row: dict) -> str:
    """A results table's name of a local run: ``fora ε=1e-06 W=4e+06``, ``walks W=1e+06``."""
    eps = f" ε={row['epsilon']:g}" if row.get("epsilon") is not None else ""
    return f"{row['case']}{eps}" + (f" W={row['walks']:g}" if row["walks"] else "")
