"""The Network pages' drawings on a graph of a real size (issue 40 item 6): a hub's 600-account neighbourhood, the
conversation graph of 30 conversations and a component, each drawn with WebGL at the positions the server laid
out (no layout runs in the page), a dozen labels and not hundreds, the hovered account's neighbours labelled, the
conversations coloured apart, the table of the accounts on the page, at 1440 and 390 px."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.pages import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

N = 600  # the hub's followers
GROUP = 5  # the first GROUPS * GROUP followers form conversations of five (everyone follows everyone else)
GROUPS = 30
NET = "window.spreadwatchNetwork"


@pytest.fixture
def hub(ws_a, import_files, tmp_path):
    """@hub (id 1) tweets once and its N followers (ids 2..N+1, @u2...) retweet it; followers 2-151 also follow
    each other both ways in groups of five: 30 conversations."""
    tweets = ["tweet_id,retweeted_tweet_id,user_id,created_at,followers_count,screen_name"]
    tweets.append(f"5000,,1,2020-01-01T00:00:00Z,{N},hub")
    follows = ["follower_id,followee_id"]
    for u in range(2, N + 2):
        s = u - 1
        tweets.append(f"{5000 + u},5000,{u},2020-01-01T00:{s // 60 % 60:02d}:{s % 60:02d}Z,3,u{u}")
        follows.append(f"{u},1")
    for g in range(GROUPS):
        members = range(2 + g * GROUP, 2 + (g + 1) * GROUP)
        follows += [f"{a},{b}" for a in members for b in members if a != b]
    (tmp_path / "tweets.csv").write_text("\n".join(tweets) + "\n")
    (tmp_path / "follows.csv").write_text("\n".join(follows) + "\n")
    c = import_files(ws_a, [tmp_path / "tweets.csv", tmp_path / "follows.csv"])
    assert c.status == "done", c.error
    return ws_a


def _webgl_drawn(page) -> dict:
    """The drawing's facts once its first frame is marked: nodes, edges, the labels shown, the node colours, and
    how many pixels of the WebGL node layer are painted (read back in the same task as a fresh render, before
    the browser may clear the buffer)."""
    page.wait_for_function("() => performance.getEntriesByName('graph-first-frame').length > 0")
    page.locator("#net-cy").scroll_into_view_if_needed()
    return page.evaluate(
        f"""() => {{
        const s = {NET}.sigma, c = s.getCanvases().nodes;
        const gl = c.getContext("webgl2") || c.getContext("webgl");
        s.refresh();
        const px = new Uint8Array(c.width * c.height * 4);
        gl.readPixels(0, 0, c.width, c.height, gl.RGBA, gl.UNSIGNED_BYTE, px);
        let painted = 0;
        for (let i = 3; i < px.length; i += 4) if (px[i] > 0) painted++;
        return {{ webgl: !!gl, painted, nodes: {NET}.graph.order, edges: {NET}.graph.size,
                  labels: {NET}.labels(), colours: Array.from(new Set({NET}.graph.mapNodes((id, a) => a.color))),
                  marks: performance.getEntriesByName("graph-first-frame").length }};
    }}"""
    )


def _hover(page, label: str) -> list[str]:
    box = page.locator("#net-cy").bounding_box()
    pos = page.evaluate(f"{NET}.position({NET}.node('{label}'))")
    page.mouse.move(box["x"] + pos["x"], box["y"] + pos["y"])
    expect(page.locator("#net-tip")).to_contain_text(label)
    return page.evaluate(f"{NET}.labels()")


@pytest.mark.parametrize("width,height", [(1440, 900), (390, 844)], ids=["desktop", "phone"])
def test_the_drawings_are_webgl_with_few_labels_and_the_hovered_neighbourhood_named(page, login, hub, width, height):
    page.set_viewport_size({"width": width, "height": height})
    login()

    # the hub's neighbourhood: every follower drawn, a dozen labelled (the hub first), not 601 on top of each other
    page.goto(f"/w/{hub.slug}/accounts/1/neighbourhood/")
    drawn = _webgl_drawn(page)
    assert drawn["webgl"] and drawn["marks"] == 1
    assert drawn["nodes"] == N + 1 and drawn["edges"] == N + GROUPS * GROUP * (GROUP - 1)
    assert drawn["painted"] > 500, drawn["painted"]
    assert "@hub" in drawn["labels"] and 2 <= len(drawn["labels"]) <= 13, drawn["labels"]
    screenshot(page, f"network-drawing-neighbourhood-{width}")
    # hovering an account names it and its neighbours (its conversation and the hub), and no one else new
    shown = _hover(page, "@u3")
    assert {"@u3", "@u2", "@u4", "@u5", "@u6", "@hub"} <= set(shown), shown
    assert len(shown) <= 13 + 6, shown
    screenshot(page, f"network-drawing-neighbourhood-hover-{width}")
    # the keyboard (graph-keys.js, shared with the cascade explorer): an arrow pans, 0 fits it all again
    camera_x = f"{NET}.sigma.getCamera().getState().x"
    page.locator("#net-cy").focus()
    x0 = page.evaluate(camera_x)
    page.keyboard.press("ArrowLeft")
    assert page.evaluate(camera_x) < x0
    page.keyboard.press("0")
    page.wait_for_function(f"Math.abs({camera_x} - {x0}) < 1e-9")
    # the text alternative: every account drawn, in a table
    table = page.locator("details.net-table")
    expect(table.locator("summary")).to_contain_text(f"{N + 1} accounts drawn")
    expect(table.locator("tbody tr")).to_have_count(N + 1)
    assert page.evaluate("document.documentElement.scrollWidth") <= width + 1

    # the conversation graph of a network run: one colour per conversation (the palette has ten)
    page.goto(f"/w/{hub.slug}/network/")
    form = page.get_by_role("form", name="Start a network run")
    form.get_by_label("Samples").fill("0")
    form.get_by_label("Backend").select_option("cpu")
    form.get_by_role("button", name="Start run").click()
    expect(page.locator(".messages")).to_contain_text("Network run")
    drawn = _webgl_drawn(page)
    assert drawn["webgl"] and drawn["painted"] > 100 and drawn["marks"] == 1
    assert drawn["nodes"] == GROUPS * GROUP and drawn["edges"] == GROUPS * GROUP * (GROUP - 1) // 2
    assert len(drawn["colours"]) == 10, drawn["colours"]
    assert 1 <= len(drawn["labels"]) <= 12, drawn["labels"]
    expect(page.locator("details.net-table tbody tr")).to_have_count(GROUPS * GROUP)
    assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
    screenshot(page, f"network-drawing-conversations-{width}")

    # the largest component: everyone, drawn the same way
    page.locator("section[aria-labelledby='largest-h']").get_by_role("link", name="Open").first.click()
    drawn = _webgl_drawn(page)
    assert drawn["webgl"] and drawn["nodes"] == N + 1 and drawn["painted"] > 500
    assert 1 <= len(drawn["labels"]) <= 12, drawn["labels"]
    screenshot(page, f"network-drawing-component-{width}")
