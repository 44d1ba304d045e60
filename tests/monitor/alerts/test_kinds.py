"""The alert rule kinds are listed once (``monitor.alerts.kinds``): the model, the services, the API serializer,
the form and the evaluators derive from it, and no other module keeps its own list."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from monitor.alerts import kinds, rules, services
from monitor.alerts.models import AlertRule
from monitor.api.serializers import AlertRuleSerializer

ROOT = Path(__file__).resolve().parents[3]


def test_it_derives_the_models_choices_and_parameter_help_from_the_registry():
    assert AlertRule.Kind.choices == [(k.value, k.label) for k in kinds.KINDS]
    assert [m.name for m in AlertRule.Kind] == [k.constant for k in kinds.KINDS]
    for p in kinds.PARAMS:
        assert AlertRule._meta.get_field(p.name).help_text == p.field_help


def test_it_gives_every_kind_an_evaluator_and_every_parameter_a_field():
    assert list(rules.EVALUATORS) == [k.value for k in kinds.KINDS]
    for k in kinds.KINDS:
        assert rules.EVALUATORS[k.value] is getattr(rules, k.value)
        assert list(inspect.signature(rules.EVALUATORS[k.value]).parameters) == ["rule"]
        assert set(k.params) <= set(kinds.PARAM_NAMES), k.value
    for name in kinds.PARAM_NAMES:
        AlertRule._meta.get_field(name)  # raises for a parameter without a model field
        assert kinds.kinds_reading(name), f"{name}: no kind reads it"


def test_it_lets_the_service_the_serializer_and_the_form_take_exactly_the_registrys_parameters(db):
    from frontend.forms_alerts import AlertRuleForm

    params = set(kinds.PARAM_NAMES)
    assert params <= set(services.RULE_EDITABLE)
    assert params <= set(AlertRuleSerializer.Meta.fields)
    form = AlertRuleForm(workspace=None)
    assert [f.name for f, _, _ in form.param_rows()] == list(kinds.PARAM_NAMES)
    assert dict(form.fields["kind"].choices) == {k.value: k.label for k in kinds.KINDS}
    for field, used_by, _labels in form.param_rows():
        assert used_by.split() == [k.value for k in kinds.kinds_reading(field.name)]
        assert field.help_text == kinds.PARAMS_BY_NAME[field.name].help
    # nothing else named a parameter: the model's other fields are not parameters (``claim`` is the claim kinds'
    # scope, as ``publisher`` is the others')
    others = {"name", "kind", "claim", "inbox", "email", "webhook_url", "max_alerts_per_day"}
    assert set(services.RULE_EDITABLE) - params == others


def test_no_other_module_spells_out_a_kind():
    """A list of kinds kept anywhere else (a dict keyed by kind, a choices tuple) names them as string literals
    or as ``Kind.<CONSTANT>``: only the registry, the evaluators (``def top_k``), migrations and tests may."""
    values = [k.value for k in kinds.KINDS]
    literal = re.compile("[\"']({})[\"']".format("|".join(values)))
    constant = re.compile(r"Kind\.({})\b".format("|".join(k.constant for k in kinds.KINDS)))
    offenders = []
    for folder in ("monitor", "frontend"):
        for path in (ROOT / folder).rglob("*.py"):
            rel = path.relative_to(ROOT).as_posix()
            if "/migrations/" in rel or rel == "monitor/alerts/kinds.py":
                continue
            text = path.read_text()
            offenders += [f"{rel}: {m.group(0)}" for m in literal.finditer(text)]
            offenders += [f"{rel}: {m.group(0)}" for m in constant.finditer(text)]
    for path in (ROOT / "frontend").rglob("*.html"):
        text = path.read_text()
        offenders += [f"{path.relative_to(ROOT)}: {m.group(0)}" for m in literal.finditer(text)]
    assert offenders == []
