"""Every read the dashboard and the API make, one module per concern. Each takes the workspace it reads from,
so an object of another workspace cannot leak through a forgotten filter; :func:`workspace_for_user` is the one
place access is decided (404, not 403, for a workspace the user is not in: its existence is not revealed).

* :mod:`.access` — the workspaces a user may read; ``*_get`` lookups within a workspace
* :mod:`.windows` — time windows, the span of days with data, period and WHERE helpers
* :mod:`.rankings` — the ranking, its all-time snapshot, the reach by label, the top spreaders
* :mod:`.ranking_page` — what the ranking page shows, in one read
* :mod:`.history` — rank over time, the publishers' reach week over week
* :mod:`.compare` — two to five publishers' top spreaders side by side, their overlap, the shared accounts
* :mod:`.explorer` — a cascade: participants, graph, the explorer's drawing and timeline
* :mod:`.overview` — a workspace's counts and its publishers
* :mod:`.accounts` — an account's summary and amplification
* :mod:`.collections`, :mod:`.runs` — uploads and compute runs
* :mod:`.influence_max` — the counter-campaign planner: a publisher's runs, a run's chosen accounts and baseline
* :mod:`.network` — network analytics: a run's summary, brokers, accounts, components, conversations, and an
  account's neighbourhood
* :mod:`.coordination` — coordinated accounts: a run's clusters, their members and shared tweets, its edges, an
  account's cluster
* :mod:`.wtf` — who amplifies whom: an account's look-alikes and likely next amplifiers, a publisher's watch list
* :mod:`.provenance` — whether a result's follower graph was (partly) inferred from cascade trees
* :mod:`.members` — a workspace's members and invitations, and who may manage them
* :mod:`.stalls` — running work whose worker stopped beating its heartbeat; :mod:`.ops` — notices, API tokens

The expensive reads are cached under the workspace's data version (:mod:`monitor.cache`). The alerts app has its
reads in :mod:`monitor.alerts.selectors`. ``from monitor import selectors; selectors.ranking(...)`` reads any of
the names below.
"""

from __future__ import annotations

from .access import (
    account_get,
    collection_get,
    membership_role,
    run_get,
    tweet_get,
    workspace_for_user,
    workspaces_for_user,
)
from .accounts import account_amplification, account_summary
from .claim_reads import claim_provenance, claim_publishers, claim_spreaders, claim_timeline, claim_tracked
from .claims import (
    ClaimTooBroad,
    QueryError,
    claim_get,
    claim_tweets,
    claims_of,
    claims_sorts,
    parse_query,
    tweet_search,
)
from .collections import collection_files, collection_progress, collection_runs, collections_list
from .compare import (
    MAX_PUBLISHERS,
    MIN_PUBLISHERS,
    CompareError,
    Comparison,
    compare_publishers,
    compare_publishers_get,
    publisher_choices,
)
from .coordination import (
    account_coordination,
    coordination_cluster,
    coordination_clusters,
    coordination_edge_rows,
    coordination_edges,
    coordination_graph,
    coordination_latest,
    coordination_run_get,
    coordination_runs,
    coordination_summary,
)
from .explorer import (
    EXPLORER_LIMIT,
    TIMELINE_POINTS,
    cascade_explorer_data,
    cascade_explorer_page,
    cascade_graph,
    tweet_participants,
    twitter_ids,
)
from .history import publishers_reach_weeks, rank_history
from .influence_max import (
    SEED_COLUMNS,
    influence_max_latest,
    influence_max_plan,
    influence_max_publisher,
    influence_max_result,
    influence_max_run_get,
    influence_max_runs,
    influence_max_seed_rows,
)
from .members import (
    can_manage_members,
    invitation_by_token,
    invitation_get,
    invitations_pending,
    member_get,
    members_list,
)
from .network import (
    ACCOUNT_SORTS,
    DIRECTIONS,
    MAX_DEPTH,
    Subgraph,
    drawing,
    network_accounts,
    network_brokers,
    network_communities,
    network_community,
    network_community_graph,
    network_component,
    network_component_graph,
    network_conversation_graph,
    network_latest,
    network_neighbourhood,
    network_run_get,
    network_runs,
    network_summary,
)
from .ops import api_token_get, api_tokens_for_user, notice_get, notices_unread
from .overview import overview_page, publishers_summary, workspace_counts
from .provenance import InferredGraph, follower_graph_inferred, run_graph_inferred
from .ranking_page import RANKING_PAGE_SIZE, RANKING_TOP, RankingPageData, ranking_page, ranking_page_view
from .rankings import AGGREGATES, SORTS, RankingPage, all_time_prime, ranking, reach_by_label, top_spreaders
from .runs import RunDescription, Waiting, run_batches, run_description, run_waiting, runs_list
from .search import SearchResult, account_by_screen_name, search
from .stalls import stalled_work
from .windows import BUCKETS, PRESET_DAYS, Window, bucket_for, data_span, window_for_preset
from .wtf import (
    wtf_account,
    wtf_account_lists,
    wtf_active_run,
    wtf_run_progress,
    wtf_watchlist,
    wtf_watchlist_publishers,
    wtf_watchlist_rule,
)

