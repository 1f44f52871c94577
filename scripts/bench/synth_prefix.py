"""Benchmark prefixes at scale: N conda-meta records shaped like conda's own, M pip dist-infos, real files.

    python scripts/bench/synth_prefix.py OUT --packages 3000 --dists 500 [--no-payload]

Records are written the way conda writes them (indent 2, every field: `files`, `paths_data` with sha256,
sha256_in_prefix and size_in_bytes per file, `link`, `extracted_package_dir`, ...), with a skewed number of
files per package (log-normal, median 20: records of 6-8 KB, a long tail) and one `pytorch` record listing
15,000 files (~4.4 MB), as in a real CUDA environment. With payload, every listed file exists with the
content its sha256 says (log-normal sizes, median 1 KiB), so `check --files` hashes real bytes. Deterministic
for a given seed. `variant()` copies only the metadata (conda-meta and the dist-infos) and can bump versions:
the other side of a diff.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import shutil
from pathlib import Path

SITE = "lib/python3.11/site-packages"
TORCH_FILES = 15_000


def _files(rng: random.Random, name: str, count: int) -> list[tuple[str, bytes]]:
    out = []
    for number in range(count):
        size = min(4 << 20, max(16, int(rng.lognormvariate(math.log(1024), 1.5))))
        line = f"{name} file {number} ".encode()
        data = (line * (size // len(line) + 1))[:size]
        folder = f"{SITE}/{name}" if number % 3 else f"share/{name}"
        out.append((f"{folder}/m{number // 50}/f{number}.py", data))
    return out


def _record(name: str, version: str, index: int, files: list[tuple[str, bytes]]) -> dict[str, object]:
    build = f"py311h{index:07x}_0"
    dist = f"{name}-{version}-{build}"
    url = f"https://conda.anaconda.org/conda-forge/linux-64/{dist}.conda"
    paths = []
    for path, data in files:
        digest = hashlib.sha256(data).hexdigest()
        paths.append(
            {
                "_path": path,
                "path_type": "hardlink",
                "sha256": digest,
                "sha256_in_prefix": digest,
                "size_in_bytes": len(data),
            }
        )
    return {
        "build": build,
        "build_number": 0,
        "channel": "https://conda.anaconda.org/conda-forge/linux-64",
        "constrains": [f"c{index % 7} >=1"],
        "depends": ["python >=3.11,<3.12.0a0", "libgcc >=13"] + [f"dep{j} >=1.{j}" for j in range(index % 9)],
        "extracted_package_dir": f"/opt/conda/pkgs/{dist}",
        "features": "",
        "files": [p for p, _d in files],
        "fn": f"{dist}.conda",
        "license": "BSD-3-Clause",
        "link": {"source": f"/opt/conda/pkgs/{dist}", "type": 1},
        "md5": hashlib.md5(dist.encode()).hexdigest(),
        "name": name,
        "package_tarball_full_path": f"/opt/conda/pkgs/{dist}.conda",
        "paths_data": {"paths": paths, "paths_version": 1},
        "requested_spec": "",
        "sha256": hashlib.sha256(dist.encode()).hexdigest(),
        "size": 10_000 + index,
        "subdir": "linux-64",
        "timestamp": 1700000000000 + index,
        "track_features": "",
        "url": url,
        "version": version,
    }


def build(
    out: Path, packages: int, dists: int, *, payload: bool = True, seed: int = 12, median: int = 20
) -> Path:
    """A prefix at OUT (reused when it is already there) with `packages` records and `dists` dist-infos;
    `median`: the median number of files a record lists (the scale benchmark's 100,000-record prefixes use 2,
    and a pytorch of that size too, so they stay ~1.5 KB a record)."""
    if (out / "conda-meta" / "history").exists():
        return out
    rng = random.Random(seed)
    meta = out / "conda-meta"
    meta.mkdir(parents=True)
    for index in range(packages):
        if index == 0:
            name, version, count = "python", "3.11.7", 40
        elif index == 1:
            name, version, count = "pytorch", "2.1.0", TORCH_FILES if median >= 20 else median
        else:
            name, version = f"pkg{index:05d}", f"1.{index % 17}.{index % 5}"
            spread = 1.75 if median >= 20 else 0.5
            count = min(5000, max(1, int(rng.lognormvariate(math.log(median), spread))))
        files = _files(rng, name, count)
        record = _record(name, version, index, files)
        (meta / f"{name}-{version}-{record['build']}.json").write_text(json.dumps(record, indent=2))
        if payload:
            for path, data in files:
                target = out / path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
    site = out / SITE
    for number in range(dists):
        folder = site / f"pipdist{number:04d}-1.{number % 9}.0.dist-info"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: pipdist{number:04d}\nVersion: 1.{number % 9}.0\n"
            "Summary: benchmark distribution\n"
        )
        (folder / "INSTALLER").write_text("pip\n")
        (folder / "RECORD").write_text(
            "".join(f"pipdist{number:04d}/m{j}.py,sha256=x,10\n" for j in range(12))
        )
    (meta / "history").write_text(
        "==> 2026-11-30 10:00:00 <==\n# cmd: conda create -n bench python=3.11 pytorch\n"
        "# conda version: 24.1.0\n+conda-forge/linux-64::python-3.11.7-py311h0000000_0\n"
        "# update specs: ['python=3.11', 'pytorch']\n"
    )
    return out


def variant(source: Path, out: Path, bump: int = 0) -> Path:
    """A metadata-only copy of SOURCE at OUT (conda-meta and dist-infos), `bump` package versions changed."""
    if out.exists():
        return out
    shutil.copytree(source / "conda-meta", out / "conda-meta")
    shutil.copytree(source / SITE, out / SITE, ignore=shutil.ignore_patterns("pkg*", "pytorch", "python"))
    records = sorted(p for p in (out / "conda-meta").glob("pkg*.json"))
    for path in records[:: max(1, len(records) // bump)][:bump] if bump else ():
        record = json.loads(path.read_text())
        record["version"] += ".post1"
        path.write_text(json.dumps(record, indent=2))
    return out


def files_of(prefix: Path) -> list[str]:
    """Every file the records list (what `check --files` hashes), for the sha256sum floor."""
    listed = []
    for path in sorted((prefix / "conda-meta").glob("*.json")):
        listed.extend(str(prefix / p) for p in json.loads(path.read_bytes())["files"])
    return listed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--packages", type=int, default=300)
    parser.add_argument("--dists", type=int, default=50)
    parser.add_argument("--no-payload", action="store_true")
    parser.add_argument("--files", type=int, default=20, help="median files per record")
    args = parser.parse_args()
    prefix = build(args.out, args.packages, args.dists, payload=not args.no_payload, median=args.files)
    records = list((prefix / "conda-meta").glob("*.json"))
    sizes = sorted(p.stat().st_size for p in records)
    print(
        f"{prefix}: {len(records)} records, median {sizes[len(sizes) // 2] / 1024:.1f} KB, "
        f"largest {sizes[-1] / 1e6:.1f} MB, {len(files_of(prefix))} files; {os.cpu_count()} CPUs"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
