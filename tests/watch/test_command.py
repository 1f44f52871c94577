"""`envguard watch` as a command: exit codes passed through, Ctrl-C forwarded, bad input, the hook's
safety, views."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import INTERRUPTIBLE
from tests.watch.helpers import Watch, run_envguard

NO_TORCH = """
import subprocess, sys, time
busy = "import time; t = time.time() + 2.5\\nwhile time.time() < t: pass"
child = subprocess.Popen([sys.executable, "-c", busy])
end = time.time() + 2.5
while time.time() < end:
    sum(range(10000))
child.wait()
print("no torch here")
"""


def test_exit_code_of_a_failing_script_is_passed_through(watch: Watch) -> None:
    watched = watch("--workers", "1", "--batches", "5", "--exit-code", "3")
    assert watched.code == 3
    assert watched.report["run"]["exit_code"] == 3
    assert watched.diagnosis["verdict"] == "too short to judge"  # 5 batches
    assert watched.stdout == "trained 5 batches\n"  # the report went to -o FILE; the job keeps its stdout


def test_script_without_torch_still_reports_its_processes(tmp_path: Path, watch: Watch) -> None:
    script = tmp_path / "plain.py"
    script.write_text(NO_TORCH)
    watched = watch(command=(sys.executable, str(script)))
    assert watched.code == 0, watched.stderr
    assert watched.report["run"]["hook"] == {"state": "no-loader", "errors": [], "env": {}}
    assert watched.diagnosis["verdict"] == "no loader timing"
    pids = {p["pid"] for s in watched.report["samples"] for p in s["procs"]}
    assert len(pids) == 2  # the script and its child
    procs = [p for s in watched.report["samples"] for p in s["procs"]]
    assert 5.0 <= max(p["cpu"] for p in procs) <= 105.0  # a spinning single-threaded process (on a busy host)
    for p in procs:  # a process first seen in a sample included: no percentage from a near-zero interval
        assert 0.0 <= p["cpu"] <= 105.0 * p["threads"], p
    assert "Error in sitecustomize" not in watched.stderr


def _one_error_line(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("envguard: error: "), done.stderr
    for word in words:
        assert word in lines[0]


def test_bad_input_is_one_line_and_exit_2() -> None:
    _one_error_line(
        run_envguard("watch", "--", "no-such-program-envguard"), "no-such-program-envguard", "PATH"
    )
    _one_error_line(
        run_envguard("watch", "--interval", "0", "--", sys.executable, "-c", "pass"), "--interval 0"
    )
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    _one_error_line(run_envguard("watch", "--pid", str(gone.pid)), f"--pid {gone.pid}", "no such process")
    _one_error_line(run_envguard("watch"), "COMMAND")
    _one_error_line(run_envguard("watch", "--pid", "0"), "--pid 0")
    _one_error_line(
        run_envguard("watch", "--duration", "-1", "--", sys.executable, "-c", "pass"), "--duration -1"
    )


@pytest.mark.ctrl_c
def test_ctrl_c_is_forwarded_and_the_exit_code_passed_through(train_script: Path, tmp_path: Path) -> None:
    script = tmp_path / "interrupted.py"
    started = tmp_path / "started"
    script.write_text(
        f"import time, sys\nopen({str(started)!r}, 'w').close()\n"
        "try:\n    time.sleep(60)\nexcept KeyboardInterrupt:\n    sys.exit(5)\n"
    )
    out = tmp_path / "w.json"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "envguard",
            "watch",
            "--json",
            "-o",
            str(out),
            "--",
            sys.executable,
            str(script),
        ],
        stderr=subprocess.PIPE,
        text=True,
        **INTERRUPTIBLE,
    )
    # from the job's start, not envguard's (its imports took longer than 2.5 s on a busy machine): then the
    # moment envguard takes to start forwarding
    until = time.monotonic() + 60
    while not started.exists() and process.poll() is None and time.monotonic() < until:
        time.sleep(0.05)
    assert started.exists(), "the job never started within 60 s"
    time.sleep(2.0)
    process.send_signal(
        signal.SIGINT
    )  # as the terminal's Ctrl-C reaches envguard (the job has its own group)
    assert process.wait(30) == 5
    assert json.loads(out.read_text())["run"]["exit_code"] == 5


def test_attach_to_a_running_job_by_pid(train_script: Path) -> None:
    job = subprocess.Popen(
        [sys.executable, str(train_script), "--workers", "1", "--batches", "10000", "--sleep-ms", "2"],
        stdout=subprocess.DEVNULL,
    )
    try:
        import psutil

        deadline = time.monotonic() + 30
        while not psutil.Process(job.pid).children() and time.monotonic() < deadline:
            time.sleep(0.1)  # attach once the DataLoader worker is up (torch's import takes a while)
        done = run_envguard("watch", "--pid", str(job.pid), "--duration", "2", "--interval", "0.5", "--json")
    finally:
        job.kill()
        job.wait()
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["schema_version"] == 1
    assert report["run"]["hook"]["state"] == "off"
    roles = {p["role"] for s in report["samples"] for p in s["procs"]}
    assert roles == {"main", "worker"}  # found from the tree alone
    assert job.poll() is not None  # watch left the job alone until we killed it


def test_hook_crash_leaves_the_script_running_and_is_reported(tmp_path: Path, watch: Watch) -> None:
    """A DataLoader subclass whose batch_size property raises inside the hook's settings read."""
    script = tmp_path / "odd.py"
    script.write_text(
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "class Odd(DataLoader):\n    @property\n    def batch_size(self):\n        raise RuntimeError('odd "
        "loader')\n"
        "    @batch_size.setter\n    def batch_size(self, value):\n        pass\n"
        "total = sum(int(b.sum()) for b in Odd(list(range(100)), batch_size=10))\nprint('sum', total)\n"
    )
    watched = watch(command=(sys.executable, str(script)))
    assert watched.code == 0, watched.stderr
    assert watched.stdout == "sum 4950\n"
    errors = watched.report["run"]["hook"]["errors"]
    assert len(errors) == 1 and "odd loader" in errors[0]
    assert any(f["category"] == "hook" and f["status"] == "WARN" for f in watched.diagnosis["findings"])


