from __future__ import annotations

from django.urls import path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from . import budgets, claims, coordination, influence_max, network, stream, views, wtf

app_name = "api"
urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api:schema"), name="docs"),
    # Redoc loaded Google Fonts and a logo from the internet (console errors offline); Swagger UI is vendored
    # whole (drf-spectacular-sidecar) and loads nothing from outside, so the old address leads there
    path("redoc/", RedirectView.as_view(pattern_name="api:docs", permanent=True), name="redoc"),
    path("tokens/", views.tokens, name="tokens"),
    path("stream/", stream.stream, name="stream"),
    path("tokens/<int:pk>/", views.token_revoke, name="token"),
    path("workspaces/", views.workspaces, name="workspaces"),
    path("workspaces/<slug:ws>/collections/", views.collections, name="collections"),
    path("workspaces/<slug:ws>/collections/<int:pk>/", views.collection_detail, name="collection"),
    path("workspaces/<slug:ws>/runs/", views.runs, name="runs"),
    path("workspaces/<slug:ws>/runs/estimate/", budgets.run_estimate, name="run-estimate"),
    path("workspaces/<slug:ws>/runs/<int:pk>/", views.run_detail, name="run"),
    path("workspaces/<slug:ws>/runs/<int:pk>/cancel/", views.run_cancel, name="run-cancel"),
    path("workspaces/<slug:ws>/runs/<int:pk>/retry/", views.run_retry, name="run-retry"),
    path("workspaces/<slug:ws>/publishers/", views.publishers, name="publishers"),
    path("workspaces/<slug:ws>/accounts/<int:twitter_id>/", views.account_detail, name="account"),
    path("workspaces/<slug:ws>/accounts/<int:twitter_id>/wtf/", wtf.account_wtf, name="account-wtf"),
    path(
        "workspaces/<slug:ws>/accounts/<int:twitter_id>/wtf/export/", wtf.account_wtf_export, name="account-wtf-export"
    ),
    path("workspaces/<slug:ws>/publishers/<int:publisher>/watchlist/", wtf.publisher_watchlist, name="watchlist"),
    path(
        "workspaces/<slug:ws>/publishers/<int:publisher>/watchlist/export/",
        wtf.publisher_watchlist_export,
        name="watchlist-export",
    ),
    path("workspaces/<slug:ws>/tweets/<int:tweet_id>/", views.tweet_detail, name="tweet"),
    path("workspaces/<slug:ws>/ranking/", views.ranking, name="ranking"),
    path("workspaces/<slug:ws>/compare/", views.compare, name="compare"),
    path("workspaces/<slug:ws>/publishers/<int:publisher>/ranking/", views.ranking, name="publisher-ranking"),
    path("workspaces/<slug:ws>/ranking/export/", views.ranking_export, name="ranking-export"),
    path(
        "workspaces/<slug:ws>/publishers/<int:publisher>/ranking/export/",
        views.ranking_export,
        name="publisher-ranking-export",
    ),
    path("workspaces/<slug:ws>/publishers/<int:publisher>/network/", views.publisher_network, name="publisher-network"),
    path("workspaces/<slug:ws>/tweets/<int:tweet_id>/graph/", views.tweet_graph, name="tweet-graph"),
    path(
        "workspaces/<slug:ws>/publishers/<int:publisher>/counter-campaign/runs/",
        influence_max.counter_campaign_runs,
        name="counter-campaign-runs",
    ),
    path(
        "workspaces/<slug:ws>/counter-campaign/runs/<int:pk>/",
        influence_max.counter_campaign_run,
        name="counter-campaign-run",
    ),
    path("workspaces/<slug:ws>/search/tweets/", claims.tweet_search, name="tweet-search"),
    path("workspaces/<slug:ws>/claims/", claims.claims, name="claims"),
    path("workspaces/<slug:ws>/claims/<int:pk>/", claims.claim, name="claim"),
    path("workspaces/<slug:ws>/claims/<int:pk>/timeline/", claims.claim_timeline, name="claim-timeline"),
    path("workspaces/<slug:ws>/claims/<int:pk>/spreaders/", claims.claim_spreaders, name="claim-spreaders"),
    path("workspaces/<slug:ws>/claims/<int:pk>/publishers/", claims.claim_publishers, name="claim-publishers"),
    path("workspaces/<slug:ws>/claims/<int:pk>/tracked/", claims.claim_tracked, name="claim-tracked"),
    path("workspaces/<slug:ws>/coordination/runs/", coordination.coordination_runs, name="coordination-runs"),
    path("workspaces/<slug:ws>/coordination/runs/<int:pk>/", coordination.coordination_run, name="coordination-run"),
    path(
        "workspaces/<slug:ws>/coordination/runs/<int:pk>/clusters/",
        coordination.coordination_clusters,
        name="coordination-clusters",
    ),
    path(
        "workspaces/<slug:ws>/coordination/runs/<int:pk>/clusters/<int:cluster>/",
        coordination.coordination_cluster,
        name="coordination-cluster",
    ),
    path(
        "workspaces/<slug:ws>/coordination/runs/<int:pk>/edges/",
        coordination.coordination_edges,
        name="coordination-edges",
    ),
    path("workspaces/<slug:ws>/network/runs/", network.network_runs, name="network-runs"),
    path("workspaces/<slug:ws>/network/runs/<int:pk>/", network.network_run, name="network-run"),
    path("workspaces/<slug:ws>/network/runs/<int:pk>/accounts/", network.network_accounts, name="network-accounts"),
    path("workspaces/<slug:ws>/network/runs/<int:pk>/component/", network.network_component, name="network-component"),
    path(
        "workspaces/<slug:ws>/network/runs/<int:pk>/communities/",
        network.network_communities,
        name="network-communities",
    ),
    path("workspaces/<slug:ws>/network/runs/<int:pk>/community/", network.network_community, name="network-community"),
    path(
        "workspaces/<slug:ws>/accounts/<int:twitter_id>/neighbourhood/",
        network.account_neighbourhood,
        name="account-neighbourhood",
    ),
    path("workspaces/<slug:ws>/alerts/", views.alerts, name="alerts"),
    path("workspaces/<slug:ws>/alerts/<int:pk>/read/", views.alert_read, name="alert-read"),
    path("workspaces/<slug:ws>/alerts/rules/", views.alert_rules, name="alert-rules"),
    path("workspaces/<slug:ws>/alerts/rules/<int:pk>/", views.alert_rule_detail, name="alert-rule"),
]
