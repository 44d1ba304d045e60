"""JSON backend choice: msgspec (typed, skips unneeded fields), else orjson, else the standard library.

Only NumPy is a hard dependency of ``compute.formats``; msgspec and orjson are imported here, lazily, the first
time a JSON reader runs. The readers work on attribute access, so for the dict backends each decoded object is
wrapped in :class:`Obj`, which looks like the msgspec structs (missing field -> ``None``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

__all__ = ["backend", "Obj", "dict_loads", "FORCE_ENV"]

#: Set to ``msgspec``, ``orjson`` or ``json`` to force a backend (tests use it to cover the fallbacks).
FORCE_ENV = "SPREADWATCH_JSON_BACKEND"


def backend() -> str:
    """The fastest JSON backend importable here (or the one forced by ``$SPREADWATCH_JSON_BACKEND``)."""
    forced = os.environ.get(FORCE_ENV, "").strip().lower()
    order = [forced] if forced else ["msgspec", "orjson", "json"]
    for name in order:
        if name == "json":
            return name
        try:
            __import__(name)
        except ImportError:
            continue
        return name
    raise ValueError(f"${FORCE_ENV}={forced!r}: not importable here")


def dict_loads(name: str) -> tuple[Callable[[bytes], Any], tuple[type[BaseException], ...]]:
    """``loads`` of a dict backend and the exceptions it raises for bad input."""
    if name == "orjson":
        import orjson

        return orjson.loads, (orjson.JSONDecodeError, UnicodeDecodeError)

    def loads(b):
        return json.loads(bytes(b))  # the readers pass memoryview slices; json wants bytes

    return loads, (json.JSONDecodeError, UnicodeDecodeError, RecursionError)


class Obj:
    """Attribute view of a decoded JSON object: ``o.user.followers_count``; a missing key reads as ``None``."""

    __slots__ = ("_d",)

    def __init__(self, d: dict) -> None:
        self._d = d

    def __getattr__(self, name: str) -> Any:
        v = self._d.get(name)
        if type(v) is dict:
            return Obj(v)
        if type(v) is list:
            return [Obj(x) if type(x) is dict else x for x in v]
        return v

    def has(self, name: str) -> bool:
        return name in self._d
