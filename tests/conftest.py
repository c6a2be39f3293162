"""Shared pytest setup: opgen's packages compiled to bytecode once per run; `cuda`-marked tests run only where a
CUDA device is present."""

from __future__ import annotations

import compileall
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def pytest_configure(config: pytest.Config) -> None:
    """The suite starts many Python processes (the xdist workers, distributed ranks, CLI and program runs),
    and each imports generated/ and runtime/. Where PYTHONDONTWRITEBYTECODE is set (as on the CI machine),
    every one of them would compile those sources again (about 0.7 s of CPU each): the controller writes
    their bytecode once, as a first import does where the variable is unset; processes still never write."""
    if hasattr(config, "workerinput"):  # an xdist worker: the controller has done it
        return
    for package in ("codegen", "runtime", "generated", "demo"):
        compileall.compile_dir(ROOT / package, quiet=1, workers=1)


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
