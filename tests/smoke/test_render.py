"""smoke's human view fits the terminal (issue 16): at 80 columns the sweep keeps its primary figures with
whole headers, at 120 every column; nothing is cut short with an ellipsis, every line within the width."""

from __future__ import annotations

import pytest
from rich.cells import cell_len

from envguard.smoke import render
from envguard.smoke.report import SmokeOptions, SmokeReport
from envguard.smoke.run import run_smoke


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> SmokeReport:
    """One real smoke run (the test interpreter's torch, real DataLoader workers), rendered at two widths."""
    del tmp_path_factory
    return run_smoke(SmokeOptions(budget_s=10, workers=(0, 2)))


@pytest.mark.parametrize("columns", [80, 120])
def test_the_report_fits_the_terminal(report: SmokeReport, columns: int) -> None:
    text = render.render(report, columns)
    widest = max(text.splitlines(), key=cell_len)
    assert cell_len(widest) <= columns, f"{cell_len(widest)} > {columns}: {widest!r}"
    assert "…" not in text  # no header or cell cut short
    for header in ("workers", "samples/s", "efficiency", "ideal"):
        assert header in text, header
    assert ("others'" in text) is (columns >= 100)  # narrow: secondary columns are left to --json
    assert "Verdicts" in text and "smoke:" in text


def test_columns_honours_the_environment(report: SmokeReport, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    text = render.render(report)
    assert max(cell_len(line) for line in text.splitlines()) <= 80


def test_narrow_rows_name_their_configuration() -> None:
    from envguard.smoke.report import DatasetResult, SweepRow

    rows = (
        SweepRow(2, True, True, samples_per_s=100.0, ideal_per_s=110.0, efficiency=0.91),
        SweepRow(4, False, False, skipped="the budget ran out before this configuration"),
    )
    dataset = DatasetResult("io", "io", 10.0, None, True, rows=rows)
    from envguard.output import text_console

    console = text_console(80)
    console.print(render.sweep_table(dataset, 80))
    text = console.file.getvalue()
    data = text.split("┩", 1)[1]  # the rows, below the header
    assert "2 pin" in data and "persistent" in data and "skipped: the" in data
    assert "…" not in text
