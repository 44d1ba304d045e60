"""Spreadwatch's models: :mod:`.core` holds what every algorithm shares, and each algorithm's result tables
are a module named after it (:mod:`.influence`); :mod:`.ops` holds heartbeats, the task outbox, API tokens
and notices. Every model is importable from ``monitor.models``."""

from __future__ import annotations

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
from .ops import ApiToken, Lease, Notice, OutboxTask

__all__ = [
    "Account",
    "ApiToken",
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
    "Lease",
    "Membership",
    "Notice",
    "OutboxTask",
    "Publisher",
    "PublisherDay",
    "Retweet",
    "Tweet",
    "Workspace",
]
