"""Shared paths for the front-end tests."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
REPO = HERE.parents[2]


@pytest.fixture
def corpus() -> Path:
    return CORPUS
