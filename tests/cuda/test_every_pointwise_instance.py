"""Every generated pointwise kernel instance (op x dtype x path: vec, contig, strided; 32- and 64-bit
index) runs and agrees with the CPU backend, on contiguous, misaligned (offset), transposed, broadcast, 0-d
and empty inputs, the first four both within one block and across several blocks. Under OPGEN_EMULATE_CUDA=1
the test also checks, from the host engine's launch counts, that every instance of the op's source was
launched."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import generated as G
from generated import _cpu_kernels as CPU
from generated import _cuda_kernels as CUDA
from runtime.cuda import emulator
from runtime.cuda import launch as L
from runtime.cuda.pointwise import PointwiseKernel
from runtime.kernels import checks
from runtime.tensor import Tensor
from tests.launched_kernels import launched, named

pytestmark = pytest.mark.cuda

KERNELS = sorted(name for name, v in vars(CUDA).items() if isinstance(v, PointwiseKernel))
ROWS, COLS = 5, 23  # 115 elements: a vector tail for every pack width
# Several blocks on every path (L.THREADS threads a block): 4,847 elements are 19 blocks contiguous or
# strided and at least 2 on the vector path at its widest pack (16 one-byte elements), with a vector tail.
BIG_ROWS, BIG_COLS = 37, 131


def _values(dtype: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in ("float16", "bfloat16", "float32", "float64"):
        return rng.uniform(0.25, 2.0, shape).astype(np.float32 if dtype == "bfloat16" else dtype)
    return rng.integers(1, 4, shape).astype(dtype)


def _scalar(dtype: str) -> Any:
    return True if dtype == "bool" else 2 if dtype not in ("float16", "bfloat16", "float32", "float64") else 0.5


def _to_cuda(a: np.ndarray, dtype: str) -> Tensor:
    t = G.from_numpy(np.array(a, order="C")).cuda()
    return t.to(G.bfloat16) if dtype == "bfloat16" else t


def _layouts(dtypes: list[str], rng: np.random.Generator) -> list[tuple[str, list[Any], list[Tensor]]]:
    """(name, host arrays, device tensors) per input layout, one tensor per entry of `dtypes`; host arrays
    are what the CPU backend gets. Dense, offset, transposed and broadcast layouts come in two sizes: one
    block, and several blocks (BIG_ROWS x BIG_COLS)."""
    out = []
    for rows, cols, size in ((ROWS, COLS, ""), (BIG_ROWS, BIG_COLS, " (several blocks)")):
        out += [(name + size, host, device) for name, host, device in _sized_layouts(dtypes, rows, cols, rng)]
    zero = [_values(d, (), rng) for d in dtypes]
    out.append(("0-d", zero, [_to_cuda(np.asarray(a), d).reshape(()) for a, d in zip(zero, dtypes, strict=True)]))
    empty = [_values(d, (0, 3), rng) for d in dtypes]
    out.append(("empty", empty, [_to_cuda(a, d) for a, d in zip(empty, dtypes, strict=True)]))
    return out


def _sized_layouts(dtypes: list[str], rows: int, cols: int,
                   rng: np.random.Generator) -> list[tuple[str, list[Any], list[Tensor]]]:
    out = []
    n_tensors = len(dtypes)
    host = [_values(d, (rows, cols), rng) for d in dtypes]
    out.append(("contiguous", host, [_to_cuda(a, d) for a, d in zip(host, dtypes, strict=True)]))
    flat = [_values(d, (rows * cols + 1,), rng) for d in dtypes]
    out.append(("offset", [a[1:] for a in flat], [_to_cuda(a, d)[1:] for a, d in zip(flat, dtypes, strict=True)]))
    out.append(("transposed", [a.T for a in host], [_to_cuda(a, d).t() for a, d in zip(host, dtypes, strict=True)]))
    if n_tensors > 1:
        row = _values(dtypes[1], (1, cols), rng)
        out.append(("broadcast", [host[0], row] + host[2:],
                    [_to_cuda(host[0], dtypes[0]), _to_cuda(row, dtypes[1])]
                    + [_to_cuda(a, d) for a, d in zip(host[2:], dtypes[2:], strict=True)]))
    return out


def _host(t: Tensor) -> np.ndarray:
    if t.dtype is G.bfloat16:
        t = t.to(G.float32)
    return np.asarray(t.cpu().numpy())


def _check(kernel: PointwiseKernel, dtype: str, layout: str, got: Tensor, ref: Tensor) -> None:
    where = f"{kernel.name} {dtype} {layout}"
    if dtype != "bfloat16":
        assert got.dtype is ref.dtype, where
    assert tuple(got.shape) == tuple(ref.shape), where
    g, r = _host(got), np.asarray(ref.numpy())
    if r.dtype.kind == "f" or dtype in ("float16", "bfloat16"):
        tol = {"bfloat16": 2e-2, "float16": 2e-3, "float32": 2e-5}.get(dtype, 1e-6 if dtype == "float64" else 2e-5)
        np.testing.assert_allclose(g.astype(np.float64), r.astype(np.float64), rtol=tol, atol=tol, equal_nan=True,
                                   err_msg=where)
    else:
        np.testing.assert_array_equal(g, r, err_msg=where)


@pytest.mark.parametrize("var", KERNELS)
def test_every_pointwise_instance_agrees_with_the_cpu_backend(var: str, monkeypatch: pytest.MonkeyPatch) -> None:
    kernel: PointwiseKernel = getattr(CUDA, var)
    # Every layout gives every tensor the full shape, so a value tensor that must be 0-d (masked_fill's,
    # refused by both backends alike: tests/ops/test_refusals.py) is let through to exercise every instance.
    monkeypatch.setattr(checks, "check_zero_dim", lambda op, t: None)
    name = kernel.name
    rng = np.random.default_rng(len(name))
    for dtype in kernel.instances:
        scalars = [_scalar(dtype)] * kernel.num_scalars
        # conditions (masked_fill's mask, where's condition) are bool, as PyTorch requires, for every instance
        dtypes = ["bool" if i in kernel.conditions else dtype for i in range(kernel.num_tensors)]
        for bits in (None, 64):
            with L.force_index_bits(bits):
                for layout, host, device in _layouts(dtypes, rng):
                    if dtype == "bfloat16":  # the CPU backend has no bfloat16: compare with float32 of the inputs
                        cpu_inputs = [G.from_numpy(np.array(_host(t), order="C")) for t in device]
                    else:
                        cpu_inputs = [G.from_numpy(np.array(a, order="C")) for a in host]
                    try:
                        ref = getattr(CPU, name)(*cpu_inputs, *scalars)
                    except (TypeError, RuntimeError) as e:  # the CPU backend refuses: CUDA must refuse too
                        with pytest.raises(type(e)):
                            getattr(CUDA, name)(*device, *scalars)
                        continue
                    with launched() as kernels:
                        got = getattr(CUDA, name)(*device, *scalars)
                    assert got.device.type == "cuda"
                    _check(kernel, dtype, layout + named(kernels), got, ref)
    if emulator.active():
        from runtime.cuda.emulator import engine

        lib = engine.default_libraries().load(kernel.source)
        missing = [f"{name}__{dtype}__{path}{bits}" for dtype in kernel.instances
                   for path in ("vec", "contig", "strided") for bits in (32, 64)
                   if hasattr(lib, f"opgen_emu__{name}__{dtype}__{path}{bits}")
                   and engine._FUNCTIONS.get((kernel.source, f"{name}__{dtype}__{path}{bits}")) is None]
        assert not missing, f"instances never launched: {missing}"


REDUCE_SOURCES = sorted(p.stem for p in (Path(CUDA.__file__).parent / "cuda" / "reduce").glob("*.cu"))
NUMPY_REDUCTIONS = {"sum": np.sum, "prod": np.prod, "mean": np.mean, "amax": np.max, "amin": np.min,
                    "any": np.any, "all": np.all, "max": np.max, "min": np.min,
                    "var": lambda a: np.var(a, ddof=1), "std": lambda a: np.std(a, ddof=1)}


@pytest.mark.parametrize("op", REDUCE_SOURCES)
def test_every_reduction_instance_agrees_with_numpy(op: str) -> None:
    """Every instance of a reduction source (dtype x rows/two-pass x 32/64-bit) runs and agrees with NumPy:
    rows of a (3, 37) input (one-pass), one row of TWO_PASS_MIN elements (partial + finish)."""
    from runtime.cuda import reduce as R
    from runtime.cuda.emulator import engine

    source = str(Path(CUDA.__file__).parent / "cuda" / "reduce" / f"{op}.cu")
    entries = [name for _, name in engine.kernel_entries(Path(source).read_text())]
    dtypes = sorted({name.split("__")[1] for name in entries})
    rng = np.random.default_rng(len(op))
    for dtype in dtypes:
        for shape in ((3, 37), (R.TWO_PASS_MIN,)):
            base = rng.integers(0, 2, shape)  # 0/1: exact in every dtype, no overflow
            if op == "prod":
                base = np.ones(shape, np.int64)  # ones but two entries: no overflow in any dtype
                base.flat[[1, base.size - 2]] = (2, 2) if dtype in ("uint8", "bool") else (-1, 2)
            for bits in (None, 64):
                with L.force_index_bits(bits):
                    t = _to_cuda(base.astype(np.float32 if dtype == "bfloat16" else dtype), dtype)
                    # what the device holds (bool: -1 is True; bfloat16 holds 0, 1, -1 and 2 exactly)
                    typed = base.astype(np.float32 if dtype == "bfloat16" else dtype).astype(np.float64)
                    ref = NUMPY_REDUCTIONS[op](typed) if op not in ("max", "min") else None
                    if op in ("max", "min"):
                        values, indices = R.reduce_with_indices(op, t, t.ndim - 1)
                        want = typed.max(axis=-1) if op == "max" else typed.min(axis=-1)
                        arg = typed.argmax(axis=-1) if op == "max" else typed.argmin(axis=-1)
                        np.testing.assert_array_equal(_host(values).astype(np.float64), want, err_msg=dtype)
                        np.testing.assert_array_equal(_host(indices), arg, err_msg=dtype)
                        continue
                    got = R.reduce(op, t, None, False, None, 1.0 if op in ("var", "std") else 0.0)
                    tol = 2e-2 if dtype in ("float16", "bfloat16") else 1e-5
                    np.testing.assert_allclose(_host(got).astype(np.float64), ref, rtol=tol, atol=tol,
                                               err_msg=f"{op} {dtype} {shape} bits={bits}")
    if emulator.active():
        missing = [name for name in entries if engine._FUNCTIONS.get((source, name)) is None]
        assert not missing, f"instances never launched: {missing}"
