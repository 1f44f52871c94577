"""NVML under watch: a real CUDA training loop (skipped where no GPU is present)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.watch.helpers import Watch


def _cuda() -> bool:
    try:
        import torch

        return bool(torch.cuda.is_available())
    except ImportError:
        return False


GPU_TRAIN = """
import time, torch
from torch.utils.data import DataLoader, TensorDataset
data = TensorDataset(torch.rand(4096, 3, 64, 64), torch.randint(0, 10, (4096,)))
model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 64 * 64, 4096), torch.nn.ReLU(),
                            torch.nn.Linear(4096, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
end = time.time() + 6
while time.time() < end:
    for x, y in DataLoader(data, batch_size=256, num_workers=2, pin_memory=True):
        loss = torch.nn.functional.cross_entropy(model(x.cuda(non_blocking=True)), y.cuda(non_blocking=True))
        opt.zero_grad(); loss.backward(); opt.step()
torch.cuda.synchronize()
"""


@pytest.mark.gpu
@pytest.mark.skipif(not _cuda(), reason="no CUDA GPU")
def test_gpu_training_loop_is_sampled_through_nvml(tmp_path: Path, watch: Watch) -> None:
    pytest.importorskip("pynvml")
    script = tmp_path / "gpu_train.py"
    script.write_text(GPU_TRAIN)
    watched = watch(command=(sys.executable, str(script)))
    assert watched.code == 0, watched.stderr
    gpus = [g for s in watched.report["samples"] for g in s["gpus"]]
    assert gpus and any(g["used_by_tree"] for g in gpus)
    for g in gpus:
        assert g["utilization"] is None or 0 <= g["utilization"] <= 100
        assert g["memory_used"] is None or 0 <= g["memory_used"] <= g["memory_total"]
    assert max(g["utilization"] or 0 for g in gpus if g["used_by_tree"]) > 0
    assert watched.report["environment"]["torch_cuda"]
