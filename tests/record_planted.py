"""Planted datasets for `envguard smoke --record/--compare` (loaded by path, never imported by a test)."""

from __future__ import annotations

import numpy
import torch
from torch.utils.data import Dataset


class Scaled(Dataset):  # type: ignore[type-arg]
    """A label scaled the way ML code does it: numpy.float32 * a Python float. NumPy 2 keeps float32 (NEP
    50), NumPy 1 promoted it to float64: the same code gives another value type after an upgrade."""

    def __len__(self) -> int:
        return 96

    def __getitem__(self, index: int) -> dict[str, object]:
        return {"image": torch.full((3, 4, 4), index / 96.0), "weight": numpy.float32(index) * 0.1}


class ScaledEdited(Scaled):
    """The same dataset after an edit that changed one sample (index 41)."""

    def __getitem__(self, index: int) -> dict[str, object]:
        item = super().__getitem__(index)
        if index == 41:
            item["image"] = item["image"] + 1.0  # type: ignore[operator]
        return item
