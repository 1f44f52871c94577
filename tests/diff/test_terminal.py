"""diff's human view fits the terminal (COLUMNS honoured; 80 and 120 columns); long categories summarised."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envguard.diff.changes import Diff, Difference
from envguard.diff.render import summary, table
from tests.helpers import MakePrefix, envguard


def _fits(text: str, columns: int) -> None:
    longest = max(text.splitlines(), key=len)
    assert len(longest) <= columns, f"{len(longest)} > {columns}: {longest!r}"
    assert "…" not in text  # nothing cut short


@pytest.mark.parametrize("columns", [80, 120])
def test_diff_fits_the_terminal(
    columns: int, make_prefix: MakePrefix, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    a = make_prefix(
        ["python=3.11", "numpy=1.26", "pytorch=2.1.0=*cuda11.8*", "requests=2.32.3"], name="a", cuda="12.4"
    )
    b = make_prefix(["python=3.11", "numpy=2.0", "pytorch=2.1.0=*cpu*", "requests=2.31.0", "six"], name="b")
    monkeypatch.setenv("COLUMNS", str(columns))
    capsys.readouterr()
    assert envguard("diff", str(a), str(b)) == 1
    out = capsys.readouterr().out
    _fits(out, columns)
    assert ("Category" in out) is (columns >= 100)  # narrow: the category is a section row, not a column
    for word in ("Conda packages", "cudatoolkit", "py311hed25524_0", "CUDA"):
        assert word in out, word


def test_long_categories_are_summarised_unless_all() -> None:
    changes = tuple(Difference("pip", "only-b", f"pkg{i:03d}", b="1.0") for i in range(112))
    diff = Diff(
        "conda-lock.yml", "/envs/venv", "exact", (Difference("conda", "only-a", "zlib", a="1.3"), *changes)
    )
    short = table(diff, width=120)
    assert (
        "pip packages: 112 items (112 only in B) — 10 shown: pkg000, pkg001, pkg002, pkg003, pkg004, "
        "pkg005, pkg006, pkg007, pkg008, pkg009; --all for the rest"
    ) in " ".join(short.split())
    assert "pkg009" in short and "pkg010" not in short and "zlib" in short
    full = table(diff, width=120, show_all=True)
    assert "pkg111" in full and "--all" not in full


def test_diff_all_option_lists_everything(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = tmp_path / "a.yml", tmp_path / "b.yml"
    a.write_text("channels: [conda-forge]\ndependencies:\n  - python=3.11\n")
    b.write_text("channels: [conda-forge]\ndependencies:\n" + "".join(f"  - pkg{i:02d}\n" for i in range(25)))
    assert envguard("diff", str(a), str(b)) == 1
    assert "--all for the rest" in capsys.readouterr().out
    assert envguard("diff", str(a), str(b), "--all") == 1
    out = capsys.readouterr().out
    assert "pkg24" in out and "--all for the rest" not in out


def _rich_lines(diff: Diff, width: int) -> str:
    """What the rich console prints for a report without a table (the reference for the plain path): each
    label on one line (a line break in a label is escaped like any control character)."""
    from envguard.output import oneline, text_console

    console = text_console(width)
    console.print(f"A: {oneline(diff.a_label)}\nB: {oneline(diff.b_label)}", markup=False)
    for note in diff.notes:
        console.print(f"note: {oneline(note)}", markup=False)
    console.print(summary(diff), markup=False)
    return console.file.getvalue()  # type: ignore[no-any-return]


_label = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=130)


@settings(max_examples=300, deadline=None)
@given(_label, _label, st.lists(_label, max_size=2), st.sampled_from([40, 80, 100, 120]))
def test_an_equal_report_without_rich_is_what_rich_prints(
    a: str, b: str, notes: list[str], width: int
) -> None:
    diff = Diff(a, b, "exact", (), tuple(notes))
    assert table(diff, width=width) == _rich_lines(diff, width)


def _mixed() -> Diff:
    """The tour's diff: one package changed, one added, a dozen more only in A (sorted by name, the changed
    and the added one come last)."""
    removed = tuple(Difference("conda", "only-a", f"aaa{i:02d}", a="1.0") for i in range(24))
    changed = Difference("conda", "changed", "zlib", a="1.2.13", b="1.3.1", fields=("version",))
    added = Difference("conda", "only-b", "zstd", b="1.5.6")
    return Diff("a", "b", "exact", (*removed, changed, added))


def test_changed_then_added_then_removed() -> None:
    diff = _mixed()
    [(category, ordered)] = diff.grouped().items()
    assert category == "conda"
    assert [c.kind for c in ordered[:3]] == ["changed", "only-b", "only-a"]
    assert [c.name for c in ordered[:3]] == ["zlib", "zstd", "aaa00"]
    full = table(diff, width=120, show_all=True)
    assert full.index("zlib") < full.index("zstd") < full.index("aaa00") < full.index("aaa23")


def test_truncation_keeps_every_kind_visible() -> None:
    short = table(_mixed(), width=120)
    assert "zlib" in short and "zstd" in short  # never hidden behind the rows only in A
    assert "aaa07" in short and "aaa08" not in short  # ten rows in all: 1 changed, 1 added, 8 only in A
    assert (
        "Conda packages: 26 items (1 changed, 1 only in B, 24 only in A) — 10 shown: zlib, zstd, aaa00, "
        "aaa01, aaa02, aaa03, aaa04, aaa05, aaa06, aaa07; --all for the rest"
    ) in " ".join(short.split())
