"""``manage.py demo_setup``: the demo analyst, the demo workspace and the bundled sample data, computed.

Idempotent: samples already imported are not imported again; the analyst's password is reset and printed on
every run, so the printed credentials always work. It is also kept, for the demo's own server only, in
``<data dir>/demo-login.json`` (owner-only): ``manage.py demo_serve`` prints the login again after the server's
start-up lines, where ``make demo`` leaves it last on the screen.
"""

from __future__ import annotations

import json
import os
import secrets
import tempfile
import time
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from monitor import services
from monitor.models import Collection, Membership, Workspace

SAMPLES = Path(__file__).resolve().parents[2] / "fixtures" / "sample"
GENERATED_RETWEETS = 20_000
DEFAULT_HOST = "127.0.0.1:8000"


def login_file() -> Path:
    """Where the demo analyst's login is kept for ``demo_serve`` (the data folder, beside the SQLite database)."""
    return Path(settings.DATA_DIR) / "demo-login.json"


def write_login(username: str, password: str) -> Path:
    """Keep the demo login for ``demo_serve``: readable by its owner only, replaced whole (never half written)."""
    path = login_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump({"username": username, "password": password}, f)
    os.replace(tmp, path)
    return path


def read_login() -> dict | None:
    """The login ``demo_setup`` kept, or None when there is none (or it is unreadable: the banner then says how
    to get one instead of failing the server)."""
    try:
        login = json.loads(login_file().read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(login, dict) or not all(isinstance(login.get(k), str) for k in ("username", "password")):
        return None
    return login


def login_banner(url: str, login: dict | None, admins: list[str]) -> list[str]:
    """The lines that tell the analyst how to get in: address, demo login, data, and how to be an admin."""
    lines = ["Spreadwatch demo is ready.", f"  open     {url}"]
    if login is not None:
        lines += [f"  user     {login['username']}", f"  password {login['password']}"]
    else:
        lines.append("  user     none yet: `make demo` (manage.py demo_setup) creates the demo analyst")
    lines.append(f"  data     {settings.DATABASES['default']['NAME']}")
    if admins:
        lines.append(f"  admin    {url}admin/ as {', '.join(admins)}")
    else:
        lines.append(f"  admin    none yet: `.venv/bin/python manage.py createsuperuser` makes one ({url}admin/)")
    return lines


def serve_url(host: str) -> str:
    """The address ``runserver HOST`` answers on, as a browser opens it: ``HOST`` is ``[addr:]port`` as
    runserver reads it (a bare port listens on 127.0.0.1)."""
    host = (host or DEFAULT_HOST).strip()
    if host.isdigit():
        host = f"127.0.0.1:{host}"
    return f"http://{host}/"


def admin_names() -> list[str]:
    """The superusers' names (at most three): who can open /admin/."""
    User = get_user_model()
    return list(
        User.objects.filter(is_superuser=True, is_active=True).order_by("pk").values_list("username", flat=True)[:3]
    )


class Command(BaseCommand):
    help = "Create the demo analyst and workspace and import + compute the bundled samples."

    def add_arguments(self, parser):
        parser.add_argument("--username", default="analyst")
        parser.add_argument("--password", default="", help="default: a new random one, printed")
        parser.add_argument(
            "--host", default=DEFAULT_HOST, help="[addr:]port the server will listen on (make demo's HOST): printed"
        )
        parser.add_argument("--retweets", type=int, default=GENERATED_RETWEETS, help="size of the generated sample")
        parser.add_argument(
            "--login-later",
            action="store_true",
            help="do not print the login here: demo_serve prints it after the server's start-up lines (make demo)",
        )

    def handle(self, *args, **o):
        User = get_user_model()
        user, _ = User.objects.get_or_create(username=o["username"], defaults={"email": "analyst@example.com"})
        password = o["password"] or secrets.token_urlsafe(9)
        user.set_password(password)
        user.save()
        # one workspace per data set: their scores have different units (Twitter16 carries no follower counts,
        # so its scores count retweeters reached), and a workspace's rankings should not mix units
        spaces = {}
        for slug, name in (
            ("demo", "Twitter16 rumour cascades"),
            ("generated", "Generated Twitter-like collection"),
            ("thesis", "Thesis worked example"),
        ):
            ws = Workspace.objects.filter(slug=slug).first() or services.workspace_create(name=name, slug=slug)
            services.membership_add(workspace=ws, user=user, role=Membership.Role.OWNER)
            spaces[slug] = ws

        self._import(spaces["thesis"], user, "Thesis worked example (Lindberg 2020, Fig. 2.1)", [
            SAMPLES / "thesis_example" / "tweets.csv",
            SAMPLES / "thesis_example" / "follows.csv",
        ])  # fmt: skip
        self._import(spaces["demo"], user, "Twitter16 rumour cascades (Ma et al. 2017)", [SAMPLES / "twitter16.tar.xz"])
        with tempfile.TemporaryDirectory(prefix="spreadwatch-demo-") as tmp:
            name = f"Generated Twitter-like collection ({o['retweets']:,} retweets, v1.1 JSONL)"
            ws = spaces["generated"]
            if not Collection.objects.filter(workspace=ws, name=name, status=Collection.Status.DONE).exists():
                from compute.generators import generate

                out = Path(tmp) / "generated"
                generate("twitter", out, fmt="v1", retweets=o["retweets"], seed=7)
                self._import(ws, user, name, [out / "tweets.jsonl", out / "follows.csv"])

        login = {"username": user.username, "password": password}
        write_login(**login)
        self.stdout.write("")
        if o["login_later"]:
            self.stdout.write("Samples ready; the login is printed below, once the server has started.")
            return
        first, *rest = login_banner(serve_url(o["host"]), login, admin_names())
        self.stdout.write(self.style.SUCCESS(first))
        for line in rest:
            self.stdout.write(line)

    def _import(self, ws, user, name: str, files: list[Path]) -> None:
        if Collection.objects.filter(workspace=ws, name=name, status=Collection.Status.DONE).exists():
            self.stdout.write(f"- {name}: already imported")
            return
        t0 = time.perf_counter()
        self.stdout.write(f"- {name}: importing and computing ...")
        c = services.collection_create(workspace=ws, files=files, user=user, name=name)
        c.refresh_from_db()
        run = c.compute_runs.order_by("-pk").first()
        self.stdout.write(
            f"  {c.get_status_display()} in {time.perf_counter() - t0:.1f} s: "
            f"{c.counts.get('tweets_in_upload', 0):,} tweets, {c.counts.get('retweets_in_upload', 0):,} retweets, "
            f"{c.counts.get('follows_in_upload', 0):,} follows"
            + (f"; run {run.pk} {run.get_status_display().lower()} on {', '.join(run.devices)}" if run else "")
        )
        if c.error:
            self.stderr.write(f"  error: {c.error}")
