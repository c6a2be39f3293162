"""Shared helpers for launching the fixed kernels (codegen/gen_cuda.py: `fixed_sources`): where their
sources are, device arrays in a dtype's storage type, the stream and launch sizes. Importable without CuPy;
the CPU backend imports it for `storage_np`, so the launch code is imported by the functions that launch
(Note [The CUDA backend loads on first use] in runtime/cuda/__init__.py).
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any

import numpy as np


def source_path(relative: str) -> str:
    """The path of a generated source, e.g. `cuda/reduce/sum.cu`, inside the `generated` package."""
    spec = importlib.util.find_spec("generated")  # found, not imported: runtime never imports generated
    if spec is None or spec.origin is None:
        raise RuntimeError("opgen: the `generated` package is not on the path; run `opgen generate`")
    return os.path.join(os.path.dirname(os.path.abspath(spec.origin)), relative)


def storage_np(dtype: Any) -> np.dtype:
    """The NumPy/CuPy dtype that stores a runtime dtype (bfloat16 lives in uint16 arrays)."""
    return np.dtype(np.uint16) if dtype.np is None else np.dtype(dtype.np)


def empty(shape: tuple[int, ...], dtype: Any, device: int) -> Any:
    """A new contiguous device array of a runtime dtype, from the caching allocator."""
    from runtime.cuda.device import require_cupy
    from runtime.storage import checked_nbytes  # Note [Impossible allocation sizes]

    cupy = require_cupy()
    np_dtype = storage_np(dtype)
    nbytes = checked_nbytes(tuple(shape), np_dtype.itemsize, f"cuda:{device}")
    try:
        from runtime.cuda.memory import cuda_malloc
    except ImportError:  # pragma: no cover - the allocator is part of the package
        return cupy.empty(tuple(shape), dtype=np_dtype)
    return cupy.ndarray(tuple(shape), dtype=np_dtype, memptr=cuda_malloc(max(nbytes, 1), device))


def element_strides(a: Any) -> tuple[int, ...]:
    return tuple(s // a.itemsize for s in a.strides)


def index_np(bits: int) -> type:
    return np.uint32 if bits == 32 else np.uint64


def launch_1d(fn: Any, work: int, args: tuple[Any, ...], device: int) -> None:
    """Launch a grid-stride kernel over `work` items on the current stream."""
    from runtime.cuda.device import require_cupy, sm_count
    from runtime.cuda.launch import launch_config

    cupy = require_cupy()
    cfg = launch_config(work, sm_count(device))
    fn((cfg.grid,), (cfg.block,), args, stream=cupy.cuda.get_current_stream())


def block_threads(cols: int) -> int:
    """Threads per block for one-block-per-row kernels: a power of two >= 32, at most THREADS * 2."""
    from runtime.cuda.launch import THREADS

    threads = 32
    while threads < cols and threads < 2 * THREADS:
        threads *= 2
    return threads


def device_of(t: Any) -> int:
    return t.device.index or 0
