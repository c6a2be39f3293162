"""Fused kernels (runtime/compile/fusion.py, kernel_render.py): random pointwise graphs with broadcasting,
views, transposes, mixed dtypes and scalars; reductions with their prologues and epilogues, forward and
backward; legal grouping; threads. Every result is the compiled program's (a second call: the first
returns the capture's eager result) against the same function run eagerly."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import generated as G
from runtime.compile import program as program_module

F = G.nn.functional


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def flat(x: Any) -> list[G.Tensor]:
    return list(x) if isinstance(x, tuple | list) else [x]


def close(got: Any, want: Any, tol: float) -> None:
    for g, w in zip(flat(got), flat(want), strict=True):
        assert tuple(g.shape) == tuple(w.shape) and g.dtype == w.dtype
        np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=tol, atol=tol)


def compiled_agrees(fn: Callable[..., Any], *args: G.Tensor, tol: float = 1e-5) -> Any:
    """Compile `fn`, run the compiled program on the args and compare with eager; returns the program."""
    c = G.compile(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fallback to eager execution would warn
        with G.no_grad():
            c(*args)
            close(c(*args), fn(*args), tol)
    (program,) = c.programs
    return program


# -- random pointwise graphs -------------------------------------------------------------------------------
UNARY = ["exp", "tanh", "sigmoid", "abs", "neg", "sin", "relu"]
BINARY = ["add", "mul", "sub", "maximum"]


@st.composite
def graphs(draw: Any) -> tuple[list[tuple[Any, ...]], int, int]:
    n_ops = draw(st.integers(2, 8))
    ops = []
    for k in range(n_ops):
        kind = draw(st.sampled_from(["unary", "binary", "scalar", "view"]))
        a = draw(st.integers(0, 3 + k))  # any earlier value: a DAG, not a chain
        if kind == "unary":
            ops.append(("unary", draw(st.sampled_from(UNARY)), a))
        elif kind == "binary":
            ops.append(("binary", draw(st.sampled_from(BINARY)), a, draw(st.integers(0, 3 + k))))
        elif kind == "scalar":
            ops.append(("scalar", draw(st.sampled_from(["add", "mul", "rsub"])), a,
                        draw(st.one_of(st.integers(-3, 3), st.floats(-2, 2)))))
        else:
            ops.append(("view", draw(st.sampled_from(["t", "flip_slice", "expand"])), a))
    return ops, draw(st.integers(1, 6)), draw(st.integers(1, 6))


def run_graph(ops: list[tuple[Any, ...]], values: list[G.Tensor]) -> tuple[G.Tensor, ...]:
    vals = list(values)
    for op in ops:
        kind, name, a = op[0], op[1], vals[op[2] % len(vals)]
        if kind == "unary":
            out = getattr(G, name)(a)
        elif kind == "binary":
            b = vals[op[3] % len(vals)]
            if b.dim() == 2 and a.dim() == 2 and b.shape != a.shape:
                b = b.t() if tuple(b.t().shape) == tuple(a.shape) else b[:1] if b.shape[1] == a.shape[1] else b
            try:
                out = getattr(G, name)(a, b)
            except RuntimeError:  # shapes that do not broadcast: skip this op
                continue
        elif kind == "scalar":
            c = op[3]
            out = a + c if name == "add" else a * c if name == "mul" else c - a
        else:
            if a.dim() != 2:
                continue
            out = a.t() if name == "t" else a[:, ::2] if name == "flip_slice" else a[:1].expand(a.shape[0], a.shape[1])
        vals.append(out)
    return tuple(vals[len(values):]) or (values[0] * 1,)


@settings(max_examples=8, deadline=None)
@given(graph=graphs(), dtypes=st.lists(st.sampled_from(["float32", "float64", "int64", "bool"]), min_size=3,
                                      max_size=3), transposed=st.booleans())
def test_random_pointwise_graphs_with_views_broadcasting_and_mixed_dtypes(graph: Any, dtypes: list[str],
                                                                         transposed: bool) -> None:
    ops, rows, cols = graph
    rng = np.random.default_rng(0)

    def make(shape: tuple[int, ...], dtype: str) -> G.Tensor:
        a = rng.standard_normal(shape)
        a = a > 0 if dtype == "bool" else (a * 3).astype(np.int64) if dtype == "int64" else a.astype(dtype)
        return G.from_numpy(np.ascontiguousarray(a))

    x = make((cols, rows), "float32").t() if transposed else make((rows, cols), "float32")
    inputs = [x, make((cols,), dtypes[0]), make((rows, 1), dtypes[1]), make((), dtypes[2])]
    try:
        with G.no_grad():
            run_graph(ops, inputs)
    except (RuntimeError, TypeError):
        return  # an op eager execution refuses (bool arithmetic): nothing to compare
    compiled_agrees(lambda *a: run_graph(ops, list(a)), *inputs, tol=1e-5)


def test_a_dag_fuses_into_one_kernel_reading_views_and_mixed_dtypes() -> None:
    def f(x: G.Tensor, y: G.Tensor, k: G.Tensor) -> G.Tensor:
        a = G.exp(x) * 0.5
        b = a + y.t()  # a transposed float64 input: promotes
        c = G.tanh(a) - k  # an int64 0-d tensor
        return b * c + x[:, :1]  # a broadcast slice

    x, y, k = G.randn(6, 5), G.randn(5, 6, dtype=G.float64), G.tensor(3)
    program = compiled_agrees(f, x, y, k, tol=1e-6)
    (group,) = program.fused
    assert len(group.nodes) == len([n for n in program.graph.nodes if n.name not in ("t", "slice.Tensor")])
    assert group.outputs[0].dtype == G.float64


def test_a_node_that_depends_on_the_group_through_another_node_stays_out() -> None:
    def f(x: G.Tensor, w: G.Tensor) -> G.Tensor:
        a = G.exp(x) * 2
        b = a @ w  # not fusible, reads the group
        return G.sigmoid(a) * 3 + b  # may not join a's group: that would be a cycle

    program = compiled_agrees(f, G.randn(4, 4), G.randn(4, 4), tol=1e-5)
    (group,) = program.fused  # exp, mul, sigmoid, mul: the sigmoid joins (it does not read b)
    assert [n.name for n in group.nodes] == ["exp", "mul.Scalar", "sigmoid", "mul.Scalar"]
    assert [getattr(s, "name", "group") for s in program.steps] == ["group", "matmul", "add.Tensor"]


# -- reductions with prologues and epilogues, forward and backward --------------------------------------------
Y = np.array([1, 2, 0, 4, -100, 3])
REDUCTIONS: dict[str, Callable[[G.Tensor], Any]] = {
    "softmax_last_scaled": lambda x: F.softmax(x * 0.125, dim=-1) * 2,
    "softmax_first": lambda x: F.softmax(x + 1, dim=0),
    "log_softmax": lambda x: F.log_softmax(x * 2 - 1, dim=1).exp() + 1,
    "layer_norm_residual": lambda x: F.layer_norm(x + x.sin(), (5,)) * 0.5,
    "layer_norm_two_dims": lambda x: F.layer_norm(x.reshape(2, 3, 5) * 2, (3, 5)) + 1,
    "cross_entropy_mean": lambda x: F.cross_entropy(x * 1.5 + 0.5, G.from_numpy(Y)),  # the prologue joins
    "cross_entropy_sum": lambda x: F.cross_entropy(x, G.from_numpy(Y), reduction="sum") * 2,
    "cross_entropy_none": lambda x: F.cross_entropy(x, G.from_numpy(Y), reduction="none") + 1,
    "sum_first_dim": lambda x: (x.exp() * 2).sum(0),
    "mean_dims_0_2": lambda x: (x.reshape(2, 3, 5) - 1).abs().mean((0, 2)),
    "sum_all_and_expression": lambda x: ((x * x).sum(), x * x + 1),
    "var_and_amax": lambda x: x.var(1, keepdim=True) + (x * 3).amax(1, keepdim=True),
    "mean_then_centre": lambda x: (x - x.mean(1, keepdim=True)) * 2,
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_fused_reductions_forward_and_backward(name: str) -> None:
    fn = REDUCTIONS[name]
    x = G.randn(6, 5, dtype=G.float64, requires_grad=True)
    c = G.compile(fn)
    results, grads = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fallback to eager execution would warn
        for f in (c, c, fn):  # capture, compiled, eager
            x.grad = None
            out = flat(f(x))
            sum((t * (k + 1)).sum() for k, t in enumerate(out)).backward()
            results.append(out)
            grads.append(x.grad.numpy().copy())
    close(results[1], results[2], 1e-10)
    np.testing.assert_allclose(grads[1], grads[2], rtol=1e-9, atol=1e-9)
    (training,) = c.programs
    assert any(t.kind == "reduce" for g in training.forward.fused for t in g.terms), "the reduction is fused"
    assert training.backward.fused


def test_cross_entropy_with_a_target_out_of_range_raises_as_eager() -> None:
    def f(x: G.Tensor, y: G.Tensor) -> G.Tensor:
        return F.cross_entropy(x * 2, y)

    x = G.randn(4, 5)
    c = G.compile(f)
    with G.no_grad():
        c(x, G.from_numpy(np.array([0, 1, 2, 3])))
        bad = G.from_numpy(np.array([0, 1, 7, 3]))
        with pytest.raises(Exception) as eager:
            f(x, bad)
        with pytest.raises(eager.type):
            c(x, bad)


# -- threads ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fn", [lambda x: G.tanh(x * 2) + x, lambda x: F.softmax(x * 3, dim=-1),
                                lambda x: F.cross_entropy(x * 2, G.from_numpy(np.arange(37) % 129))])
def test_kernels_split_over_threads_agree(fn: Callable[[G.Tensor], G.Tensor],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from runtime.compile import thread_split

    monkeypatch.setattr(program_module, "SPLIT_MIN", 0)
    monkeypatch.setattr(thread_split, "kernel_threads", lambda: 3)
    monkeypatch.setattr(thread_split, "SIZES", (0,))
    monkeypatch.setattr(thread_split, "_known", {3: 0})  # the crossover: every size splits
    counts: list[int] = []
    split = thread_split.split_threads
    monkeypatch.setattr(program_module, "split_threads", lambda work: counts.append(split(work)) or counts[-1])
    x = G.randn(37, 129)
    program = compiled_agrees(fn, x, tol=1e-5)
    assert "omp parallel" in program.kernel_source()
    assert counts and set(counts) == {3}, "the kernels ran on three threads"


def test_the_thread_count_follows_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    from runtime import threads

    # the environment is read once per process (Note [Thread count]): a fresh read is a fresh `_env_threads`
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    monkeypatch.setattr(threads, "_requested", [None])
    monkeypatch.setattr(threads, "_env_threads", [None])
    assert threads.kernel_threads() == 3
    monkeypatch.delenv("OMP_NUM_THREADS")
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    assert threads.kernel_threads() == 3  # kept from the first read
    monkeypatch.setattr(threads, "_env_threads", [None])
    assert threads.kernel_threads() == 1
    monkeypatch.setattr(threads, "_requested", [2])
    assert threads.kernel_threads() == 2


def test_slice_gradients_are_read_through_a_window_in_the_fused_backward() -> None:
    def f(x: G.Tensor) -> G.Tensor:
        a, b, c = x.chunk(3, dim=-1)  # the backward places each gradient in its slice and adds them
        return G.tanh(a) * b + c[:, ::2].sum(-1, keepdim=True) + x[:, 1:8:3].sum(-1, keepdim=True)

    x = G.randn(4, 9, dtype=G.float64, requires_grad=True)
    c = G.compile(f)
    grads = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for fn in (c, c, f):
            x.grad = None
            (fn(x) * G.arange(12, dtype=G.float64).reshape(4, 3)).sum().backward()
            grads.append(x.grad.numpy().copy())
    np.testing.assert_allclose(grads[1], grads[2], rtol=1e-12, atol=1e-12)
    (training,) = c.programs
    assert any(t.kind == "window" for g in training.backward.fused for t in g.terms)


# -- the generated program's call of a kernel (runtime/compile/pyrun.py) ---------------------------------------
def test_a_group_runs_its_kernel_when_only_the_stride_of_a_size_one_dim_differs() -> None:
    from numpy.lib.stride_tricks import as_strided

    from runtime.compile import pyrun

    c = G.compile(lambda x, b: G.sigmoid(x * 2 + b) * x)
    x, b = G.randn(4, 1, 3), G.randn(3)
    with G.no_grad():
        want = c(x, b).numpy()
    (program,) = c.programs
    (group,) = program.fused
    fn = program._calls[id(group)]
    calls: list[int] = []
    runner = pyrun.group_runner(group, lambda *a: calls.append(1) or fn(*a), None)
    ids = [v.id for v in program.graph.inputs]

    def run(xa: np.ndarray) -> np.ndarray:
        arrays = {ids[0]: xa, ids[1]: b.numpy()}
        (out,) = runner(None, *[arrays[v.id] for v in group.inputs])
        return out

    base = x.numpy().copy()
    odd = as_strided(base, (4, 1, 3), (12, 28, 4))  # the size-1 dim's stride is never stepped
    np.testing.assert_allclose(run(odd), want, rtol=1e-6)
    assert calls == [1]
    other = np.asfortranarray(base)  # another layout: the operators compute it
    np.testing.assert_allclose(run(other), want, rtol=1e-6)
    assert calls == [1]
