"""The dashboard's URLs: every page of a workspace lives under ``w/<slug>/``; views are in ``frontend.views``."""

from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.urls import path, register_converter

from .views import (
    accounts,
    alerts,
    cascades,
    collections,
    compare,
    exports,
    help,
    influence_max,
    live,
    network,
    overview,
    rankings,
    runs,
    search,
    wtf,
)

register_converter(exports.TableFormat, "tablefmt")
register_converter(exports.GraphFormat, "graphfmt")

urlpatterns = [
    path("login/", auth_views.LoginView.as_view(template_name="frontend/login.html"), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", overview.home, name="home"),
    path("help/", help.help_page, name="help"),
    path("w/<slug:ws>/", overview.overview, name="overview"),
    path("w/<slug:ws>/ranking/", rankings.ranking, name="ranking"),
    path("w/<slug:ws>/ranking/export.<tablefmt:fmt>", exports.ranking_export, name="ranking-export"),
    path("w/<slug:ws>/publishers/<int:publisher>/", rankings.ranking, name="publisher"),
    path("w/<slug:ws>/compare/", compare.compare, name="compare"),
    path("w/<slug:ws>/compare/export.csv", compare.compare_export, name="compare-export"),
    path(
        "w/<slug:ws>/publishers/<int:publisher>/export.<tablefmt:fmt>", exports.ranking_export, name="publisher-export"
    ),
    path(
        "w/<slug:ws>/publishers/<int:publisher>/network.<graphfmt:fmt>",
        exports.publisher_network,
        name="publisher-network",
    ),
    path("w/<slug:ws>/publishers/<int:publisher>/counter-campaign/", influence_max.planner, name="counter-campaign"),
    path(
        "w/<slug:ws>/publishers/<int:publisher>/counter-campaign/runs/new/",
        influence_max.planner_start,
        name="counter-campaign-start",
    ),
    path("w/<slug:ws>/counter-campaign/runs/<int:pk>/", influence_max.planner_run, name="counter-campaign-run"),
    path(
        "w/<slug:ws>/counter-campaign/runs/<int:pk>/accounts.csv",
        influence_max.planner_export,
        name="counter-campaign-export",
    ),
    path("w/<slug:ws>/accounts/<int:twitter_id>/", accounts.account, name="account"),
    path("w/<slug:ws>/accounts/<int:twitter_id>/wtf/", wtf.account_wtf, name="account-wtf"),
    path("w/<slug:ws>/accounts/<int:twitter_id>/wtf.<tablefmt:fmt>", wtf.account_wtf_export, name="account-wtf-export"),
    path("w/<slug:ws>/publishers/<int:publisher>/watchlist/", wtf.publisher_watchlist, name="publisher-watchlist"),
    path(
        "w/<slug:ws>/publishers/<int:publisher>/watchlist/alert/",
        wtf.publisher_watchlist_alert,
        name="publisher-watchlist-alert",
    ),
    path(
        "w/<slug:ws>/publishers/<int:publisher>/watchlist.<tablefmt:fmt>",
        wtf.publisher_watchlist_export,
        name="publisher-watchlist-export",
    ),
    path("w/<slug:ws>/wtf/runs/<int:pk>/progress/", wtf.wtf_progress, name="wtf-progress"),
    path("w/<slug:ws>/wtf/method/", wtf.wtf_docs, name="wtf-docs"),
    path("w/<slug:ws>/accounts/<str:screen_name>/", search.account_by_name, name="account-by-name"),
    path("w/<slug:ws>/search/", search.search, name="search"),
    path("w/<slug:ws>/tweets/<int:tweet_id>/", cascades.tweet, name="tweet"),
    path("w/<slug:ws>/tweets/<int:tweet_id>/graph.<graphfmt:fmt>", exports.tweet_graph, name="tweet-graph"),
    path("w/<slug:ws>/tweets/<int:tweet_id>/explore/", cascades.cascade, name="cascade"),
    path("w/<slug:ws>/collections/", collections.collections, name="collections"),
    path("w/<slug:ws>/collections/new/", collections.upload, name="upload"),
    path("w/<slug:ws>/collections/<int:pk>/", collections.collection, name="collection"),
    path("w/<slug:ws>/collections/<int:pk>/progress/", collections.collection_progress, name="collection-progress"),
    path("w/<slug:ws>/collections/<int:pk>/cancel/", collections.collection_cancel, name="collection-cancel"),
    path("w/<slug:ws>/collections/<int:pk>/retry/", collections.collection_retry, name="collection-retry"),
    path("w/<slug:ws>/notices/<int:pk>/dismiss/", collections.notice_dismiss, name="notice-dismiss"),
    path("w/<slug:ws>/runs/", runs.runs, name="runs"),
    path("w/<slug:ws>/runs/new/", runs.recompute, name="recompute"),
    path("w/<slug:ws>/runs/<int:pk>/", runs.run, name="run"),
    path("w/<slug:ws>/runs/<int:pk>/cancel/", runs.run_cancel, name="run-cancel"),
    path("w/<slug:ws>/runs/<int:pk>/retry/", runs.run_retry, name="run-retry"),
    path("w/<slug:ws>/network/", network.network, name="network"),
    path("w/<slug:ws>/network/runs/new/", network.network_start, name="network-start"),
    path("w/<slug:ws>/network/runs/<int:pk>/", network.network_run, name="network-run"),
    path("w/<slug:ws>/network/runs/<int:pk>/component/", network.network_component, name="network-component"),
    path(
        "w/<slug:ws>/network/runs/<int:pk>/accounts.csv",
        network.network_accounts_export,
        name="network-accounts-export",
    ),
    path(
        "w/<slug:ws>/network/runs/<int:pk>/component.<graphfmt:fmt>",
        network.network_component_export,
        name="network-component-export",
    ),
    path(
        "w/<slug:ws>/network/runs/<int:pk>/conversations.<graphfmt:fmt>",
        network.network_conversations_export,
        name="network-conversations-export",
    ),
    path("w/<slug:ws>/collections/<int:pk>/network/", network.collection_network, name="collection-network"),
    path(
        "w/<slug:ws>/collections/<int:pk>/network/runs/new/",
        network.collection_network_start,
        name="collection-network-start",
    ),
    path("w/<slug:ws>/accounts/<int:twitter_id>/neighbourhood/", network.neighbourhood, name="neighbourhood"),
    path(
        "w/<slug:ws>/accounts/<int:twitter_id>/neighbourhood.<graphfmt:fmt>",
        network.neighbourhood_export,
        name="neighbourhood-export",
    ),
    path("docs/<slug:name>/", network.docs_page, name="docs"),
    path("w/<slug:ws>/live/", live.live, name="live"),
    path("w/<slug:ws>/live/data/", live.live_data, name="live-data"),
    path("w/<slug:ws>/settings/stream-tokens/", live.stream_tokens, name="stream-tokens"),
    path(
        "w/<slug:ws>/settings/stream-tokens/<int:pk>/revoke/",
        live.stream_token_revoke_view,
        name="stream-token-revoke",
    ),
    path("w/<slug:ws>/alerts/", alerts.inbox, name="alerts"),
    path("w/<slug:ws>/alerts/<int:pk>/read/", alerts.alert_read, name="alert-read"),
    path("w/<slug:ws>/alerts/read-all/", alerts.alerts_read_all, name="alerts-read-all"),
    path("w/<slug:ws>/alerts/rules/", alerts.rules, name="alert-rules"),
    path("w/<slug:ws>/alerts/rules/new/", alerts.rule_form, name="alert-rule-new"),
    path("w/<slug:ws>/alerts/rules/evaluate/", alerts.evaluate, name="alert-rules-evaluate"),
    path("w/<slug:ws>/alerts/rules/<int:pk>/edit/", alerts.rule_form, name="alert-rule-edit"),
    path("w/<slug:ws>/alerts/rules/<int:pk>/<slug:action>/", alerts.rule_action, name="alert-rule-action"),
]
