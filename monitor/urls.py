"""URL map: the dashboard (frontend), the REST API under /api/v1/, the admin under /admin/, the health check
(``/healthz``, no login) and password reset (Django's views, ``/password-reset/...``)."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from . import health
from .security import RateLimitedPasswordResetView

_reset = "registration/spreadwatch_password_reset"  # not Django's names: the admin's templates would win

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path(
        "password-reset/",
        RateLimitedPasswordResetView.as_view(
            template_name=f"{_reset}_form.html",
            email_template_name=f"{_reset}_email.txt",
            subject_template_name=f"{_reset}_subject.txt",
        ),
        name="password_reset",
    ),
    path(
        "password-reset/sent/",
        auth_views.PasswordResetDoneView.as_view(template_name=f"{_reset}_done.html"),
        name="password_reset_done",
    ),
    path(
        "password-reset/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(template_name=f"{_reset}_confirm.html"),
        name="password_reset_confirm",
    ),
    path(
        "password-reset/done/",
        auth_views.PasswordResetCompleteView.as_view(template_name=f"{_reset}_complete.html"),
        name="password_reset_complete",
    ),
    path("admin/", admin.site.urls),
    path("api/v1/", include("monitor.api.urls")),
    path("alerts/", include("monitor.alerts.urls")),
    path("", include("frontend.urls")),
]

# refusals Django makes before any view (too many files in one upload...) say why, with the limit
handler400 = "frontend.views.errors.bad_request"
