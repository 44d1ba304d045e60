"""The admin of the analyses' result tables (network analytics, the counter-campaign planner, who amplifies whom,
coordinated accounts): rows only their runs write, so view-only (``monitor.admin.EngineRowsAdmin``), searchable by
the run or the accounts' Twitter ids and names. Imported by ``monitor/admin.py``, which Django discovers."""

from __future__ import annotations

from django.contrib import admin

from .admin_base import EngineRowsAdmin
from .models import (
    CoordinationCluster,
    CoordinationEdge,
    CoordinationMember,
    CoordinationSummary,
    InfluenceMaxPartial,
    InfluenceMaxResult,
    InfluenceMaxSeed,
    NetworkAccount,
    NetworkPartial,
    NetworkSummary,
    WtfEntry,
    WtfResult,
)

# --- network analytics ---------------------------------------------------------------------------------------


@admin.register(NetworkAccount)
class NetworkAccountAdmin(EngineRowsAdmin):
    list_display = ("id", "run", "account", "in_degree", "out_degree", "component", "core", "betweenness")
    list_select_related = ("run", "account")
    search_fields = ("=account__twitter_id", "=account__screen_name", "=run__id")
    raw_id_fields = ("run", "account")


@admin.register(NetworkSummary)
class NetworkSummaryAdmin(EngineRowsAdmin):
    list_display = ("run", "graph", "n_nodes", "n_edges", "transitivity")
    search_fields = ("=run__id",)
    raw_id_fields = ("run",)
    exclude = ("conversation_edges", "conversation_weights")  # packed arrays: the pages and exports decode them


@admin.register(NetworkPartial)
class NetworkPartialAdmin(EngineRowsAdmin):
    list_display = ("id", "run", "block")
    search_fields = ("=run__id",)
    raw_id_fields = ("run",)
    exclude = ("values",)  # a float64 vector per node: bytes, not for reading here


# --- the counter-campaign planner ----------------------------------------------------------------------------


@admin.register(InfluenceMaxResult)
class InfluenceMaxResultAdmin(EngineRowsAdmin):
    list_display = ("run", "publisher", "method", "k", "model", "spread", "n_nodes")
    list_select_related = ("run", "publisher")
    search_fields = ("=run__id", "=publisher__twitter_id", "=publisher__screen_name")
    raw_id_fields = ("run", "publisher")


@admin.register(InfluenceMaxSeed)
class InfluenceMaxSeedAdmin(EngineRowsAdmin):
    list_display = ("id", "run", "rank", "account", "gain", "influence_rank", "in_baseline")
    list_select_related = ("run", "account")
    search_fields = ("=account__twitter_id", "=account__screen_name", "=run__id")
    raw_id_fields = ("run", "account")


@admin.register(InfluenceMaxPartial)
class InfluenceMaxPartialAdmin(EngineRowsAdmin):
    list_display = ("id", "run", "part", "start", "stop")
    search_fields = ("=run__id",)
    raw_id_fields = ("run",)
    exclude = ("sets",)  # RR sets packed as npz bytes: the run's finish reads them, nobody else


# --- who amplifies whom ----------------------------------------------------------------------------------------


@admin.register(WtfResult)
class WtfResultAdmin(EngineRowsAdmin):
    list_display = ("id", "workspace", "seed", "direction", "circle", "top", "in_graph", "run", "computed_at")
    list_filter = ("workspace", "direction")
    list_select_related = ("workspace", "seed", "run")
    search_fields = ("=seed__twitter_id", "=seed__screen_name", "=run__id")
    raw_id_fields = ("seed", "run")


@admin.register(WtfEntry)
class WtfEntryAdmin(EngineRowsAdmin):
    list_display = ("id", "result", "list", "rank", "account", "score", "ppr")
    list_filter = ("list",)
    list_select_related = ("result", "account")
    search_fields = ("=account__twitter_id", "=account__screen_name", "=result__seed__twitter_id")
    raw_id_fields = ("result", "account")


# --- coordinated accounts -------------------------------------------------------------------------------------


@admin.register(CoordinationSummary)
class CoordinationSummaryAdmin(EngineRowsAdmin):
    list_display = ("run", "method", "accounts", "tweets", "pairs", "n_edges", "n_clusters", "backend")
    search_fields = ("=run__id",)
    raw_id_fields = ("run",)


@admin.register(CoordinationEdge)
class CoordinationEdgeAdmin(EngineRowsAdmin):
    list_display = ("id", "run", "position", "a", "b", "weight", "cluster")
    list_select_related = ("run", "a", "b")
    search_fields = ("=a__twitter_id", "=a__screen_name", "=b__twitter_id", "=b__screen_name", "=run__id")
    raw_id_fields = ("run", "a", "b")


@admin.register(CoordinationCluster)
class CoordinationClusterAdmin(EngineRowsAdmin):
    list_display = ("id", "run", "cluster", "size", "edges", "shared_tweets", "spread_median_s")
    search_fields = ("=run__id",)
    raw_id_fields = ("run",)


@admin.register(CoordinationMember)
class CoordinationMemberAdmin(EngineRowsAdmin):
    list_display = ("id", "run", "cluster", "account", "degree", "shared_retweets")
    list_select_related = ("run", "account")
    search_fields = ("=account__twitter_id", "=account__screen_name", "=run__id")
    raw_id_fields = ("run", "account")
