"""The scan worker: runs cisco-ai-skill-scanner's offline analyzers on one skill folder at a time.

Started by `scan.py` as a separate process, with the interpreter that has the scanner installed
(the bank's own, when `skillbank[scan]` is installed; or another venv's, named by
`SKILLBANK_SCANNER_PYTHON`, since the scanner pins dependencies a bank's venv may not want).
It is run by file path, so it imports nothing from skillbank: the standard library and
`skill_scanner` only.

Why a process and not a thread: a scan that crashes, leaks or hangs must never take the bank
with it; the parent kills the worker after a timeout and starts a new one.

Protocol: one JSON object per line on stdin (`{"path": "<skill folder>"}`), one per line on
stdout (`{"ok": true, "findings": [...], "seconds": s}` or `{"ok": false, "error": "..."}`).
The first line written is `{"ready": true, "version": "<scanner version>"}`.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from typing import Any

SEVERITIES = {"CRITICAL": "critical", "HIGH": "high", "MEDIUM": "medium", "LOW": "low",
              "INFO": "info", "SAFE": "info"}


def _plain(value: Any) -> str:
    text = getattr(value, "value", value)
    return str(text) if text is not None else ""


def _finding(f: Any) -> dict[str, Any]:
    severity = _plain(getattr(f, "severity", "")).upper()
    line = getattr(f, "line_number", None)
    return {
        "severity": SEVERITIES.get(severity, "info"),
        "rule": str(getattr(f, "rule_id", "") or "")[:200],
        "title": str(getattr(f, "title", "") or "")[:300],
        "category": _plain(getattr(f, "category", "")).lower()[:100],
        "file": (str(getattr(f, "file_path", "") or "") or None),
        "line": int(line) if isinstance(line, int) else None,
        "snippet": str(getattr(f, "snippet", "") or "")[:300],
    }


def main() -> int:
    out = sys.stdout
    sys.stdout = sys.stderr  # whatever the scanner prints must not corrupt the protocol
    logging.disable(logging.WARNING)
    os.environ.setdefault("SKILL_SCANNER_DISABLE_TELEMETRY", "1")
    try:
        import skill_scanner
        from skill_scanner.core.analyzer_factory import build_analyzers
        from skill_scanner.core.scan_policy import ScanPolicy
        from skill_scanner.core.scanner import SkillScanner

        policy = ScanPolicy.default()
        # Offline analyzers only: static rules (YAML/YARA-X), bytecode, pipeline, correlation
        # and the behavioral (AST/dataflow) one. No LLM judge, no VirusTotal, no network.
        scanner = SkillScanner(analyzers=build_analyzers(policy, use_behavioral=True),
                               policy=policy)
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which marks skills failed
        out.write(json.dumps({"ready": False, "error": f"{type(exc).__name__}: {exc}"}) + "\n")
        out.flush()
        return 2
    out.write(json.dumps({"ready": True, "version": getattr(skill_scanner, "__version__", "")})
              + "\n")
    out.flush()
    for raw in sys.stdin:
        started = time.perf_counter()
        try:
            request = json.loads(raw)
            result = scanner.scan_skill(request["path"])
            reply = {"ok": True, "findings": [_finding(f) for f in result.findings]}
        except Exception as exc:  # noqa: BLE001 - one skill's failure is that skill's result
            reply = {"ok": False, "error": f"{type(exc).__name__}: {str(exc)[:500]}"}
        reply["seconds"] = round(time.perf_counter() - started, 4)
        out.write(json.dumps(reply) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
