"""`--record` / `--compare`: the first N batches as the DataLoader would deliver them (the seeded sampler's
order, or the user's own loader's), each sample's per-field digests, read at num_workers=0 after seeding
torch, NumPy and random. The comparison with a recording lives on the envguard side.
"""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

from .canonical import digest, fields

SYNTHETIC_SIZE = 512


def _source(settings: Dict[str, Any], seed: int) -> Tuple[str, Any, Any, int]:
    """(name, dataset, sampler, batch size): --loader's own sampler and batch size, a seeded RandomSampler
    for --dataset and the synthetic augmented dataset; no sampler for an IterableDataset (its stream's
    order)."""
    import torch
    from torch.utils.data import RandomSampler

    from .datasets import Augmented, is_iterable, load_user

    if settings.get("loader"):
        from .user_loader import factory

        loader = factory(settings["loader"])()
        sampler = loader.batch_sampler if loader.batch_sampler is not None else loader.sampler
        size = int(loader.batch_size or settings["record"]["batch_size"])
        return "loader", loader.dataset, None if is_iterable(loader.dataset) else sampler, size
    if settings.get("dataset"):
        name, dataset = "user", load_user(settings["dataset"])()
    else:
        name, dataset = "augmented", Augmented(SYNTHETIC_SIZE)
    size = int(settings["record"]["batch_size"])
    if is_iterable(dataset):
        return name, dataset, None, size
    generator = torch.Generator()
    generator.manual_seed(seed)
    return name, dataset, RandomSampler(dataset, generator=generator), size


def _indices(sampler: Any, limit: int) -> List[Any]:
    out: List[Any] = []
    for item in sampler:
        out.extend(item if isinstance(item, (list, tuple)) else [item])
        if len(out) >= limit:
            break
    return out[:limit]


def _digests(item: Any) -> Dict[str, str]:
    return {key: digest(value)[:16] for key, value in fields(item).items()}


def observe(settings: Dict[str, Any]) -> Dict[str, Any]:
    """{"dataset", "samples": [{"index", "fields"}...]} for the first batches x batch_size samples."""
    from .datasets import index_name, seed_everything

    options = settings["record"]
    seed = int(options["seed"])
    seed_everything(seed)
    name, dataset, sampler, batch_size = _source(settings, seed)
    limit = int(options["batches"]) * batch_size
    samples: List[Dict[str, Any]] = []
    seed_everything(seed)
    if sampler is None:
        for position, item in enumerate(dataset):
            if position >= limit:
                break
            samples.append({"index": "#%d" % position, "fields": _digests(item)})
    else:
        order = _indices(sampler, limit)
        seed_everything(seed)
        for index in order:
            samples.append({"index": index_name(index), "fields": _digests(dataset[index])})
    return {"dataset": name, "batch_size": batch_size, "samples": samples}
