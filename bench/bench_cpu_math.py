"""The fused CPU kernels' float32 tanh (runtime/compile/cpu_math.h, Note [Vector math of the CPU kernels])
against libmvec's tanhf, NumPy and PyTorch, one thread, measured in the same run:

    python3 bench/bench_cpu_math.py

Four loops are built by G.compile's toolchain (runtime/compile/cpp_build.py: the kernels' prelude and
flags): tanh alone and the GELU-residual expression, each once through `op_tanh` (the header's tanh, as
every fused kernel calls it) and once through `tanhf` (libmvec's vector tanhf where libmvec is found, as
before the header). 10^6 float32 inputs from the standard normal distribution (as bench_compile.py's GELU)
and, for tanh alone, the same times 4 (libmvec's tanhf takes a slower path for large |x|); the median of
interleaved rounds.
"""

from __future__ import annotations

import ctypes
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_compile import gelu, medians

N = 1_000_000
SOURCE = """
#define OPGEN_BENCH_LOOP(name, expr) \\
  extern "C" void name(const float* __restrict in, float* __restrict out, long long n) { \\
    _Pragma("omp simd") \\
    for (long long j = 0; j < n; ++j) { const float x = in[j]; out[j] = (expr); } \\
  }
#define OPGEN_BENCH_GELU(t) 0.5f * x * (1.0f + t(0.7978845608f * (x + 0.044715f * x * x * x))) * 1.5f + x
OPGEN_BENCH_LOOP(tanh_inline, op_tanh(x))
OPGEN_BENCH_LOOP(tanh_libmvec, tanhf(x))
OPGEN_BENCH_LOOP(gelu_inline, OPGEN_BENCH_GELU(op_tanh))
OPGEN_BENCH_LOOP(gelu_libmvec, OPGEN_BENCH_GELU(tanhf))
"""


def main() -> None:
    from runtime.compile import cpp_build

    if cpp_build.find_compiler() is None:
        print("no C++ compiler: nothing to measure")
        return
    lib = cpp_build.build(SOURCE)
    x = np.random.default_rng(0).standard_normal(N).astype(np.float32)
    wide = x * np.float32(4)
    out = np.empty_like(x)

    def loop(name: str, a: np.ndarray):  # type: ignore[no-untyped-def]
        fn = getattr(lib, name)
        fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_longlong]
        return lambda: fn(a.ctypes.data, out.ctypes.data, N)

    fns = {"tanh inline": loop("tanh_inline", x), "tanh libmvec": loop("tanh_libmvec", x),
           "tanh 4x inline": loop("tanh_inline", wide), "tanh 4x libmvec": loop("tanh_libmvec", wide),
           "GELU inline": loop("gelu_inline", x), "GELU libmvec": loop("gelu_libmvec", x)}
    fns["tanh NumPy"] = lambda: np.tanh(x, out=out)
    fns["GELU NumPy"] = lambda: gelu(x, np.tanh)
    try:
        import torch

        torch.set_num_threads(1)
        xt = torch.from_numpy(x)
        fns["tanh PyTorch"] = lambda: torch.tanh(xt)
    except ImportError:
        pass
    t = medians(fns, 31)
    print(f"float32 tanh at {N:,} elements, one thread (median of 31 interleaved rounds):")
    for name, seconds in t.items():
        print(f"  {name:<16} {seconds * 1e3:7.3f} ms")
    torch_ratio = f", inline / PyTorch {t['tanh inline'] / t['tanh PyTorch']:.2f}" if "tanh PyTorch" in t else ""
    print(f"  tanh: inline / libmvec {t['tanh inline'] / t['tanh libmvec']:.2f} "
          f"(inputs times 4: {t['tanh 4x inline'] / t['tanh 4x libmvec']:.2f}), "
          f"inline / NumPy {t['tanh inline'] / t['tanh NumPy']:.2f}{torch_ratio}")
    print(f"  GELU-residual loop: inline / libmvec {t['GELU inline'] / t['GELU libmvec']:.2f}, "
          f"inline / NumPy {t['GELU inline'] / t['GELU NumPy']:.2f}")


if __name__ == "__main__":
    main()
