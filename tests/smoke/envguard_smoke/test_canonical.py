"""canonical.py: typed, stable digests of samples (tensors, arrays, nested containers) and their identity."""

from __future__ import annotations

from envguard.smoke.envguard_smoke import canonical


def test_canonical_digest_is_typed_and_stable() -> None:
    import numpy as np
    import torch

    assert canonical.digest([1, 2]) != canonical.digest((1, 2))
    assert canonical.digest(torch.zeros(2, dtype=torch.int32)) != canonical.digest(
        torch.zeros(2, dtype=torch.int64)
    )
    assert canonical.digest(torch.zeros(2, 3)) != canonical.digest(torch.zeros(3, 2))
    assert canonical.digest(torch.arange(6).reshape(2, 3).t()) == canonical.digest(
        torch.arange(6).reshape(2, 3).t().contiguous()
    )
    assert canonical.digest(np.arange(3)) == canonical.digest(np.arange(3).copy())
    assert canonical.digest({"b": 1, "a": 2}) == canonical.digest({"a": 2, "b": 1})
    assert canonical.identity({"index": 3, "x": 1.0}) == canonical.identity({"index": 3, "x": 2.0})
    assert canonical.identity((3, 1.0)) != canonical.identity((3, 2.0))
