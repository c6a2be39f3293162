"""G.compile: capture through the dispatcher, graph passes, fused C++ kernels, guards and graph breaks; every
compiled result is compared with the same function run eagerly."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import generated as G
from runtime.compile import GraphBreak, cpp_build


def gelu_residual(x: G.Tensor) -> G.Tensor:
    return 0.5 * x * (1 + G.tanh(0.7978845608 * (x + 0.044715 * x * x * x))) * 1.5 + x


def close(a: G.Tensor, b: G.Tensor, tol: float = 1e-5) -> None:
    assert tuple(a.shape) == tuple(b.shape) and a.dtype == b.dtype
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=tol, atol=tol)


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


@pytest.mark.parametrize("dtype", [G.float32, G.float64])
def test_a_pointwise_chain_becomes_one_fused_kernel(dtype: G.dtype) -> None:
    f = G.compile(gelu_residual)
    x = G.randn(3, 1000, dtype=dtype)
    close(f(x), gelu_residual(x))
    (program,) = f.programs
    assert len(program.fused) == 1 and len(program.fused[0].nodes) == len(program.graph.nodes)
    assert "tanh" in str(program.graph) and "op_tanh" in program.kernel_source()
    y = G.randn(3, 1000, dtype=dtype)
    close(f(y), gelu_residual(y))  # the cached program, on new values
    assert len(f.programs) == 1


def test_guards_recompile_for_a_new_signature() -> None:
    f = G.compile(lambda x, s: x * s + 1)
    f(G.ones(4), 2.0)
    f(G.ones(4), 2.0)
    assert len(f.programs) == 1
    close(f(G.ones(5), 2.0), G.full((5,), 3.0))  # shape
    close(f(G.ones(4), 3.0), G.full((4,), 4.0))  # a Python value the graph holds as a constant
    close(f(G.ones(4, dtype=G.float64), 2.0), G.full((4,), 3.0, dtype=G.float64))  # dtype
    assert len(f.programs) == 4


def test_layouts_broadcasting_and_transposes() -> None:
    def f(x: G.Tensor, b: G.Tensor) -> G.Tensor:
        return G.sigmoid(x * 2 + b) - b * x

    x, b = G.randn(30, 40), G.randn(40)
    c = G.compile(f)
    close(c(x, b), f(x, b))
    xt = G.randn(40, 30).t()  # another layout: a new signature, same values
    close(c(xt, b), f(xt, b))


def test_graph_passes_remove_merge_and_fold() -> None:
    def f(x: G.Tensor) -> G.Tensor:
        unused = G.exp(x)  # dead
        two = G.ones(1) * 2  # constant: folded
        del unused
        return (x * 2 + x * 2) * two

    c = G.compile(f)
    x = G.randn(8)
    close(c(x), f(x))
    stats = c.programs[0].stats
    assert stats["dead"] >= 1 and stats["merged"] >= 1 and stats["folded"] >= 1
    names = [n.name for n in c.programs[0].graph.nodes]
    assert names.count("mul.Scalar") == 1 and "exp" not in names and "ones" not in names


def test_non_fusible_ops_run_between_fused_groups() -> None:
    def f(x: G.Tensor, w: G.Tensor) -> G.Tensor:
        h = G.relu(x @ w + 1) * 0.5
        return (h - h.mean()).exp() * 2 + 1

    x, w = G.randn(16, 8), G.randn(8, 4)
    c = G.compile(f)
    close(c(x, w), f(x, w), 1e-4)
    close(c(x * 2, w), f(x * 2, w), 1e-4)
    assert len(c.programs[0].fused) >= 1


def test_free_tensors_are_read_at_every_call() -> None:
    w = G.ones(3)
    c = G.compile(lambda x: x * w + w)
    close(c(G.ones(3)), G.full((3,), 2.0))
    w.mul_(5)
    close(c(G.ones(3)), G.full((3,), 10.0))


def test_in_place_ops_keep_their_order() -> None:
    def f(x: G.Tensor) -> G.Tensor:
        y = x.clone()
        y.add_(1)
        z = y * 2
        y.mul_(3)
        return z + y

    c = G.compile(f)
    x = G.randn(6)
    close(c(x), f(x))
    close(c(x), f(x))


def test_data_dependent_python_ends_capture_once() -> None:
    def f(x: G.Tensor) -> G.Tensor:
        return x * 2 if x.sum().item() > 0 else x * 3

    c = G.compile(f)
    with pytest.warns(RuntimeWarning, match="item"):
        close(c(G.ones(3)), G.full((3,), 2.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        close(c(G.ones(3)), G.full((3,), 2.0))  # said once
    with pytest.raises(GraphBreak, match="item"):
        G.compile(f, fullgraph=True)(G.ones(3))


def test_inputs_that_require_grad_compile_forward_and_backward() -> None:
    x = G.randn(4, requires_grad=True)
    c = G.compile(gelu_residual)
    y = c(x)
    y.sum().backward()
    assert x.grad is not None and len(c.programs) == 1  # tests/compile/test_compile_training.py checks the values


def test_without_a_compiler_the_graph_runs_unfused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("runtime.compile.find_compiler", lambda: None)
    c = G.compile(gelu_residual)
    x = G.randn(100)
    with pytest.warns(RuntimeWarning, match="no C\\+\\+ compiler"):
        close(c(x), gelu_residual(x))
    assert not c.programs[0].fused


def test_a_tampered_cached_kernel_is_rebuilt(tmp_path) -> None:  # type: ignore[no-untyped-def]
    x = G.randn(50)
    G.compile(gelu_residual)(x)
    directory = cpp_build.cache_dir()
    assert directory is not None
    (lib,) = directory.glob("*.so")
    lib.write_bytes(b"not a library")
    c = G.compile(gelu_residual)
    close(c(x), gelu_residual(x))
    assert lib.read_bytes().partition(b"\n")[2][:4] == b"\x7fELF"  # rebuilt: an entry of verified_cache


def test_graph_is_printable_and_drawable() -> None:
    c = G.compile(gelu_residual)
    c(G.randn(10))
    text, dot = str(c.graphs[0]), c.graphs[0].to_dot()
    assert text.startswith("graph(x") and "return" in text
    assert dot.startswith("digraph") and "->" in dot


def test_decorator_forms() -> None:
    @G.compile(fullgraph=True)
    def f(x: G.Tensor) -> G.Tensor:
        return x + 1

    close(f(G.zeros(2)), G.ones(2))
    assert G.compile(disable=True)(gelu_residual) is gelu_residual


UNARY = ["exp", "tanh", "sigmoid", "relu", "abs", "neg", "sin", "log1p"]


@settings(max_examples=12, deadline=None)
@given(ops=st.lists(st.tuples(st.sampled_from(UNARY + ["add", "mul", "sub"]), st.floats(-2, 2)), min_size=2,
                    max_size=6),
       rows=st.integers(1, 5), cols=st.integers(1, 7), broadcast=st.booleans(), transposed=st.booleans())
def test_random_pointwise_graphs_agree_with_eager(ops: list[tuple[str, float]], rows: int, cols: int,
                                                  broadcast: bool, transposed: bool) -> None:
    def f(x: G.Tensor, b: G.Tensor) -> G.Tensor:
        y = x
        for name, c in ops:
            if name == "add":
                y = y + b
            elif name == "mul":
                y = y * c
            elif name == "sub":
                y = c - y
            else:
                y = getattr(G, name)(y.abs() if name == "log1p" else y)
        return y

    x = G.randn(cols, rows).t() if transposed else G.randn(rows, cols)
    b = G.randn(cols) if broadcast else G.randn(rows, cols)
    c = G.compile(f)
    with G.no_grad():
        close(c(x, b), f(x, b), 1e-4)
    assert len(c.programs) == 1  # compiled, not run eagerly


@settings(max_examples=10, deadline=None)
@given(reduction=st.sampled_from(["sum", "mean", "sum_last", "mean_last", "sum_last_keepdim", "sum_first"]),
       rows=st.integers(1, 5), cols=st.integers(1, 9), transposed=st.booleans(),
       dtype=st.sampled_from([G.float32, G.float64]), also_return_the_expression=st.booleans())
def test_sums_and_means_of_an_expression_fuse_as_epilogues(reduction: str, rows: int, cols: int, transposed: bool,
                                                           dtype: G.dtype, also_return_the_expression: bool) -> None:
    def f(x: G.Tensor, b: G.Tensor) -> Any:
        e = G.exp(x * 0.5 + b) - x
        r = {"sum": lambda: e.sum(), "mean": lambda: e.mean(), "sum_last": lambda: e.sum(-1),
             "mean_last": lambda: e.mean(dim=1), "sum_last_keepdim": lambda: e.sum(1, keepdim=True),
             "sum_first": lambda: e.sum(0)}[reduction]()
        return (r, e) if also_return_the_expression else r

    x = G.randn(cols, rows, dtype=dtype).t() if transposed else G.randn(rows, cols, dtype=dtype)
    b = G.randn(cols, dtype=dtype)
    c = G.compile(f)
    with G.no_grad():
        got, want = c(x, b), f(x, b)
    for g, w in zip(got if also_return_the_expression else [got], want if also_return_the_expression else [want],
                    strict=True):
        close(g, w, 1e-5 if dtype == G.float32 else 1e-12)
    (program,) = c.programs
    (group,) = program.fused  # over any dims: the reduction is the kernel's epilogue
    assert group.reduction is not None and "_acc" in program.kernel_source()
    assert len(group.outputs) == 1 + also_return_the_expression
