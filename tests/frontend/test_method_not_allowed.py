"""A method a URL does not take answers 405 with a body, never a blank page: the site's page (which methods the
URL takes, a link back) on the dashboard's URLs, the API's JSON error under ``/api/``; the ``Allow`` header is
kept. Django answers an empty 405 (``require_POST``, ``LogoutView``): ``monitor.middleware`` fills it in.

The crawl asks every URL pattern of the project (filled with workspace A's objects, as the security crawl does)
with GET and PUT: GET finds the POST-only URLs (cancel, retry, delete, log out...), PUT every URL's refusal of a
method nobody takes."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from tests.security.helpers import objs  # noqa: F401 (fixture)
from tests.security.test_crawl import FILL, NO_OBJECT, PUBLIC, _patterns, _urls

pytestmark = pytest.mark.django_db

# POST-only dashboard URLs: the buttons of the run, collection, member, token, alert and notice pages
POST_ONLY = [
    "run-cancel",
    "run-retry",
    "collection-cancel",
    "collection-retry",
    "member-remove",
    "workspace-leave",
    "account-token-revoke",
    "stream-token-revoke",
    "notice-dismiss",
    "alerts-read-all",
]


def _url(name: str, o) -> str:
    return reverse(name, kwargs=FILL[name](o)[0])


@pytest.mark.parametrize("name", POST_ONLY)
def test_a_get_on_a_post_only_page_answers_a_405_page(client, alice, objs, name):  # noqa: F811
    client.force_login(alice)
    url = _url(name, objs)
    came_from = f"http://testserver{reverse('runs', kwargs={'ws': objs.ws.slug})}"
    r = client.get(url, HTTP_REFERER=came_from)
    assert r.status_code == 405 and r["Allow"] == "POST", (url, r.status_code)
    assert r["Content-Type"].startswith("text/html")
    html = r.content.decode()
    assert "<h1>Method not allowed</h1>" in html and "<code>POST</code>" in html and "<code>GET</code>" in html
    assert 'class="site-header' in html, "the site's base template"
    assert f'href="{came_from}"' in html and f'href="{reverse("home")}"' in html
    assert "X-Frame-Options" in r.headers, "the other middleware still sees the answer"


@pytest.mark.parametrize("referer", ["", "https://elsewhere.example/page", "SELF"])
def test_the_405_page_links_back_only_to_a_page_of_this_site(client, alice, objs, referer):  # noqa: F811
    client.force_login(alice)
    url = _url("run-cancel", objs)
    ref = f"http://testserver{url}" if referer == "SELF" else referer
    html = client.get(url, HTTP_REFERER=ref).content.decode()
    assert "Back to the previous page" not in html and "elsewhere.example" not in html
    assert f'href="{reverse("home")}"' in html


def test_the_405_page_echoes_nothing_of_the_url_asked_for(client, bob, objs):  # noqa: F811
    """bob opens a POST-only address of workspace A: the answer is the same page, naming nothing of A."""
    client.force_login(bob)
    r = client.get(_url("run-cancel", objs))
    assert r.status_code == 405 and objs.ws.slug not in r.content.decode()


def test_a_get_on_logout_answers_the_page_with_a_login_link_when_logged_out(client):
    r = client.get(reverse("logout"))
    assert r.status_code == 405 and "POST" in r["Allow"]
    html = r.content.decode()
    assert "<h1>Method not allowed</h1>" in html and f'href="{reverse("login")}"' in html


def test_a_method_an_api_url_does_not_take_answers_json(client, alice, objs):  # noqa: F811
    client.force_login(alice)
    r = client.get(_url("api:run-cancel", objs))
    assert r.status_code == 405 and "POST" in r["Allow"].split(", "), r.status_code  # (DRF's order varies)
    assert r.json()["detail"] == 'Method "GET" not allowed.'


def test_a_head_405_stays_without_a_body(client, alice, objs):  # noqa: F811
    client.force_login(alice)
    r = client.head(_url("run-cancel", objs))
    assert r.status_code == 405 and r.content == b""


def _every_url(o) -> list[tuple[str, str]]:
    out = [(name, url) for name, url, _ in _urls(o)]
    out += [(name, reverse(name, kwargs=kw)) for name, kw in NO_OBJECT.items()]
    routes = {p.name: p for p in _patterns()}
    out += [(name, reverse(name)) for name in PUBLIC if not routes[name].params]
    return out


def test_every_405_of_every_url_pattern_has_a_body(client, alice, objs):  # noqa: F811
    client.force_login(alice)
    seen, blank = {"get": 0, "put": 0}, []
    for name, url in _every_url(objs):
        for method in ("get", "put"):
            r = getattr(client, method)(url)
            if r.status_code != 405:
                continue
            seen[method] += 1
            body = r.content
            if not body or not r.has_header("Allow"):
                blank.append(f"{method.upper()} {url} ({name})")
                continue
            if r["Content-Type"].startswith("application/json"):
                assert json.loads(body)["detail"], url
            elif not url.startswith("/api/"):
                assert b"Method not allowed" in body, url
            else:  # the schema and Swagger UI answer in their own format (YAML, HTML): DRF's message still
                assert b"not allowed" in body, (url, body[:300])
    assert not blank, "405 without a body or an Allow header:\n" + "\n".join(blank)
    # the crawl reached the POST-only URLs (GET) and the rest (PUT)
    assert seen["get"] >= 25 and seen["put"] >= 80, seen
