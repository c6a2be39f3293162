"""The fused CPU kernels' float32 tanh (runtime/compile/cpu_math.h, Note [Vector math of the CPU kernels]):
its error against a double-precision reference over float32 bit patterns, its special values, the
coefficients' derivation, and compiled functions that use it against eager execution."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import generated as G
from runtime.compile import cpp_build

pytestmark = pytest.mark.skipif(cpp_build.find_compiler() is None,
                                reason="no C++ compiler (g++ or clang++ on PATH, or $CXX): no fused CPU kernels")

ROOT = Path(__file__).resolve().parents[2]
SWEEP = Path(__file__).with_name("cpu_math_sweep.cpp")
BOUND_ULP = 2.0  # the bound cpu_math.h states
# OPGEN_EXHAUSTIVE_MATH=1 sweeps every one of the 2^32 patterns (about 5 minutes a build on one core).
EXHAUSTIVE = os.environ.get("OPGEN_EXHAUSTIVE_MATH") == "1"


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def _library(as_kernels: bool) -> ctypes.CDLL:
    """The sweep harness built as the fused kernels are (the same prelude and flags), or with the header's
    product-and-sum path, which machines without the FMA instruction build."""
    source = SWEEP.read_text()
    if as_kernels:
        lib = cpp_build.build(source)
    else:
        lib = cpp_build._build(cpp_build.PRELUDE + source, (*cpp_build.FLAGS, "-DOPGEN_CPU_MATH_NO_FMA"), ())
    lib.opgen_test_sweep.restype = ctypes.c_double
    lib.opgen_test_sweep.argtypes = [ctypes.c_ulonglong] * 3 + [ctypes.POINTER(ctypes.c_uint)]
    lib.opgen_test_ulp_error.restype = ctypes.c_double
    lib.opgen_test_ulp_error.argtypes = [ctypes.c_float, ctypes.c_double]
    lib.opgen_test_tanh.restype = None
    lib.opgen_test_tanh.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_longlong]
    return lib


@pytest.fixture(scope="module", params=[True, False], ids=["as-kernels", "no-fma"])
def lib(request, tmp_path_factory) -> ctypes.CDLL:  # type: ignore[no-untyped-def]
    os.environ.setdefault("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
    return _library(request.param)


def tanh(lib: ctypes.CDLL, x: np.ndarray) -> np.ndarray:
    x = np.ascontiguousarray(x, dtype=np.float32)
    out = np.empty_like(x)
    lib.opgen_test_tanh(x.ctypes.data, out.ctypes.data, x.size)
    return out


def sweep(lib: ctypes.CDLL, lo: int, hi: int, step: int) -> tuple[float, float]:
    worst = ctypes.c_uint()
    err = lib.opgen_test_sweep(lo, hi, step, ctypes.byref(worst))
    return err, float(np.array([worst.value], dtype=np.uint32).view(np.float32)[0])


def bits(x: float) -> int:
    return int(np.array([x], dtype=np.float32).view(np.uint32)[0])


@pytest.mark.parametrize(("lo", "hi", "step"), [
    (bits(0.5), bits(2.0), 1),  # every float around the switch between the two formulas (1.0)
    (bits(-0.5), bits(-2.0), 1),  # the same, negative
    (bits(2.0**-14), bits(9.5), 5),  # every fifth float where tanh is neither x nor 1
    (0, 1 << 32, 1 if EXHAUSTIVE else 89),  # all patterns (or every 89th): both signs, subnormals, inf, NaN
])
def test_the_error_is_within_the_bound(lib: ctypes.CDLL, lo: int, hi: int, step: int) -> None:
    err, at = sweep(lib, lo, hi, step)
    assert 0 <= err <= BOUND_ULP, f"{err} ulp at {at!r}"


def test_the_error_measure_counts_ulps_and_wrong_classes(lib: ctypes.CDLL) -> None:
    # the instrument of the sweep: it must be able to fail
    measure = lib.opgen_test_ulp_error
    one_below = float(np.nextafter(np.float32(1), np.float32(0)))
    assert measure(1.0, 1.0) == 0.0
    assert measure(np.float32(0.75) + np.float32(2.0**-24) * 3, 0.75) == pytest.approx(3.0)  # ulp of 0.75: 2^-24
    assert measure(one_below, 1.0) == pytest.approx(0.5)  # measured in the ulp below 2^0's binade: 2^-23
    assert measure(0.0, 2.0**-149) == pytest.approx(1.0)  # subnormals count in 2^-149
    assert measure(float("nan"), 0.5) > 1e20 and measure(0.5, float("nan")) > 1e20
    assert measure(float("inf"), 3e38) > 1e20 and measure(3.4e38, 1e39) > 1e20
    assert measure(float("nan"), float("nan")) == 0.0 and measure(float("inf"), 1e39) == 0.0


def test_special_values_are_exact(lib: ctypes.CDLL) -> None:
    tiny = np.float32(np.finfo(np.float32).smallest_subnormal)
    x = np.array([0.0, -0.0, np.inf, -np.inf, tiny, -tiny, tiny * 1000, np.finfo(np.float32).tiny, 2.0**-30,
                  -(2.0**-30), 9.02, -9.02, 9.5, 10.0, 50.0, -1e30, np.finfo(np.float32).max,
                  -np.finfo(np.float32).max], dtype=np.float32)
    y = tanh(lib, x)
    expect = np.array([0.0, -0.0, 1.0, -1.0, tiny, -tiny, tiny * 1000, np.finfo(np.float32).tiny, 2.0**-30,
                       -(2.0**-30), 1.0, -1.0, 1.0, 1.0, 1.0, -1.0, 1.0, -1.0], dtype=np.float32)
    assert y.tobytes() == expect.tobytes(), (x, y)  # bit for bit: the signs of the zeros too
    nans = np.array([np.nan, -np.nan], dtype=np.float32)
    nans = np.concatenate([nans, np.array([0x7FC00001, 0xFF800001], dtype=np.uint32).view(np.float32)])
    assert np.isnan(tanh(lib, nans)).all()


def test_tanh_is_odd_and_monotone(lib: ctypes.CDLL) -> None:
    x = np.random.default_rng(0).standard_normal(1 << 16).astype(np.float32) * 3
    assert tanh(lib, -x).tobytes() == (-tanh(lib, x)).tobytes()
    grid = np.sort(np.abs(x))
    assert (np.diff(tanh(lib, grid)) >= 0).all()


def test_the_header_holds_the_fit_scripts_coefficients() -> None:
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "fit_cpu_math.py"), "--check"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr


def gelu_residual(x: G.Tensor) -> G.Tensor:
    return 0.5 * x * (1 + G.tanh(0.7978845608 * (x + 0.044715 * x * x * x))) * 1.5 + x


def tanh_exp_chain(x: G.Tensor) -> G.Tensor:
    return G.tanh(x * 3) * G.exp(-x * x) + G.tanh(x) - G.sigmoid(x)


EXTREMES = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 1e-30, 0.99999994, 1.0, -1.0000001, 9.0, 9.5, -20.0,
            88.0, -88.0, 1e20, -1e20, 3.4e38]


@pytest.mark.parametrize("fn", [gelu_residual, tanh_exp_chain], ids=["gelu", "tanh-exp"])
def test_compiled_chains_agree_with_eager(fn) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(1)
    f = G.compile(fn)
    for values in (rng.standard_normal(4099) * 4, np.array(EXTREMES * 3)):
        x = G.from_numpy(values.astype(np.float32))
        with np.errstate(all="ignore"):
            want = fn(x).numpy()
            f(x)  # the first call of a signature captures (and runs eagerly); the second runs the kernel
        got = f(x).numpy()
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=3e-6, atol=1e-6, equal_nan=True)
        assert (np.signbit(got) == np.signbit(want))[want == 0].all()
    assert len(f.programs) == 2 and all("op_tanh" in p.kernel_source() for p in f.programs)


def test_a_compiled_float32_tanh_is_the_headers_bit_for_bit() -> None:
    lib = _library(True)
    x = np.random.default_rng(2).standard_normal(10_000).astype(np.float32) * 5
    f = G.compile(lambda t: G.tanh(t) * 1.0 + 0.0)
    f(G.from_numpy(x))  # the capture runs eagerly (NumPy's tanh); the next call runs the fused kernel
    assert f(G.from_numpy(x)).numpy().tobytes() == (tanh(lib, x) * np.float32(1) + np.float32(0)).tobytes()


def test_float64_keeps_the_math_library() -> None:
    x = np.random.default_rng(3).standard_normal(10_000) * 5
    f = G.compile(lambda t: G.tanh(t) + 0.0)
    f(G.from_numpy(x))
    np.testing.assert_allclose(f(G.from_numpy(x)).numpy(), np.tanh(x), rtol=4e-16, atol=0)
    assert "op_tanh" in f.programs[0].kernel_source()
