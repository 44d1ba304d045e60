"""Typed readers for environment variables, so settings.py says each variable's type and default once.

A malformed value stops start-up with a message naming the variable (``ImproperlyConfigured``) instead of
being read as something else: ``DEBUG=flase`` must not quietly mean ``False``.
"""

from __future__ import annotations

import os

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    v = raw.strip().lower()
    if v in _TRUE:
        return True
    if v in _FALSE:
        return False
    raise ImproperlyConfigured(f"environment variable {name}={raw!r}: want one of 1/0, true/false, yes/no, on/off")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw.replace("_", ""))
    except ValueError:
        raise ImproperlyConfigured(f"environment variable {name}={raw!r}: want an integer") from None


def env_list(name: str, default: str = "") -> list[str]:
    return [p.strip() for p in os.environ.get(name, default).split(",") if p.strip()]


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    v = os.environ.get(name, default).strip().lower() or default
    if v not in choices:
        raise ImproperlyConfigured(f"environment variable {name}={v!r}: want one of {', '.join(choices)}")
    return v
