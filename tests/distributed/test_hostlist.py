"""Slurm hostlist expressions expanded as `scontrol show hostnames` does: slurm.conf(5)'s and scontrol(1)'s
documented examples, zero padding, several groups, a suffix, and a property test over generated lists."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from envguard.distributed.hostlist import first_host, hostnames
from envguard.errors import BadInputError


def test_the_documented_examples() -> None:
    assert hostnames("tux[1-3]") == ["tux1", "tux2", "tux3"]  # scontrol(1), `show hostnames`
    assert hostnames("alpha,beta,gamma") == ["alpha", "beta", "gamma"]  # slurm.conf(5), NodeName
    linux = hostnames("linux[0-64,128]")
    assert len(linux) == 66 and linux[:2] == ["linux0", "linux1"] and linux[-2:] == ["linux64", "linux128"]
    assert hostnames("lx[15,18,32-33]") == ["lx15", "lx18", "lx32", "lx33"]
    padded = hostnames("linux[0000-1023]")
    assert len(padded) == 1024 and padded[0] == "linux0000" and padded[-1] == "linux1023"
    assert hostnames("tux[2,1-2]") == ["tux2", "tux1", "tux2"]  # scontrol(1): neither sorted nor unique


def test_several_groups_the_outer_one_first() -> None:
    racks = hostnames("rack[0-63]_blade[0-41]")  # slurm.conf(5)
    assert len(racks) == 64 * 42
    assert racks[:3] == ["rack0_blade0", "rack0_blade1", "rack0_blade2"]
    assert racks[42] == "rack1_blade0" and racks[-1] == "rack63_blade41"


def test_a_job_node_list_as_slurm_writes_it() -> None:
    nodes = "gpu-a[001-003,010],gpu-b017 c[9-10]-ib"
    assert hostnames(nodes) == [
        "gpu-a001",
        "gpu-a002",
        "gpu-a003",
        "gpu-a010",
        "gpu-b017",
        "c9-ib",
        "c10-ib",
    ]
    assert first_host(nodes) == "gpu-a001"
    assert hostnames("n[1-010]") == [f"n{i}" for i in range(1, 11)]  # the low bound's width: no padding
    assert hostnames("n[08-10]") == ["n08", "n09", "n10"]


def test_the_first_host_of_a_huge_list_without_expanding_it() -> None:
    assert first_host("n[0-65535],m[0-65535]") == "n0"


@pytest.mark.parametrize(
    ("expression", "why"),
    [
        ("a[1-", "without ']'"),
        ("a[]", "not a number"),
        ("a[3-1]", "runs backwards"),
        ("a[x]", "not a number"),
        ("a[-1]", "not a number"),
        ("a[1-٣]", "not a number"),
        ("a[0-70000]", "more than 65536"),
    ],
)
def test_malformed_lists_say_what_and_what_to_do(expression: str, why: str) -> None:
    with pytest.raises(BadInputError) as raised:
        hostnames(expression)
    message = str(raised.value)
    assert repr(expression) in message and why in message and "MASTER_ADDR" in message
    with pytest.raises(BadInputError, match="names no host"):
        first_host(" , ")


NAME = st.text(alphabet="abcdefghijklmnopqrstuvwxyz-", min_size=1, max_size=6).filter(
    lambda s: not s.endswith("-")
)
RANGE = st.tuples(st.integers(0, 120), st.integers(0, 6), st.integers(0, 4))  # low, extra hosts, extra zeros


@given(
    st.lists(
        st.tuples(NAME, st.lists(RANGE, min_size=1, max_size=3), st.sampled_from(["", "-ib"])), min_size=1
    )
)
def test_generated_lists_expand_to_what_they_were_built_from(
    groups: list[tuple[str, list[tuple[int, int, int]], str]],
) -> None:
    written: list[str] = []
    expected: list[str] = []
    for prefix, ranges, suffix in groups:
        parts = []
        for low, extra, zeros in ranges:
            low_text = "0" * zeros + str(low)
            parts.append(low_text if extra == 0 else f"{low_text}-{low + extra}")
            expected += [f"{prefix}{n:0{len(low_text)}d}{suffix}" for n in range(low, low + extra + 1)]
        written.append(f"{prefix}[{','.join(parts)}]{suffix}")
    assert hostnames(",".join(written)) == expected
    assert hostnames(" ".join(written)) == expected
