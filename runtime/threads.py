"""`G.set_num_threads` / `G.get_num_threads`: the CPU threads of opgen's kernels, i.e. NumPy's BLAS.

Note [Thread count]
opgen's CPU kernels are NumPy calls, and the only ones that run threads are BLAS's (matmul, the GEMMs of
convolutions). `set_num_threads(n)` limits every BLAS library loaded in the process to n threads through
threadpoolctl and records n, which the runtime reads where it picks a form by thread count (Note [One GEMM
or one per sample], kernels/conv_ops.py). `get_num_threads()` answers the recorded value, else the BLAS's
own. Interop threads are kept as a number (opgen runs no interop pool). G.compile's fused C++ kernels run
OpenMP threads: `kernel_threads()` gives them the recorded value too, else the OpenMP/BLAS environment's.
`kernel_threads()` runs at every call of a fused kernel that may split, so it reads no environment there:
OMP_NUM_THREADS and OPENBLAS_NUM_THREADS are read once, at its first call, and kept (as OpenMP and
OpenBLAS themselves read them once, at start: set them before the process starts); `set_num_threads(n)`
takes effect at the very next kernel call.
"""

from __future__ import annotations

import os
from typing import Any

_requested: list[int | None] = [None]
_limiter: list[Any] = [None]
_interop: list[int] = [1]
_env_threads: list[int | None] = [None]  # kernel_threads's count from the environment, read at its first call


def _blas_env_one_thread() -> bool:
    for var in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"):
        value = os.environ.get(var, "").strip()
        if value:
            return value == "1"
    return (os.cpu_count() or 1) == 1


_ENV_ONE_THREAD = _blas_env_one_thread()


def one_blas_thread() -> bool:
    """Whether BLAS runs on one thread (set_num_threads(1), or its environment variables at start)."""
    n = _requested[0]
    return _ENV_ONE_THREAD if n is None else n == 1


def set_num_threads(num: int) -> None:
    """Limit the BLAS libraries NumPy uses to `num` threads (Note [Thread count])."""
    if isinstance(num, bool) or not isinstance(num, int) or num <= 0:
        raise RuntimeError(f"set_num_threads expects a positive integer, but got {num!r}")
    from threadpoolctl import threadpool_limits
    _limiter[0] = threadpool_limits(limits=num, user_api="blas")
    _requested[0] = num


def get_num_threads() -> int:
    """The BLAS thread count: the one set_num_threads gave, else the largest any loaded BLAS uses."""
    if _requested[0] is not None:
        return _requested[0]
    from threadpoolctl import threadpool_info
    counts = [int(info.get("num_threads", 1)) for info in threadpool_info() if info.get("user_api") == "blas"]
    return max(counts) if counts else 1


def kernel_threads() -> int:
    """The threads a fused kernel of G.compile may use (Note [Threads of fused kernels] in
    runtime/compile/thread_split.py): set_num_threads's value, else OMP_NUM_THREADS or OPENBLAS_NUM_THREADS
    (the first set), else the CPU count; the environment is read once, at the first call (Note [Thread
    count])."""
    n = _requested[0]
    if n is not None:
        return n
    n = _env_threads[0]
    if n is None:
        n = _env_threads[0] = _environment_threads()
    return n


def _environment_threads() -> int:
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        value = os.environ.get(var, "").strip().split(",")[0]
        if value.isdigit() and int(value) > 0:
            return int(value)
    return os.cpu_count() or 1


def set_num_interop_threads(num: int) -> None:
    """Record `num` (a positive int) as the inter-op thread count; RuntimeError otherwise."""
    if isinstance(num, bool) or not isinstance(num, int) or num <= 0:
        raise RuntimeError(f"set_num_interop_threads expects a positive integer, but got {num!r}")
    _interop[0] = num


def get_num_interop_threads() -> int:
    """The count last given to set_num_interop_threads (1 until set)."""
    return _interop[0]


__all__ = ["get_num_interop_threads", "get_num_threads", "set_num_interop_threads", "set_num_threads"]
