"""Login rate limiting, and password reset by email."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import authenticate
from django.core.cache import cache
from django.test import RequestFactory
from django.urls import reverse


@pytest.fixture(autouse=True)
def _clear_cache():
    cache.clear()
    yield
    cache.clear()


def _login(client, password, user="alice", ip="203.0.113.7"):
    return client.post(reverse("login"), {"username": user, "password": password}, REMOTE_ADDR=ip)


def test_it_locks_a_username_after_too_many_failures_from_one_address(client, alice, settings):
    settings.SPREADWATCH_LOGIN_MAX_FAILURES = 3
    for _ in range(3):
        assert _login(client, "wrong").status_code == 200
    r = _login(client, "alice-pass-123")  # even the right password is refused now
    assert r.status_code == 429 and "Too many failed logins" in r.content.decode()
    assert "_auth_user_id" not in client.session
    # every authenticate() call is refused too (the admin's login, ...), not only the login page
    request = RequestFactory().post("/admin/login/", REMOTE_ADDR="203.0.113.7")
    assert authenticate(request, username="alice", password="alice-pass-123") is None
    # another address, or another user, is not locked
    assert _login(client, "alice-pass-123", ip="198.51.100.1").status_code == 302


def test_the_lock_ends_with_its_window(client, alice, settings):
    settings.SPREADWATCH_LOGIN_MAX_FAILURES = 2
    for _ in range(2):
        _login(client, "wrong")
    assert _login(client, "alice-pass-123").status_code == 429
    cache.clear()  # the window has passed
    assert _login(client, "alice-pass-123").status_code == 302


def test_a_successful_login_resets_the_count(client, alice, settings):
    settings.SPREADWATCH_LOGIN_MAX_FAILURES = 3
    _login(client, "wrong")
    _login(client, "wrong")
    assert _login(client, "alice-pass-123").status_code == 302
    client.logout()
    _login(client, "wrong")
    _login(client, "wrong")
    assert _login(client, "alice-pass-123").status_code == 302


def test_a_reset_email_is_sent_and_its_link_sets_a_new_password(client, alice, mailoutbox):
    r = client.post(reverse("password_reset"), {"email": "alice@example.com"})
    assert r.status_code == 302 and r["Location"] == reverse("password_reset_done")
    assert client.get(r["Location"]).status_code == 200
    assert len(mailoutbox) == 1 and mailoutbox[0].to == ["alice@example.com"]
    assert mailoutbox[0].subject == "[Spreadwatch] Reset your password"
    link = re.search(r"https?://[^/\s]+(/password-reset/\S+/)", mailoutbox[0].body).group(1)
    page = client.get(link, follow=True)
    assert page.status_code == 200 and page.context["validlink"]
    set_url = page.redirect_chain[-1][0] if page.redirect_chain else link
    r = client.post(set_url, {"new_password1": "a-New-passw0rd-42", "new_password2": "a-New-passw0rd-42"})
    assert r.status_code == 302 and r["Location"] == reverse("password_reset_complete")
    assert client.get(r["Location"]).status_code == 200
    alice.refresh_from_db()
    assert alice.check_password("a-New-passw0rd-42")
    assert not client.get(set_url).context["validlink"]  # used once


def test_an_unknown_address_gets_the_same_answer_and_no_email(client, db, mailoutbox):
    r = client.post(reverse("password_reset"), {"email": "nobody@example.com"})
    assert r.status_code == 302 and r["Location"] == reverse("password_reset_done")
    assert mailoutbox == []
