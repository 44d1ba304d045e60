"""Exports as streamed text: the ranking as CSV and JSON, a cascade or a publisher's amplification network as
GEXF 1.3 and GraphML (both open in Gephi). No request handling here: each export is a generator of ``str``
chunks that a view hands to a ``StreamingHttpResponse``, so a large export never sits whole in memory.

Graphs: node id = the account's Twitter id (a string); edge ``src -> dst`` means ``src`` could have seen the
tweet from ``dst`` and passed its share of the audience to it, so edges point the way influence flows, toward
the publisher. GraphML carries the graph's facts (tweet, publisher, truth label, unit, the cap on cascades
read, the edge direction) as graph-level ``<data>``; GEXF has no graph-level attributes, so they go into its
``<meta><description>`` as ``key=value`` pairs."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from xml.sax.saxutils import escape, quoteattr

from django.db.models import Count, Q, Sum

from . import selectors
from .models import Account, CascadeGraph, CascadeInfluence, Label, Tweet, Workspace
from .numbers import csv_number
from .selectors.network import accounts_of, network_account_rows

CONTENT_TYPES = {
    "csv": "text/csv; charset=utf-8",
    "json": "application/json",
    "gexf": "application/gexf+xml",
    "graphml": "application/graphml+xml",
}
TABLE_FORMATS = ("csv", "json")
GRAPH_FORMATS = ("gexf", "graphml")

RANKING_COLUMNS = ("rank", "twitter_id", "screen_name", "total", "mean", "participation", "cascades", "unit")
EDGE_DIRECTION = (
    "Edge src -> dst: src could have seen the tweet from dst and passed its share of the audience to dst; "
    "edges point the way influence flows, toward the publisher."
)
ALL_TIME = selectors.Window()
XML_CHUNK = 2000  # nodes or edges per yielded chunk
LABEL_ATTRS = {label.value: "cascades_" + label.value.replace("-", "_") for label in Label}


# --- rankings -----------------------------------------------------------------------------------------------------


def _pages(
    ws: Workspace,
    publisher: Account | None,
    aggregate: str,
    window: selectors.Window,
    chunk: int,
    labels: list[str] | None = None,
    sort: str | None = None,
):
    """The ranking a page of ``chunk`` rows at a time (the first page also carries T, the unit and the count).
    Offsets are read one after another: an export taken while a computation writes may see the two sides of
    it, like paging through the ranking page would."""
    if chunk < 1:
        raise ValueError("chunk must be at least 1")
    offset = 0
    while True:
        page = selectors.ranking(
            ws,
            publisher=publisher,
            aggregate=aggregate,
            window=window,
            labels=labels,
            sort=sort,
            limit=chunk,
            offset=offset,
        )
        yield page
        offset += len(page.rows)
        if len(page.rows) < chunk or offset >= page.total_rows:
            return


_FORMULA = re.compile(r"^[=+\-@\t\r\n]")


def csv_text(value: str) -> str:
    """Uploaded text is data, not a formula (OWASP's CSV injection guard): a cell starting with ``= + - @``, a tab
    or a line break gets a leading ``'``. A carriage return becomes a line feed first: the writers end lines with
    ``\\n``, so the csv module quotes a field holding ``\\n`` but not one holding a lone ``\\r``, which a
    spreadsheet reads as the end of a row, and the rest of the cell as a new row's first cell — a formula that
    this check, made only at the cell's start, would not see. Every CSV export writes its text cells through this."""
    value = value.replace("\r\n", "\n").replace("\r", "\n")
    return "'" + value if _FORMULA.match(value) else value


def ranking_csv(
    ws: Workspace,
    *,
    publisher: Account | None = None,
    aggregate: str = "total",
    window: selectors.Window = ALL_TIME,
    labels: list[str] | None = None,
    sort: str | None = None,
    chunk: int = 5000,
) -> Iterator[str]:
    """Every ranked account as CSV: a header, then one chunk of rows per page of the ranking. Scores have six
    significant digits (:func:`csv_number`: what a spreadsheet shows anyway); the JSON export has every digit."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(RANKING_COLUMNS)
    yield buf.getvalue()
    for page in _pages(ws, publisher, aggregate, window, chunk, labels, sort):
        if not page.rows:
            return
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        for r in page.rows:
            w.writerow(
                [
                    r["rank"],
                    int(r["twitter_id"]),
                    csv_text(r["screen_name"] or ""),
                    csv_number(r["total"]),
                    csv_number(r["mean"]),
                    csv_number(r["participation"]),
                    r["cascades"],
                    page.unit,
                ]
            )
        yield buf.getvalue()


COMPARISON_COLUMNS = (
    "publisher_twitter_id",
    "publisher_screen_name",
    "rank",
    "twitter_id",
    "screen_name",
    "total",
    "mean",
    "participation",
    "cascades",
    "unit",
    "in_top_of",
)


def comparison_csv(cmp: selectors.Comparison) -> Iterator[str]:
    """A comparison of publishers (:func:`selectors.compare_publishers`) as CSV: each publisher's top N
    spreaders, one row per (publisher, rank), in the order the publishers were chosen; ``in_top_of`` is how
    many of the compared publishers' top N lists the account is in (2 or more: a shared account)."""
    in_top: dict[int, int] = {}
    for col in cmp.columns:
        for r in col.rows:
            in_top[r["account"]] = in_top.get(r["account"], 0) + 1
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COMPARISON_COLUMNS)
    for pub, col in zip(cmp.publishers, cmp.columns, strict=True):
        for r in col.rows:
            w.writerow(
                [
                    int(pub.twitter_id),
                    csv_text(pub.screen_name or ""),
                    r["rank"],
                    int(r["twitter_id"]),
                    csv_text(r["screen_name"] or ""),
                    csv_number(r["total"]),
                    csv_number(r["mean"]),
                    csv_number(r["participation"]),
                    r["cascades"],
                    col.unit,
                    in_top[r["account"]],
                ]
            )
    yield buf.getvalue()


