"""What the embedded default (SQLite, ``make demo``) does differently so that analysts can log in and browse
while an import writes.

SQLite has one writer at a time, and an import holds the write lock for its whole store step (all of an upload's
rows in one transaction, so that a failed upload stores nothing). Reading never waits (WAL). A login wrote twice:
its new session row and the user's ``last_login``, so it waited for the import, up to the busy timeout. Here:

* sessions live in their own file cache (``SESSION_ENGINE``, settings), not in the database;
* ``last_login`` is written by a short-lived thread after the login answered, instead of inside the login request
  (:func:`install`). The thread waits for the lock as any writer does; if the process ends first, that one
  ``last_login`` is not recorded, which is all that can be lost.

On PostgreSQL (every deployment) none of this applies: writers do not block each other there.
"""

from __future__ import annotations

import logging
import threading

from django.conf import settings
from django.contrib.auth.signals import user_logged_in
from django.db import connections
from django.utils import timezone

log = logging.getLogger(__name__)

__all__ = ["install", "is_embedded"]


def is_embedded() -> bool:
    """The database is the embedded SQLite default."""
    return settings.DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3"


def _record_last_login(model, pk: int, when) -> None:
    try:
        model._default_manager.filter(pk=pk).update(last_login=when)
    except Exception:  # a login must not fail for its timestamp; the next login records one
        log.warning("could not record the last login of user %s", pk, exc_info=True)
    finally:
        connections.close_all()  # this thread's connections only


def _last_login_after_answer(sender, user, **kwargs) -> None:
    when = timezone.now()
    user.last_login = when  # what the rest of the request sees
    threading.Thread(
        target=_record_last_login, args=(type(user), user.pk, when), name="spreadwatch-last-login", daemon=True
    ).start()


def install() -> None:
    """On the embedded default: record ``last_login`` after the login answered (:func:`_last_login_after_answer`)."""
    if not is_embedded():
        return
    user_logged_in.disconnect(dispatch_uid="update_last_login")
    user_logged_in.connect(_last_login_after_answer, dispatch_uid="spreadwatch-embedded-last-login")
