"""channels (pure): where a `channel/subdir::package` spec comes from."""

from __future__ import annotations

from envguard.channels import expand_channels


def test_channel_prefix_with_any_known_subdir_names_the_channel() -> None:
    """`conda-forge/linux-aarch64::numpy` comes from conda-forge, not from a channel named
    `.../linux-aarch64`."""
    for subdir in ("linux-aarch64", "linux-ppc64le", "win-arm64", "noarch"):
        assert expand_channels(["conda-forge"], [f"conda-forge/{subdir}::numpy"]) == ["conda-forge"]
    assert expand_channels([], ["bioconda/osx-arm64::samtools"]) == ["bioconda"]
    # a channel whose last path part is not a subdir is kept whole
    assert expand_channels([], ["https://host/chan/extra::x"]) == ["https://host/chan/extra"]