def ranking_json(
    ws: Workspace,
    *,
    publisher: Account | None = None,
    aggregate: str = "total",
    window: selectors.Window = ALL_TIME,
    labels: list[str] | None = None,
    sort: str | None = None,
    chunk: int = 5000,
) -> Iterator[str]:
    """The ranking as one JSON document, streamed: the head, then the rows a page at a time. Twitter ids are
    strings (JavaScript loses precision on 64-bit integers)."""
    first = True
    for page in _pages(ws, publisher, aggregate, window, chunk, labels, sort):
        parts = []
        if first:
            head = {
                "workspace": ws.slug,
                "publisher": str(publisher.twitter_id) if publisher is not None else None,
                "aggregate": aggregate,
                "window": {
                    "from": window.start.isoformat() if window.start else None,
                    "to": window.end.isoformat() if window.end else None,
                },
                "unit": page.unit,
                "tweets": page.tweets,
                "count": page.total_rows,
            }
            parts.append(json.dumps(head)[:-1] + ', "rows": [')
        for r in page.rows:
            row = {
                "rank": r["rank"],
                "twitter_id": str(r["twitter_id"]),
                "screen_name": r["screen_name"],
                "total": r["total"],
                "mean": r["mean"],
                "participation": r["participation"],
                "cascades": r["cascades"],
            }
            parts.append(("\n" if first else ",\n") + json.dumps(row))
            first = False
        yield "".join(parts)
    yield "\n]}\n"


# --- graphs: a small streamed model, written as GEXF or GraphML ---------------------------------------------------

_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _text(value) -> str:
    return _XML_ILLEGAL.sub("", str(value))


@dataclass
class _Graph:
    """What both writers need. ``nodes`` yields ``(id, label, {attr: value})``; ``edges`` yields
    ``(src_id, dst_id, weight or None)``; attrs are ``(name, type)`` with type double/int/string/boolean."""

    graph_attrs: list[tuple[str, str, object]]
    node_attrs: list[tuple[str, str]]
    nodes: Iterable[tuple[str, str, dict]]
    edges: Iterable[tuple[str, str, int | None]]
    weighted: bool = False
    extra: dict = field(default_factory=dict)
    directed: bool = True
    weight_type: str = "int"  # or "double" (a cosine)

    def weight_text(self, weight) -> str:
        return str(int(weight)) if self.weight_type == "int" else repr(float(weight))


def _value(kind: str, v) -> str:
    if kind == "double":
        return repr(float(v))
    if kind == "int":
        return str(int(v))
    if kind == "boolean":
        return "true" if v else "false"
    return _text(v)


def _chunks(lines: Iterable[str], size: int = XML_CHUNK) -> Iterator[str]:
    buf: list[str] = []
    for line in lines:
        buf.append(line)
        if len(buf) >= size:
            yield "".join(buf)
            buf = []
    if buf:
        yield "".join(buf)


