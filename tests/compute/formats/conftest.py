"""Fixtures of the reader tests: the sample files under tests/data (never outside the repo) and the JSON backends."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[2] / "data"
FDATA = DATA / "formats"
TWITTER16 = DATA / "twitter16"
THESIS = DATA / "thesis_example"

_BACKENDS = [b for b in ("msgspec", "orjson") if importlib.util.find_spec(b) is not None] + ["json"]


@pytest.fixture
def fdata(monkeypatch) -> Path:
    """tests/data/formats, as the working directory too, so paths in messages are short and stable."""
    monkeypatch.chdir(FDATA)
    return FDATA


@pytest.fixture(params=_BACKENDS)
def json_backend(request, monkeypatch) -> str:
    """Runs a JSON test with each backend importable here (msgspec, orjson, the standard library)."""
    from compute.formats._json import FORCE_ENV

    monkeypatch.setenv(FORCE_ENV, request.param)
    return request.param
