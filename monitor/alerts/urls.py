"""Include from the root URLconf: ``path("alerts/", include("monitor.alerts.urls"))``."""

from __future__ import annotations

from django.urls import path

from . import views

app_name = "alerts"
urlpatterns = [path("unsubscribe/<str:token>/", views.unsubscribe, name="unsubscribe")]
