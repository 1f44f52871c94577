"""check's views (pure): grouped lines ending in the verdict, Markdown for a PR, the shared JSON layout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envguard.check.render import as_json, human, markdown
from envguard.check.report import CheckReport, check_environment
from envguard.diff.changes import Difference
from envguard.model import Environment, Package
from envguard.output import dumps
from tests.helpers import envguard

REPORT = CheckReport(
    "conda-lock.yml",
    "/envs/x",
    (
        Difference("conda", "only-a", "numpy", "1.26.4", text="numpy 1.26.4: in the lock, not installed"),
        Difference(
            "virtual",
            "only-a",
            "__cuda",
            "12.4",
            text="the lock was made for __cuda 12.4; this machine has none",
        ),
    ),
    ("1 file(s) rewritten at install time could not be verified",),
)


def test_human_groups_by_category_and_ends_with_the_verdict() -> None:
    lines = human(REPORT).splitlines()
    assert lines[0] == "Conda packages" and lines[1].startswith("  [drift] numpy")
    assert "Notes" in lines and lines[-1] == "DRIFT: 1 difference(s) between /envs/x and conda-lock.yml"
    fixed = CheckReport(REPORT.target, REPORT.live, REPORT.findings, fixes=("conda install -p /envs/x x",))
    assert human(fixed).splitlines()[-2:] == ["How to fix:", "  conda install -p /envs/x x"]
    assert "```bash\nconda install -p /envs/x x\n```" in markdown(fixed)
    clean = CheckReport("conda-lock.yml", "/envs/x")
    assert (
        human(clean, cached=True)
        == "OK: /envs/x matches conda-lock.yml (unchanged since the last full check)\n"
    )


def test_markdown_escapes_and_marks_drift() -> None:
    text = markdown(REPORT)
    assert text.startswith("### ❌ envguard check") and "- ⚠️ numpy 1.26.4" in text and "\\_\\_cuda" in text


def test_json_has_the_shared_layout_and_schema_version() -> None:
    text = as_json(REPORT)
    data = json.loads(text)
    assert text == dumps(data) and next(iter(data)) == "schema_version" and data["clean"] is False
    virtual = data["findings"]["virtual"][0]
    assert (virtual["severity"], virtual["message"]) == (
        "note",
        REPORT.findings[1].message(),
    )  # kept a release
    assert set(virtual) >= {"category", "name", "field", "expected", "actual", "kind", "message"}


def test_a_long_category_is_summarised_in_one_line_unless_all() -> None:
    """A venv checked against a conda lock: 112 pip packages the lock lacks read as one line, not 112."""
    extra = tuple(
        Difference(
            "pip", "only-b", f"pkg{i:03d}", b="1.0", text=f"pkg{i:03d} (pip) 1.0: installed, not in the lock"
        )
        for i in range(112)
    )
    report = CheckReport("conda-lock.yml", "/envs/venv", extra)
    lines = human(report).splitlines()
    assert len(lines) == 1 + 10 + 1 + 1  # title, first 10, the summary, the verdict
    assert lines[11] == (
        "  ... 112 pip packages (112 installed, not in the target); 10 shown, --all for the rest"
    )
    assert len(human(report, show_all=True).splitlines()) == 1 + 112 + 1


def test_check_json_is_laid_out_like_every_other_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env_yml = tmp_path / "environment.yml"
    env_yml.write_text("name: x\nchannels: [conda-forge]\ndependencies: [python=3.11]\n")
    lock = tmp_path / "other.yml"
    lock.write_text("name: y\nchannels: [conda-forge]\ndependencies: [python=3.12]\n")
    capsys.readouterr()
    envguard("diff", str(env_yml), str(lock), "--json")
    diff_text = capsys.readouterr().out
    assert diff_text == dumps(json.loads(diff_text))
    envguard("check", "--lock-fresh", "--lock", str(tmp_path / "missing.yml"), "--json")
    capsys.readouterr()
    prefix = tmp_path / "venv"
    (prefix / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    (prefix / "pyvenv.cfg").write_text("version = 3.11.7\n")
    envguard("check", str(prefix), "-f", str(env_yml), "--json", "--no-cache")
    text = capsys.readouterr().out
    assert text == dumps(json.loads(text))


def test_a_long_category_keeps_the_changed_and_the_added_package_in_view() -> None:
    """Sorted by name the changed and the extra package come last; they lead, and the summary keeps them."""
    missing = tuple(
        Difference("conda", "only-a", f"aaa{i:02d}", a="1.0", text=f"aaa{i:02d} 1.0: not installed")
        for i in range(24)
    )
    changed = Difference("conda", "changed", "zlib", "1.2.13", "1.3.1", ("version",), text="zlib: changed")
    extra = Difference("conda", "only-b", "zstd", b="1.5.6", text="zstd 1.5.6: installed, not in the lock")
    lines = human(CheckReport("conda-lock.yml", "/envs/x", (*missing, changed, extra))).splitlines()
    assert lines[1:4] == [
        "  [drift] zlib: changed",
        "  [drift] zstd 1.5.6: installed, not in the lock",
        "  [drift] aaa00 1.0: not installed",
    ]
    assert lines[10] == "  [drift] aaa07 1.0: not installed" and len(lines) == 1 + 10 + 1 + 1
    assert lines[11] == (
        "  ... 26 conda packages (1 changed, 1 installed, not in the target, 24 not installed); 10 shown, "
        "--all for the rest"
    )


CHANNEL = "file:///home/someone/projects/a-rather-long-project-name/channels/pytorch-nightly-mirror"


def _torch(build: str, channel: str = CHANNEL, version: str = "2.1.0") -> Environment:
    package = Package("conda", "pytorch", version, build, channel=channel, subdir="linux-64")
    return Environment("conda-lock", "conda-lock.yml", packages=(package,), platform="linux-64")


def _drift(target: Environment, live: Environment) -> str:
    [found] = [f for f in check_environment(live, target).findings if f.category == "conda"]
    return found.message()


def test_a_changed_build_says_the_shared_version_and_channel_once() -> None:
    message = _drift(_torch("py3.11_cuda11.8_cudnn8.7.0_0"), _torch("py3.11_cpu_0"))
    assert message == (
        f"pytorch 2.1.0 ({CHANNEL}): py3.11_cuda11.8_cudnn8.7.0_0 in the lock → py3.11_cpu_0 installed "
        "(build changed)"
    )
    assert message.count(CHANNEL) == 1


def test_a_changed_channel_shows_both_channels_and_the_shared_build() -> None:
    other = CHANNEL.replace("nightly", "stable")
    message = _drift(_torch("py3.11_cpu_0"), _torch("py3.11_cpu_0", channel=other))
    assert message.startswith(f"pytorch 2.1.0 py3.11_cpu_0: {CHANNEL} in the lock → {other} installed ")


@pytest.mark.parametrize("columns", [80, 100])
def test_drift_lines_fit_the_terminal(columns: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    report = check_environment(_torch("py3.11_cpu_0"), _torch("py3.11_cuda11.8_cudnn8.7.0_0"))
    text = human(report)
    body = text.split("How to fix:\n", 1)[0]
    assert all(len(line) <= columns for line in body.splitlines()), text
    assert "…" not in text and "[drift] pytorch 2.1.0" in text
    assert CHANNEL in "".join(text.split())  # whole, perhaps across lines


def test_drift_lines_stay_whole_into_a_pipe(monkeypatch: pytest.MonkeyPatch) -> None:
    """No COLUMNS and stdout not a terminal: one finding a line, for grep."""
    monkeypatch.delenv("COLUMNS", raising=False)
    report = check_environment(_torch("py3.11_cpu_0"), _torch("py3.11_cuda11.8_cudnn8.7.0_0"))
    [line] = [line for line in human(report).splitlines() if "[drift]" in line]
    assert line.endswith("installed (build changed)") and CHANNEL in line
