"""Uploaded text is shown as text on every page: screen names, tweet text, labels, a collection's and an alert
rule's names that are script, attribute-breaking and template-syntax injections (``hostile.py``) never reach a
page as markup, the explorer's JSON island carries them intact without closing its ``<script>``, and the graph
downloads stay well-formed XML with the names intact.

Every GET-able URL pattern of the project is requested (the security crawl's list, ``test_crawl.FILL``, filled
with the hostile workspace's objects once per run family), so a new page is covered as soon as the crawl is."""

from __future__ import annotations

import datetime as dt
import json
import re
import xml.etree.ElementTree as ET

from django.urls import reverse
from django.utils.html import escape

from .hostile import COLLECTION, LABEL, MARKUP, NAMES, RULE, TEXT, hostile  # noqa: F401  (fixture)
from .test_crawl import FILL, NO_OBJECT, _patterns

#: a hostile string as markup: any of these in a page means it was not escaped
RAW = re.compile(r"<script>alert|<img src=x|<svg onload|<b>bold|<i>label|</script><script>", re.I)
#: the template payload evaluated (``{{ 7|add:35 }}{% now "Y" %}``)
EVALUATED = f"42{dt.date.today().year}"
#: the pages that must show hostile text (a page family that shows none would pass vacuously); not here: the
#: runs list (names no uploaded text) and account-by-name (a redirect to the account page)
MUST_SHOW = {
    "overview", "ranking", "publisher", "account", "search", "tweet", "cascade", "collections",
    "collection", "run", "network-run", "network-component", "neighbourhood", "counter-campaign",
    "counter-campaign-run", "alerts", "alert-rules", "alert-rule-edit",
}  # fmt: skip


def _json_escaped(s: str) -> str:
    """``s`` as Django's json_script writes it inside a JSON string."""
    body = json.dumps(s)[1:-1]
    return body.replace("<", "\\u003C").replace(">", "\\u003E").replace("&", "\\u0026")


HOSTILE = [*NAMES.values(), TEXT, LABEL, COLLECTION, RULE]
SHOWN = [f(s) for s in HOSTILE for f in (escape, _json_escaped)]


def _get_urls(h):
    seen = set()
    for p in _patterns():
        if p.name not in FILL or p.name.startswith("api:"):
            continue
        for o in h.objects:
            for kwargs in FILL[p.name](o):
                url = reverse(p.name, kwargs=kwargs)
                if url not in seen:
                    seen.add(url)
                    yield p.name, url
    for name, kwargs in NO_OBJECT.items():
        if not name.startswith("api:"):
            yield name, reverse(name, kwargs=kwargs)
    yield "search", reverse("search", kwargs={"ws": h.ws.slug}) + "?q=" + "%3Cscript%3E"
    yield "search", reverse("search", kwargs={"ws": h.ws.slug}) + "?q=" + NAMES[103].replace('"', "%22")


def _body(r) -> str:
    return (b"".join(r.streaming_content) if r.streaming else r.content).decode("utf-8", errors="replace")


def test_no_page_shows_uploaded_text_as_markup(client, alice, hostile):  # noqa: F811
    client.force_login(alice)
    pages, bad, shows = 0, [], {}
    for name, url in _get_urls(hostile):
        r = client.get(url)
        if r.status_code != 200 or not r.get("Content-Type", "").startswith("text/html"):
            continue
        pages += 1
        html = _body(r)
        for m in RAW.finditer(html):
            bad.append(f"{url} ({name}): raw markup …{html[max(0, m.start() - 60) : m.end() + 40]!r}…")
        for s in MARKUP:
            if s in html:
                bad.append(f"{url} ({name}): the hostile string {s!r} unescaped")
        if EVALUATED in html:
            bad.append(f"{url} ({name}): the template payload was evaluated")
        shows[name] = shows.get(name, False) or any(s in html for s in SHOWN)
    assert not bad, "uploaded text reached a page as markup:\n" + "\n".join(bad)
    missing = sorted(n for n in MUST_SHOW if not shows.get(n))
    assert not missing, f"these pages did not render (200) or showed none of the hostile text: {missing}"
    assert pages >= 30, pages


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def test_the_explorers_json_island_holds_the_names_intact_and_closed(client, alice, hostile):  # noqa: F811
    client.force_login(alice)
    html = _body(client.get(reverse("cascade", kwargs={"ws": hostile.ws.slug, "tweet_id": 1000})))
    islands = re.findall(r'<script id="cascade-data" type="application/json">(.*?)</script>', html, re.S)
    assert len(islands) == 1, "the island is closed once, by its own </script>"
    data = json.loads(islands[0])
    strings = set(_strings(data))
    for tid in (101, 102, 103, 104, 105, 106):  # every participant of cascade 1000, as uploaded
        assert any(NAMES[tid] in s for s in strings), NAMES[tid]
    # the tooltips and labels drawn from these strings: tests/browser/test_hostile_text.py


GRAPHS = ("tweet-graph", "publisher-network", "neighbourhood-export", "network-component-export")


def test_graph_downloads_are_well_formed_xml_with_the_names_intact(client, alice, hostile):  # noqa: F811
    client.force_login(alice)
    checked = {}
    for name in GRAPHS:
        for o in hostile.objects:
            for kwargs in FILL[name](o):
                r = client.get(reverse(name, kwargs=kwargs))
                if r.status_code != 200:
                    continue
                root = ET.fromstring(_body(r).encode())  # raises on an unescaped "<" or "&"
                texts = {e.text for e in root.iter() if e.text} | {v for e in root.iter() for v in e.attrib.values()}
                assert any(NAMES[102] in t or NAMES[105] in t for t in texts), f"{name} {kwargs}: names lost"
                checked[name] = checked.get(name, 0) + 1
    assert all(checked.get(n, 0) >= 2 for n in GRAPHS), checked  # GEXF and GraphML each
