"""The dependency audit's verdict: a vulnerable package fails, an incomplete audit is never called clean."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "audit_deps", Path(__file__).resolve().parents[2] / "scripts" / "audit_deps.py"
)
audit_deps = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(audit_deps)

CLEAN = {"name": "django", "version": "5.2.19", "vulns": []}
PROJECT = {"name": "spreadwatch", "skip_reason": "distribution marked as editable"}


def test_a_known_vulnerability_fails_the_audit_and_names_the_fix():
    vuln = {"id": "PYSEC-2099-1", "fix_versions": ["5.2.20"], "aliases": [], "description": "x"}
    status, lines = audit_deps.verdict({"dependencies": [{**CLEAN, "vulns": [vuln]}, PROJECT]})
    assert status == 1
    assert "VULNERABLE django 5.2.19: PYSEC-2099-1 (fixed in 5.2.20)" in lines


def test_packages_that_could_not_be_audited_make_it_incomplete_not_clean():
    skipped = {"name": "celery", "skip_reason": "Dependency not found on PyPI and could not be audited: celery"}
    status, lines = audit_deps.verdict({"dependencies": [CLEAN, skipped, PROJECT]})
    assert status == 2
    assert lines[0] == "audited 1 of 2 installed distributions"
    assert any(line.startswith("AUDIT INCOMPLETE: 1 distributions") for line in lines)
    assert "no known vulnerabilities" not in lines


def test_every_package_audited_and_none_vulnerable_is_clean():
    status, lines = audit_deps.verdict({"dependencies": [CLEAN, PROJECT]})
    assert status == 0
    assert lines == ["audited 1 of 1 installed distributions", "no known vulnerabilities"]


def test_strict_mode_turns_an_incomplete_audit_into_a_failure(monkeypatch, tmp_path):
    skipped = {"name": "celery", "skip_reason": "Dependency not found on PyPI and could not be audited: celery"}

    def fake_run(out):
        import json

        out.write_text(json.dumps({"dependencies": [CLEAN, skipped]}))
        return 0

    monkeypatch.setattr(audit_deps, "run_pip_audit", fake_run)
    assert audit_deps.main(["--json", str(tmp_path / "a.json")]) == 0
    assert audit_deps.main(["--json", str(tmp_path / "b.json"), "--strict"]) == 2
