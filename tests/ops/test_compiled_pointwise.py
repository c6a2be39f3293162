"""The compiled eager kernels of the compound pointwise ops (Note [Compiled eager pointwise kernels] in
runtime/kernels/compiled_pointwise.py) agree with their NumPy kernels.

Every op that codegen/render/compound_pointwise.py compiles is found from the YAML (so a new compound op is
tested without an edit here) and run through its generated kernel twice, once with the compiled path off
and once with it on for every size: float32 and float64, dense, transposed, sliced, permuted and broadcast
inputs, inputs holding NaN, infinities, zeros of both signs and large values, default and other scalars.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import generated as G
from codegen.api_python import kernel_name
from codegen.loading import load_model
from codegen.render.compound_pointwise import is_compiled, numpy_passes
from codegen.schema_parser import default_value
from generated import _cpu_kernels as K
from runtime.compile import cpp_build
from runtime.kernels import compiled_pointwise as cp

ROOT = Path(__file__).resolve().parents[2]
OPS = sorted((f for f in load_model(ROOT).functions if is_compiled(f)), key=kernel_name)
SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-30, 80.0, -80.0, 1e4, -1e4, 3.0, -3.0,
                    0.5, 1.0, -1.0, 20.0, 1e-3, 2.0])


@pytest.fixture(scope="module")
def lib() -> cp.Library:
    if cpp_build.find_compiler() is None:
        pytest.skip("no C++ compiler on this machine (the NumPy kernels run; test_without_a_compiler covers it)")
    library = K._CPP
    assert library.wait(600) == "ready", library.state
    return library


class Spy:
    """Counts the calls the compiled library answered."""

    def __init__(self, library: cp.Library) -> None:
        self.library, self.answered = library, 0
        self.run = library.run

    def __call__(self, *args: Any) -> Any:
        r = self.run(*args)
        self.answered += r is not None
        return r


def both(library: cp.Library, fn: Any, *args: Any) -> tuple[Any, Any, int]:
    """fn(*args) on NumPy and on the compiled kernels, and how many calls the library answered."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(library, "min_work", cp.NEVER)
        numpy_result = fn(*args)
        spy = Spy(library)
        mp.setattr(library, "run", spy)
        mp.setattr(library, "min_work", 1)
        compiled_result = fn(*args)
    return numpy_result, compiled_result, spy.answered


