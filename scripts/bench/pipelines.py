"""Real-shaped training pipelines for bench_pipeline_advice.py (run as a script under the benchmark's
interpreter, or imported by `envguard smoke --loader pipelines.py:make_loader`):

- imagenet: imagenet/main.py's --dummy shape on the CPU: a random 3x224x224 image per sample, a random
  resized crop to 96x96 (antialiased) and a flip, a real small CNN trained with torch's default intra-op
  threads (the step keeps every core busy);
- jpeg: an ImageFolder of real JPEGs decoded with PIL, RandomResizedCrop and a horizontal flip written with
  PIL + torch (torchvision's CPU wheel is not installable here), beside a 20 ms GPU-like step (a sleep);
- sleep: each sample waits 5 ms (remote storage), a 10 ms step;
- tuned: the jpeg loader already at 2 workers beside a 150 ms step: nothing to gain;
- mnist: pytorch/examples mnist/main.py on the CPU (its Net, Adadelta, batches of 64 from an in-memory
  uint8 MNIST-shaped set through ToTensor + Normalize), the step on torch's default intra-op threads;
- pyload: a CPU-starved loader: pure-Python work per sample (tokenising and hashing a text record, ~2 ms),
  beside a light MLP step;
- ioload: a Dataset that waits 5-20 ms per sample on I/O (a random sleep) beside a light MLP step whose time
  moves with the workers and threads around it;
- slowstep: a 5 s step (GPU-like: the host sleeps) and a cheap loader, for the time a verdict takes.

`python pipelines.py --pipeline NAME --workers 0,1,2,0@1 --rounds 5 --batches 30` times each worker
count (`N@T`: with the step on T intra-op threads, torch.set_num_threads) in interleaved rounds in one
process (torch imported once) and prints one JSON line per measurement; with a single count and no --rounds
it is the training job `envguard watch` runs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from pathlib import Path
from typing import Any

import torch
from torch.utils.data import DataLoader, Dataset

BATCH = {
    "imagenet": 8,
    "jpeg": 8,
    "sleep": 16,
    "tuned": 8,
    "mnist": 64,
    "pyload": 16,
    "ioload": 8,
    "slowstep": 8,
}
STEP_S = {"jpeg": 0.020, "sleep": 0.010, "tuned": 0.150, "slowstep": 5.0}  # GPU-like steps: the host sleeps
NETS = ("imagenet", "mnist", "pyload", "ioload")  # steps that train a real model on the CPU
SIDE = 112


class Dummy(Dataset):  # type: ignore[type-arg]
    """imagenet --dummy: a random image per index, randomly cropped and flipped (CPU work per sample)."""

    def __len__(self) -> int:
        return 10**6

    def __getitem__(self, index: int) -> Any:
        g = torch.Generator().manual_seed(index)
        image = torch.rand(1, 3, 224, 224, generator=g)
        side = random.randrange(112, 225)
        top, left = random.randrange(225 - side), random.randrange(225 - side)
        crop = image[:, :, top : top + side, left : left + side]  # RandomResizedCrop(96), antialiased
        crop = torch.nn.functional.interpolate(crop, size=(96, 96), mode="bilinear", antialias=True)[0]
        if random.random() < 0.5:
            crop = torch.flip(crop, dims=[2])
        return (crop - 0.5) / 0.25, index % 10


class Jpegs(Dataset):  # type: ignore[type-arg]
    """ImageFolder of JPEGs: PIL decode, RandomResizedCrop(SIDE), RandomHorizontalFlip, to a float tensor."""

    def __init__(self, root: str) -> None:
        self.items = sorted(
            (str(p), i) for i, folder in enumerate(sorted(Path(root).iterdir())) for p in folder.glob("*.jpg")
        )

    def __len__(self) -> int:
        return 10**6

    def __getitem__(self, index: int) -> Any:
        from PIL import Image

        path, label = self.items[index % len(self.items)]
        with Image.open(path) as opened:
            image = opened.convert("RGB")
        width, height = image.size
        area = width * height * random.uniform(0.08, 1.0)
        ratio = random.uniform(3 / 4, 4 / 3)
        w = min(width, round((area * ratio) ** 0.5))
        h = min(height, round((area / ratio) ** 0.5))
        left, top = random.randint(0, width - w), random.randint(0, height - h)
        image = image.resize((SIDE, SIDE), Image.BILINEAR, box=(left, top, left + w, top + h))
        if random.random() < 0.5:
            image = image.transpose(Image.FLIP_LEFT_RIGHT)
        tensor = torch.frombuffer(bytearray(image.tobytes()), dtype=torch.uint8).view(SIDE, SIDE, 3)
        return tensor.permute(2, 0, 1).float().div(255), label


class Sleepy(Dataset):  # type: ignore[type-arg]
    def __len__(self) -> int:
        return 10**6

    def __getitem__(self, index: int) -> Any:
        time.sleep(0.005)
        return torch.zeros(3, 32, 32), index % 10


class Mnist(Dataset):  # type: ignore[type-arg]
    """datasets.MNIST's shape: 28x28 uint8 images held in memory, ToTensor and Normalize per sample."""

    def __init__(self) -> None:
        self.images = torch.randint(
            0, 256, (6000, 28, 28), dtype=torch.uint8, generator=torch.Generator().manual_seed(0)
        )

    def __len__(self) -> int:
        return len(self.images)

    def __getitem__(self, index: int) -> Any:
        image = self.images[index].float().div(255).unsqueeze(0)
        return (image - 0.1307) / 0.3081, index % 10


