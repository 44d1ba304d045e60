"""Every chart of the pages (issue 19, defect 9) in a real browser, at a desktop width (1440 px) and a phone's
(390 px): the rank chart's periods on a time axis (uneven gaps between months drawn in proportion), its legend
whole and clear of the plot and its axis labels at Top 20, the per-day chart with more than its two ends
labelled, and each chart downloaded as PNG and as SVG (a real PNG; an SVG that parses and holds the series'
paths and names). Screenshots: ``tests/browser/artifacts/charts-<page>-<width>.png``."""

from __future__ import annotations

import datetime as dt
import re
import xml.etree.ElementTree as ET

import pytest
from playwright.sync_api import expect

from tests.browser.pages import screenshot
from tests.webapp import THESIS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = [1440, 390]
SVG = "{http://www.w3.org/2000/svg}"
# b's tweets: two in March 2015, one in April, three in January 2016 (a 9-month gap), on six different days
DAYS = [
    dt.date(2015, 3, 2),
    dt.date(2015, 3, 16),
    dt.date(2015, 4, 6),
    dt.date(2016, 1, 11),
    dt.date(2016, 1, 13),
    dt.date(2016, 1, 20),
]
N_SPREADERS = 24


def _name(i: int) -> str:
    return f"spreader_with_a_long_name_{i:02d}"


@pytest.fixture
def months(ws_a, import_files, tmp_path):
    """Publisher b (102) and 24 spreaders (300…323, long screen names) over the six days of :data:`DAYS`;
    spreader 300 retweets every tweet."""
    tweets = ["tweet_id,retweeted_tweet_id,user_id,created_at,followers_count,screen_name"]
    follows = ["follower_id,followee_id"]
    for k, day in enumerate(DAYS):
        tid = 10_000 * (k + 1)
        tweets.append(f"{tid},,102,{day.isoformat()}T09:00:00Z,5000,b")
        who = sorted({0} | {(k * 5 + j) % N_SPREADERS for j in range(16)})
        for n, j in enumerate(who):
            uid = 300 + j
            tweets.append(f"{tid + n + 1},{tid},{uid},{day.isoformat()}T09:{n + 1:02d}:00Z,{10 + 7 * j},{_name(j)}")
    for j in range(N_SPREADERS):
        follows.append(f"{300 + j},102")
        if j:
            follows.append(f"{300 + j},{300 + j - 1}")
    (tmp_path / "tweets.csv").write_text("\n".join(tweets) + "\n")
    (tmp_path / "follows.csv").write_text("\n".join(follows) + "\n")
    import_files(ws_a, [tmp_path / "tweets.csv", tmp_path / "follows.csv"])
    return ws_a


def _overflow(page) -> int:
    return page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")


def _too_wide(page) -> list[str]:
    """The elements that end right of the viewport (what to fix when a page overflows)."""
    return page.evaluate(
        """() => [...document.querySelectorAll('body *')]
            .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
            .slice(0, 8).map(e => e.tagName + ' ' + Math.round(e.getBoundingClientRect().right))"""
    )


def _download(page, button, tmp_path) -> tuple[str, bytes]:
    with page.expect_download() as info:
        button.click()
    d = info.value
    path = tmp_path / d.suggested_filename
    d.save_as(path)
    return d.suggested_filename, path.read_bytes()


def _assert_png(data: bytes) -> None:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", data[:16]
    assert len(data) > 5_000  # a drawn chart, not an empty image
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert width >= 900 and height >= 400, (width, height)


def _svg(data: bytes) -> ET.Element:
    root = ET.fromstring(data)
    assert root.tag == f"{SVG}svg"
    return root


def _texts(root: ET.Element) -> list[str]:
    return ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]


def _downloads(page, figure, tmp_path, name: str) -> tuple[bytes, ET.Element]:
    """Both files of the chart in ``figure``: their names start with ``name``; returns the PNG and the SVG."""
    group = figure.get_by_role("group", name=re.compile("^Download"))
    png_name, png = _download(page, group.get_by_role("button", name=re.compile("as PNG$")), tmp_path)
    svg_name, svg = _download(page, group.get_by_role("button", name=re.compile("as SVG$")), tmp_path)
    assert png_name == f"{name}.png" and svg_name == f"{name}.svg"
    _assert_png(png)
    return png, _svg(svg)


