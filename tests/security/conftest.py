from __future__ import annotations

from .helpers import objs  # noqa: F401  (fixture: workspace A's objects)
