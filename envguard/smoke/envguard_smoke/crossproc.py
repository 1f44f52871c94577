"""Cross-process determinism: the first K samples (index order and per-index field digests) read in fresh
interpreters that differ only in PYTHONHASHSEED. `list(set(...))` file lists and `hash(str)` labels change
with the per-process hash salt; a third interpreter with the first one's seed (run only when the two differ)
tells a hash-salt dependence from randomness that differs on every run. The comparison lives on the envguard
side.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any, Dict, List, Optional

MARKER = "ENVGUARD-CROSSPROC-JSON: "
SEEDS = ("1", "2")
CHILD = (
    "import sys; sys.path[:] = [sys.argv[1]] + [p for p in sys.path if p not in ('', '.')]; "
    "from envguard_smoke.crossproc import child; child(sys.argv[2])"
)


def _indices(settings: Dict[str, Any], limit: int) -> List[Any]:
    """The first `limit` indices the user's loader asks for (its own sampler), or 0..limit-1 for --dataset."""
    if not settings.get("loader"):
        return list(range(limit))
    from .user_loader import factory

    loader = factory(settings["loader"])()
    source = loader.batch_sampler if loader.batch_sampler is not None else loader.sampler
    out: List[Any] = []
    for item in source:
        out.extend(item if isinstance(item, (list, tuple)) else [item])
        if len(out) >= limit:
            break
    return out[:limit]


def observe(settings: Dict[str, Any]) -> Dict[str, Any]:
    """In this interpreter: the index order and each index's field digests, read at num_workers=0 after
    seeding torch, NumPy and random (so seeded augmentation reads the same in every process)."""
    from .canonical import digest, fields
    from .datasets import is_iterable, load_user, seed_everything, sized

    seed, limit = int(settings.get("seed", 1234)), int(settings.get("limit", 32))
    seed_everything(seed)
    if settings.get("loader"):
        from .user_loader import factory

        dataset = factory(settings["loader"])().dataset
    else:
        dataset = load_user(settings["dataset"])()
    samples: Dict[str, Dict[str, str]] = {}
    if is_iterable(dataset):  # no sampler: the stream's first samples, named by position
        seed_everything(seed)
        for position, item in enumerate(dataset):
            if position >= limit:
                break
            samples["#%d" % position] = {key: digest(value)[:16] for key, value in fields(item).items()}
        return {"order": sorted(samples), "samples": samples}
    length = sized(dataset)
    seed_everything(seed)
    order = _indices(settings, limit if length is None else min(limit, length))
    seed_everything(seed)
    for index in order:
        item = dataset[index]
        samples[repr(index)] = {key: digest(value)[:16] for key, value in fields(item).items()}
    return {"order": [repr(i) for i in order], "samples": samples}


def child(text: str) -> None:
    from . import memory_limit

    settings = json.loads(text)
    try:
        import torch  # noqa: F401  (its libraries are this interpreter's start-up, not the dataset's memory)

        memory_limit.adopt()
        out: Dict[str, Any] = observe(settings)
    except Exception as exc:
        import traceback

        memory_limit.note(exc)  # out of memory: the reserve given back, room for this answer

        out = {"error": traceback.format_exception_only(type(exc), exc)[-1].strip()}
    sys.stdout.write(MARKER + json.dumps(out) + "\n")
    sys.stdout.flush()
    os._exit(0)


def _start(settings: Dict[str, Any], hash_seed: str) -> "subprocess.Popen[str]":
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONHASHSEED"] = hash_seed
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    command = [sys.executable, "-s", "-B", "-c", CHILD, package_parent, json.dumps(settings)]
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, stdin=subprocess.DEVNULL
    )


def _finish(process: "subprocess.Popen[str]", deadline: float) -> Dict[str, Any]:
    """The child's record, or {"error": ...}; the child is killed at the deadline."""
    try:
        stdout, stderr = process.communicate(timeout=max(deadline - time.perf_counter(), 1.0))
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        return {"error": "no answer within the budget"}
    line = next((ln for ln in stdout.splitlines() if ln.startswith(MARKER)), None)
    if line is None:
        tail = stderr.strip().splitlines()
        return {"error": tail[-1] if tail else "exit code %d" % process.returncode}
    return json.loads(line[len(MARKER) :])  # type: ignore[no-any-return]


def run(settings: Dict[str, Any], deadline: float) -> Dict[str, Any]:
    """Two interpreters (PYTHONHASHSEED 1 and 2), and a control with seed 1 again when they differ."""
    spec = {key: settings.get(key) for key in ("loader", "dataset")}
    options = settings.get("crossproc") or {}
    spec.update(seed=int(options.get("seed", 1234)), limit=int(options.get("limit", 32)))
    runs: Dict[str, Any] = {}
    started = time.perf_counter()
    children = [(seed, _start(spec, seed)) for seed in SEEDS]  # side by side: torch's import dominates
    for seed, process in children:
        runs[seed] = _finish(process, deadline)
    first, second = runs[SEEDS[0]], runs[SEEDS[1]]
    if "error" not in first and "error" not in second and first != second:
        runs[SEEDS[0] + "-again"] = _finish(_start(spec, SEEDS[0]), deadline)
    control: Optional[str] = SEEDS[0] + "-again" if SEEDS[0] + "-again" in runs else None
    return {
        "seeds": list(SEEDS),
        "limit": spec["limit"],
        "runs": runs,
        "control": control,
        "seconds": round(time.perf_counter() - started, 3),
    }
