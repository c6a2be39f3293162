"""Concurrent backward() calls into shared leaves lose no gradient (Note [Concurrent accumulation])."""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

import generated as G

THREADS = 8
REPS = 40


@pytest.fixture(autouse=True)
def _switch_often():
    """Make the interpreter switch threads far more often, so that a race shows in a short test."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


def _run(work, reps: int = REPS) -> None:
    barrier = threading.Barrier(THREADS)
    errors: list[BaseException] = []

    def body(i: int) -> None:
        try:
            barrier.wait()
            for r in range(reps):
                work(i, r)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_one_shared_leaf_gets_every_gradient():
    w = G.zeros(64, requires_grad=True)

    def work(i: int, r: int) -> None:
        (w * float(i + 1)).sum().backward()

    _run(work)
    expected = REPS * sum(range(1, THREADS + 1))
    np.testing.assert_array_equal(w.grad.numpy(), np.full(64, expected, np.float32))


def test_first_gradient_is_not_lost():
    """The first accumulation stores (steals) the gradient: every thread races for it at once."""
    for _ in range(5):
        w = G.zeros(3, requires_grad=True)
        _run(lambda i, r, w=w: (w * 2.0).sum().backward(), reps=1)
        np.testing.assert_array_equal(w.grad.numpy(), np.full(3, 2.0 * THREADS, np.float32))


def test_leaves_shared_through_a_common_subgraph():
    """Threads backpropagate through one shared intermediate graph (retained) into the same leaves."""
    a = G.ones(4, 4, requires_grad=True)
    b = G.full((4,), 2.0, requires_grad=True)
    h = (a * b).relu()  # built once, shared by every thread
    xs = [G.full((4, 4), float(i + 1)) for i in range(THREADS)]

    def work(i: int, r: int) -> None:
        (h * xs[i]).sum().backward(retain_graph=True)

    _run(work)
    s = REPS * sum(range(1, THREADS + 1))
    np.testing.assert_array_equal(a.grad.numpy(), np.full((4, 4), 2.0 * s, np.float32))
    np.testing.assert_array_equal(b.grad.numpy(), np.full(4, 4.0 * s, np.float32))


def test_retained_grad_of_a_shared_non_leaf():
    w = G.ones(5, requires_grad=True)
    h = w * 3.0
    h.retain_grad()

    def work(i: int, r: int) -> None:
        h.sum().backward(retain_graph=True)

    _run(work)
    np.testing.assert_array_equal(h.grad.numpy(), np.full(5, THREADS * REPS, np.float32))
    np.testing.assert_array_equal(w.grad.numpy(), np.full(5, 3.0 * THREADS * REPS, np.float32))


def test_new_leaf_gets_one_accumulator_under_concurrent_recording():
    for _ in range(5):
        w = G.zeros(2, requires_grad=True)
        nodes: list[object] = []
        _run(lambda i, r, w=w, nodes=nodes: nodes.append((w * 1.0).grad_fn.next_functions[0][0]), reps=1)
        assert len({id(n) for n in nodes}) == 1
