from __future__ import annotations

from .fixtures import collection_files, faults, stored, thesis  # noqa: F401  (fixtures)
