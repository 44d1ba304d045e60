"""Spreadwatch's models: :mod:`.core` holds what every algorithm shares, and each algorithm's result tables
are a module named after it (:mod:`.influence`, :mod:`.influence_max`, :mod:`.network`, :mod:`.wtf`,
:mod:`.coordination`); :mod:`.claims` the saved tweet searches;
:mod:`.ops` holds heartbeats, the task outbox, API tokens and notices; :mod:`.stream` the live stream's
records and tokens. Every model is importable from
``monitor.models``."""

from __future__ import annotations

from ..numbers import account_display
from .claims import Claim, SearchPairs, TweetDocument
from .coordination import CoordinationCluster, CoordinationEdge, CoordinationMember, CoordinationSummary
from .core import (
    Account,
    Collection,
    CollectionFile,
    ComputeBatch,
    ComputeRun,
    Follow,
    FollowerCount,
    GivenEdge,
    Invitation,
    Label,
    Membership,
    Publisher,
    Retweet,
    Tweet,
    Workspace,
)
from .influence import CascadeGraph, CascadeInfluence, DailyInfluence, PublisherDay
from .influence_max import InfluenceMaxPartial, InfluenceMaxResult, InfluenceMaxSeed
from .network import NetworkAccount, NetworkPartial, NetworkSummary
from .ops import ApiToken, DerivedRowsMark, Lease, Notice, OutboxTask
from .stream import StreamArrival, StreamEvent, StreamToken
from .wtf import WtfEntry, WtfResult

__all__ = [
    "Account",
    "ApiToken",
    "account_display",
    "CascadeGraph",
    "CascadeInfluence",
    "Claim",
    "Collection",
    "CoordinationCluster",
    "CoordinationEdge",
    "CoordinationMember",
    "CoordinationSummary",
    "CollectionFile",
    "ComputeBatch",
    "ComputeRun",
    "DailyInfluence",
    "DerivedRowsMark",
    "Follow",
    "FollowerCount",
    "GivenEdge",
    "Invitation",
    "InfluenceMaxPartial",
    "InfluenceMaxResult",
    "InfluenceMaxSeed",
    "Label",
    "Lease",
    "Membership",
    "NetworkAccount",
    "NetworkPartial",
    "NetworkSummary",
    "Notice",
    "OutboxTask",
    "Publisher",
    "PublisherDay",
    "Retweet",
    "SearchPairs",
    "StreamArrival",
    "StreamEvent",
    "StreamToken",
    "Tweet",
    "TweetDocument",
    "Workspace",
    "WtfEntry",
    "WtfResult",
]