_GEXF_TYPES = {"double": "double", "int": "integer", "string": "string", "boolean": "boolean"}


def _gexf(g: _Graph) -> Iterator[str]:
    description = "; ".join(f"{k}={_value(t, v)}" for k, t, v in g.graph_attrs if v is not None and v != "")
    head = [
        '<?xml version="1.0" encoding="UTF-8"?>\n',
        '<gexf xmlns="http://gexf.net/1.3" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"'
        ' xsi:schemaLocation="http://gexf.net/1.3 http://gexf.net/1.3/gexf.xsd" version="1.3">\n',
        f'  <meta lastmodifieddate="{dt.date.today().isoformat()}">\n',
        "    <creator>Spreadwatch</creator>\n",
        f"    <description>{escape(_text(description))}</description>\n",
        "  </meta>\n",
        f'  <graph defaultedgetype="{"directed" if g.directed else "undirected"}" mode="static">\n',
        '    <attributes class="node" mode="static">\n',
    ]
    for name, kind in g.node_attrs:
        head.append(f'      <attribute id={quoteattr(name)} title={quoteattr(name)} type="{_GEXF_TYPES[kind]}"/>\n')
    head.append("    </attributes>\n    <nodes>\n")
    yield "".join(head)
    kinds = dict(g.node_attrs)

    def node_lines():
        for nid, label, attrs in g.nodes:
            values = "".join(
                f"<attvalue for={quoteattr(k)} value={quoteattr(_value(kinds[k], v))}/>" for k, v in attrs.items()
            )
            yield (
                f"      <node id={quoteattr(_text(nid))} label={quoteattr(_text(label))}>"
                f"<attvalues>{values}</attvalues></node>\n"
            )

    def edge_lines():
        for i, (s, d, weight) in enumerate(g.edges):
            w = f' weight="{g.weight_text(weight)}"' if weight is not None else ""
            yield f'      <edge id="{i}" source={quoteattr(_text(s))} target={quoteattr(_text(d))}{w}/>\n'

    yield from _chunks(node_lines())
    yield "    </nodes>\n    <edges>\n"
    yield from _chunks(edge_lines())
    yield "    </edges>\n  </graph>\n</gexf>\n"


def _graphml(g: _Graph) -> Iterator[str]:
    head = [
        '<?xml version="1.0" encoding="UTF-8"?>\n',
        '<graphml xmlns="http://graphml.graphdrawing.org/xmlns"'
        ' xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"'
        ' xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns'
        ' http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">\n',
    ]
    for name, kind, _ in g.graph_attrs:
        head.append(f'  <key id="g_{name}" for="graph" attr.name={quoteattr(name)} attr.type="{kind}"/>\n')
    node_attrs = [("label", "string"), *g.node_attrs]
    for name, kind in node_attrs:
        head.append(f'  <key id="n_{name}" for="node" attr.name={quoteattr(name)} attr.type="{kind}"/>\n')
    if g.weighted:
        head.append(f'  <key id="e_weight" for="edge" attr.name="weight" attr.type="{g.weight_type}"/>\n')
    head.append(f'  <graph id="G" edgedefault="{"directed" if g.directed else "undirected"}">\n')
    for name, kind, v in g.graph_attrs:
        if v is not None:
            head.append(f'    <data key="g_{name}">{escape(_value(kind, v))}</data>\n')
    yield "".join(head)
    kinds = dict(node_attrs)

    def node_lines():
        for nid, label, attrs in g.nodes:
            values = "".join(
                f'<data key="n_{k}">{escape(_value(kinds[k], v))}</data>' for k, v in {"label": label, **attrs}.items()
            )
            yield f"    <node id={quoteattr(_text(nid))}>{values}</node>\n"

    def edge_lines():
        for s, d, weight in g.edges:
            w = f'<data key="e_weight">{g.weight_text(weight)}</data>' if weight is not None else ""
            yield f"    <edge source={quoteattr(_text(s))} target={quoteattr(_text(d))}>{w}</edge>\n"

    yield from _chunks(node_lines())
    yield from _chunks(edge_lines())
    yield "  </graph>\n</graphml>\n"


def _missing_nodes(
    edge_pks: set[int], seen: dict[int, int], attrs: Callable[[Account], dict]
) -> Iterator[tuple[str, str, dict]]:
    """Endpoints of edges that had no row of their own (should not happen: the graph and the influence rows are
    written together), written as nodes so that every edge has both ends."""
    missing = sorted(edge_pks - seen.keys())
    for i in range(0, len(missing), XML_CHUNK):
        for acc in Account.objects.filter(pk__in=missing[i : i + XML_CHUNK]).only("twitter_id", "screen_name"):
            seen[acc.pk] = acc.twitter_id
            yield str(acc.twitter_id), acc.screen_name or str(acc.twitter_id), attrs(acc)


