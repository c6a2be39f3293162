"""Every reduction and softmax kernel instance under the emulator's racecheck (Note [Schedules that expose
races] in runtime/cuda/emulator/opgen_emulate.h): no two threads of a block touch one shared-memory element
between barriers (one of them writing), and no two blocks of a launch write one global address. Shapes
that make a block reduce several rows (its shared memory reused) and the two-pass kernels."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import generated as G
from generated import _cuda_kernels as CUDA
from runtime.cuda import emulator
from runtime.cuda import launch as L
from runtime.cuda import reduce as R
from runtime.cuda import softmax as CS

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not emulator.active(), reason="racecheck is a mode of the emulated device")]

REDUCE_SOURCES = sorted(p.stem for p in (Path(CUDA.__file__).parent / "cuda" / "reduce").glob("*.cu"))
SHAPES = [(300, 45), (1, R.TWO_PASS_MIN + 999)]  # more rows than blocks; one long row (two passes)


def _device(values: np.ndarray, dtype: str) -> G.Tensor:
    t = G.from_numpy(np.ascontiguousarray(values.astype(np.float32 if dtype == "bfloat16" else dtype))).cuda()
    return t.to(G.bfloat16) if dtype == "bfloat16" else t


def _host(t: G.Tensor) -> np.ndarray:
    return np.asarray((t.to(G.float32) if t.dtype is G.bfloat16 else t).cpu().numpy()).astype(np.float64)


@pytest.mark.parametrize("op", REDUCE_SOURCES)
def test_every_reduction_instance_is_race_free(op: str) -> None:
    from runtime.cuda.emulator import engine

    source = Path(CUDA.__file__).parent / "cuda" / "reduce" / f"{op}.cu"
    dtypes = sorted({name.split("__")[1] for _, name in engine.kernel_entries(source.read_text())})
    rng = np.random.default_rng(len(op))
    with engine.racecheck():
        for dtype in dtypes:
            for shape in SHAPES:
                values = rng.integers(0, 2, shape)  # 0/1: exact in every dtype and every reduction
                if op == "prod":
                    values = np.ones(shape, np.int64)
                for bits in (None, 64):
                    with L.force_index_bits(bits):
                        t = _device(values, dtype)
                        if op in ("max", "min"):
                            got, indices = R.reduce_with_indices(op, t, 1)
                            want = values.max(1) if op == "max" else values.min(1)
                            np.testing.assert_array_equal(_host(got), want, err_msg=f"{op} {dtype} {shape}")
                            continue
                        got = _host(R.reduce(op, t, 1, False, None, 1.0 if op in ("var", "std") else 0.0))
                    ref = {"sum": values.sum(1), "mean": values.mean(1), "prod": values.prod(1),
                           "amax": values.max(1), "amin": values.min(1), "any": values.any(1), "all": values.all(1),
                           "var": values.var(1, ddof=1), "std": values.std(1, ddof=1)}[op]
                    tol = 2e-2 if dtype in ("float16", "bfloat16") else 1e-5
                    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol, err_msg=f"{op} {dtype} {shape}")


def test_every_softmax_instance_is_race_free() -> None:
    from runtime.cuda.emulator import engine

    rng = np.random.default_rng(5)
    with engine.racecheck():
        for dtype in ("float32", "float64", "float16", "bfloat16"):
            for shape in ((200, 40), (3, 1500)):
                x = _device(rng.uniform(-2, 2, shape), dtype)
                for log in (False, True):
                    for bits in (None, 64):
                        with L.force_index_bits(bits):
                            got = _host(CS.softmax(x, 1, log=log))
                    total = np.exp(got).sum(1) if log else got.sum(1)
                    np.testing.assert_allclose(total, 1.0, rtol=2e-2, err_msg=f"{dtype} {shape} log={log}")
