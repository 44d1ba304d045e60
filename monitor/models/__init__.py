"""Spreadwatch's models: :mod:`.core` holds what every algorithm shares, and each algorithm's result tables
are a module named after it (:mod:`.influence`). Every model is importable from ``monitor.models``."""

from __future__ import annotations

from ..numbers import account_display
from .core import (
    Account,
    Collection,
    CollectionFile,
    ComputeBatch,
    ComputeRun,
    Follow,
    FollowerCount,
    GivenEdge,
    Label,
    Membership,
    Publisher,
    Retweet,
    Tweet,
    Workspace,
)
from .influence import CascadeGraph, CascadeInfluence, DailyInfluence, PublisherDay

__all__ = [
    "Account",
    "account_display",
    "CascadeGraph",
    "CascadeInfluence",
    "Collection",
    "CollectionFile",
    "ComputeBatch",
    "ComputeRun",
    "DailyInfluence",
    "Follow",
    "FollowerCount",
    "GivenEdge",
    "Label",
    "Membership",
    "Publisher",
    "PublisherDay",
    "Retweet",
    "Tweet",
    "Workspace",
]
