"""Fixtures of the selectors' tests."""

from __future__ import annotations

import pytest

from tests.claimed import claimed_csv


@pytest.fixture
def claimed(ws_a, import_files, tmp_path):
    """Workspace A with ``tests/claimed.py``'s collection imported and computed."""
    import_files(ws_a, [claimed_csv(tmp_path / "tweets.csv")])
    return ws_a
