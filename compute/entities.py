"""Tweet entities as the claim search indexes them: the domains of a tweet's URLs.

The readers give each original its hashtags and expanded URLs (``compute.tables.TweetTable``, space-separated
strings). A search for a domain finds the tweets linking to it or to any of its subdomains, so each URL's host is
stored with its parent domains down to two labels, lowercased and without a leading ``www.``:
``https://www.news.bbc.co.uk/x`` gives ``news.bbc.co.uk bbc.co.uk co.uk``. (A public-suffix list would stop at
``bbc.co.uk``; the extra ``co.uk`` costs one index entry and matches only a query for ``co.uk`` itself.)
"""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["domains_of", "host_of"]


def host_of(url: str) -> str | None:
    """The lowercased host of ``url`` without ``www.`` (a URL without a scheme is read as ``http://``); None when
    it has none or it is not a name with a dot (an IP address is kept as it is)."""
    url = url.strip()
    if not url:
        return None
    if "://" not in url:
        url = "http://" + url
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return None
    if not host or "." not in host:
        return None
    host = host.rstrip(".")
    return host[4:] if host.startswith("www.") and host.count(".") > 1 else host


def domains_of(urls: str | None) -> str:
    """The space-separated domains of the space-separated ``urls``: each host and its parents down to two
    labels, each once, in order of first appearance."""
    out: dict[str, None] = {}
    for url in (urls or "").split():
        host = host_of(url)
        if host is None:
            continue
        labels = host.split(".")
        if all(part.isdigit() for part in labels):  # an IPv4 address: itself only
            out.setdefault(host)
            continue
        for i in range(max(1, len(labels) - 1)):
            out.setdefault(".".join(labels[i:]))
    return " ".join(out)
