"""The small things of issue 19's defect 13: the site's own 404 page, the admin's plurals, and the address
``make demo`` prints."""

from __future__ import annotations

import re

import pytest
from django.apps import apps

from monitor.management.commands.demo_setup import serve_url


@pytest.mark.parametrize("url", ["/w/no-such-workspace/", "/w/no-such-workspace/ranking/", "/no-such-page/"])
def test_it_answers_an_unknown_page_with_the_sites_404_page(client, alice, url):
    client.force_login(alice)
    r = client.get(url)
    assert r.status_code == 404
    html = r.content.decode()
    assert "<h1>Page not found</h1>" in html
    assert 'class="site-header' in html  # the site's header and navigation, not Django's bare "Not Found"
    assert 'href="/"' in html  # back to the user's workspaces


def test_the_404_page_names_nothing_of_the_url_or_of_another_workspace(client, bob, ws_a):
    # the security crawl reads every 404 for workspace A's names: the page must not echo the path
    client.force_login(bob)
    html = client.get(f"/w/{ws_a.slug}/").content.decode()
    assert ws_a.slug not in html and ws_a.name not in html


def test_the_anonymous_404_page_renders(client, db):
    r = client.get("/no-such-page/")
    assert r.status_code == 404 and "<h1>Page not found</h1>" in r.content.decode()


_NAIVE_PLURAL = re.compile(r"([^aeiou]ys|chs|shs|xs|sss?)$")


def test_every_model_has_a_proper_plural_in_the_admin():
    wrong = {
        m._meta.label: str(m._meta.verbose_name_plural)
        for m in apps.get_models()
        if m._meta.app_label == "monitor" or m.__module__.startswith("monitor.")
        if _NAIVE_PLURAL.search(str(m._meta.verbose_name_plural))
    }
    assert not wrong, wrong


def test_the_admin_lists_webhook_deliveries_and_compute_batches(admin_client):
    html = admin_client.get("/admin/").content.decode()
    assert "Webhook deliveries" in html and "Compute batches" in html
    assert "deliverys" not in html and "batchs" not in html


@pytest.mark.parametrize(
    "host, url",
    [
        ("127.0.0.1:8000", "http://127.0.0.1:8000/"),
        ("0.0.0.0:9000", "http://0.0.0.0:9000/"),
        ("8080", "http://127.0.0.1:8080/"),
        ("localhost:8001", "http://localhost:8001/"),
        ("[::1]:8002", "http://[::1]:8002/"),
        ("", "http://127.0.0.1:8000/"),
    ],
)
def test_the_demo_prints_the_address_it_serves(host, url):
    assert serve_url(host) == url


def test_make_demo_passes_its_host_to_the_setup():
    from pathlib import Path

    makefile = (Path(__file__).resolve().parents[2] / "Makefile").read_text()
    demo = makefile.split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    assert "demo_setup --host $(HOST)" in demo and "demo_serve $(HOST)" in demo  # demo_serve: runserver + login
