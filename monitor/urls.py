"""URL map: the dashboard (frontend), the REST API under /api/v1/, the admin under /admin/."""

from __future__ import annotations

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include("monitor.api.urls")),
    path("alerts/", include("monitor.alerts.urls")),
    path("", include("frontend.urls")),
]