# --- one cascade --------------------------------------------------------------------------------------------------

CASCADE_NODE_ATTRS = [("influence", "double"), ("followers", "double"), ("role", "string"), ("is_publisher", "boolean")]


def _cascade(tweet: Tweet) -> _Graph:
    """The cascade's participants read with a server-side iterator (tuples, not model instances: a cascade of a
    million retweets stays cheap), and its spreading edges from its one packed blob."""
    import numpy as np

    from compute.arrays import unique

    g = CascadeGraph.objects.filter(tweet=tweet).first()
    src, dst = g.edge_arrays() if g is not None else (np.zeros(0, np.int64), np.zeros(0, np.int64))
    publisher_pk = tweet.author_id
    seen: dict[int, int] = {}  # Account pk -> Twitter id
    # a cascade without follower counts used n_v = 1 for everyone: not a count to hand on as data
    counts_known = tweet.unit != "retweeters"

    def nodes():
        rows = (
            CascadeInfluence.objects.filter(workspace_id=tweet.workspace_id, tweet=tweet)
            .order_by("-influence", "account__twitter_id")
            .values_list("account_id", "account__twitter_id", "account__screen_name", "influence", "followers", "role")
        )
        for pk, tid, name, influence, followers, role in rows.iterator(chunk_size=XML_CHUNK):
            seen[pk] = tid
            attrs = {"influence": influence, "followers": followers, "role": role, "is_publisher": pk == publisher_pk}
            if not counts_known:
                del attrs["followers"]
            yield str(tid), name or str(tid), attrs
        yield from _missing_nodes(
            set(unique(np.concatenate([src, dst])).tolist()),
            seen,
            lambda acc: {"influence": 0.0, "followers": 0.0, "role": "unknown", "is_publisher": acc.pk == publisher_pk},
        )

    def edges():
        for s, d in zip(src.tolist(), dst.tolist(), strict=True):
            yield str(seen[s]), str(seen[d]), None

    author = tweet.author
    return _Graph(
        graph_attrs=[
            ("tweet", "string", str(tweet.tweet_id)),
            ("publisher", "string", str(author.twitter_id)),
            ("publisher_name", "string", author.screen_name),
            ("label", "string", tweet.label),
            ("unit", "string", tweet.unit),
            ("reach", "double", tweet.reach),
            ("created_at", "string", tweet.created_at.isoformat()),
            ("description", "string", EDGE_DIRECTION),
        ],
        node_attrs=CASCADE_NODE_ATTRS,
        nodes=nodes(),
        edges=edges(),
    )


def cascade_gexf(tweet: Tweet) -> Iterator[str]:
    """The spreading graph of one tweet as GEXF 1.3."""
    return _gexf(_cascade(tweet))


def cascade_graphml(tweet: Tweet) -> Iterator[str]:
    """The spreading graph of one tweet as GraphML."""
    return _graphml(_cascade(tweet))


# --- a publisher's amplification network --------------------------------------------------------------------------

NETWORK_NODE_ATTRS = [
    ("influence", "double"),
    ("cascades", "int"),
    *[(name, "int") for name in LABEL_ATTRS.values()],
    ("is_publisher", "boolean"),
]


def _window_q(window: selectors.Window) -> Q:
    """Tweets whose UTC day lies in the window (as half-open datetime ranges, so the index on time serves)."""
    q = Q()
    if window.start:
        q &= Q(created_at__gte=dt.datetime.combine(window.start, dt.time(), tzinfo=dt.UTC))
    if window.end:
        q &= Q(created_at__lt=dt.datetime.combine(window.end + dt.timedelta(days=1), dt.time(), tzinfo=dt.UTC))
    return q


