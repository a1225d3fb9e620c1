"""Tests for model.cli: the command line's one size parser (`aizone run`, `demo`, `model`)."""

from __future__ import annotations

import argparse

import pytest

from model.cli import parse_size


@pytest.mark.parametrize("text,nbytes", [("4096", 4096), ("64K", 65536), ("4M", 4 << 20),
                                         ("1G", 1 << 30), ("2MiB", 2 << 20), ("1.5k", 1536),
                                         ("0", 0)],
                         ids=["plain", "K", "M", "G", "MiB", "fraction-of-K", "zero"])
def test_sizes_take_binary_units(text: str, nbytes: int) -> None:
    """The one size parser: plain bytes, K/M/G (and KiB, MB) as powers of 1024."""
    assert parse_size(text) == nbytes


@pytest.mark.parametrize("text", ["lots", "-1", "1.5", "inf", "", "k"],
                         ids=["word", "negative", "half-a-byte", "infinite", "empty", "unit-only"])
def test_bad_sizes_are_refused(text: str) -> None:
    """Not a whole, finite, non-negative number of bytes: an argparse type error saying so."""
    with pytest.raises(argparse.ArgumentTypeError, match="is not a size in bytes"):
        parse_size(text)
