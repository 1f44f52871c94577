"""`--data DIR` in the sweep: each file read cold (its cached pages dropped first, so no configuration reads
what an earlier one cached), optionally decoded as an image with PIL (`--decode image`).

A sample is what training would ship to the main process: for raw reads the byte count (not the bytes: a
real pipeline decodes in the worker), for decoded images a fixed-size uint8 tensor (decode + resize, the
cost of a typical transform).
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Dict, List, Optional

import torch
from torch.utils.data import Dataset

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".gif", ".webp", ".tif", ".tiff")
SIDE = 224


def pil_missing() -> Optional[str]:
    """None when PIL imports here, else the one-line reason to skip decoding."""
    try:
        import PIL.Image  # noqa: F401
    except ImportError:
        return "PIL is not importable in this environment (pip install pillow there to time decoding)"
    return None


def _listing(root: str, images: bool) -> List[str]:
    found: List[str] = []
    for folder, dirs, names in os.walk(root):
        dirs.sort()
        for name in sorted(names):
            if not images or name.lower().endswith(IMAGE_SUFFIXES):
                found.append(os.path.relpath(os.path.join(folder, name), root))
    return found


def _read(path: str, cold: bool) -> bytes:
    fd = os.open(path, os.O_RDONLY)
    try:
        if cold and hasattr(os, "posix_fadvise"):
            with contextlib.suppress(OSError):
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


class StorageFolder(Dataset):  # type: ignore[type-arg]
    """The files under `root` (sorted by relative path); `decode="image"` keeps the image files only.

    `length` above the file count cycles through the files (each read cold again), so a small folder still
    gives a configuration enough batches for a steady rate."""

    def __init__(
        self, root: str, cold: bool = True, decode: Optional[str] = None, length: Optional[int] = None
    ) -> None:
        self.root, self.cold, self.decode = root, cold, decode
        self.files = _listing(root, images=decode == "image")
        self.length = max(length or 0, len(self.files))

    def sized(self, length: int) -> "StorageFolder":
        other = StorageFolder.__new__(StorageFolder)
        other.__dict__.update(self.__dict__, length=max(length, len(self.files)))
        return other

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int) -> Dict[str, Any]:
        name = self.files[index % len(self.files)]
        data = _read(os.path.join(self.root, name), self.cold)
        if self.decode != "image":
            return {"index": index, "bytes": len(data)}
        import io

        from PIL import Image

        with Image.open(io.BytesIO(data)) as image:
            rgb = image.convert("RGB").resize((SIDE, SIDE))
            pixels = bytearray(rgb.tobytes())
        tensor = torch.frombuffer(pixels, dtype=torch.uint8).view(SIDE, SIDE, 3).permute(2, 0, 1)
        return {"index": index, "image": tensor, "bytes": len(data)}


def folder(settings: Dict[str, Any], result: Dict[str, Any]) -> StorageFolder:
    """The sweep's data folder; records why decoding was skipped (no PIL, no image files)."""
    decode = settings.get("decode")
    cold = bool(settings.get("data_cold"))
    if decode == "image":
        missing = pil_missing()
        if missing is None and not _listing(settings["data_dir"], images=True):
            missing = "no image files (%s) under %s" % (", ".join(IMAGE_SUFFIXES), settings["data_dir"])
        if missing is not None:
            result["decode_skipped"] = missing
            decode = None
    return StorageFolder(settings["data_dir"], cold=cold, decode=decode)
