from __future__ import annotations

import pytest

from ...conftest import _gpu_skip_reason


def pytest_collection_modifyitems(config, items):
    """Everything under tests/compute/gpu is a GPU test: marked ``gpu`` and skipped, with the reason, where
    no GPU is."""
    reason = None
    checked = False
    for item in items:
        if "/tests/compute/gpu/" not in str(item.fspath).replace("\\", "/"):
            continue
        item.add_marker(pytest.mark.gpu)
        if not checked:
            reason, checked = _gpu_skip_reason(), True
        if reason:
            item.add_marker(pytest.mark.skip(reason=reason))
