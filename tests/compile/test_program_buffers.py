"""Buffers a compiled program keeps between runs (Note [Buffers a program keeps] in runtime/compile/program.py)
and composites whose decomposition is pointwise fusing in inference graphs (Note [Pointwise composites] in
runtime/compile/capture.py)."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

import generated as G
from runtime.compile.program import Program

F = G.nn.functional


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def compiled(fn, *args):  # type: ignore[no-untyped-def]
    c = G.compile(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        c(*args)
    (program,) = c.programs
    assert isinstance(program, Program)
    return c, program


def test_an_intermediate_read_only_by_lowered_nodes_is_kept_and_results_stay_the_callers() -> None:
    w = G.randn(16, 8)
    fn = lambda x: G.mm((x * 2.0).exp(), w) + 1.0  # noqa: E731  the exp's output feeds only the matmul
    x1, x2 = G.randn(4, 16), G.randn(4, 16)
    c, program = compiled(fn, x1)
    assert len(program.slots) == 1
    first = c(x1)
    want = fn(x1).numpy().copy()
    second = c(x2)
    np.testing.assert_allclose(first.numpy(), want, rtol=1e-5, atol=1e-5)  # the second run did not write into it
    np.testing.assert_allclose(second.numpy(), fn(x2).numpy(), rtol=1e-5, atol=1e-5)
    third = c(x1)
    assert not np.shares_memory(third.numpy(), first.numpy())


@pytest.mark.parametrize("case", ["returned", "returned_view", "operator_call"])
def test_values_that_leave_the_program_are_never_kept(case: str) -> None:
    w = G.randn(16, 8)
    fns = {
        "returned": lambda x: ((x * 2.0).exp(), G.mm((x * 2.0).exp(), w)),
        # a lowered reshape, then a view the program returns (an operator call on the reshaped array)
        "returned_view": lambda x: (x * 2.0).exp().reshape(8, 8).t(),
        # an operator without a lowering reads it (it could keep or alias its argument)
        "operator_call": lambda x: G.cumsum((x * 2.0).exp(), 0) + 1.0,
    }
    fn = fns[case]
    x1, x2 = G.randn(4, 16), G.randn(4, 16)
    c, program = compiled(fn, x1)
    assert program.slots == {}
    first = c(x1)
    want = [t.numpy().copy() for t in (fn(x1) if isinstance(fn(x1), tuple) else (fn(x1),))]
    c(x2)
    got = first if isinstance(first, tuple) else (first,)
    for g, w_ in zip(got, want, strict=True):
        np.testing.assert_allclose(g.numpy(), w_, rtol=1e-5, atol=1e-5)


def test_runs_in_several_threads_each_use_their_own_buffers() -> None:
    w = G.randn(64, 64)
    fn = lambda x: G.mm(G.tanh(x * 3.0), w)  # noqa: E731
    xs = [G.randn(128, 64) for _ in range(4)]
    c, program = compiled(fn, xs[0])
    assert program.slots
    want = [fn(x).numpy() for x in xs]
    errors: list[BaseException] = []

    def worker(k: int) -> None:
        try:
            for _ in range(30):
                np.testing.assert_allclose(c(xs[k]).numpy(), want[k], rtol=1e-5, atol=1e-5)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


@pytest.mark.parametrize("approximate", ["tanh", "none"])
def test_a_pointwise_composite_fuses_in_an_inference_graph(approximate: str) -> None:
    fn = lambda x: F.gelu(x, approximate=approximate) * 1.5 + x  # noqa: E731
    x = G.randn(3, 50)
    c, program = compiled(fn, x)
    names = [n.name for n in program.graph.nodes]
    assert "gelu" not in names, names
    assert len(program.fused) == 1 and len(program.steps) == 1, "the decomposition and its neighbours: one kernel"
    np.testing.assert_allclose(c(x).numpy(), fn(x).numpy(), rtol=1e-6, atol=1e-6)


def test_a_composite_with_a_part_that_does_not_fuse_stays_one_node() -> None:
    fn = lambda x, y: F.layer_norm(x, (8,)) + G.matmul(x, y)  # noqa: E731
    x, y = G.randn(4, 8), G.randn(8, 8)
    c, program = compiled(fn, x, y)
    names = [n.name for n in program.graph.nodes]
    assert "matmul" in names and not any(name in ("mm", "bmm", "view", "expand") for name in names), names
    np.testing.assert_allclose(c(x, y).numpy(), fn(x, y).numpy(), rtol=1e-5, atol=1e-6)
