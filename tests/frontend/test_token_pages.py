"""The API tokens page: list, create (the key shown once, and it works), revoke; a workspace scope only from the
user's own workspaces; another user's token is 404."""

from __future__ import annotations

import re

from django.urls import reverse

from monitor.models import ApiToken
from monitor.services import api_token_create

URL = "/account/tokens/"


def test_the_page_is_linked_from_the_header_with_the_api_docs(client, alice, ws_a):
    client.force_login(alice)
    html = client.get(reverse("overview", kwargs={"ws": ws_a.slug})).content.decode()
    assert f'href="{URL}"' in html and f'href="{reverse("api:docs")}"' in html
    assert reverse("account-tokens") == URL


def test_the_admin_link_is_for_staff_only(client, alice, admin_user, ws_a):
    client.force_login(alice)
    assert 'href="/admin/"' not in client.get(URL).content.decode()
    admin_user.is_staff = True
    admin_user.save()
    client.force_login(admin_user)
    assert 'href="/admin/"' in client.get(URL).content.decode()


def test_a_token_is_created_shown_once_works_and_is_revoked(client, alice, ws_a):
    client.force_login(alice)
    r = client.post(URL, {"name": "nightly export", "workspace": ws_a.slug, "days": "30"})
    assert r.status_code == 200 and r["Cache-Control"] == "no-store"
    key = re.search(r'id="new-key" readonly value="([^"]+)"', r.content.decode()).group(1)
    t = ApiToken.objects.get(user=alice)
    assert (t.name, t.workspace, round((t.expires_at - t.created_at).total_seconds() / 86400)) == (
        "nightly export",
        ws_a,
        30,
    )
    assert key.startswith(t.prefix)
    api = client_class_token(key)
    assert api.get(f"/api/v1/workspaces/{ws_a.slug}/collections/").status_code == 200
    html = client.get(URL).content.decode()
    assert key not in html and f'data-token="{t.prefix}"' in html and "nightly export" in html and "active" in html
    r = client.post(reverse("account-token-revoke", kwargs={"pk": t.pk}))
    assert r.status_code == 302
    t.refresh_from_db()
    assert t.revoked_at is not None
    assert api.get(f"/api/v1/workspaces/{ws_a.slug}/collections/").status_code == 401
    assert "revoked" in client.get(URL).content.decode()


def client_class_token(key):
    from rest_framework.test import APIClient

    c = APIClient()
    c.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return c


def test_a_token_for_all_workspaces_and_bad_values_are_refused(client, alice, ws_a, ws_b):
    client.force_login(alice)
    html = client.get(URL).content.decode()
    assert f'value="{ws_a.slug}"' in html and f'value="{ws_b.slug}"' not in html  # only her workspaces
    r = client.post(URL, {"name": "", "workspace": "", "days": "7"})
    assert r.status_code == 200 and ApiToken.objects.get(user=alice).workspace is None
    r = client.post(URL, {"name": "x", "workspace": ws_b.slug, "days": "7"})
    assert r.status_code == 400 and "not one of the available choices" in r.content.decode()
    r = client.post(URL, {"name": "x", "workspace": "", "days": "9999"})
    assert r.status_code == 400 and ApiToken.objects.filter(user=alice).count() == 1


def test_another_users_token_is_404(client, alice, bob):
    token, _ = api_token_create(user=alice, name="alice's")
    client.force_login(bob)
    assert client.post(reverse("account-token-revoke", kwargs={"pk": token.pk})).status_code == 404
    assert "alice&#x27;s" not in client.get(URL).content.decode()
    token.refresh_from_db()
    assert token.revoked_at is None


def test_anonymous_is_sent_to_login(client, db):
    r = client.get(URL)
    assert r.status_code == 302 and r["Location"].startswith("/login/")