class Records(Dataset):  # type: ignore[type-arg]
    """Pure-Python work per sample: a text record tokenised, counted and hashed into a feature vector."""

    def __len__(self) -> int:
        return 10**6

    def __getitem__(self, index: int) -> Any:
        rng = random.Random(index)
        words = [f"w{rng.randrange(5000)}" for _ in range(600)]
        features = [0.0] * 64
        for word in words:
            features[hash(word) % 64] += 1.0
        return torch.tensor(features) / 600, index % 10


class Remote(Dataset):  # type: ignore[type-arg]
    """Each sample waits 5-20 ms on remote storage (a sleep), then is a small tensor."""

    def __len__(self) -> int:
        return 10**6

    def __getitem__(self, index: int) -> Any:
        time.sleep(random.uniform(0.005, 0.020))
        return torch.randn(64), index % 10


def dataset(pipeline: str) -> Dataset:  # type: ignore[type-arg]
    made = {"imagenet": Dummy, "sleep": Sleepy, "mnist": Mnist, "pyload": Records, "ioload": Remote}
    if pipeline in made:
        return made[pipeline]()
    if pipeline == "slowstep":
        return Sleepy()
    return Jpegs(os.environ["BENCH_JPEGS"])


def make_loader(
    pipeline: str | None = None,
    workers: int | None = None,
    prefetch: int | None = None,
    persistent: bool = False,
) -> DataLoader:  # type: ignore[type-arg]
    """The pipeline's DataLoader (for smoke --loader: BENCH_PIPELINE and BENCH_WORKERS name it)."""
    name = pipeline or os.environ["BENCH_PIPELINE"]
    count = workers if workers is not None else int(os.environ.get("BENCH_WORKERS", "0"))
    extra: dict[str, Any] = {}
    if count:
        extra = {"prefetch_factor": prefetch or 2, "persistent_workers": persistent}
    return DataLoader(
        dataset(name),
        batch_size=BATCH[name],
        shuffle=True,
        num_workers=count,
        generator=torch.Generator().manual_seed(0),
        **extra,
    )


class MnistNet(torch.nn.Module):
    """pytorch/examples mnist/main.py's Net."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 32, 3, 1)
        self.conv2 = torch.nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = torch.nn.Dropout(0.25)
        self.dropout2 = torch.nn.Dropout(0.5)
        self.fc1 = torch.nn.Linear(9216, 128)
        self.fc2 = torch.nn.Linear(128, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.conv1(x))
        x = torch.nn.functional.max_pool2d(torch.relu(self.conv2(x)), 2)
        x = torch.flatten(self.dropout1(x), 1)
        x = self.dropout2(torch.relu(self.fc1(x)))
        return torch.nn.functional.log_softmax(self.fc2(x), dim=1)


def model(pipeline: str = "imagenet") -> torch.nn.Module:
    if pipeline == "mnist":
        return MnistNet()
    if pipeline in ("pyload", "ioload"):  # a light MLP
        return torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 32, 3, stride=2, padding=1),
        torch.nn.ReLU(),
        torch.nn.Conv2d(32, 64, 3, stride=2, padding=1),
        torch.nn.ReLU(),
        torch.nn.Conv2d(64, 64, 3, stride=2, padding=1),
        torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(),
        torch.nn.Linear(64, 10),
    )


def train(pipeline: str, loader: DataLoader, batches: int) -> float:  # type: ignore[type-arg]
    """Batches/s of the training loop over `batches` steady batches (the first 3 are start-up)."""
    net = model(pipeline)
    optimiser: torch.optim.Optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
    if pipeline == "mnist":
        optimiser = torch.optim.Adadelta(net.parameters(), lr=1.0)
    started = 0.0
    for n, (x, y) in enumerate(loader):
        if n == 3:
            started = time.perf_counter()
        if n >= batches + 3:
            break
        if pipeline in NETS:
            out = net(x)
            loss = (
                torch.nn.functional.nll_loss(out, y)
                if pipeline == "mnist"
                else torch.nn.functional.cross_entropy(out, y)
            )
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
        else:
            time.sleep(STEP_S[pipeline])
    return batches / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pipeline", required=True, choices=sorted(BATCH))
    parser.add_argument("--workers", default="0")
    parser.add_argument("--prefetch", type=int, default=None)
    parser.add_argument("--persistent", action="store_true")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--batches", type=int, default=30)
    args = parser.parse_args()
    default_threads = torch.get_num_threads()
    configs = [
        (int(n.split("@")[0]), int(n.split("@")[1]) if "@" in n else None) for n in args.workers.split(",")
    ]
    for round_ in range(args.rounds):
        order = configs[round_ % len(configs) :] + configs[: round_ % len(configs)]  # interleaved, rotated
        for count, threads in order:
            torch.set_num_threads(threads or default_threads)
            loader = make_loader(args.pipeline, count, args.prefetch, args.persistent)
            rate = train(args.pipeline, loader, args.batches)
            del loader
            row = {"round": round_, "workers": count, "threads": threads, "batches_per_s": round(rate, 3)}
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
