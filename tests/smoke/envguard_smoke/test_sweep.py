"""sweep.py: the user's own DataLoader rebuilt with only the arguments --sweep may vary changed."""

from __future__ import annotations

from types import ModuleType

from envguard_smoke import sweep


def test_a_rebuilt_loader_keeps_everything_but_the_swept_argument(planted: ModuleType) -> None:
    given = planted.storage_bound_loader()
    built = sweep.rebuild(given, {"num_workers": 2})
    assert built.num_workers == 2 and built.batch_sampler.sampler is given.sampler
    assert built.sampler is given.sampler and built.sampler.generator is given.sampler.generator
    assert (built.batch_size, built.drop_last) == (16, False)
    assert built.collate_fn is planted.keyed_collate and built.prefetch_factor == 4
    assert built.persistent_workers is True
    zero = sweep.rebuild(given, {"num_workers": 0})  # DataLoader refuses prefetch/persistent without workers
    assert zero.prefetch_factor is None and zero.persistent_workers is False