def _boxes_apart(a: dict, b: dict) -> bool:
    return (
        a["x"] + a["width"] <= b["x"]
        or b["x"] + b["width"] <= a["x"]
        or a["y"] + a["height"] <= b["y"]
        or (b["y"] + b["height"] <= a["y"])
    )


@pytest.mark.parametrize("width", WIDTHS)
def test_the_rank_chart_has_a_time_axis_a_whole_legend_and_downloads(page, login, months, width, tmp_path):
    page.set_viewport_size({"width": width, "height": 900})
    login()
    page.goto(f"/w/{months.slug}/publishers/102/?bucket=month&top=20")
    page.wait_for_function("() => document.getElementById('rank-chart') && document.getElementById('rank-chart').chart")
    chart = "document.getElementById('rank-chart').chart"
    assert page.evaluate(f"{chart}.scales.x.type") == "time"
    # the months with influence: March and April 2015, January 2016, placed in proportion to the time between
    at = f"d => {chart}.scales.x.getPixelForValue(new Date(d + 'T00:00:00').getTime())"
    xs = page.evaluate(f"['2015-03-01', '2015-04-01', '2016-01-01'].map({at})")
    drawn = page.evaluate(f"{chart}.getDatasetMeta(0).data.map(p => p.x)")
    assert drawn == pytest.approx(xs, abs=0.5)  # the points sit on their months
    ratio = (xs[2] - xs[1]) / (xs[1] - xs[0])
    assert ratio == pytest.approx(275 / 31, rel=0.02), xs  # April → January is nine times March → April
    labels = page.evaluate(f"{chart}.scales.x.getLabelItems().map(l => l.label)")
    assert len(labels) > 2 and any("2015" in str(s) for s in labels), labels
    screenshot(page, f"charts-rank-month-{width}")

    figure = page.locator("section.rank-history figure")
    # in the dark theme too, the files are dark ink on white
    page.emulate_media(color_scheme="dark")
    page.reload()
    page.wait_for_function("() => document.getElementById('rank-chart') && document.getElementById('rank-chart').chart")
    _png, svg = _downloads(page, figure, tmp_path, "newsroom-rank-over-time-spreaders-of-b-top-20-per-month")
    assert {t.get("fill") for t in svg.iter(f"{SVG}text")} == {"#373c44"}
    texts = _texts(svg)
    # the legend is drawn into the file, every entry
    assert sum("spreader_with_a_long_name_" in t for t in texts) == 20, texts
    assert any("rank over time, top 20" in t for t in texts)  # the title says what and whose
    assert any("Rank (1 = top)" in t for t in texts)
    assert len(list(svg.iter(f"{SVG}path"))) >= 20  # the series' lines

    # Top 20 per week: the legend is a list under the plot, every entry on screen, none over the axis labels
    page.goto(f"/w/{months.slug}/publishers/102/?bucket=week&top=20")
    page.wait_for_function("() => document.getElementById('rank-chart') && document.getElementById('rank-chart').chart")
    assert page.evaluate(f"{chart}.scales.x.type") == "time"
    legend = figure.locator("ul.chart-legend")
    items = legend.get_by_role("button")
    expect(items).to_have_count(20)
    canvas_box = page.locator("#rank-chart").bounding_box()
    figure_box = figure.bounding_box()
    for item in items.all():
        box = item.bounding_box()
        assert box["width"] > 0 and box["x"] >= 0 and box["x"] + box["width"] <= width, box
        assert figure_box["x"] - 1 <= box["x"] and box["x"] + box["width"] <= figure_box["x"] + figure_box["width"] + 1
        assert _boxes_apart(box, canvas_box), (box, canvas_box)  # nothing over the plot or its axis labels
    # the chart's own legend is off, so nothing is drawn over the last date
    assert page.evaluate(f"{chart}.options.plugins.legend.display") is False
    x_labels = page.evaluate(f"{chart}.scales.x.getLabelItems().length")
    assert x_labels > 2
    # a legend entry hides and shows its line
    items.first.click()
    expect(items.first).to_have_attribute("aria-pressed", "false")
    assert page.evaluate(f"{chart}.isDatasetVisible(0)") is False
    assert _overflow(page) <= 0, _too_wide(page)
    screenshot(page, f"charts-rank-week-{width}")