def _network(ws: Workspace, publisher: Account, window: selectors.Window, max_cascades: int) -> _Graph:
    import numpy as np

    from compute.arrays import unique

    if max_cascades < 1:
        raise ValueError("max_cascades must be at least 1")
    tweets = Tweet.objects.filter(
        Q(workspace=ws, author=publisher, compute_status=Tweet.ComputeStatus.COMPUTED) & _window_q(window)
    )
    in_window = tweets.count()
    chosen = list(tweets.order_by("-created_at", "-tweet_id").values_list("pk", "unit")[:max_cascades])
    pks = [pk for pk, _ in chosen]
    units = {u for _, u in chosen}

    # edges: each cascade's distinct (src, dst) pairs, counted over the cascades (weight = cascades it occurs in)
    pairs = []
    for i in range(0, len(pks), 100):
        for cg in CascadeGraph.objects.filter(tweet_id__in=pks[i : i + 100]).only("tweet_id", "edges"):
            s, d = cg.edge_arrays()
            if len(s):
                pairs.append(np.unique(np.stack([s, d], axis=1), axis=0))
    if pairs:
        edges_arr, weights = np.unique(np.concatenate(pairs), axis=0, return_counts=True)
        order = np.lexsort((edges_arr[:, 1], edges_arr[:, 0], -weights))  # heaviest first
        edges_arr, weights = edges_arr[order], weights[order]
    else:
        edges_arr, weights = np.zeros((0, 2), np.int64), np.zeros(0, np.int64)
    seen: dict[int, int] = {}

    def zero(acc: Account) -> dict:
        return {
            "influence": 0.0,
            "cascades": 0,
            **dict.fromkeys(LABEL_ATTRS.values(), 0),
            "is_publisher": acc.pk == publisher.pk,
        }

    def nodes():
        per_label = {name: Count("pk", filter=Q(tweet__label=label)) for label, name in LABEL_ATTRS.items()}
        rows = (
            CascadeInfluence.objects.filter(workspace=ws, tweet_id__in=pks)
            .values("account_id", "account__twitter_id", "account__screen_name")
            .annotate(influence=Sum("influence"), cascades=Count("pk"), **per_label)
            .order_by("-influence", "account__twitter_id")
        )
        for r in rows.iterator(chunk_size=XML_CHUNK) if pks else ():
            pk, tid = r["account_id"], r["account__twitter_id"]
            seen[pk] = tid
            attrs = {
                "influence": r["influence"],
                "cascades": r["cascades"],
                **{name: r[name] for name in LABEL_ATTRS.values()},
                "is_publisher": pk == publisher.pk,
            }
            yield str(tid), r["account__screen_name"] or str(tid), attrs
        yield from _missing_nodes(set(unique(edges_arr).tolist()), seen, zero)

    def edges():
        for (s, d), w in zip(edges_arr.tolist(), weights.tolist(), strict=True):
            yield str(seen[s]), str(seen[d]), w

    if units == {"retweeters"}:
        unit = "retweeters"
    elif len(units) > 1:
        unit = "mixed"
    else:
        unit = "followers"
    return _Graph(
        graph_attrs=[
            ("publisher", "string", str(publisher.twitter_id)),
            ("publisher_name", "string", publisher.screen_name),
            ("workspace", "string", ws.slug),
            ("window_from", "string", window.start.isoformat() if window.start else None),
            ("window_to", "string", window.end.isoformat() if window.end else None),
            ("unit", "string", unit),
            ("cascades", "int", len(pks)),
            ("cascades_in_window", "int", in_window),
            ("max_cascades", "int", max_cascades),
            ("cascades_left_out", "int", in_window - len(pks)),
            (
                "description",
                "string",
                f"The amplification network of {publisher}: its {len(pks)} most recent computed tweets in the "
                "window; edge weight = the number of those cascades in which the edge occurs. " + EDGE_DIRECTION,
            ),
        ],
        node_attrs=NETWORK_NODE_ATTRS,
        nodes=nodes(),
        edges=edges(),
        weighted=True,
    )


def publisher_network_gexf(
    ws: Workspace, publisher: Account, *, window: selectors.Window = ALL_TIME, max_cascades: int = 2000
) -> Iterator[str]:
    """The publisher's amplification network over its ``max_cascades`` most recent computed tweets in the
    window, as GEXF 1.3."""
    return _gexf(_network(ws, publisher, window, max_cascades))


def publisher_network_graphml(
    ws: Workspace, publisher: Account, *, window: selectors.Window = ALL_TIME, max_cascades: int = 2000
) -> Iterator[str]:
    """The same network as GraphML."""
    return _graphml(_network(ws, publisher, window, max_cascades))


# --- network analytics: a run's per-account table, and a subgraph (component, conversations, neighbourhood) ------

