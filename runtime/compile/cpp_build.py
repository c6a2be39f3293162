"""Building the fused kernels: one C++ source per compiled graph, compiled by the system C++ compiler into a
shared library, cached on disk by a digest of everything that goes into it.

Note [The compiled-kernel cache]
An entry is `<digest>.so`, where the digest covers the source, the headers, the compiler's version and the
flags, stored and read by runtime/verified_cache.py (Note [Caches that verify]) as every opgen cache is: it
records its name and the SHA-256 of the library, is written by fsync and rename, and is used only when it
checks, so a truncated, planted or swapped file is a miss that is built again. The directory is
`<user cache root>/compile` (`$XDG_CACHE_HOME/opgen/compile` when XDG_CACHE_HOME is an absolute path, else
`~/.cache/opgen/compile`), created private to the user; one that another user owns or others may write is
not used (the kernels are then built without the cache). The library is loaded from a private copy of the
checked bytes (`load_bytes`).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from runtime import verified_cache

_INCLUDE = Path(__file__).resolve().parents[1] / "cuda" / "include"
_EMULATOR = Path(__file__).resolve().parents[1] / "cuda" / "emulator"
_CPU_MATH = Path(__file__).resolve().with_name("cpu_math.h")  # Note [Vector math of the CPU kernels]
# -fno-trapping-math: no code reads the floating-point exception flags, and without it GCC keeps a
# comparison (`x > 0` may raise "invalid" on NaN) out of if-conversion, so every loop holding a `where`, a
# clamp or a relu gradient stayed scalar (10x slower); results are the same IEEE values.
FLAGS = ("-std=c++17", "-O3", "-march=native", "-ffp-contract=off", "-fno-math-errno", "-fno-trapping-math",
         "-shared", "-fPIC", "-w")
PRELUDE = ('#include "opgen_emulate.h"\n#include "opgen_math.cuh"\n#include <cmath>\n#include <vector>\n'
           '#include "cpu_math.h"\n#ifdef _OPENMP\n#include <omp.h>\n#endif\n')

# Note [Vector math without fast-math]
# A loop that calls tanhf or expf vectorises only if the compiler knows a vector version of the function.
# glibc's libmvec (2.35 and later) has them, but <math.h> declares them so only under -ffast-math, whose
# other effects (no NaN or infinity, reassociation) would change results. The prelude declares the
# functions that opgen_math.cuh calls as `omp declare simd` (with -fopenmp-simd, which enables nothing
# else), and the library links libmvec: the loops vectorise and keep IEEE semantics. Where libmvec is
# missing or older, the kernels are built without these declarations. float32 tanh does not go there any
# more (Note [Vector math of the CPU kernels]); every other function, and every float64 one, still does.
#
# Note [Vector math of the CPU kernels]
# cpu_math.h (beside this file, in the CPU prelude only, after opgen_math.cuh) defines an inline,
# branch-free float32 tanh and routes the kernels' `op_tanh` on float to it: a macro names an overload set
# in namespace opgen_cpu, float goes to the new function and every other type to opgen_math.cuh's (float64
# keeps libm/libmvec). CUDA sources (NVRTC) and the emulated device include opgen_math.cuh without it and
# are unchanged; the header is part of the kernel cache's digest, so no library built before it is reused.
# The eager C++ kernels of compound pointwise ops (Note [Compiled eager pointwise kernels]) are built with
# the same prelude, so a float32 tanh in one of them is this one too.
# Why: libmvec's tanhf is a call per 8 floats (all vector registers are the callee's to clobber, so the
# loop reloads its constants around it) and costs as much as the rest of the GELU kernel; inline, the
# compiler schedules tanh with the loop's other work and keeps its constants in registers.
# The function, on a = |x|, both formulas computed and one selected, the sign put back last (-0 stays -0,
# NaN stays NaN, +-inf gives +-1, subnormals give themselves):
# - a < 1: a + a^3 n(a^2)/d(a^2), n of degree 1, d of degree 2 (a rational needs 3 multiply-adds and a
#   division where an odd polynomial needs 6 for the same error on this interval);
# - a >= 1: 1 - 2/(e^{2a} + 1), a clamped at 9.5 (tanh rounds to 1 from 9.01); e^{2a} = 2^n (1 + s) with
#   n = round(2a / ln2) read from the bits of 2a log2(e) + 1.5*2^23, r = 2a - n ln2 (one multiply-add:
#   n ln2 is exact inside it; ln2 in two parts on machines without FMA), s = r + r^2 q(r), q of degree 3
#   in Estrin's form, and e^{2a} + 1 = s 2^n + (2^n + 1) in one multiply-add.
# In both, the last operation adds a term at most a third of the result, so the rounding errors before it
# count for a fraction of an ulp. Error: at most 2 ulp stated; measured over all 2^32 inputs against libm's
# double tanh, 1.212 ulp with FMA (at 0.9634) and 1.427 without (at 0.9941). tests/compile/test_cpu_math.py
# sweeps every float in [0.5, 1] of both signs, every fifth in [2^-14, 9.5] and every 89th pattern, in both
# builds (all 2^32 patterns with OPGEN_EXHAUSTIVE_MATH=1, about 5 minutes a build).
# Coefficients: tools/fit_cpu_math.py fits them in float64 on Chebyshev nodes towards minimax relative
# error (Lawson's reweighted least squares; the rational by Loeb's linearisation), and `--check` (run by
# the tests) compares them with the header.
# Measured on the build machine (AMD EPYC Zen 3, AVX2, one thread, 10^6 floats, best of 15): tanh alone
# 0.56 ms against libmvec's 0.91, the GELU-residual loop 0.91 ms against 1.29 (bench/bench_cpu_math.py
# prints these ratios, medians of a loaded machine: 0.60 and 0.65). Left out: an inline expf (the same
# range reduction, degree 6) was no faster than libmvec's (0.47-0.52 ms against 0.44-0.48), so op_exp,
# sigmoid and softmax keep libmvec; a single rational a P(a^2)/Q(a^2) over [0, 9] (P and Q of degree 4)
# ran tanh in 0.40 ms but erred by 5.8 ulp (P and Q round near 1 and, near saturation, in every term);
# two rationals meeting at 1.25 (2.0 ulp) were no faster than the exp form; interleaving two halves of the
# GELU loop changed nothing (the loop is bound by its multiply-adds, not by latency).
_SIMD_FUNCTIONS = ("acos", "acosh", "asin", "asinh", "atan", "atanh", "cbrt", "cos", "cosh", "erf", "erfc", "exp",
                   "exp2", "expm1", "log", "log10", "log1p", "log2", "sin", "sinh", "tan", "tanh")
_SIMD_BINARY = ("atan2", "pow", "hypot")
SIMD_PRELUDE = "".join(
    f'#pragma omp declare simd notinbranch\nextern "C" {t} {name}{suffix}({", ".join([t] * arity)}) noexcept;\n'
    for t, suffix in (("float", "f"), ("double", ""))
    for names, arity in ((_SIMD_FUNCTIONS, 1), (_SIMD_BINARY, 2)) for name in names)
SIMD_FLAGS = ("-fopenmp-simd",)
THREAD_FLAGS = ("-fopenmp",)  # OpenMP threads (Note [Threads of fused kernels]); implies -fopenmp-simd


def find_compiler() -> str | None:
    for candidate in (os.environ.get("CXX"), "g++", "clang++", "c++"):
        if candidate and shutil.which(candidate):
            return candidate
    return None


@functools.cache
def _compiler_version(compiler: str) -> str:
    out = subprocess.run([compiler, "--version"], capture_output=True, text=True, timeout=60)
    return out.stdout.splitlines()[0] if out.stdout else compiler


def _headers_digest() -> str:
    h = hashlib.sha256()
    for path in sorted([*_INCLUDE.glob("*.cuh"), _EMULATOR / "opgen_emulate.h", _CPU_MATH]):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


_LABEL = "compile"


def cache_dir() -> Path | None:
    """`<user cache root>/compile` (Note [The compiled-kernel cache]); None without a cache root."""
    root = verified_cache.user_cache_root()
    return None if root is None else root / _LABEL


def build(source: str) -> ctypes.CDLL:
    """The library of `source` (the prelude is added), from the cache or compiled now; with vector math
    where libmvec allows it (Note [Vector math without fast-math]) and OpenMP threads where the compiler has
    them (without, the kernels' pragmas are ignored and they run on one thread)."""
    mvec = bool(ctypes.util.find_library("mvec"))
    attempts = [(SIMD_PRELUDE, THREAD_FLAGS, ("-lmvec",)), (SIMD_PRELUDE, SIMD_FLAGS, ("-lmvec",))] if mvec else []
    attempts += [("", THREAD_FLAGS, ()), ("", (), ())]
    for k, (prelude, flags, libs) in enumerate(attempts):
        try:
            return _build(prelude + PRELUDE + source, (*FLAGS, *flags), libs)
        except (RuntimeError, OSError):
            if k == len(attempts) - 1:
                raise
    raise AssertionError("unreachable")


def _build(text: str, flags: tuple[str, ...], libs: tuple[str, ...]) -> ctypes.CDLL:
    compiler = find_compiler()
    if compiler is None:
        raise RuntimeError("no C++ compiler (g++ or clang++ on PATH, or $CXX)")
    key = hashlib.sha256("\0".join([text, _headers_digest(), _compiler_version(compiler), *flags, *libs]).encode())
    entry = f"{key.hexdigest()}.so"
    directory = cache_dir()
    root = verified_cache.user_cache_root()
    data = verified_cache.read(directory, entry, _LABEL, root=root)
    if data is None:
        data = _compile(compiler, text, flags, libs)
        verified_cache.write(directory, entry, data, _LABEL, root=root)
    return load_bytes(data)


def _compile(compiler: str, text: str, flags: tuple[str, ...], libs: tuple[str, ...]) -> bytes:
    """The bytes of the shared library that `compiler` makes of `text`."""
    with tempfile.TemporaryDirectory(prefix="opgen-compile-") as tmp:
        src, out = Path(tmp) / "fused.cpp", Path(tmp) / "fused.so"
        src.write_text(text)
        includes = [f"-I{_INCLUDE}", f"-I{_EMULATOR}", f"-I{_CPU_MATH.parent}"]
        proc = subprocess.run([compiler, *flags, *includes, str(src), "-o", str(out), *libs],
                              capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            raise RuntimeError(f"the C++ compiler failed on a fused kernel:\n{proc.stderr[-4000:]}")
        return out.read_bytes()


_OPEN_LIBRARIES: list[int] = []


def load_bytes(data: bytes) -> ctypes.CDLL:
    """Load a library from a private copy of `data` (an anonymous memory file where the system has them):
    what runs is exactly the bytes that were checked, and no later change to the cache file (a truncation
    would be a SIGBUS in a mapped library) reaches this process."""
    memfd_create = getattr(os, "memfd_create", None)
    if memfd_create is not None:
        # The descriptor stays open with the library: the loader knows a library by its path, and a closed
        # descriptor's number (so its /proc path) would be reused by the next library, which would then be
        # taken for this one.
        fd = memfd_create("opgen-fused-kernels", getattr(os, "MFD_CLOEXEC", 0))
        os.write(fd, data)
        _OPEN_LIBRARIES.append(fd)
        return ctypes.CDLL(f"/proc/self/fd/{fd}")
    keep = Path(tempfile.mkdtemp(prefix="opgen-compile-lib-")) / "fused.so"
    keep.write_bytes(data)
    return ctypes.CDLL(str(keep))
