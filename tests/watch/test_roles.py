"""Which processes train and which load their data, from the process tree (hand-built samples)."""

from __future__ import annotations

from envguard.watch.roles import label, main_pids
from tests.watch.helpers import proc


def test_training_processes_found_from_the_tree() -> None:
    # torchrun (1) -> ranks 2, 3 -> their workers 4, 5 and 6
    tree = (proc(1, 0), proc(2, 1), proc(3, 1), proc(4, 2), proc(5, 2), proc(6, 3))
    assert main_pids(tree, set()) == {2, 3}
    assert [p.role for p in label(tree, {2, 3})] == ["other", "main", "main", "worker", "worker", "worker"]
    assert main_pids(tree[:1], set()) == {1}
    assert main_pids(tree, {9}) == {9}
