"""The cascade explorer on a real-sized cascade (issue 19 item 3): every node of a 20,000-participant cascade
drawn with WebGL, the top accounts labelled, an account found by the find box, and the page no wider than a
phone's screen."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import expect

from tests.browser.pages import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

N = 20_000  # participants: the publisher and N - 1 retweeters


@pytest.fixture
def big(ws_a, import_files, tmp_path):
    """A wide, shallow cascade: publisher 1 and 19,999 retweeters 1 s apart; everyone follows the publisher, and
    every tenth retweeter also follows the retweeter before it (a second level)."""
    tweets = ["tweet_id,retweeted_tweet_id,user_id,created_at,followers_count,screen_name"]
    tweets.append("5000,,1,2020-01-01T00:00:00Z,1000,pub")
    follows = ["follower_id,followee_id"]
    for u in range(2, N + 1):
        s = u - 1
        tweets.append(
            f"{5000 + u},5000,{u},2020-01-01T{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}Z,{u % 97 + 1},u{u}"
        )
        follows.append(f"{u},1")
        if u % 10 == 0 and u > 2:
            follows.append(f"{u},{u - 1}")
    (tmp_path / "tweets.csv").write_text("\n".join(tweets) + "\n")
    (tmp_path / "follows.csv").write_text("\n".join(follows) + "\n")
    c = import_files(ws_a, [tmp_path / "tweets.csv", tmp_path / "follows.csv"])
    assert c.status == "done", c.error
    return ws_a


@pytest.mark.parametrize("width,height", [(1440, 900), (390, 844)], ids=["desktop", "phone"])
def test_it_draws_every_node_of_a_20000_participant_cascade_and_finds_an_account(page, login, big, width, height):
    page.set_viewport_size({"width": width, "height": height})
    login()
    start = time.monotonic()
    page.goto(f"/w/{big.slug}/tweets/5000/explore/", wait_until="commit", timeout=60_000)
    cy = "window.spreadwatchCascade"
    page.wait_for_function(f"() => {cy} && {cy}.graph.order === {N}", timeout=60_000)
    drawn_in = time.monotonic() - start
    nav = page.evaluate("performance.getEntriesByType('navigation')[0].toJSON()")
    print(f"explorer timing: response {nav['responseEnd']:.0f} ms, loaded {nav['loadEventEnd']:.0f} ms")
    assert page.evaluate(f"{cy}.graph.size") == N - 1 + N // 10  # every edge: the star and the chains
    expect(page.locator("#cascade-summary")).not_to_contain_text("hidden")
    # the most influential accounts carry a label at every zoom; the publisher among them
    forced = page.evaluate(
        f"{cy}.graph.filterNodes((id, a) => a.forceLabel).map(id => {cy}.graph.getNodeAttribute(id, 'label'))"
    )
    assert "@pub" in forced and 2 <= len(forced) <= 26
    # the drawing uses its box: nodes spread over it, not squeezed into a strip
    box = page.locator("#cy").bounding_box()
    pts = page.evaluate(f"{cy}.graph.mapNodes(id => {cy}.position(id))")
    xs = [p["x"] for p in pts]
    ys = [p["y"] for p in pts]
    assert max(ys) - min(ys) > 0.5 * box["height"] and max(xs) - min(xs) > 0.5 * min(box["width"], box["height"])
    screenshot(page, f"explorer-20000-{width}-whole")
    # find an account by screen name: the camera centres on it and its numbers show
    page.get_by_role("searchbox", name="Find an account in this cascade").fill("@u12345")
    page.get_by_role("button", name="Find").click()
    expect(page.locator("#find-result")).to_contain_text("Found @u12345")
    page.wait_for_timeout(600)
    found = page.evaluate(f"{cy}.position({cy}.nodeByLabel('@u12345'))")
    assert abs(found["x"] - box["width"] / 2) < 40 and abs(found["y"] - box["height"] / 2) < 40, found
    expect(page.locator("#cy-tip")).to_contain_text("@u12345")
    screenshot(page, f"explorer-20000-{width}-found")
    page.get_by_role("searchbox", name="Find an account in this cascade").fill("nobody-here")
    page.get_by_role("button", name="Find").click()
    expect(page.locator("#find-result")).to_contain_text("No account matching")
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the page is {overflow} px wider than the screen"
    print(f"explorer: {N} nodes drawn {drawn_in:.1f} s after navigation at {width} px")
