"""Every POST view rejects a POST without the CSRF token (a logged-in browser's cookie is not enough)."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from monitor.alerts.models import AlertRule

from .test_crawl import _urls

# the only POST view without the check, and why
CSRF_EXEMPT = {"alerts:unsubscribe": "RFC 8058 one-click unsubscribe: mail clients POST without a token"}


@pytest.fixture
def csrf_client():
    return Client(enforce_csrf_checks=True)


def test_every_post_view_rejects_a_post_without_the_token(csrf_client, alice, objs):
    csrf_client.force_login(alice)
    accepted = []
    for name, url, _ in _urls(objs):
        r = csrf_client.post(url, {})
        if r.status_code not in (403, 405):
            accepted.append(f"POST {url} ({name}) -> {r.status_code}")
    assert not accepted, "POSTs accepted without a CSRF token:\n" + "\n".join(accepted)
    assert AlertRule.objects.filter(pk=objs.rule.pk, is_active=True).exists()


@pytest.mark.parametrize("name", ["login", "logout", "password_reset"])
def test_the_public_forms_reject_a_post_without_the_token(csrf_client, alice, name):
    r = csrf_client.post(reverse(name), {"username": "alice", "password": "alice-pass-123", "email": "a@b.c"})
    assert r.status_code == 403
    assert "_auth_user_id" not in csrf_client.session


def test_login_with_the_token_works(csrf_client, alice):
    page = csrf_client.get(reverse("login"))
    token = page.context["csrf_token"]
    r = csrf_client.post(
        reverse("login"), {"username": "alice", "password": "alice-pass-123", "csrfmiddlewaretoken": str(token)}
    )
    assert r.status_code == 302 and "_auth_user_id" in csrf_client.session
