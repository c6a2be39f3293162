"""Generated pointwise kernels on a GPU against NumPy: broadcasting, transposed and non-contiguous operands,
empty and 0-d tensors, out= and in-place, and a tensor past 2^31 elements. Skipped without a device."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from runtime.cuda import is_available, require_cupy

pytestmark = [pytest.mark.cuda, pytest.mark.skipif(not is_available(), reason="needs a CUDA device")]

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).resolve().parents[1] / "cuda_corpus.yaml"


@pytest.fixture(scope="module")
def kernels(tmp_path_factory: pytest.TempPathFactory) -> Any:
    import importlib.util

    from codegen.jinja_env import environment
    from codegen.native import load_native_functions
    from codegen.render import cuda_kernels

    out = tmp_path_factory.mktemp("gen")
    env = environment(ROOT)
    files = cuda_kernels.generate(load_native_functions(CORPUS, root=ROOT), env)
    for path, text in files.items():
        (out / path).parent.mkdir(parents=True, exist_ok=True)
        (out / path).write_text(text)
    spec = importlib.util.spec_from_file_location("_corpus_cuda_kernels", out / "_cuda_kernels.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _cuda(a: np.ndarray) -> Any:
    cupy = require_cupy()  # CuPy, or the emulated device's module

    from runtime.tensor import Tensor

    return Tensor._wrap(cupy.asarray(a))


LAYOUTS = {
    "same": lambda rng: (rng.standard_normal((4, 5)), rng.standard_normal((4, 5))),
    "broadcast": lambda rng: (rng.standard_normal((4, 1, 5)), rng.standard_normal((3, 1))),
    "transposed": lambda rng: (rng.standard_normal((6, 7)), rng.standard_normal((7, 6)).T),
    "stepped": lambda rng: (rng.standard_normal((8, 10))[::2, 1::3], rng.standard_normal((4, 3))),
    "empty": lambda rng: (np.zeros((0, 3)), np.zeros((1, 3))),
    "zero_dim": lambda rng: (np.array(1.5), rng.standard_normal((3,))),
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "float16"])
def test_add_matches_numpy(kernels: Any, layout: str, dtype: str) -> None:
    rng = np.random.default_rng(0)
    a, b = (np.asarray(x * 10 if dtype == "int32" else x).astype(dtype) for x in LAYOUTS[layout](rng))
    got = kernels.add_Tensor(_cuda(a), _cuda(b), 2).numpy(force=True)
    np.testing.assert_allclose(got, a + 2 * b, rtol=1e-3 if dtype == "float16" else 1e-6)


def test_compare_returns_bool_and_out_inplace(kernels: Any) -> None:
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((5, 6)).astype(np.float32), rng.standard_normal((6,)).astype(np.float32)
    got = kernels.compare(_cuda(a), _cuda(b))
    assert got.dtype.name == "bool"
    ta = _cuda(a)
    kernels.add_Tensor_inplace(ta, _cuda(b), 1)
    np.testing.assert_allclose(ta.numpy(force=True), a + b, rtol=1e-6)
    out = _cuda(np.empty((5, 6), np.float64))
    kernels.add_Tensor_out(_cuda(a), _cuda(b), 1, out)
    np.testing.assert_allclose(out.numpy(force=True), a + b, rtol=1e-6)


@pytest.mark.slow
def test_past_2_to_the_31(kernels: Any) -> None:
    cupy = require_cupy()  # CuPy, or the emulated device's module

    from runtime.cuda import emulator
    from runtime.tensor import Tensor

    n = 2**31 + 5
    cheap = contextlib.nullcontext()
    if emulator.active():  # one page set repeated but for a distinct tail (Note [Repeated pages])
        from runtime.cuda.emulator import memory

        cheap = memory.repeated_pages()
    with cheap:
        a = cupy.ones(n, dtype=cupy.int8)
        a[-3] = 4  # past 2**31
        got = kernels.add_Tensor(Tensor._wrap(a), Tensor._wrap(a), 1)._data
        assert int(got[-1]) == 2 and int(got[0]) == 2 and int(got[-3]) == 8
