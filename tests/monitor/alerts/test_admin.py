"""The alerts' admin pages render, with raw-id fields for accounts and tweets and the secret masked."""

from __future__ import annotations

import pytest
from django.urls import reverse

from monitor.alerts import services
from monitor.alerts.models import Alert, AlertRule, WebhookDelivery
from tests.webapp import THESIS


@pytest.fixture
def alerted(ws_a, alice, import_files):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    rule = services.rule_create(
        workspace=ws_a, owner=alice, name="big cascades", kind=AlertRule.Kind.CASCADE_REACH, reach=1,
        webhook_url="http://127.0.0.1:9/hook",
    )  # fmt: skip
    services.evaluate_workspace(workspace_id=ws_a.pk)  # the webhook is queued on commit: never sent here
    return rule


@pytest.mark.parametrize("model", [AlertRule, Alert, WebhookDelivery])
def test_it_renders_the_admin_pages(client, admin_user, alerted, model):
    client.force_login(admin_user)
    name = model._meta.model_name
    obj = model.objects.first()
    assert client.get(reverse(f"admin:alerts_{name}_changelist")).status_code == 200
    assert client.get(reverse(f"admin:alerts_{name}_changelist"), {"q": "big"}).status_code == 200
    page = client.get(reverse(f"admin:alerts_{name}_change", args=[obj.pk]))
    assert page.status_code == 200
    assert alerted.webhook_secret not in page.content.decode()
    assert "<select" not in page.content.decode().split('name="account"')[-1][:200]
