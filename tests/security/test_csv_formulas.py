"""Every CSV download neutralises spreadsheet formulas: a cell of uploaded text that starts with ``= + - @``, a
tab or a line break is written with a leading ``'`` (OWASP's CSV injection guard), in the dashboard's
downloads and the API's alike, and no line break inside a cell splits its row (a spreadsheet would read the
rest of the cell as a new row whose first cell is a formula). The screen names of ``hostile.FORMULAS`` go
through every algorithm's results, so every CSV export has them to write.

Every CSV URL is found from the URL patterns (a ``.csv`` route, a ``<tablefmt>`` route filled with csv, the API's
``/export/`` routes with ``?format=csv``), so a new export is checked as soon as the crawl knows how to fill it."""

from __future__ import annotations

import csv
import io

from django.urls import reverse

from .hostile import FORMULAS, FORMULAS_AFTER, formulas  # noqa: F401  (fixture)
from .test_crawl import FILL, _patterns

PAYLOADS = {**FORMULAS, **FORMULAS_AFTER}
DANGEROUS = ("=", "+", "-", "@", "\t", "\r", "\n")
#: the part of each payload that survives neutralising, to find its cells
CORES = [p.lstrip("=+-@\t\r") for p in PAYLOADS.values() if len(p) > 3]


def _csv_urls(h):
    seen = set()
    for p in _patterns():
        if p.name not in FILL:
            continue
        for o in h.objects:
            for kwargs in FILL[p.name](o):
                if kwargs.get("fmt") not in (None, "csv"):
                    continue
                url = reverse(p.name, kwargs=kwargs)
                if p.name.startswith("api:") and url.rstrip("/").endswith("/export"):
                    url += "?format=csv"
                elif not (url.endswith(".csv")):
                    continue
                if url not in seen:
                    seen.add(url)
                    yield p.name, url


def _body(r) -> str:
    return (b"".join(r.streaming_content) if r.streaming else r.content).decode()


def test_every_csv_export_neutralises_formulas(client, alice, formulas):  # noqa: F811
    from tests.webapp import token_client

    client.force_login(alice)
    api = token_client(alice)
    bad, found, exports = [], set(), {}
    for name, url in _csv_urls(formulas):
        r = (api if name.startswith("api:") else client).get(url)
        if r.status_code != 200:
            continue
        assert "csv" in r["Content-Type"], (url, r["Content-Type"])
        cells = [c for row in csv.reader(io.StringIO(_body(r), newline="")) for c in row]
        hits = [c for c in cells if any(core in c for core in CORES)]
        exports[name] = exports.get(name, 0) + len(hits)
        for c in hits:
            if c.startswith(DANGEROUS):
                bad.append(f"{url} ({name}): {c!r}")
            elif not c.startswith("'"):
                bad.append(f"{url} ({name}): {c!r} lost its leading character")
            found.add(c[1:])
    assert not bad, "formulas written as formulas:\n" + "\n".join(bad)
    expected = {
        "ranking-export", "publisher-export", "network-accounts-export", "counter-campaign-export",
        "account-wtf-export", "publisher-watchlist-export", "api:ranking-export", "api:publisher-ranking-export",
        "api:account-wtf-export", "api:watchlist-export",
    }  # fmt: skip
    silent = sorted(n for n in expected if not exports.get(n))
    assert not silent, f"these CSV exports answered no row with a payload (not 200, or empty): {silent} {exports}"
    # a carriage return is written as a line feed (a lone CR is not quoted by the csv module: see csv_text)
    assert {p[0] for p in found} == set(DANGEROUS) - {"\r"}, f"not every first character was seen: {found}"
