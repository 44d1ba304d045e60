"""The limits a workspace's runs are held to: its own where an admin set them, the deployment's otherwise."""

import pytest
from django.test import override_settings

from monitor.limits import MB, workspace_limits
from monitor.models import Workspace

pytestmark = pytest.mark.django_db


@override_settings(
    SPREADWATCH_BUDGET_RUN_SECONDS=600, SPREADWATCH_BUDGET_RUN_MEMORY_MB=512, SPREADWATCH_MAX_RUNS_IN_FLIGHT=3
)
def test_limits_default_to_the_deployment_settings():
    ws = Workspace.objects.create(name="A", slug="a")
    limits = workspace_limits(ws)
    assert (limits.run_seconds, limits.run_memory_bytes, limits.runs_in_flight) == (600, 512 * MB, 3)
    assert limits.run_memory_mb == 512


@override_settings(SPREADWATCH_BUDGET_RUN_SECONDS=600, SPREADWATCH_MAX_RUNS_IN_FLIGHT=3)
def test_a_workspace_own_limits_win_over_the_defaults():
    ws = Workspace.objects.create(
        name="B", slug="b", budget_run_seconds=60, budget_run_memory_mb=100, max_runs_in_flight=1
    )
    limits = workspace_limits(ws)
    assert (limits.run_seconds, limits.run_memory_bytes, limits.runs_in_flight) == (60, 100 * MB, 1)
