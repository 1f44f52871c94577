"""Doctor's verdict on the environment's files over hand-built integrity reports."""

from __future__ import annotations

from pathlib import Path

from envguard.doctor.verdicts.environment import health_findings
from envguard.prefix.integrity import FileProblem, IntegrityReport


def test_health() -> None:
    problems = (
        FileProblem("zlib-1.3.1-h4ab18f5_1", "lib/libz.so", "missing", "not in the prefix"),
        FileProblem("numpy-1.26.4-py311_0", "lib/x.py", "altered", "sha256 …"),
    )
    bad = health_findings(IntegrityReport(str(Path("/env")), 3, 40, 0, problems), "")
    assert bad[0].status == "FAIL" and "1 missing and 1 altered" in bad[0].evidence
    assert "--force-reinstall" in bad[0].fix and "numpy zlib" in bad[0].fix
    assert health_findings(IntegrityReport("/env", 3, 40, 0, ()), "")[0].status == "PASS"
    assert health_findings(None, "not conda")[0].status == "INFO"


def test_unreadable_records_fail_with_the_fix() -> None:
    found = health_findings(None, "conda-meta/zlib-1.3.1-h0_0.json: not JSON", unreadable=True)
    assert found[0].status == "FAIL" and "zlib-1.3.1-h0_0.json" in found[0].evidence
    assert "--force-reinstall" in found[0].fix