def test_hook_chains_to_an_existing_sitecustomize(tmp_path: Path, watch: Watch) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import os\nos.environ['USER_SITECUSTOMIZE'] = 'ran'\n")
    script = tmp_path / "check.py"
    script.write_text("import os\nassert os.environ.get('USER_SITECUSTOMIZE') == 'ran'\nprint('chained')\n")
    import os

    env = dict(os.environ, PYTHONPATH=str(site))
    done = subprocess.run(
        [sys.executable, "-m", "envguard", "watch", "--json", "--", sys.executable, str(script)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "chained" in done.stderr


def test_markdown_text_and_plot_views(tmp_path: Path, train_script: Path) -> None:
    png = tmp_path / "timeline.png"
    done = run_envguard(
        "watch",
        "--interval",
        "0.5",
        "--markdown",
        "--plot",
        str(png),
        "--",
        sys.executable,
        str(train_script),
        "--workers",
        "1",
        "--batches",
        "100",
        *("--cpu-ms", "8"),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("### envguard watch:")
    assert "| Status | Category |" in done.stdout and "**input-bound: the loop waits for data" in done.stdout
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = tmp_path / "report.txt"
    done = run_envguard("watch", "-o", str(text), "--", sys.executable, str(train_script), "--batches", "5")
    assert done.returncode == 0, done.stderr
    report = text.read_text()
    assert "torch 2." in report and "exit code 0" in report
    assert max(len(line) for line in report.splitlines()) <= 80


def test_json_on_stdout_keeps_the_jobs_output_out_of_it(train_script: Path) -> None:
    done = run_envguard("watch", "--json", "--", sys.executable, str(train_script), "--batches", "5")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["schema_version"] == 1
    assert "trained 5 batches" in done.stderr


@pytest.mark.ctrl_c
def test_duration_stops_the_job_as_ctrl_c_would() -> None:
    started = time.monotonic()
    done = run_envguard(
        "watch",
        "--duration",
        "1",
        "--interval",
        "0.25",
        "--json",
        "--",
        sys.executable,
        "-c",
        "import time; time.sleep(60)",
    )
    assert done.returncode == 130, done.stderr  # the job died of SIGINT: 128 + 2
    assert time.monotonic() - started < 30
    report = json.loads(done.stdout)
    assert 1.0 <= report["run"]["duration"] < 10.0
