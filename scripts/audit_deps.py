#!/usr/bin/env python3
"""Dependency audit: pip-audit over the installed environment, with a verdict that says what was checked.

Usage:
    python scripts/audit_deps.py [--strict] [--json FILE]

pip-audit asks a vulnerability service (PyPI's per-release JSON, https://pypi.org/pypi/NAME/VERSION/json)
about every installed distribution. This script runs it, then:

* exits 1 when any installed package has a known vulnerability (the advisories are printed with their fix
  versions): that fails `make test`, so CI fails;
* exits 0 when every package was audited and none is vulnerable;
* when packages could not be audited (the service is unreachable or answers 404, as on a machine whose network
  only reaches PyPI's simple index), it prints "AUDIT INCOMPLETE" with the count and the reason, and exits 0,
  or 2 with --strict (or SPREADWATCH_AUDIT_STRICT=1). An incomplete audit is never reported as clean.

The editable project itself (spreadwatch) is skipped: it is not on PyPI.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path


def run_pip_audit(out: Path) -> int:
    cmd = [
        sys.executable, "-m", "pip_audit", "--skip-editable", "--progress-spinner", "off",
        "--format", "json", "--output", str(out), "--timeout", "20",
    ]  # fmt: skip
    return subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True).returncode


def verdict(report: dict) -> tuple[int, list[str]]:
    """Return (status, lines): 1 vulnerable, 2 incomplete, 0 clean."""
    deps = report.get("dependencies", [])
    vulnerable = [d for d in deps if d.get("vulns")]
    skipped = [d for d in deps if "skip_reason" in d and d.get("name") != "spreadwatch"]
    audited = len(deps) - len(skipped) - sum(1 for d in deps if d.get("name") == "spreadwatch")
    lines = [f"audited {audited} of {audited + len(skipped)} installed distributions"]
    for d in vulnerable:
        for v in d["vulns"]:
            fixes = ", ".join(v.get("fix_versions") or []) or "no fix released"
            lines.append(f"VULNERABLE {d['name']} {d['version']}: {v['id']} (fixed in {fixes})")
    if vulnerable:
        return 1, lines
    if skipped:
        reasons = Counter(d["skip_reason"].split(":")[0] for d in skipped)
        lines.append(
            f"AUDIT INCOMPLETE: {len(skipped)} distributions could not be audited "
            f"({'; '.join(f'{n}x {r}' for r, n in reasons.items())}). "
            "The vulnerability service is not reachable from this machine; no result is claimed for them."
        )
        lines.append("not audited: " + ", ".join(d["name"] for d in skipped))
        return 2, lines
    lines.append("no known vulnerabilities")
    return 0, lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--strict", action="store_true", help="exit 2 when the audit is incomplete")
    p.add_argument("--json", type=Path, help="also keep pip-audit's JSON report here")
    args = p.parse_args(argv)
    strict = args.strict or os.environ.get("SPREADWATCH_AUDIT_STRICT") == "1"
    with tempfile.TemporaryDirectory() as tmp:
        out = args.json or Path(tmp) / "audit.json"
        rc = run_pip_audit(out)
        if not out.exists():
            print(f"audit_deps: pip-audit produced no report (exit {rc}); is pip-audit installed?", file=sys.stderr)
            return 2
        report = json.loads(out.read_text())
    status, lines = verdict(report)
    for line in lines:
        print(f"audit_deps: {line}")
    if status == 2 and not strict:
        return 0
    return status


if __name__ == "__main__":
    sys.exit(main())
