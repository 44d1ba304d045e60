"""The workspace pages: creating one, the settings page (members, roles, invitations, leaving) and an
invitation link, with who may do what — an analyst cannot manage, another team gets 404."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from monitor import services
from monitor.models import Invitation, Membership, Workspace


@pytest.fixture
def owner(alice, ws_a):
    services.membership_add(workspace=ws_a, user=alice, role=Membership.Role.OWNER)
    return alice


@pytest.fixture
def carol(django_user_model, ws_a):
    u = django_user_model.objects.create_user("carol", "carol@example.com", "carol-pass-123")
    services.membership_add(workspace=ws_a, user=u)
    return u


def _settings(ws):
    return reverse("workspace-settings", kwargs={"ws": ws.slug})


def test_a_signed_in_user_creates_a_workspace_and_owns_it(client, bob):
    client.force_login(bob)
    r = client.get(reverse("workspace-new"))
    assert r.status_code == 200 and "Lab" in r.content.decode()
    r = client.post(reverse("workspace-new"), {"name": "Election Watch"})
    ws = Workspace.objects.get(name="Election Watch")
    assert r.status_code == 302 and r["Location"] == _settings(ws)
    assert Membership.objects.get(workspace=ws, user=bob).role == "owner"
    r = client.post(reverse("workspace-new"), {"name": ""})
    assert r.status_code == 400 and "This field is required" in r.content.decode()


def test_the_settings_page_lists_members_and_is_linked_from_the_header(client, owner, carol, ws_a):
    client.force_login(owner)
    html = client.get(reverse("overview", kwargs={"ws": ws_a.slug})).content.decode()
    assert f'href="{_settings(ws_a)}"' in html and 'href="/account/tokens/"' in html
    r = client.get(_settings(ws_a))
    html = r.content.decode()
    assert r.status_code == 200
    assert 'data-member="alice"' in html and 'data-member="carol"' in html
    assert "Invite a member" in html and "Pending invitations" in html


def test_an_owner_adds_an_existing_user_and_changes_a_role(client, owner, ws_a, bob):
    client.force_login(owner)
    r = client.post(reverse("member-invite", kwargs={"ws": ws_a.slug}), {"who": "bob", "role": "analyst"})
    assert r.status_code == 302
    m = Membership.objects.get(workspace=ws_a, user=bob)
    r = client.post(reverse("member-role", kwargs={"ws": ws_a.slug, "pk": m.pk}), {f"m{m.pk}-role": "owner"})
    assert r.status_code == 302
    m.refresh_from_db()
    assert m.role == "owner"
    r = client.post(reverse("member-remove", kwargs={"ws": ws_a.slug, "pk": m.pk}))
    assert r.status_code == 302 and not Membership.objects.filter(pk=m.pk).exists()


def test_an_unknown_email_gets_a_link_shown_once_and_emailed(
    client, owner, ws_a, mailoutbox, django_capture_on_commit_callbacks
):
    client.force_login(owner)
    with django_capture_on_commit_callbacks(execute=True):
        r = client.post(
            reverse("member-invite", kwargs={"ws": ws_a.slug}), {"who": "new@example.org", "role": "analyst"}
        )
    html = r.content.decode()
    assert r.status_code == 200 and r["Cache-Control"] == "no-store"
    link = re.search(r'id="invite-link" readonly value="([^"]+)"', html).group(1)
    assert link.startswith("http://testserver/invitations/")
    assert len(mailoutbox) == 1 and link in mailoutbox[0].body
    # the next view of the page lists it as pending, without the link
    html = client.get(_settings(ws_a)).content.decode()
    assert "new@example.org" in html and link not in html
    inv = Invitation.objects.get(email="new@example.org")
    client.post(reverse("invitation-revoke", kwargs={"ws": ws_a.slug, "pk": inv.pk}))
    inv.refresh_from_db()
    assert inv.revoked_at is not None


def test_a_bad_invite_says_why_by_the_field(client, owner, ws_a):
    client.force_login(owner)
    r = client.post(reverse("member-invite", kwargs={"ws": ws_a.slug}), {"who": "nobody", "role": "analyst"})
    assert r.status_code == 400 and "no user is named" in r.content.decode()


def test_an_analyst_sees_no_management_and_cannot_invite_change_or_remove(client, alice, carol, ws_a):
    client.force_login(carol)  # both analysts
    html = client.get(_settings(ws_a)).content.decode()
    assert "Invite a member" not in html and "member-role" not in html and "/remove/" not in html
    r = client.post(reverse("member-invite", kwargs={"ws": ws_a.slug}), {"who": "bob", "role": "owner"})
    assert r.status_code == 403
    assert "only the workspace&#x27;s owners manage its members" in r.content.decode().lower()
    m = Membership.objects.get(workspace=ws_a, user=alice)
    assert (
        client.post(
            reverse("member-role", kwargs={"ws": ws_a.slug, "pk": m.pk}), {f"m{m.pk}-role": "owner"}
        ).status_code
        == 403
    )
    assert client.post(reverse("member-remove", kwargs={"ws": ws_a.slug, "pk": m.pk})).status_code == 403
    assert Membership.objects.get(pk=m.pk).role == "analyst"
    assert Membership.objects.filter(workspace=ws_a).count() == 2


def test_another_teams_member_gets_404_everywhere(client, owner, ws_a, bob):
    client.force_login(bob)
    m = Membership.objects.get(workspace=ws_a, user=owner)
    inv, _ = services.invitation_create(workspace=ws_a, actor=owner, email="z@example.org", link_for=str)
    urls = [
        ("get", _settings(ws_a)),
        ("post", reverse("member-invite", kwargs={"ws": ws_a.slug})),
        ("post", reverse("member-role", kwargs={"ws": ws_a.slug, "pk": m.pk})),
        ("post", reverse("member-remove", kwargs={"ws": ws_a.slug, "pk": m.pk})),
        ("post", reverse("invitation-revoke", kwargs={"ws": ws_a.slug, "pk": inv.pk})),
        ("post", reverse("workspace-leave", kwargs={"ws": ws_a.slug})),
        # A's member and invitation through bob's own workspace
        ("post", reverse("member-remove", kwargs={"ws": "lab", "pk": m.pk})),
        ("post", reverse("invitation-revoke", kwargs={"ws": "lab", "pk": inv.pk})),
    ]
    for method, url in urls:
        assert getattr(client, method)(url, {"who": "bob", "role": "owner"}).status_code == 404, url
    assert Membership.objects.filter(workspace=ws_a).count() == 1
    assert Invitation.objects.get(pk=inv.pk).revoked_at is None


def test_the_last_owner_is_told_why_they_cannot_leave(client, owner, ws_a):
    client.force_login(owner)
    r = client.post(reverse("workspace-leave", kwargs={"ws": ws_a.slug}), follow=True)
    assert "only owner" in r.content.decode()
    assert Membership.objects.filter(workspace=ws_a, user=owner).exists()


def test_an_analyst_leaves(client, alice, ws_a):
    client.force_login(alice)
    r = client.post(reverse("workspace-leave", kwargs={"ws": ws_a.slug}))
    assert r.status_code == 302 and r["Location"] == reverse("home")
    assert client.get(_settings(ws_a)).status_code == 404


def _link(owner, ws, email="new@example.org"):
    _, link = services.invitation_create(workspace=ws, actor=owner, email=email, link_for=lambda t: t)
    return reverse("invitation-accept", args=[link])


def test_a_signed_in_user_accepts_an_invitation_once(client, owner, ws_a, bob):
    url = _link(owner, ws_a)
    client.force_login(bob)
    r = client.get(url)
    assert r.status_code == 200 and "Join Newsroom" in r.content.decode()
    r = client.post(url)
    assert r.status_code == 302 and r["Location"] == reverse("overview", kwargs={"ws": ws_a.slug})
    assert Membership.objects.get(workspace=ws_a, user=bob).role == "analyst"
    r = client.get(url)
    assert r.status_code == 410 and "used already" in r.content.decode()


def test_an_anonymous_visitor_signs_up_through_an_invitation(client, owner, ws_a, django_user_model):
    url = _link(owner, ws_a, "dan@example.org")
    html = client.get(url).content.decode()
    assert "Create an account" in html and f'href="/login/?next={url}"' in html
    r = client.post(url, {"action": "signup", "username": "dan", "password1": "short", "password2": "short"})
    assert r.status_code == 400 and not django_user_model.objects.filter(username="dan").exists()
    pw = "a-long-pass-phrase-42"
    r = client.post(url, {"action": "signup", "username": "dan", "password1": pw, "password2": pw})
    assert r.status_code == 302
    dan = django_user_model.objects.get(username="dan")
    assert dan.email == "dan@example.org" and Membership.objects.filter(workspace=ws_a, user=dan).exists()
    assert client.get(reverse("overview", kwargs={"ws": ws_a.slug})).status_code == 200  # signed in


def test_an_unknown_invitation_token_is_404_and_posting_it_does_nothing(client, bob):
    client.force_login(bob)
    url = reverse("invitation-accept", args=["made-up"])
    assert client.get(url).status_code == 404
    assert client.post(url).status_code == 404
    assert Membership.objects.filter(user=bob).count() == 1
