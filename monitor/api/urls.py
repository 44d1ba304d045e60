from __future__ import annotations

from django.urls import path

from . import views

app_name = "api"
urlpatterns = [
    path("workspaces/", views.workspaces, name="workspaces"),
    path("workspaces/<slug:ws>/collections/", views.collections, name="collections"),
    path("workspaces/<slug:ws>/collections/<int:pk>/", views.collection_detail, name="collection"),
    path("workspaces/<slug:ws>/runs/", views.runs, name="runs"),
    path("workspaces/<slug:ws>/runs/<int:pk>/", views.run_detail, name="run"),
    path("workspaces/<slug:ws>/ranking/", views.ranking, name="ranking"),
    path("workspaces/<slug:ws>/publishers/<int:publisher>/ranking/", views.ranking, name="publisher-ranking"),
    path("workspaces/<slug:ws>/ranking/export/", views.ranking_export, name="ranking-export"),
    path(
        "workspaces/<slug:ws>/publishers/<int:publisher>/ranking/export/",
        views.ranking_export,
        name="publisher-ranking-export",
    ),
    path("workspaces/<slug:ws>/publishers/<int:publisher>/network/", views.publisher_network, name="publisher-network"),
    path("workspaces/<slug:ws>/tweets/<int:tweet_id>/graph/", views.tweet_graph, name="tweet-graph"),
]
