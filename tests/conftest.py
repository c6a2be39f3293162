"""Shared pytest setup: `cuda`-marked tests run only where a CUDA device is present."""

from __future__ import annotations

import pytest


def _cuda_available() -> bool:
    try:
        from runtime import cuda
        return bool(cuda.is_available())
    except Exception:
        return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _cuda_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device (run on the GPU machine)")
    for item in items:
        if "cuda" in item.keywords:
            item.add_marker(skip)
