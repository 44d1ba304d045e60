"""The workspace settings, invitation and API token pages in the browser, at a desktop width (1440 px) and a
phone's (390 × 844): no page wider than the viewport; the header's account menu leads to them; a token is
created, its key shown once with a copy button, and revoked; an owner invites an e-mail address and the invitee
signs up through the link and lands in the workspace. And the hostile upload of ``tests/security/hostile.py``
runs no script on any page: the explorer's tooltips show its names as text. Screenshots go to
``tests/browser/artifacts/teams-<page>-<width>.png``."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from monitor import services
from monitor.models import ApiToken, Membership
from tests.browser.pages import field, screenshot
from tests.security.hostile import NAMES, build

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = {"desktop": (1440, 900), "phone": (390, 844)}
WIDE = """() => {
    const vw = document.documentElement.clientWidth, sw = document.documentElement.scrollWidth;
    if (sw <= vw) return null;
    const out = [];
    for (const el of document.querySelectorAll("body *")) {
        const r = el.getBoundingClientRect();
        if (r.right > vw + 1 && !el.closest(".table-wrap"))
            out.push(el.tagName.toLowerCase() + " " + Math.round(r.right));
    }
    return sw + " px: " + out.slice(0, 6).join(", ");
}"""


@pytest.fixture
def owner(alice, ws_a, bob):
    services.membership_add(workspace=ws_a, user=alice, role=Membership.Role.OWNER)
    services.membership_add(workspace=ws_a, user=bob)  # a second member to list
    services.api_token_create(user=alice, workspace=ws_a, name="nightly export of a long descriptive name")
    services.invitation_create(
        workspace=ws_a, actor=alice, email="someone.with.a.long.address@example.org", link_for=str
    )
    return alice


@pytest.mark.parametrize("width", list(WIDTHS))
def test_the_new_pages_fit_the_viewport(page, login, owner, ws_a, width):
    login()
    w, h = WIDTHS[width]
    page.set_viewport_size({"width": w, "height": h})
    _, link = services.invitation_create(
        workspace=ws_a, actor=owner, email="x@example.org", link_for=lambda t: f"/invitations/{t}/"
    )
    pages = {
        "settings": f"/w/{ws_a.slug}/settings/",
        "tokens": "/account/tokens/",
        "new-workspace": "/workspaces/new/",
        "invitation": link,
    }
    problems = []
    for name, url in pages.items():
        page.goto(url)
        page.wait_for_load_state("load")
        wide = page.evaluate(WIDE)
        if wide:
            problems.append(f"{name}: wider than {w} px ({wide})")
        screenshot(page, f"teams-{name}-{w}")
    # the header's account menu, open
    page.goto(f"/w/{ws_a.slug}/")
    page.locator("details.user-menu summary").click()
    menu = page.locator("details.user-menu ul")
    for item in ("Workspace settings", "New workspace", "API tokens", "API docs"):
        expect(menu.get_by_role("link", name=item)).to_be_visible()
    box = menu.bounding_box()
    if box["x"] < 0 or box["x"] + box["width"] > w + 1:
        problems.append(f"the account menu sticks out of the page: {box}")
    screenshot(page, f"teams-menu-{w}")
    assert not problems, "\n".join(problems)


def test_a_token_is_made_copied_and_revoked_from_the_header(page, login, owner, ws_a):
    login()
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"/w/{ws_a.slug}/")
    page.locator("details.user-menu summary").click()
    page.get_by_role("link", name="API tokens").click()
    expect(page.get_by_role("heading", name="API tokens")).to_be_visible()
    page.get_by_label("Name").fill("browser test")
    page.get_by_label("Workspace").select_option(label="Newsroom")
    page.get_by_label("Valid for (days)").fill("14")
    page.get_by_role("button", name="Create the token").click()
    key = page.locator("#new-key").input_value()
    assert key.startswith("sw_") and len(key) > 30
    page.get_by_role("button", name="Copy").click()
    expect(page.get_by_role("button", name=re.compile("^(Copied|Select and copy)$"))).to_be_visible()
    t = ApiToken.objects.get(name="browser test")
    row = page.locator(f'tr[data-token="{t.prefix}"]')
    expect(row).to_contain_text("Newsroom")
    expect(row).to_contain_text("active")
    screenshot(page, "teams-token-created-1440")
    row.get_by_role("button", name=f"Revoke {t.prefix}").click()
    expect(page.locator(f'tr[data-token="{t.prefix}"]')).to_contain_text("revoked")
    page.reload()
    expect(page.locator("#new-key")).to_have_count(0)  # shown once


def test_an_owner_invites_by_email_and_the_invitee_signs_up_through_the_link(
    page, login, owner, ws_a, browser, live_server
):
    login()
    page.goto(f"/w/{ws_a.slug}/settings/")
    page.get_by_label("Username or e-mail address").fill("newcomer@example.org")
    page.get_by_role("button", name="Invite").click()
    link = page.locator("#invite-link").input_value()
    assert "/invitations/" in link
    expect(page.get_by_role("heading", name="Invitation for newcomer@example.org")).to_be_visible()
    # the invitee, in another browser, at a phone's width
    other = browser.new_context(base_url=live_server.url, viewport={"width": 390, "height": 844})
    try:
        p = other.new_page()
        p.goto(link)
        expect(p.get_by_role("heading", name="Join Newsroom")).to_be_visible()
        field(p, "Username").fill("newcomer")
        field(p, "Password").fill("a-long-pass-phrase-42")
        field(p, "Password confirmation").fill("a-long-pass-phrase-42")
        screenshot(p, "teams-invitation-signup-390")
        p.get_by_role("button", name="Create the account and join").click()
        p.wait_for_url(re.compile(rf"/w/{ws_a.slug}/$"))
        expect(p.get_by_text("you joined Newsroom")).to_be_visible()
        assert p.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    finally:
        other.close()
    page.reload()
    expect(page.locator('tr[data-member="newcomer"]')).to_be_visible()


def test_the_hostile_upload_runs_no_script_and_the_explorer_tooltips_show_it_as_text(
    page, login, ws_a, alice, import_files, run_tasks, tmp_path
):
    build(ws_a, alice, import_files, run_tasks, tmp_path, NAMES)
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(f"{page.url}: {d.message}"), d.dismiss()))
    login()
    w = f"/w/{ws_a.slug}"
    for url in (
        f"{w}/", f"{w}/ranking/", f"{w}/publishers/102/", f"{w}/accounts/105/", f"{w}/tweets/1000/",
        f"{w}/collections/", f"{w}/alerts/", f"{w}/alerts/rules/", f"{w}/network/", f"{w}/search/?q=script",
    ):  # fmt: skip
        page.goto(url)
        page.wait_for_load_state("load")
        assert page.evaluate("document.querySelectorAll('img[src=x], svg[onload]').length") == 0, url
    page.goto(f"{w}/tweets/1000/explore/")
    page.wait_for_function("window.spreadwatchCascade && window.spreadwatchCascade.graph.order > 0")
    points = page.evaluate(
        """() => { const cy = window.spreadwatchCascade;
                   const box = document.getElementById("cy").getBoundingClientRect();
                   return cy.graph.mapNodes(id => { const p = cy.position(id);
                       return [box.left + p.x, box.top + p.y]; }); }"""
    )
    tips = set()
    for x, y in points:
        page.mouse.move(x, y)
        tip = page.locator("#cy-tip")
        if tip.is_visible():
            tips.add(tip.inner_text())
            assert tip.locator("img, script, svg, b").count() == 0
    screenshot(page, "teams-hostile-explorer-1440")
    shown = "\n".join(tips)
    assert sum(name in shown for name in NAMES.values()) >= 4, tips  # the names, as text
    assert not dialogs, dialogs
