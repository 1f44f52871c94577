"""Semantic names (pure): frameworks, accelerators, python, the hash fallback, and name validation."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from envguard.create.naming import (
    MAX_LENGTH,
    NameFacts,
    compose,
    content_hash,
    semantic_name,
    suggest,
    validate,
)
from envguard.errors import UsageError
from envguard.formats.envyml import parse
from envguard.model import Package, RequestedSpec, make_environment


def conda(name: str, version: str, build: str = "0") -> Package:
    return Package("conda", name, version, build)


def resolved(*packages: Package, requested: tuple[str, ...] = ()) -> str:
    env = make_environment(
        kind="prefix", packages=packages, requested=tuple(RequestedSpec("conda", s) for s in requested)
    )
    return semantic_name(env)


PY311 = conda("python", "3.11.9", "hab00c5b_0_cpython")


def test_pytorch_cuda_build_from_packages() -> None:
    torch = conda("pytorch", "2.1.0", "py3.11_cuda11.8_cudnn8.7.0_0")
    assert resolved(PY311, torch, conda("pytorch-cuda", "11.8")) == "pytorch2.1-cuda118-py311"


def test_pytorch_cpu_build() -> None:
    torch = conda("pytorch", "2.3.1", "py3.12_cpu_0")
    assert resolved(conda("python", "3.12.4"), torch) == "pytorch2.3-cpu-py312"


def test_tensorflow_gpu_and_cpu() -> None:
    py310 = conda("python", "3.10.14")
    assert resolved(py310, conda("tensorflow", "2.12.1", "cuda118py310h8bbbd58_0")) == "tf2.12-gpu-py310"
    assert resolved(py310, conda("tensorflow", "2.12.1", "cpu_py310h0_0")) == "tf2.12-cpu-py310"


def test_jax_cuda_major_only() -> None:
    jaxlib = conda("jaxlib", "0.4.30", "cuda120py311h9b5e2ea_200")
    assert resolved(PY311, conda("jax", "0.4.30", "pyhd8ed1ab_0"), jaxlib) == "jax0.4-cuda12-py311"
    assert (
        resolved(PY311, conda("jax", "0.4.30"), conda("jaxlib", "0.4.30", "cpu_py311h0_0"))
        == "jax0.4-cpu-py311"
    )


def test_pip_torch_local_version() -> None:
    torch = Package("pip", "torch", "2.1.2+cu121")
    assert resolved(PY311, torch) == "pytorch2.1-cuda121-py311"


def test_pytorch_wins_over_other_frameworks() -> None:
    torch = conda("pytorch", "2.1.0", "py3.11_cpu_0")
    assert resolved(PY311, torch, conda("jax", "0.4.30")).startswith("pytorch2.1-cpu")


def test_the_recorded_conda_environment_gets_the_documented_name() -> None:
    # the packages of ../shared/reference/conda-outputs/list_conda_created-small.json
    packages = (
        conda("python", "3.11.9"),
        conda("pytorch", "2.1.0", "cuda118_0"),
        conda("cudatoolkit", "11.8.0"),
    )
    assert resolved(*packages) == "pytorch2.1-cuda118-py311"


def test_fallback_hash_is_stable_and_order_free() -> None:
    a = resolved(PY311, conda("six", "1.16.0"), requested=("python=3.11", "six"))
    b = resolved(conda("six", "1.16.0"), PY311, requested=("six", "python=3.11"))
    assert a == b
    assert re.fullmatch(r"py311-[0-9a-f]{6}", a)
    c = resolved(PY311, conda("six", "1.16.0"), requested=("python=3.11", "six", "zlib"))
    assert c != a


def test_fallback_hash_matches_between_environment_yml_and_spellings() -> None:
    yml = parse("dependencies:\n  - python=3.11\n  - six\n", platform="linux-64")
    assert semantic_name(yml) == resolved(PY311, conda("six", "1.16.0"), requested=("six", "python 3.11.*"))


def test_no_python_no_framework() -> None:
    assert re.fullmatch(r"env-[0-9a-f]{6}", resolved(conda("zlib", "1.3.1")))


@pytest.mark.parametrize(
    ("deps", "expected"),
    [
        (["python=3.11", "pytorch=2.1=*cuda11.8*"], "pytorch2.1-cuda118-py311"),
        (["python=3.11", "pytorch=2.1", "pytorch-cuda=12.1"], "pytorch2.1-cuda121-py311"),
        (["python=3.12", "pytorch=2.3", "cpuonly"], "pytorch2.3-cpu-py312"),
        (["python=3.11", "pytorch>=2"], "pytorch-py311"),
        (["python=3.10", "tensorflow=2.12", "cudatoolkit=11.8"], "tf2.12-gpu-py310"),
        (["python=3.11", "jax=0.4", "jaxlib=*=cuda120*"], "jax0.4-cuda12-py311"),
    ],
)
def test_names_from_specs_without_solving(deps: list[str], expected: str) -> None:
    text = "dependencies:\n" + "".join(f"  - {d}\n" for d in deps)
    assert semantic_name(parse(text, platform="linux-64")) == expected


def test_pip_framework_in_environment_yml() -> None:
    text = "dependencies:\n  - python=3.11\n  - pip:\n    - torch==2.1.0\n"
    assert semantic_name(parse(text, platform="linux-64")) == "pytorch2.1-py311"


@pytest.mark.parametrize(
    "bad", ["../x", "-rf", "a/b", "a\\b", "", ".", "..", "my env", "x:y", "é", "base", "x" * (MAX_LENGTH + 1)]
)
def test_invalid_names_are_refused(bad: str) -> None:
    with pytest.raises(UsageError):
        validate(bad)


@pytest.mark.parametrize(
    "good", ["pytorch2.1-cuda118-py311", "py311-a1b2c3", "_private", "A.b_c-1", "x" * MAX_LENGTH]
)
def test_valid_names(good: str) -> None:
    assert validate(good) == good


def test_suggest_skips_taken_names() -> None:
    taken = {"env", "env-2"}
    assert suggest("env", lambda n: n in taken) == "env-3"
    assert len(suggest("x" * MAX_LENGTH, lambda n: False)) <= MAX_LENGTH


@given(st.text(max_size=80))
def test_validate_accepts_only_portable_names(text: str) -> None:
    try:
        validate(text)
    except UsageError:
        return
    assert re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,63}", text)
    assert "/" not in text and not text.startswith("-")


_versions = st.from_regex(r"[0-9]{1,3}(\.[0-9]{1,3}){0,3}", fullmatch=True)


@given(_versions, _versions, st.sampled_from(["cuda11.8", "cuda12.1", "cpu", "rocm5.7", "weird"]))
def test_generated_names_always_validate(torch: str, python: str, kind: str) -> None:
    name = resolved(conda("python", python), conda("pytorch", torch, f"py3_{kind}_0"))
    assert validate(name) == name


def test_compose_truncates_to_limit() -> None:
    facts = NameFacts("pytorch", "1" * 80, "cpu", "py311")
    assert len(compose(facts, "abcdef")) == MAX_LENGTH


def test_content_hash_prefers_requested_specs() -> None:
    with_specs = make_environment(
        kind="prefix", packages=(PY311,), requested=(RequestedSpec("conda", "python=3.11"),)
    )
    other_packages = make_environment(
        kind="prefix",
        packages=(conda("python", "3.11.1"),),
        requested=(RequestedSpec("conda", "python=3.11"),),
    )
    assert content_hash(with_specs) == content_hash(other_packages)


def test_trailing_newline_is_refused() -> None:
    with pytest.raises(UsageError):
        validate("pytorch2.1-cpu-py311\n")
