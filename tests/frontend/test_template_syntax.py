"""No template syntax reaches a page: a ``{# ... #}`` comment that spans lines is not a comment to Django (it is
printed as text), and a typo in a tag or variable can leave ``{%`` or ``{{`` in the HTML.

Every page of the dashboard is requested as the workspace's analyst: every URL pattern the security crawl
fills (``tests/security/test_crawl.py``: a new page cannot be added without being filled there), with data,
without data, and in its error states.
"""

from __future__ import annotations

import re

from django.urls import reverse

from tests.security.helpers import Objects, objs, walk  # noqa: F401 (objs is a fixture)
from tests.security.test_crawl import FILL, PUBLIC

# the openings only: a JSON object may end in "}}" (the explorer's json_script)
TEMPLATE_SYNTAX = re.compile(r"\{#|\{%|\{\{")


def _leaks(html: str) -> list[str]:
    return [html[max(0, m.start() - 60) : m.end() + 60] for m in TEMPLATE_SYNTAX.finditer(html)]


def _pages(o: Objects):
    for p in walk():
        if p.namespace or p.name not in FILL:
            continue
        for kwargs in FILL[p.name](o):
            yield p.name, reverse(p.name, kwargs=kwargs)


def _check(client, url: str, bad: list[str], expect: tuple[int, ...] = (200, 302, 400, 403, 404, 405)) -> None:
    r = client.get(url)
    assert r.status_code in expect, (url, r.status_code)
    if r.streaming or not r["Content-Type"].startswith("text/html"):
        return
    for leak in _leaks(r.content.decode()):
        bad.append(f"{url}: …{leak}…")


def test_it_finds_a_multiline_comment_in_a_page():
    # the check itself: what Django prints for a comment over two lines
    from django.template import engines

    html = engines["django"].from_string("{# one\n two #}<p>x</p>").render({})
    assert _leaks(html)


def test_no_page_shows_template_syntax(client, alice, objs):  # noqa: F811
    client.force_login(alice)
    bad: list[str] = []
    pages = list(_pages(objs))
    assert len(pages) > 20
    for _, url in pages:
        _check(client, url, bad)
    # the error states: options the ranking refuses, an unknown page, an unknown workspace
    for url in (
        reverse("ranking", kwargs={"ws": objs.ws.slug}) + "?aggregate=nonsense",
        reverse("publisher", kwargs={"ws": objs.ws.slug, "publisher": objs.publisher}) + "?start=not-a-date",
        reverse("account", kwargs={"ws": objs.ws.slug, "twitter_id": 999999}),
        "/w/no-such-workspace/",
        "/no-such-page/",
    ):
        _check(client, url, bad)
    assert not bad, "template syntax in the HTML:\n" + "\n".join(bad)


def test_no_page_of_an_empty_workspace_shows_template_syntax(client, bob, ws_b):
    client.force_login(bob)
    bad: list[str] = []
    for name in ("overview", "ranking", "collections", "upload", "runs", "alerts", "alert-rules", "alert-rule-new"):
        _check(client, reverse(name, kwargs={"ws": ws_b.slug}), bad)
    assert not bad, "template syntax in the HTML:\n" + "\n".join(bad)


def test_the_public_pages_show_no_template_syntax(client, db):
    bad: list[str] = []
    for name in ("login", "password_reset", "password_reset_done", "password_reset_complete"):
        assert name in PUBLIC
        _check(client, reverse(name), bad)
    assert not bad, "template syntax in the HTML:\n" + "\n".join(bad)
