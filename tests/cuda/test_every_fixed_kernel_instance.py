"""Every instance of the generated copy, fill/arange, softmax and random kernels (dtype x path x 32/64-bit
index) runs on the device, and copies, fills and softmax agree with NumPy. The copy and fill kernels serve the
CUDA backend's own helpers (dtype conversion and contiguous copies inside reductions, softmax and random;
the public `copy_`/`fill_` use the array library's assignment), so they are called here through
runtime/cuda/copy.py. Under OPGEN_EMULATE_CUDA=1 the
host engine's table of loaded kernels shows that every instance of each source was launched, bfloat16
ones included (NumPy has no bfloat16: the host side of these tests holds its values in float32)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import generated as G
from runtime import dtypes
from runtime.cuda import copy as C
from runtime.cuda import emulator
from runtime.cuda import launch as L
from runtime.cuda import random as CR
from runtime.cuda import softmax as CS

pytestmark = pytest.mark.cuda

CUDA_DIR = Path(G.__file__).parent / "cuda"
DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
HALF = ("float16", "bfloat16")


def _np(name: str) -> str:
    """The NumPy dtype that holds a dtype's values on the host (bfloat16's exactly: float32)."""
    return "float32" if name == "bfloat16" else name


def _device(values: np.ndarray, name: str) -> G.Tensor:
    """A CUDA tensor of dtype `name` holding `values` (rounded to bfloat16 on the device)."""
    return G.from_numpy(np.ascontiguousarray(values.astype(_np(name)))).cuda().to(getattr(G, name))


def _host(t: G.Tensor) -> np.ndarray:
    return (t.float() if t.dtype is G.bfloat16 else t).cpu().numpy()


def _entries(rel: str) -> list[str]:
    from runtime.cuda.emulator import engine

    return [name for _, name in engine.kernel_entries((CUDA_DIR / rel).read_text())]


def _assert_all_launched(rel: str) -> None:
    if not emulator.active():
        return
    from runtime.cuda.emulator import engine

    source = str(CUDA_DIR / rel)
    missing = [n for n in _entries(rel) if engine._FUNCTIONS.get((source, n)) is None]
    assert not missing, f"{rel}: instances never launched: {missing}"


@pytest.mark.parametrize("src", DTYPES)
def test_every_copy_instance(src: str) -> None:
    rng = np.random.default_rng(len(src))
    values = rng.integers(0, 4, (5, 23)).astype(_np(src))  # exact in every dtype
    for bits in (None, 64):
        with L.force_index_bits(bits):
            x = _device(values, src)
            for dst in DTYPES:
                out = G.empty(5, 23, dtype=getattr(G, dst), device="cuda")
                C.copy_array(out._data, out.dtype, x._data, x.dtype)
                np.testing.assert_array_equal(_host(out), values.astype(_np(dst)), err_msg=f"{src}->{dst}")
                out = G.empty(23, 5, dtype=getattr(G, dst), device="cuda")
                C.copy_array(out._data, out.dtype, x._data.T, x.dtype)  # a strided source
                np.testing.assert_array_equal(_host(out), values.T.astype(_np(dst)), err_msg=f"{src}->{dst} strided")
    _assert_all_launched(f"copy/{src}.cu")


def test_every_fill_and_arange_instance() -> None:
    arange_dtypes = sorted({n.split("__")[1][:-2] for n in _entries("fill.cu") if n.startswith("arange__")})
    for bits in (None, 64):
        with L.force_index_bits(bits):
            for name in DTYPES:
                dt = getattr(G, name)
                t = G.empty(5, 23, dtype=dt, device="cuda")
                C.fill_(t, 1)
                np.testing.assert_array_equal(_host(t), np.ones((5, 23), _np(name)))
                C.fill_(t.t(), 0)  # a strided destination
                np.testing.assert_array_equal(_host(t), np.zeros((5, 23), _np(name)))
            for name in arange_dtypes:
                got = _host(C.arange(7, dtype=getattr(G, name), device=0))
                np.testing.assert_array_equal(got, np.arange(7).astype(_np(name)))
    _assert_all_launched("fill.cu")


def test_every_softmax_instance() -> None:
    rng = np.random.default_rng(3)
    values = rng.uniform(-2, 2, (4, 37))
    for bits in (None, 64):
        with L.force_index_bits(bits):
            for name in FLOATS:
                x = _device(values, name)
                held = _host(x).astype(np.float64)  # the input as the device holds it (rounded to half types)
                for log in (False, True):
                    want = held - held.max(1, keepdims=True)
                    want = want - np.log(np.exp(want).sum(1, keepdims=True)) if log else \
                        np.exp(want) / np.exp(want).sum(1, keepdims=True)
                    tol = {"float16": 2e-3, "bfloat16": 1.6e-2}.get(name, 1e-5)
                    got = CS.softmax(x, 1, log=log)
                    assert got.dtype is x.dtype
                    np.testing.assert_allclose(_host(got).astype(np.float64), want, rtol=tol, atol=tol)
                    if name in HALF:  # half in, float out
                        wide = CS.softmax(x, 1, half_to_float=True, log=log)
                        assert wide.dtype is dtypes.float32
                        np.testing.assert_allclose(_host(wide), want, rtol=tol, atol=tol)
    _assert_all_launched("softmax.cu")


def test_every_random_instance() -> None:
    for name in DTYPES:
        t = G.empty(1000, dtype=getattr(G, name), device="cuda")
        if name in FLOATS:
            u = _host(CR.uniform_(t, 2.0, 3.0)).astype(np.float64)
            assert u.min() >= 2.0 and u.max() <= 3.0 and 2.4 < u.mean() < 2.6
            n = _host(CR.normal_(t, 1.0, 0.5)).astype(np.float64)
            assert 0.9 < n.mean() < 1.1 and 0.4 < n.std() < 0.6
            r = _host(CR.random_(t, 0, 5)).astype(np.float64)  # integers drawn into a float tensor
            assert set(np.unique(r)) == {0.0, 1.0, 2.0, 3.0, 4.0}
        else:
            hi = 2 if name == "bool" else 5
            r = _host(CR.random_(t, 0, hi)).astype(np.int64)
            assert r.min() >= 0 and r.max() < hi and len(np.unique(r)) == hi
    _assert_all_launched("random.cu")