def sample(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    a = np.asarray(rng.standard_normal(shape) * 3)
    flat = a.reshape(-1)
    idx = rng.choice(flat.size, size=min(flat.size, 60), replace=False)
    flat[idx] = SPECIAL[rng.integers(0, len(SPECIAL), idx.size)]
    return np.asarray(a.astype(dtype))


def agree(compiled: np.ndarray, numpy_: np.ndarray, inputs: list[np.ndarray], what: str) -> None:
    """Equal within the dtype's rounding: NaN where NumPy has NaN, the same infinities, and otherwise
    |c - n| <= 8 eps (|n| + |inputs| + 1) (constants and libm's functions round apart from NumPy's loops;
    a cancellation, as in logaddexp, is exact only to the inputs' magnitude)."""
    assert compiled.dtype == numpy_.dtype and compiled.shape == numpy_.shape, what
    np.testing.assert_array_equal(np.isnan(compiled), np.isnan(numpy_), err_msg=f"{what}: NaN positions")
    inf = np.isinf(numpy_)
    np.testing.assert_array_equal(compiled[inf], numpy_[inf], err_msg=f"{what}: infinities")
    fin = np.isfinite(numpy_)
    assert np.isfinite(compiled[fin]).all(), what
    eps = np.finfo(numpy_.dtype).eps
    magnitude = np.nan_to_num(np.maximum.reduce([np.broadcast_to(np.abs(a.astype(np.float64)), numpy_.shape)
                                                 for a in inputs]), posinf=0.0)
    err = np.abs(compiled[fin].astype(np.float64) - numpy_[fin])
    bound = 8 * eps * (np.abs(numpy_[fin].astype(np.float64)) + magnitude[fin] + 1)
    worst = int(np.argmax(err - bound)) if err.size else 0
    assert (err <= bound).all(), f"{what}: compiled {compiled[fin][worst]!r} vs NumPy {numpy_[fin][worst]!r}"


# layouts: name -> the tensors of an op with `n` tensor arguments, made from a generator and a dtype
def _dense(rng: np.random.Generator, n: int, dt: Any) -> list[G.Tensor]:
    return [G.from_numpy(sample(rng, (37, 53), dt)) for _ in range(n)]


def _transposed(rng: np.random.Generator, n: int, dt: Any) -> list[G.Tensor]:
    return [G.from_numpy(sample(rng, (53, 37), dt)).t() if k % 2 == 0 else G.from_numpy(sample(rng, (37, 53), dt))
            for k in range(n)]


def _sliced(rng: np.random.Generator, n: int, dt: Any) -> list[G.Tensor]:
    return [G.from_numpy(sample(rng, (37, 106), dt))[:, ::2] if k != 1 else
            G.from_numpy(sample(rng, (74, 53), dt))[1::2] for k in range(n)]


def _permuted(rng: np.random.Generator, n: int, dt: Any) -> list[G.Tensor]:
    return [G.from_numpy(sample(rng, (6, 4, 5), dt)).permute(1, 2, 0) if k == 0 else
            G.from_numpy(sample(rng, (4, 5, 6), dt)) for k in range(n)]


def _broadcast(rng: np.random.Generator, n: int, dt: Any) -> list[G.Tensor]:
    shapes = [(37, 1), (53,), (1, 1)] if n > 1 else [(37, 53)]
    return [G.from_numpy(sample(rng, shapes[k % len(shapes)], dt)) for k in range(n)]


def _zero_dim(rng: np.random.Generator, n: int, dt: Any) -> list[G.Tensor]:
    return [G.from_numpy(sample(rng, (3, 1000), dt)) if k == 0 else G.from_numpy(sample(rng, (), dt))
            for k in range(n)]


LAYOUTS = {"dense": _dense, "transposed": _transposed, "sliced": _sliced, "permuted": _permuted,
           "broadcast": _broadcast, "zero_dim": _zero_dim}


def _scalars(f: Any, other: bool) -> dict[str, Any]:
    """Each scalar argument: its default (or 0.5 without one), or with `other` a value beside it."""
    out = {}
    for a in f.func.arguments.flat_non_out:
        if a.name in f.pointwise.scalars:
            value = default_value(a) if a.default is not None else 0.5
            out[a.name] = value * 1.5 - 0.25 if other else value
    return out


def _call(f: Any, tensors: list[G.Tensor], scalars: dict[str, Any]) -> Any:
    kernel = getattr(K, kernel_name(f))
    it = iter(tensors)
    return kernel(*[next(it) if a.name in f.pointwise.tensors else scalars[a.name]
                    for a in f.func.arguments.flat_non_out])


def test_the_compound_ops_are_compiled() -> None:
    names = {str(f.func.name) for f in OPS}
    assert {"sigmoid", "silu", "softplus", "mish", "logaddexp", "lerp.Tensor", "addcmul", "hardswish", "elu",
            "erf", "leaky_relu", "log_sigmoid", "fmax"} <= names
    assert not names & {"exp", "add.Tensor", "relu", "maximum", "sqrt"}  # one NumPy pass: nothing to gain
    assert "frac" not in names  # truncf: the loop would not vectorise (NOT_VECTORISED)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("f", OPS, ids=lambda f: str(f.func.name))
def test_compiled_equals_numpy(lib: cp.Library, f: Any, dtype: Any) -> None:
    rng = np.random.default_rng(zlib.crc32(f"{f.func.name} {dtype.__name__}".encode()))
    n = len(f.pointwise.tensors)
    for layout, make in LAYOUTS.items():
        for other in (False, True):
            tensors = make(rng, n, dtype)
            scalars = _scalars(f, other)
            with np.errstate(all="ignore"):
                expected, got, answered = both(lib, _call, f, tensors, scalars)
            assert answered == 1, f"{f.func.name} {layout}: the compiled kernel did not run"
            agree(got.numpy(), expected.numpy(), [t.numpy() for t in tensors],
                  f"{f.func.name} {dtype.__name__} {layout} scalars={scalars}")


def test_small_tensors_integers_and_other_forms(lib: cp.Library, monkeypatch: pytest.MonkeyPatch) -> None:
    spy = Spy(lib)
    monkeypatch.setattr(lib, "run", spy)
    passes = numpy_passes(next(f for f in OPS if str(f.func.name) == "sigmoid").pointwise)
    G.sigmoid(G.randn(lib.min_work // passes - 1))  # below the threshold: not even asked
    assert spy.answered == 0
    G.sigmoid(G.randn(lib.min_work // passes + 1))
    assert spy.answered == 1
    monkeypatch.setattr(lib, "min_work", 1)
    ints = G.arange(5000).reshape(50, 100)
    from_ints = G.sigmoid(ints)  # promoted to float32, then compiled
    assert spy.answered == 2 and from_ints.dtype == G.float32
    G.addcmul(ints, ints, ints, value=2)  # int64: the library says no, NumPy computes
    assert spy.answered == 2
    x, y = G.randn(40, 50), G.randn(40, 50)
    out = G.empty(40, 50)
    G.logaddexp(x, y, out=out)
    z = x.clone().sigmoid_()
    assert spy.answered == 4
    monkeypatch.setattr(lib, "min_work", cp.NEVER)
    agree(from_ints.numpy(), G.sigmoid(ints).numpy(), [ints.numpy()], "sigmoid of int64")
    np.testing.assert_array_equal(G.addcmul(ints, ints, ints, value=2).numpy(), ints.numpy() * ints.numpy() * 2
                                  + ints.numpy())
    agree(out.numpy(), G.logaddexp(x, y).numpy(), [x.numpy(), y.numpy()], "logaddexp out=")
    agree(z.numpy(), G.sigmoid(x).numpy(), [x.numpy()], "sigmoid_")


def test_strided_meta_drops_and_merges_dims() -> None:
    x, y = np.zeros((4, 5, 6), np.float32), np.zeros((4, 5, 8), np.float32)[:, :, :6]
    meta = cp._strided_meta((4, 5, 6), (x, y), 4)
    assert meta is not None and meta.tolist() == [20, 6, 6, 1, 8, 1]  # dims 0 and 1 merge in both; 1 and 2 not in y
    b = np.zeros((5, 1), np.float64)
    meta = cp._strided_meta((3, 5, 7), (np.zeros((3, 5, 7)), b), 8)
    assert meta is not None and meta.tolist() == [3, 5, 7, 35, 7, 1, 0, 1, 0]  # b: stride 0 where it broadcasts
    meta = cp._strided_meta((3, 5, 7), (np.zeros((3, 5, 7)), np.zeros((5, 7))), 8)
    assert meta is not None and meta.tolist() == [3, 35, 35, 1, 0, 1]  # (5, 7) over (3, 5, 7): one inner dim
    t = np.zeros((6, 8), np.float32).T
    meta = cp._strided_meta((8, 6), (t,), 4)
    assert meta is not None and meta.tolist() == [8, 6, 1, 8]  # a transposed view: no merge
    assert cp._strided_meta((1, 1), (np.zeros((1, 1)),), 8).tolist() == [1, 0]  # every dim of size 1


def test_gradients_are_unchanged(lib: cp.Library) -> None:
    rng = np.random.default_rng(7)

    def public(f: Any, tensors: list[G.Tensor], scalars: dict[str, Any]) -> Any:
        return getattr(G, f.func.name.name)(*tensors, **scalars)  # through the dispatcher and autograd

    def grads(f: Any, arrays: list[np.ndarray], scalars: dict[str, Any]) -> list[np.ndarray]:
        tensors = [G.from_numpy(a.copy()).requires_grad_() for a in arrays]
        public(f, tensors, scalars).sum().backward()
        return [t.grad.numpy() if t.grad is not None else np.zeros(1) for t in tensors]

    checked = 0
    for f in OPS:
        if str(f.func.name) in ("threshold_backward",):
            continue  # a backward kernel itself
        arrays = [rng.standard_normal((64, 80)).astype(np.float64) + 0.1 for _ in f.pointwise.tensors]
        try:
            with np.errstate(all="ignore"):
                grads(f, arrays, _scalars(f, False))
        except NotImplementedError:  # an op without a derivative formula for some input
            continue
        with np.errstate(all="ignore"):
            eager, compiled, answered = both(lib, grads, f, arrays, _scalars(f, False))
        assert answered >= 1, f.func.name
        for e, c in zip(eager, compiled, strict=True):
            # float64; a formula may divide the forward's rounding by a small input (sinc's by x): 1e-9
            np.testing.assert_allclose(c, e, rtol=1e-9, atol=1e-9, equal_nan=True, err_msg=f"grad of {f.func.name}")
        checked += 1
    assert checked >= 12


def _tiny_source(tmp_path: Path) -> Path:
    source = tmp_path / "tiny.cpp"
    source.write_text(textwrap.dedent("""\
        extern "C" void tiny__float32__contig(const long long n, float* out, const float* in0) {
          for (long long i = 0; i < n; ++i) out[i] = static_cast<float>(op_sigmoid(in0[i])) * 2.0f;
        }
        """))
    return source


def test_a_corrupted_cache_entry_is_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if cpp_build.find_compiler() is None:
        pytest.skip("no C++ compiler on this machine")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    source = _tiny_source(tmp_path)
    x = G.randn(5000)
    first = cp.Library(source, enabled=True)
    assert first.wait(300) == "ready"
    expected = first.run("tiny", G.float32, (x.numpy(),), ())
    assert expected is not None
    np.testing.assert_allclose(expected, 2 / (1 + np.exp(-x.numpy())), rtol=1e-6)
    (entry,) = (tmp_path / "cache" / "opgen" / "compile").glob("*.so")
    good = entry.read_bytes()
    entry.write_bytes(good[: len(good) // 2] + b"\0" * 64)  # a truncated, overwritten library
    second = cp.Library(source, enabled=True)
    assert second.wait(300) == "ready"  # the entry failed its check: rebuilt, not loaded
    np.testing.assert_array_equal(second.run("tiny", G.float32, (x.numpy(),), ()), expected)
    assert entry.read_bytes().partition(b"\n")[2][:4] == b"\x7fELF"  # rebuilt: an entry of verified_cache


def test_a_failing_build_warns_once_and_no_compiler_says_nothing(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    source = _tiny_source(tmp_path)
    x = G.randn(5000).numpy()

    def broken(text: str) -> Any:
        raise RuntimeError("the C++ compiler failed")

    monkeypatch.setattr(cp, "_builder", broken)
    failing = cp.Library(source, enabled=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert failing.run("tiny", G.float32, (x,), ()) is None
        assert failing.wait(60) == "failed"
        assert failing.run("tiny", G.float32, (x,), ()) is None
    assert [str(w.message).count("did not build") for w in caught] == [1]
    monkeypatch.setattr(cp, "_builder", lambda text: None)
    absent = cp.Library(source, enabled=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert absent.wait(60) == "unavailable"
        assert absent.run("tiny", G.float32, (x,), ()) is None
    off = cp.Library(source, enabled=False)
    assert off.min_work == cp.NEVER and off.wait(1) == "idle"


def _run(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-W", "always", "-c", textwrap.dedent(code)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def test_without_a_compiler(tmp_path: Path) -> None:
    """No C++ compiler (an empty PATH, no $CXX): eager ops run on NumPy without a word, and G.compile runs
    each function unfused and says so once (issue 25, item 6)."""
    empty = tmp_path / "bin"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "CXX"}
    env.update(PATH=str(empty), XDG_CACHE_HOME=str(tmp_path / "cache"), PYTHONPATH=str(ROOT))
    proc = _run("""
        import warnings
        import numpy as np
        import generated as G
        from generated import _cpu_kernels as K
        x = G.randn(100_000)
        with warnings.catch_warnings(record=True) as eager:
            warnings.simplefilter("always")
            for _ in range(3):
                y = G.nn.functional.silu(x)
                s = G.sigmoid(x)
            state = K._CPP.wait(60)
        assert state == "unavailable", state
        assert not eager, [str(w.message) for w in eager]
        assert np.allclose(s.numpy(), 1 / (1 + np.exp(-x.numpy())), rtol=1e-5)
        assert np.allclose(y.numpy(), x.numpy() * s.numpy(), rtol=1e-5)

        def f(a):
            return G.sigmoid(a * 2 + 1) * a

        c = G.compile(f)
        with warnings.catch_warnings(record=True) as compiled:
            warnings.simplefilter("always")
            for n in (10, 10, 20, 30):
                a = G.randn(n)
                assert G.allclose(c(a), f(a))
        said = [str(w.message) for w in compiled if "compiler" in str(w.message)]
        assert len(said) == 1, said
        print("ok")
        """, env)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-3000:]


def test_the_environment_turns_it_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cp.ENV, "0")
    off = cp.Library(_tiny_source(tmp_path))  # as generated/_cpu_kernels.py makes its library at import
    assert off.min_work == cp.NEVER
    assert off.run("tiny", G.float32, (G.randn(10_000).numpy(),), ()) is None and off.state == "idle"
    monkeypatch.setenv(cp.ENV, "1")
    assert cp.Library(_tiny_source(tmp_path)).min_work == cp.MIN_WORK
