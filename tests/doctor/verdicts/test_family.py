"""Doctor's torch-family and free-space verdicts over hand-built records: a member that does not import
FAILs naming why, a mismatched train or build that imports WARNs, one family PASSes; low space WARNs."""

from __future__ import annotations

from envguard.cuda import FamilyMember
from envguard.doctor.records import FreeSpace, TorchFamily
from envguard.doctor.verdicts.family import LOW_SPACE, family_findings, space_findings

TORCH_CPU = FamilyMember("torch", "2.13.0+cpu", "pip", "cpu")
VISION_CUDA = FamilyMember("torchvision", "0.29.1", "pip", "default wheel")
VISION_CPU = FamilyMember("torchvision", "0.28.0+cpu", "pip", "cpu")


def test_a_member_that_does_not_import_fails_with_its_error_and_the_mismatch() -> None:
    family = TorchFamily(
        (TORCH_CPU, VISION_CUDA),
        (("torch", ""), ("torchvision", "RuntimeError: operator torchvision::nms does not exist")),
        prefix="/envs/train",
    )
    (found,) = family_findings(family)
    assert (found.check, found.status) == ("torch family", "FAIL")
    assert "import torchvision: RuntimeError: operator torchvision::nms does not exist" in found.evidence
    assert "not from torch 2.13's release (that is torchvision 0.28.x)" in found.evidence
    assert "PyPI's default wheel" in found.evidence and "a CPU build" in found.evidence
    assert (
        "/envs/train/bin/python -m pip install --index-url https://download.pytorch.org/whl/cpu" in found.fix
    )


def test_a_mismatch_that_imports_warns_and_one_family_passes() -> None:
    (warned,) = family_findings(TorchFamily((TORCH_CPU, VISION_CUDA), (("torch", ""), ("torchvision", ""))))
    assert warned.status == "WARN" and "torchvision 0.28.x" in warned.evidence
    (passed,) = family_findings(TorchFamily((TORCH_CPU, VISION_CPU), (("torch", ""), ("torchvision", ""))))
    assert passed.status == "PASS" and "one release train and one build and all import" in passed.evidence
    assert family_findings(TorchFamily((TORCH_CPU,))) == []


def test_conda_members_get_a_conda_fix_for_their_prefix() -> None:
    torch = FamilyMember("pytorch", "2.5.1", "conda", "cuda 12.4")
    vision = FamilyMember("torchvision", "0.20.1", "conda", "cpu")
    (found,) = family_findings(TorchFamily((torch, vision), prefix="/envs/my env"))
    assert found.status == "WARN" and "a CUDA 12.4 build" in found.evidence
    assert "conda install -p '/envs/my env' pytorch=2.5.1 torchvision" in found.fix


def test_low_free_space_warns_where_it_is() -> None:
    found = space_findings(
        (
            FreeSpace("environment", "/envs/train", LOW_SPACE * 10, LOW_SPACE * 100),
            FreeSpace("package cache", "/cache/pkgs", LOW_SPACE // 4, LOW_SPACE * 100),
        )
    )
    assert [(f.check, f.status) for f in found] == [
        ("free space: environment", "PASS"),
        ("free space: package cache", "WARN"),
    ]
    assert "512.0 MiB free" in found[1].evidence and "envguard clean" in found[1].fix
