"""verdicts/crashes.py and verdicts/budget.py: a phase that raised in the environment names the fix its
message points at; a run stopped at the budget and checks left out for lack of time say so."""

from __future__ import annotations

from envguard.machine.host import CpuInfo, ShmInfo
from envguard.smoke import runner, verdicts
from envguard.smoke.measured import MemoryUse
from envguard.smoke.report import SmokeOptions
from envguard.smoke.verdicts import budget, crashes
from tests.helpers import smoke_wire


def test_crashes_carry_the_fix_their_message_points_at() -> None:
    assert (
        "--shm-size"
        in crashes.crash("x", "RuntimeError: DataLoader worker is killed by signal: Bus error.").fix
    )
    assert "ulimit -n" in crashes.crash("x", "RuntimeError: received 0 items of ancdata").fix
    assert "module level" in crashes.crash("x", "AttributeError: Can't pickle local object").fix
    assert "num_workers=0" in crashes.crash("x", "ValueError: bad sample").fix
    measured = smoke_wire({"errors": [{"phase": "gpu", "error": "RuntimeError: CUDA error"}]}, "test")
    (found,) = crashes.phase_errors(measured.errors)
    assert (found.category, found.check, found.status) == ("gpu phase", "crash", "FAIL")


def test_budget_findings() -> None:
    measured = smoke_wire({"pipeline_skipped": [{"phase": "memory", "needs_s": 3.0, "left_s": 1.2}]}, "test")
    (skipped,) = budget.skipped_checks(measured.pipeline_skipped)
    assert skipped.check == "memory check" and "needs about 3.0 s and 1.2 s" in skipped.evidence
    assert budget.stopped(None) == [] and measured.stopped is None  # only envguard marks a run stopped


# -- running out of memory (issue 28): one finding with the figure and the fix that fits, not a crash

GIB = 1 << 30
WORKER_OOM = (
    "MemoryError: Caught MemoryError in DataLoader worker process 0.\nOriginal Traceback (most recent call "
    'last):\n  File "train.py", line 9, in __getitem__\nMemoryError'
)


def test_a_memory_error_is_one_out_of_memory_finding_with_its_figure_not_a_crash() -> None:
    measured = smoke_wire(
        {
            "errors": [
                {"phase": "determinism", "error": WORKER_OOM},
                {"phase": "gpu", "error": "RuntimeError: CUDA error"},
            ],
            "memory_limit": {"limit_bytes": GIB, "peak_bytes": GIB + GIB // 20},
        },
        "test",
    )
    use = measured.memory_use
    crashed = crashes.phase_errors(measured.errors, use)
    assert [f.category for f in crashed] == ["gpu phase"]  # the memory error is not a crash to debug
    (found,) = crashes.out_of_memory(use, [WORKER_OOM, "MemoryError", "ValueError: x"], 20 * GIB)
    assert (found.category, found.check, found.status) == ("memory", "out of memory", "FAIL")
    assert found.evidence.startswith(
        "out of memory: the dataset (or a worker) reached 1.05 GiB (limit 1.00 GiB) (MemoryError: Caught"
    )
    assert "\n" not in found.evidence
    # the machine has room: lowering what each process keeps, or a higher limit
    assert "batch_size or num_workers" in found.fix and "raise --memory-limit above 1.00 GiB" in found.fix
    assert "num_workers=0" not in found.fix


def test_at_the_machines_own_memory_the_fix_is_to_keep_less_not_a_higher_limit() -> None:
    use = MemoryUse(limit_bytes=15 * GIB, peak_bytes=15 * GIB)
    torch_says = "RuntimeError: DefaultCPUAllocator: can't allocate memory"
    (found,) = crashes.out_of_memory(use, [torch_says], 16 * GIB)
    assert "lower batch_size or num_workers" in found.fix
    assert "raise --memory-limit" not in found.fix and "would fill the machine" in found.fix
    (unlimited,) = crashes.out_of_memory(MemoryUse(peak_bytes=3 * GIB), ["MemoryError"], None)
    assert "reached 3.00 GiB (no limit: --memory-limit none)" in unlimited.evidence


def test_only_host_memory_errors_are_out_of_memory() -> None:
    assert crashes.out_of_memory(MemoryUse(limit_bytes=GIB), ["ValueError: bad sample"], 8 * GIB) == []
    assert not crashes.out_of_memory_text("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2G")
    killed = "RuntimeError: DataLoader worker (pid 4242) is killed by signal: Killed."
    assert not crashes.out_of_memory_text(killed)  # a SIGKILL alone could be anyone's
    assert crashes.out_of_memory_text(killed, MemoryUse(oom_kills=1))  # the cgroup's OOM killer killed


def test_a_module_killed_for_memory_is_told_from_a_crash() -> None:
    near = MemoryUse(limit_bytes=GIB, peak_bytes=GIB - GIB // 20)
    assert crashes.died_of_memory(-9, "exit code -9", near)
    assert crashes.died_of_memory(-9, "exit code -9", MemoryUse(limit_bytes=8 * GIB, oom_kills=1))
    assert crashes.died_of_memory(1, "MemoryError", MemoryUse())
    assert not crashes.died_of_memory(-9, "exit code -9", MemoryUse(limit_bytes=8 * GIB, peak_bytes=GIB))
    assert not crashes.died_of_memory(-11, "Segmentation fault", near)
    killed = MemoryUse(limit_bytes=GIB, peak_bytes=GIB, oom_kills=1, killed=True)
    (found,) = crashes.out_of_memory(killed, [], None)
    assert "killed by the out-of-memory killer (SIGKILL)" in found.evidence


def test_a_module_killed_for_memory_is_judged_as_one_out_of_memory_finding() -> None:
    """The record runner.parse_output makes of a module the OOM killer ended goes through every verdict: the
    one FAIL is the memory, with the figure and the limit; nothing calls it a crash."""
    killed = runner.parse_output(
        "", "", -9, "/env/bin/python", MemoryUse(limit_bytes=2 * GIB, peak_bytes=2 * GIB, oom_kills=1)
    )
    cpus = CpuInfo(logical=2, affinity=2, physical=2, quota=None, usable=2)
    facts = verdicts.HostFacts(cpus=cpus, shm=ShmInfo(path="/dev/shm", exists=False), available=16 * GIB)
    found = verdicts.judge(verdicts.Inputs(killed, SmokeOptions(), (), {}, facts))
    failed = [f for f in found if f.status == "FAIL"]
    assert [f.check for f in failed] == ["out of memory"], found
    assert "reached 2.00 GiB (limit 2.00 GiB); killed by the out-of-memory killer" in failed[0].evidence
    assert not any("num_workers=0" in f.fix for f in found)
