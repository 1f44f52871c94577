"""A venv's export keeps the package index the user configured for pip (the venv's own pip.conf, the user's,
PIP_INDEX_URL / PIP_EXTRA_INDEX_URL), credentials stripped; `check -f` of the export stays clean."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

from tests.helpers import envguard, make_venv


def test_venv_export_keeps_configured_index_urls_without_credentials(
    tmp_path: Path,
    channels: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    wheels = channels["wheels"]
    venv = make_venv(tmp_path / "proj" / ".venv", sys.executable, "--find-links", str(wheels), "other-pkg")
    # the venv's own (site) config sets the index; the user's config adds one extra index, which the
    # environment variable overrides (pip's precedence: global < user < site < environment)
    (venv / "pip.conf").write_text("[global]\nindex-url = https://alice:s3cret@pypi.example.com/simple\n")
    user = Path.home() / ".config" / "pip"
    user.mkdir(parents=True)
    (user / "pip.conf").write_text("[install]\nextra-index-url = https://user-only.example.net/simple\n")
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", "https://tok3n@extra.example.org/simple https://b.example/s")
    out = tmp_path / "environment.yml"
    assert envguard("export", str(venv), "-o", str(out)) == 0
    text = out.read_text()
    assert "s3cret" not in text and "alice" not in text and "tok3n" not in text
    pip = next(d for d in yaml.safe_load(text)["dependencies"] if isinstance(d, dict))["pip"]
    assert pip == [
        "--index-url https://pypi.example.com/simple",
        "--extra-index-url https://extra.example.org/simple",
        "--extra-index-url https://b.example/s",
        "other-pkg==0.3.0",
    ]
    capsys.readouterr()
    assert envguard("check", str(venv), "-f", str(out)) == 0, capsys.readouterr().out
    # nothing configured: no index lines (pip's default, PyPI, goes unsaid)
    (venv / "pip.conf").unlink()
    (user / "pip.conf").unlink()
    monkeypatch.delenv("PIP_EXTRA_INDEX_URL")
    assert envguard("export", str(venv), "-o", str(out)) == 0
    pip = next(d for d in yaml.safe_load(out.read_text())["dependencies"] if isinstance(d, dict))["pip"]
    assert pip == ["other-pkg==0.3.0"]
