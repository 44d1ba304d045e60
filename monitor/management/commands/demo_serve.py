"""``manage.py demo_serve [addr:]port``: ``runserver`` (as installed: whitenoise's, then staticfiles') that prints
the demo login last, after its own start-up lines, so ``make demo`` and ``make serve`` end with what an analyst
needs to get in: the address, the demo analyst's login kept by ``demo_setup``, and how to be an admin.
"""

from __future__ import annotations

from django.core.management import get_commands, load_command_class
from django.db import DatabaseError, connections

from .demo_setup import admin_names, login_banner, read_login

# the runserver the project has installed (whitenoise.runserver_nostatic wraps staticfiles' own): the demo's
# server must serve exactly as `manage.py runserver` does, only its start-up message grows
Runserver = type(load_command_class(get_commands()["runserver"], "runserver"))


class Command(Runserver):
    help = "runserver, then the demo login (address, user, password, admin) after the start-up lines."

    def on_bind(self, server_port: int) -> None:
        super().on_bind(server_port)
        host = f"[{self.addr}]" if self._raw_ipv6 else ("0.0.0.0" if self.addr == "0" else self.addr)
        try:
            admins = admin_names()
        except DatabaseError:  # not migrated yet: runserver has said so above; the login is still worth printing
            admins = []
        finally:
            for conn in connections.all(initialized_only=True):
                conn.close()  # the server's threads open their own
        first, *rest = login_banner(f"{self.protocol}://{host}:{server_port}/", read_login(), admins)
        self.stdout.write("\n".join(["", self.style.SUCCESS(first), *rest]))
        self.stdout.flush()