@pytest.mark.parametrize("width", WIDTHS)
def test_the_per_day_chart_labels_its_days_and_downloads(page, login, months, width, tmp_path):
    page.set_viewport_size({"width": width, "height": 900})
    login()
    page.goto(f"/w/{months.slug}/accounts/300/")
    page.wait_for_function("() => document.getElementById('day-chart') && document.getElementById('day-chart').chart")
    chart = "document.getElementById('day-chart').chart"
    assert page.evaluate(f"{chart}.scales.x.type") == "time"
    assert page.evaluate(f"{chart}.data.datasets[0].data.length") == len(DAYS)
    labels = page.evaluate(f"{chart}.scales.x.getLabelItems().map(l => l.label)")
    assert len(labels) > 2, labels
    # the bars on a true time axis: the 9-month gap is wider than the 2-week one
    xs = page.evaluate(f"{chart}.getDatasetMeta(0).data.map(b => b.x)")
    assert (xs[3] - xs[2]) > 10 * (xs[1] - xs[0]) / 2
    assert _overflow(page) <= 0, _too_wide(page)
    screenshot(page, f"charts-account-{width}")
    figure = page.locator("figure:has(#day-chart)")
    _png, svg = _downloads(page, figure, tmp_path, f"newsroom-influence-per-day-{_name(0)}")
    assert len(list(svg.iter(f"{SVG}path"))) + len(list(svg.iter(f"{SVG}rect"))) >= len(DAYS)
    assert any("Influence per day" in t or "influence per day" in t for t in _texts(svg))


def test_the_cascade_timeline_downloads(page, login, months, tmp_path):
    page.set_viewport_size({"width": 1440, "height": 900})
    login()
    page.goto(f"/w/{months.slug}/tweets/10000/explore/")
    figure = page.locator("figure:has(#timeline)")
    expect(figure.locator("path")).to_have_count(1)
    png = tmp_path / "x"
    name, data = _download(page, figure.get_by_role("button", name=re.compile("as PNG$")), tmp_path)
    assert name == "newsroom-cascade-10000-by-b-timeline.png"
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 2_000
    name, data = _download(page, figure.get_by_role("button", name=re.compile("as SVG$")), tmp_path)
    root = _svg(data)
    paths = list(root.iter(f"{SVG}path"))
    assert len(paths) == 1 and "stroke:" in paths[0].get("style", "")  # the page's CSS travels with the file
    assert any("retweets" in t for t in _texts(root))
    del png


def test_the_network_and_planner_charts_download(page, login, ws_a, import_files, tmp_path):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    page.set_viewport_size({"width": 1440, "height": 900})
    page.set_default_timeout(180_000)  # the eager Celery of the tests computes each run inside its request
    login()
    page.goto(f"/w/{ws_a.slug}/network/")
    form = page.get_by_role("form", name="Start a network run")
    form.get_by_label("Samples").fill("0")
    form.get_by_label("Backend").select_option("cpu")
    form.get_by_role("button", name="Start run").click()
    page.wait_for_function("() => window.spreadwatchNetworkCharts && window.spreadwatchNetworkCharts.every(c => c)")
    run = re.search(r"/network/runs/(\d+)/", page.url)
    run_id = (
        run.group(1)
        if run
        else page.evaluate(
            "() => document.querySelector('figure[data-export-name]').dataset.exportName.match(/run-(\\d+)/)[1]"
        )
    )
    figure = page.locator("figure:has(#degrees-chart)")
    _png, svg = _downloads(page, figure, tmp_path, f"newsroom-network-workspace-follows-run-{run_id}-degrees")
    assert any("in-degree" in t for t in _texts(svg))

    page.goto(f"/w/{ws_a.slug}/publishers/102/counter-campaign/")
    form = page.get_by_role("form", name="Plan a counter-campaign")
    form.get_by_label(re.compile(r"^Accounts \(K\)")).fill("3")
    form.get_by_label(re.compile(r"^Evaluation cascades")).fill("500")
    form.get_by_role("button", name="Plan").click()
    page.wait_for_function("() => window.Chart && Chart.getChart('im-curve')")
    figure = page.locator("figure:has(#im-curve)")
    name = figure.get_attribute("data-export-name")
    assert re.fullmatch(r"newsroom-counter-campaign-b-run-\d+-reach-against-k", name)
    _png, svg = _downloads(page, figure, tmp_path, name)
    assert any("estimate, first K accounts" in t for t in _texts(svg))
