"""Identity by index through the user's own loader, and state set between epochs reaching its workers.

The loader runs as given (its workers, sampler, collate_fn, persistent_workers); its (batch) sampler is
wrapped once for every epoch, recording which indices each batch was built from. Each delivered batch is
compared with the user's own collate_fn over `dataset[i]` for those indices, read in this (main) process:
any collate_fn (a dict of lists, a custom tuple) is compared whole, never taken apart. When the training
loop's `dataset.set_epoch(e)` exists it is called before each epoch, as the loop does; a batch of epoch
e >= 1 that matches the main process at epoch 0 instead of e was read from a stale dataset copy (persistent
workers). Reads in the main process run with the global RNGs saved and restored around them.
"""

from __future__ import annotations

import random
import time
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from .canonical import digest
from .heartbeat import Watched

FIRST_BATCH_S: List[float] = []  # per epoch walked, oldest first (start-up is read from the first)
SEEDS = (11, 22)  # a reference read twice under different global seeds: differing reads are random content


class Batches:
    """Wraps a (batch) sampler for several epochs: `epochs[e]` lists the index batches it handed out in epoch
    e, in dispatch order (the DataLoader delivers them in that order). A generator, so an iterator made and
    never advanced (torch makes one extra per first epoch) records nothing."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.epochs: List[List[List[Any]]] = []

    def __len__(self) -> int:
        return len(self.inner)

    def __iter__(self) -> Iterator[Any]:
        current: List[List[Any]] = []
        self.epochs.append(current)
        for item in self.inner:
            current.append(list(item) if isinstance(item, (list, tuple)) else [item])
            yield item


class Forwarding(Watched):
    """The watch folder's read recorder around the user's dataset that forwards every other attribute, read
    or set, to it: a worker_init_fn configuring `get_worker_info().dataset` (shards, offsets, a connection)
    configures the user's dataset, as without envguard."""

    OWN = ("inner", "folder")

    def __getattr__(self, name: str) -> Any:
        if name in Forwarding.OWN or name.startswith("__"):  # unpickling looks these up before they exist
            raise AttributeError(name)
        return getattr(self.inner, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in Forwarding.OWN:
            object.__setattr__(self, name, value)
        else:
            setattr(self.inner, name, value)


class _Rngs:
    """Save the global torch/random/numpy RNG states and restore them (reads here must not move the loop's
    shuffle, which follows the global RNG when the loader has no generator)."""

    def __enter__(self) -> "_Rngs":
        import torch

        self.torch, self.random = torch.get_rng_state(), random.getstate()
        try:
            import numpy

            self.numpy: Any = numpy.random.get_state()
        except ImportError:
            self.numpy = None
        return self

    def __exit__(self, *_exc: Any) -> None:
        import torch

        torch.set_rng_state(self.torch)
        random.setstate(self.random)
        if self.numpy is not None:
            import numpy

            numpy.random.set_state(self.numpy)


def _seed(seed: int) -> None:
    import torch

    torch.manual_seed(seed)
    random.seed(seed)
    try:
        import numpy

        numpy.random.seed(seed)
    except ImportError:
        pass


def reference(loader: Any, dataset: Any, indices: List[Any], seed: int) -> str:
    """The digest of what the user's collate_fn builds from these indices read in this process."""
    _seed(seed)
    if loader.batch_sampler is None:  # no automatic batching: one index, collate_fn converts one sample
        return digest(loader.collate_fn(dataset[indices[0]]))
    many = getattr(dataset, "__getitems__", None)
    samples = many(list(indices)) if callable(many) else [dataset[i] for i in indices]
    return digest(loader.collate_fn(samples))


def _judge(
    loader: Any,
    dataset: Any,
    sent: List[List[Any]],
    delivered: List[str],
    epoch: int,
    set_epoch: Optional[Callable[..., Any]],
) -> Dict[str, Any]:
    """One epoch: how many delivered batches match the main process, are random, or are stale (epoch 0)."""
    row: Dict[str, Any] = {"epoch": epoch, "batches": len(delivered), "random": 0, "differ": [], "stale": 0}
    with _Rngs():
        references = [tuple(reference(loader, dataset, b, s) for s in SEEDS) for b in sent]
        if set_epoch is not None and epoch > 0:
            set_epoch(0)
            try:
                olds = [reference(loader, dataset, b, SEEDS[0]) for b in sent]
            finally:
                set_epoch(epoch)
        else:
            olds = [""] * len(sent)
    pairs = [(delivered[k], references[k], olds[k], sent[k]) for k in range(len(delivered))]
    if getattr(loader, "in_order", True) is False:  # batches may arrive in any order: compare as sets
        expected = sorted(r[0] for r in references)
        same = sorted(delivered) == expected
        pairs = [] if same else pairs
    for got, (first, second), old, indices in pairs:
        if first != second:
            row["random"] += 1
        elif got != first:
            row["differ"].append([repr(i) for i in indices])
            row["stale"] += int(bool(old) and got == old)
    return row


def walk(
    loader: Any,
    epochs: int,
    limit: int,
    judge: bool = True,
    wrap: Optional[Callable[[Any], Any]] = None,
) -> Tuple[List[List[str]], List[Any]]:
    """The first `limit` indices of each epoch (repr'd), iterating the real loader; with `judge`, each epoch's
    identity row as well. `dataset.set_epoch(e)` is called before epoch e when the dataset has one; `wrap`
    (the watch folder's reads recorder) wraps the dataset the workers read."""
    name = "batch_sampler" if loader.batch_sampler is not None else "sampler"
    recording = Batches(getattr(loader, name))
    dataset = loader.dataset
    # DataLoader forbids setting them once built: swap them in (for every epoch: persistent workers' iterator
    # keeps the sampler it was made with), then put the user's back
    object.__setattr__(loader, name, recording)
    if wrap is not None:
        object.__setattr__(loader, "dataset", wrap(dataset))
    set_epoch = getattr(dataset, "set_epoch", None)
    set_epoch = set_epoch if callable(set_epoch) else None
    orders: List[List[str]] = []
    rows: List[Any] = []
    try:
        for epoch in range(epochs):
            if set_epoch is not None:
                set_epoch(epoch)
            delivered: List[str] = []
            taken = 0
            began = time.perf_counter()
            for batch in loader:
                if not delivered:  # iter() to the first batch: the workers' start-up under their method
                    FIRST_BATCH_S.append(
                        round(time.perf_counter() - began, 4)
                    )  # the user's workers, worker_init_fn and collate_fn run on each batch
                delivered.append(digest(batch) if judge else "")
                taken += len(recording.epochs[-1][len(delivered) - 1])
                if taken >= limit:
                    break
            sent = recording.epochs[-1][: len(delivered)] if recording.epochs else []
            orders.append([repr(i) for b in sent for i in b][:limit])
            if judge:
                rows.append(_judge(loader, dataset, sent, delivered, epoch, set_epoch))
    finally:
        object.__setattr__(loader, name, recording.inner)
        object.__setattr__(loader, "dataset", dataset)
    return orders, rows


def record(loader: Any, rows: List[Any]) -> Dict[str, Any]:
    """The identity record for the report: the loader's worker settings and each epoch's row."""
    return {
        "num_workers": int(loader.num_workers),
        "persistent_workers": bool(loader.persistent_workers),
        "collate_fn": getattr(loader.collate_fn, "__qualname__", type(loader.collate_fn).__name__),
        "set_epoch": callable(getattr(loader.dataset, "set_epoch", None)),
        "epochs": rows,
    }
