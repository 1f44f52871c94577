"""clean's scan shows progress on a terminal (stderr is a TTY) and nothing with --json or when piped."""

from __future__ import annotations

from tests.clean.world import World
from tests.helpers import envguard, stderr_on_a_terminal


def test_clean_shows_its_scan_on_a_terminal_only(world: World, capsys) -> None:
    code, err = stderr_on_a_terminal(["clean"], world.root)
    assert code == 0 and "scanning" in err and "package cache(s)" in err, err
    code, err = stderr_on_a_terminal(["clean", "--json"], world.root)
    assert code == 0 and "scanning" not in err and "measuring" not in err, err
    assert envguard("clean") == 0  # stderr is a pipe here
    assert capsys.readouterr().err == ""
