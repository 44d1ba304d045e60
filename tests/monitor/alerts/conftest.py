from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _webhooks_to_localhost(settings):
    """The tests' webhook receivers listen on 127.0.0.1: allow private addresses."""
    settings.SPREADWATCH_WEBHOOK_ALLOW_PRIVATE = True
