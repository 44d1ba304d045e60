from __future__ import annotations

import pytest

from tests.webapp import (  # noqa: F401  (fixtures)
    _eager_celery,
    _media,
    _no_read_cache,
    _plain_static,
    admin_user,
    alice,
    bob,
    import_files,
    run_tasks,
    ws_a,
    ws_b,
)


@pytest.fixture(autouse=True)
def _webhooks_to_localhost(settings):
    """The tests' webhook receivers listen on 127.0.0.1: allow private addresses."""
    settings.SPREADWATCH_WEBHOOK_ALLOW_PRIVATE = True
