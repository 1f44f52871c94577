"""lock shows its waits on a terminal: the solve per platform and the fingerprint probe."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import MakePrefix, stderr_on_a_terminal


def test_lock_shows_its_solve_and_probe_on_a_terminal(
    channels: dict[str, Path], tmp_path: Path, make_prefix: MakePrefix
) -> None:
    yml = tmp_path / "environment.yml"
    yml.write_text(f"channels:\n  - {channels['forge'].as_uri()}\ndependencies:\n  - python=3.11\n  - six\n")
    code, err = stderr_on_a_terminal(["lock", "-f", str(yml), "--no-cuda", "-o", "a.yml"], tmp_path)
    assert code == 0 and "solving 2 spec(s) for linux-64" in err, err
    prefix = make_prefix(["python=3.11", "zlib"])
    code, err = stderr_on_a_terminal(["lock", str(prefix), "-o", "b.yml"], tmp_path)
    assert code == 0 and "probing RNG fingerprints" in err, err
