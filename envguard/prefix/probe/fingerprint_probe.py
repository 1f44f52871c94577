"""envguard fingerprint probe: run by the TARGET environment's own interpreter.

Standalone on purpose: it imports nothing from envguard (and only the standard library unless numpy/torch are
present), so it works in any environment, whatever Python it has. It prints one line:
`ENVGUARD-PROBE-JSON: {...}` with versions and SHA-256 fingerprints of seeded random streams.
"""

import hashlib
import json
import platform
import struct
import sys

N = 10000
MARKER = "ENVGUARD-PROBE-JSON: "


def _digest(values):
    """SHA-256 over the values as little-endian int64: independent of dtype, platform and library."""
    values = [int(v) for v in values]
    return hashlib.sha256(struct.pack(f"<{len(values)}q", *values)).hexdigest()


def _numpy(result, errors):
    try:
        import numpy as np
    except ImportError:
        return
    except Exception as exc:  # a broken install is a finding, not a crash
        errors.append(f"numpy import failed: {type(exc).__name__}: {exc}")
        return
    result["numpy_version"] = np.__version__
    result["numpy_legacy"] = _digest(np.random.RandomState(0).permutation(N).tolist())
    try:
        result["numpy_generator"] = _digest(np.random.default_rng(0).permutation(N).tolist())
    except AttributeError:  # numpy < 1.17 has no Generator
        result["numpy_generator"] = None


def _torch(result, errors):
    try:
        import torch
    except ImportError:
        return
    except Exception as exc:
        errors.append(f"torch import failed: {type(exc).__name__}: {exc}")
        return
    result["torch_version"] = str(torch.__version__)
    generator = torch.Generator().manual_seed(0)
    result["torch_randperm"] = _digest(torch.randperm(N, generator=generator).tolist())
    try:
        from torch.utils.data import DataLoader

        loader = DataLoader(
            list(range(1000)),
            batch_size=10,
            shuffle=True,
            num_workers=0,
            generator=torch.Generator().manual_seed(0),
        )
        order = []
        for batch in loader:
            order.extend(int(i) for i in batch)
        result["dataloader_order"] = _digest(order)
    except Exception as exc:
        errors.append(f"DataLoader order failed: {type(exc).__name__}: {exc}")
    result["torch_cuda"] = getattr(torch.version, "cuda", None)
    try:
        cudnn = torch.backends.cudnn.version()
    except Exception:
        cudnn = None
    result["cudnn"] = str(cudnn) if cudnn else None
    try:
        result["cuda_arch_list"] = list(torch.cuda.get_arch_list())
    except Exception:
        result["cuda_arch_list"] = []


def main():
    errors = []
    result = {
        "python": platform.python_version(),
        "numpy_version": None,
        "numpy_legacy": None,
        "numpy_generator": None,
        "torch_version": None,
        "torch_randperm": None,
        "dataloader_order": None,
        "torch_cuda": None,
        "cudnn": None,
        "cuda_arch_list": [],
        "errors": errors,
    }
    _numpy(result, errors)
    _torch(result, errors)
    sys.stdout.write(MARKER + json.dumps(result, sort_keys=True) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