NETWORK_COLUMNS = (
    "twitter_id",
    "screen_name",
    "in_degree",
    "out_degree",
    "component",
    "strong_component",
    "core",
    "clustering",
    "triangles",
    "betweenness",
    "conversation_degree",
    "conversation_component",
    "community",
)
#: node attributes written as integers (a community is a category: Gephi colours a partition by an integer attribute)
INTEGER_ATTRS = frozenset({"community", "cluster"})
NETWORK_EDGE_DIRECTION = {
    "follows": "Edge src -> dst: src follows dst (tweets flow from dst to src).",
    "interactions": "Edge src -> dst: src retweeted dst (weight: how many times), or passed a cascade's share to it.",
}


def network_accounts_csv(run) -> Iterator[str]:
    """Every account of a network run with its numbers as CSV, brokers first (betweenness descending); empty
    cells where a number does not apply (betweenness before the run finished, no conversation component)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(NETWORK_COLUMNS)
    yield buf.getvalue()
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    for n, row in enumerate(network_account_rows(run), 1):
        _pk, tid, name, *numbers = row
        w.writerow([int(tid), csv_text(name or ""), *("" if x is None else repr(x) for x in numbers)])
        if n % 5000 == 0:
            yield buf.getvalue()
            buf = io.StringIO()
            w = csv.writer(buf, lineterminator="\n")
    yield buf.getvalue()


def _fact_type(v) -> str:
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "double"
    return "string"


def _attr(name: str, v) -> int | float:
    """A node attribute's value as its type writes it."""
    return int(v) if name in INTEGER_ATTRS else float(v)


def _subgraph(sub, *, description: str) -> _Graph:
    """A network subgraph (``selectors.network.Subgraph``, nodes and edges as account pks) as the writers' model:
    nodes named by Twitter id, labelled by screen name, with the subgraph's numbers."""
    names = accounts_of(sub.ids)
    tid = {pk: names.get(pk, (pk, ""))[0] for pk in sub.ids.tolist()}
    attrs = list(sub.attrs)

    def nodes():
        for i, pk in enumerate(sub.ids.tolist()):
            t, name = names.get(pk, (pk, ""))
            yield str(t), name or str(t), {a: _attr(a, sub.attrs[a][i]) for a in attrs}

    def edges():
        weights = sub.weights.tolist() if sub.weights is not None else [None] * len(sub.src)
        for s, d, wt in zip(sub.src.tolist(), sub.dst.tolist(), weights, strict=True):
            yield str(tid[s]), str(tid[d]), wt

    facts = [
        (k, _fact_type(v), v if v is None or isinstance(v, (bool, int, float)) else str(v))
        for k, v in sub.facts.items()
    ]
    return _Graph(
        graph_attrs=[
            *facts,
            ("nodes_left_out", "int", sub.hidden_nodes),
            ("edges_left_out", "int", sub.hidden_edges),
            ("description", "string", description),
        ],
        node_attrs=[(a, "int" if a in INTEGER_ATTRS else "double") for a in attrs],
        nodes=nodes(),
        edges=edges(),
        weighted=sub.weights is not None,
    )


def network_subgraph(sub, *, fmt: str, description: str) -> Iterator[str]:
    """A component, a community, the conversation graph or a neighbourhood as GEXF 1.3 or GraphML."""
    g = _subgraph(sub, description=description + " " + NETWORK_EDGE_DIRECTION.get(sub.facts.get("graph"), ""))
    return _gexf(g) if fmt == "gexf" else _graphml(g)


def filename(ws: Workspace, *parts: object, window: selectors.Window | None = None, ext: str) -> str:
    """``<workspace>-<parts>[-<from>_<to>].<ext>``: only slug characters, digits and dashes."""
    bits = [ws.slug, *(str(p) for p in parts)]
    if window is not None and (window.start or window.end):
        lo = window.start.isoformat() if window.start else "start"
        hi = window.end.isoformat() if window.end else "end"
        bits.append(f"{lo}_{hi}")
    return re.sub(r"[^A-Za-z0-9_.-]", "_", "-".join(bits)) + "." + ext


__all__ = [
    "COMPARISON_COLUMNS",
    "CONTENT_TYPES",
    "GRAPH_FORMATS",
    "NETWORK_COLUMNS",
    "RANKING_COLUMNS",
    "TABLE_FORMATS",
    "cascade_gexf",
    "cascade_graphml",
    "comparison_csv",
    "csv_number",
    "csv_text",
    "filename",
    "network_accounts_csv",
    "network_subgraph",
    "publisher_network_gexf",
    "publisher_network_graphml",
    "ranking_csv",
    "ranking_json",
]
