"""Session rotation: a login gets a new session key (a key planted before the login — session fixation — is
worth nothing after it); logging out ends the session on the server (its cookie replayed is anonymous); a
password change or reset ends every session of the user made with the old password."""

from __future__ import annotations

import re
from importlib import import_module

from django.conf import settings
from django.test import Client
from django.urls import reverse

PAGE = "/"  # the workspace list: a login-only page


def SessionStore():
    return import_module(settings.SESSION_ENGINE).SessionStore()


def _key(client) -> str:
    return client.cookies[settings.SESSION_COOKIE_NAME].value


def _with_cookie(key: str) -> Client:
    """Another browser that presents ``key`` (a stolen or planted cookie)."""
    c = Client()
    c.cookies[settings.SESSION_COOKIE_NAME] = key
    return c


def _signed_in(client) -> bool:
    r = client.get(PAGE)
    return not (r.status_code == 302 and r["Location"].startswith(reverse("login")))


def _login(client, password="alice-pass-123"):
    r = client.post(reverse("login"), {"username": "alice", "password": password})
    assert r.status_code == 302, r.content[:300]
    return r


def test_the_session_key_changes_at_login_and_the_planted_one_is_worthless(client, alice):
    s = client.session  # an anonymous session, as an attacker could plant it
    s["planted"] = True
    s.save()
    planted = _key(client)
    _login(client)
    assert _key(client) != planted, "the session key did not change at login"
    assert _signed_in(client)
    assert not _signed_in(_with_cookie(planted)), "the key from before the login is signed in"
    assert not SessionStore().exists(planted)


def test_the_old_session_is_invalid_after_logout(client, alice):
    _login(client)
    key = _key(client)
    assert _signed_in(_with_cookie(key))
    client.post(reverse("logout"))
    assert not _signed_in(client)
    assert not _signed_in(_with_cookie(key)), "the session still works after logout"
    assert not SessionStore().exists(key)


def test_a_password_change_ends_the_users_other_sessions(client, alice):
    _login(client)
    other = Client()
    _login(other)
    alice.set_password("a-New-passw0rd-42")
    alice.save()
    assert not _signed_in(client), "a session made with the old password still works"
    assert not _signed_in(other)
    _login(client, "a-New-passw0rd-42")
    assert _signed_in(client)


def test_a_password_reset_through_the_link_ends_the_sessions_too(client, alice, mailoutbox):
    _login(client)
    stranger = Client()
    stranger.post(reverse("password_reset"), {"email": "alice@example.com"})
    link = re.search(r"https?://[^/\s]+(/password-reset/\S+/)", mailoutbox[0].body).group(1)
    page = stranger.get(link, follow=True)
    set_url = page.redirect_chain[-1][0] if page.redirect_chain else link
    r = stranger.post(set_url, {"new_password1": "a-New-passw0rd-42", "new_password2": "a-New-passw0rd-42"})
    assert r.status_code == 302
    assert not _signed_in(client), "a session made before the reset still works"