__all__ = [
    "ACCOUNT_SORTS",
    "account_coordination",
    "coordination_cluster",
    "coordination_clusters",
    "coordination_edge_rows",
    "coordination_edges",
    "coordination_graph",
    "coordination_latest",
    "coordination_run_get",
    "coordination_runs",
    "coordination_summary",
    "all_time_prime",
    "api_token_get",
    "api_tokens_for_user",
    "can_manage_members",
    "invitation_by_token",
    "invitation_get",
    "invitations_pending",
    "member_get",
    "members_list",
    "notice_get",
    "notices_unread",
    "AGGREGATES",
    "BUCKETS",
    "DIRECTIONS",
    "MAX_DEPTH",
    "PRESET_DAYS",
    "SEED_COLUMNS",
    "SORTS",
    "EXPLORER_LIMIT",
    "TIMELINE_POINTS",
    "RankingPage",
    "RunDescription",
    "Waiting",
    "RankingPageData",
    "Subgraph",
    "SearchResult",
    "Window",
    "account_amplification",
    "account_by_screen_name",
    "account_get",
    "account_summary",
    "bucket_for",
    "compare_publishers",
    "compare_publishers_get",
    "CompareError",
    "Comparison",
    "MAX_PUBLISHERS",
    "MIN_PUBLISHERS",
    "cascade_explorer_data",
    "cascade_explorer_page",
    "cascade_graph",
    "collection_files",
    "collection_get",
    "collection_progress",
    "collection_runs",
    "collections_list",
    "data_span",
    "drawing",
    "influence_max_latest",
    "influence_max_plan",
    "influence_max_publisher",
    "influence_max_result",
    "influence_max_run_get",
    "influence_max_runs",
    "influence_max_seed_rows",
    "membership_role",
    "network_accounts",
    "network_brokers",
    "network_communities",
    "network_community",
    "network_community_graph",
    "network_component",
    "network_component_graph",
    "network_conversation_graph",
    "network_latest",
    "network_neighbourhood",
    "network_run_get",
    "network_runs",
    "network_summary",
    "publisher_choices",
    "publishers_reach_weeks",
    "overview_page",
    "publishers_summary",
    "InferredGraph",
    "follower_graph_inferred",
    "run_graph_inferred",
    "rank_history",
    "ranking",
    "ranking_page",
    "ranking_page_view",
    "RANKING_PAGE_SIZE",
    "RANKING_TOP",
    "reach_by_label",
    "run_batches",
    "run_get",
    "run_description",
    "runs_list",
    "run_waiting",
    "stalled_work",
    "search",
    "ClaimTooBroad",
    "QueryError",
    "claim_get",
    "claim_provenance",
    "claim_publishers",
    "claim_spreaders",
    "claim_timeline",
    "claim_tracked",
    "claim_tweets",
    "claims_of",
    "claims_sorts",
    "parse_query",
    "tweet_search",
    "top_spreaders",
    "tweet_get",
    "tweet_participants",
    "twitter_ids",
    "window_for_preset",
    "workspace_counts",
    "workspace_for_user",
    "workspaces_for_user",
    "wtf_account",
    "wtf_account_lists",
    "wtf_active_run",
    "wtf_run_progress",
    "wtf_watchlist",
    "wtf_watchlist_publishers",
    "wtf_watchlist_rule",
]
