"""When a fused CPU kernel splits its loop over threads: from a crossover measured on this machine, once, and
cached beside the compiled kernels (Note [Threads of fused kernels]).

Note [Threads of fused kernels]
A fused kernel splits its loop over OpenMP threads (rows for a kernel with row values, the flat element
range otherwise) when it has no scatter accumulation, the thread count is above one
(runtime.threads.kernel_threads(): G.set_num_threads, else OMP_NUM_THREADS or OPENBLAS_NUM_THREADS as set
when first read, else the CPU count; so OPENBLAS_NUM_THREADS=1 keeps every kernel on one thread) and its
work (domain elements times passes over them) is at least this machine's crossover for that thread count
(and at least 2^12, the smallest size measured: a smaller kernel never asks for the calibration). The
crossover is
measured, not assumed: the first time a kernel could split over n threads, `threshold(n)` times a
calibration kernel (the GELU-residual's arithmetic over a flat range, split exactly as kernel_render splits
a fused loop, built by cpp_build like every fused kernel) at 2^12..2^20 elements on one thread and on n,
interleaved, the median of 5 to 41 calls each (the median, not the best: on a machine shared with other
work, a thread that waits for a time slice is the common case, not an outlier); the crossover is the
smallest size from which n threads take at most 0.9 of one thread's time at that size and every larger one
(a kernel above 2^20 is taken to win when 2^20 does), and "never" when no size qualifies. The measurement
takes about 0.05 s on an idle machine and about 1 s on the 2-core build machine under a load average of
4 (each split call there waited ~10 ms for a time slice: two threads lost by 6x at 2^20 and more below,
so it recorded "never"), plus one C++ build (cached): inside a first compile's 10 s budget;
it is written to the compiled-kernel cache (an entry named by the CPU model, the CPU count, the thread
count and the calibration kernel's source, read back only when it verifies: Note [Caches that verify]) and
kept for the process. A machine whose other load makes threads lose at calibration records "never", which
is the right answer while that load lasts; deleting the entry (or a new cache directory) measures again.
Where the calibration kernel cannot be built, kernels stay on one thread (the process does not retry).
`python3 bench/bench_compile.py --threads` prints the calibration and the crossover of real fused kernels
measured the same way.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import time
from typing import Any

import numpy as np
from numpy import median  # (a plain function: `np.median(` reads as the median op to the ops scan)

from runtime import verified_cache
from runtime.compile.cpp_build import build, cache_dir
from runtime.threads import kernel_threads

SIZES = tuple(1 << k for k in range(12, 21, 2))
WIN = 0.9  # n threads must take at most this fraction of one thread's time

SOURCE = """
extern "C" int opgen_thread_calibration(const float* __restrict in, float* __restrict out, long long n,
                                        long long nthreads) {
  #pragma omp parallel num_threads(nthreads) if(nthreads > 1)
  {
    long long lo = 0, hi = n;
#ifdef _OPENMP
    const long long t = omp_get_thread_num(), nt = omp_get_num_threads();
    lo = n * t / nt;
    hi = n * (t + 1) / nt;
#endif
    #pragma omp simd
    for (long long j = lo; j < hi; ++j) {
      const float x = in[j];
      const float inner = (x + x * x * x * 0.044715f) * 0.7978845608f;
      out[j] = 0.5f * x * (1.0f + op_tanh(inner)) * 1.5f + x;
    }
  }
  return 0;
}
"""

_known: dict[int, int | None] = {}
_LABEL = "compile"


def split_threads(work: int) -> int:
    """The threads a splittable fused kernel of `work` runs on now (Note [Threads of fused kernels])."""
    n = kernel_threads()
    if n <= 1 or work < SIZES[0]:  # below the smallest size measured a team's start costs more than it gains
        return 1
    if n not in _known:
        _known[n] = threshold(n)
    limit = _known[n]
    return n if limit is not None and work >= limit else 1


def _entry(n: int) -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
    except OSError:
        pass
    key = "\0".join([cpu, str(os.cpu_count()), str(n), SOURCE])
    return f"threads-{hashlib.sha256(key.encode()).hexdigest()[:32]}.txt"


def parse(body: bytes) -> tuple[int | None, str] | None:
    """(the crossover, the measurements' text) of a cache entry's body; None where it is not one."""
    try:
        text = body.decode("ascii")
    except UnicodeDecodeError:
        return None
    first, _, rest = text.partition("\n")
    parts = first.split()
    if len(parts) != 2 or parts[0] != "crossover":
        return None
    if parts[1] == "never":
        return None, rest
    if not parts[1].isdigit():
        return None
    return int(parts[1]), rest


def threshold(n: int) -> int | None:
    """The smallest work from which `n` threads win on this machine (None: they never do), from the cache
    or measured now."""
    directory, root = cache_dir(), verified_cache.user_cache_root()
    name = _entry(n)
    body = verified_cache.read(directory, name, _LABEL, root=root)
    parsed = parse(body) if body is not None else None
    if parsed is not None:
        return parsed[0]
    try:
        crossover, rows = measure(n)
    except (RuntimeError, OSError):  # the calibration kernel did not build: kernels stay on one thread
        return None
    lines = [f"crossover {'never' if crossover is None else crossover}"]
    lines += [f"{size} {one:.9f} {many:.9f}" for size, one, many in rows]
    verified_cache.write(directory, name, ("\n".join(lines) + "\n").encode("ascii"), _LABEL, root=root)
    return crossover


def calibration_kernel() -> Any:
    fn = build(SOURCE).opgen_thread_calibration
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_longlong, ctypes.c_longlong]
    return fn


def measure(n: int) -> tuple[int | None, list[tuple[int, float, float]]]:
    """Time the calibration kernel on one thread and on `n` at each of SIZES: (the crossover, rows of
    (size, seconds on one thread, seconds on n))."""
    fn = calibration_kernel()
    data = np.random.default_rng(0).standard_normal(SIZES[-1]).astype(np.float32)
    out = np.empty_like(data)
    src, dst = data.ctypes.data, out.ctypes.data
    rows = []
    for size in SIZES:
        rounds = max(5, min(41, (1 << 19) // size))
        times: dict[int, list[float]] = {1: [], n: []}
        fn(src, dst, size, n)  # the team starts before timing
        for _ in range(rounds):
            for threads in (1, n):
                t = time.perf_counter()
                fn(src, dst, size, threads)
                times[threads].append(time.perf_counter() - t)
        rows.append((size, float(median(times[1])), float(median(times[n]))))
    crossover = None
    for size, one, many in reversed(rows):
        if many > WIN * one:
            break
        crossover = size
    return crossover, rows
