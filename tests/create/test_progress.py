"""create shows its waits on a terminal (issue 16): the solve, and for a lock the archives fetched and hashed;
nothing with --json."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import stderr_on_a_terminal


def test_create_shows_its_solve_and_fetch_on_a_terminal(channels: dict[str, Path], tmp_path: Path) -> None:
    yml = tmp_path / "environment.yml"
    yml.write_text(f"channels:\n  - {channels['forge'].as_uri()}\ndependencies:\n  - python=3.11\n  - six\n")
    base = ["--backend", "embedded", "--prefix"]
    code, err = stderr_on_a_terminal(["create", "-f", str(yml), *base, str(tmp_path / "a")], tmp_path)
    assert code == 0 and "solving 2 spec(s) for linux-64" in err, err
    lock = tmp_path / "conda-lock.yml"  # written beside the environment.yml by the create above
    code, err = stderr_on_a_terminal(["create", "--lock", str(lock), *base, str(tmp_path / "b")], tmp_path)
    assert code == 0 and "fetching and hashing archives" in err, err
    code, err = stderr_on_a_terminal(
        ["create", "-f", str(yml), *base, str(tmp_path / "c"), "--no-lock", "--json"], tmp_path
    )
    assert code == 0 and "solving" not in err and "fetching" not in err, err
