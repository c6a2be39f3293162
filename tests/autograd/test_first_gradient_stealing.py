"""The engine stores a leaf's first gradient without a copy only when it owns it (Note [Stealing the first
gradient] in runtime/autograd/engine.py): every test here makes the gradient visible somewhere else and
checks that `.grad` is a tensor of its own, or checks that a gradient nothing else holds is not copied."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import generated as G
from runtime.autograd import engine


@pytest.fixture
def copies(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The gradients the engine copied into a leaf's `.grad` (the first one not stolen)."""
    seen: list[Any] = []
    real = engine._accumulate

    def spy(variable: Any, grad: Any, create_graph: bool) -> None:
        seen.append(grad)
        real(variable, grad, create_graph)

    monkeypatch.setattr(engine, "_accumulate", spy)
    return seen


def _own(t: Any, *others: Any) -> None:
    """`t` shares no memory with any of `others`."""
    for o in others:
        assert t is not o
        assert not np.shares_memory(t._data, o._data)


def _leaf(*values: float) -> Any:
    return G.tensor(list(values), requires_grad=True)


def test_fresh_formula_output_is_stolen(copies: list[Any]) -> None:
    x = _leaf(1.0, 2.0)
    (x * 3.0).backward(G.ones(2))
    assert x.grad.tolist() == [3.0, 3.0]
    assert copies == []


def test_summed_gradient_is_stolen(copies: list[Any]) -> None:
    x = _leaf(1.0, 2.0)
    (x * 2.0 + x * 3.0).backward(G.ones(2))
    assert x.grad.tolist() == [5.0, 5.0]
    assert copies == []


def test_gradient_passed_through_to_two_leaves_is_copied(copies: list[Any]) -> None:
    a, b = _leaf(1.0, 2.0), _leaf(3.0, 4.0)
    g = G.tensor([1.0, 2.0])
    (a + b).backward(g)  # add's formula returns the incoming gradient itself to both inputs
    _own(a.grad, b.grad, g)
    g.add_(100.0)
    a.grad.mul_(10.0)
    assert a.grad.tolist() == [10.0, 20.0] and b.grad.tolist() == [1.0, 2.0]


def test_root_gradient_is_copied() -> None:
    x = _leaf(1.0, 2.0)
    y = x + 0.0
    g = G.tensor([5.0, 6.0])
    y.backward(g)
    _own(x.grad, g)


def test_tensor_hook_replacement_is_copied() -> None:
    x = _leaf(1.0, 2.0)
    keep = G.tensor([7.0, 8.0])
    y = x + 0.0
    y.register_hook(lambda grad: keep)  # the node then passes `keep` itself on to x
    y.backward(G.ones(2))
    _own(x.grad, keep)
    keep.add_(1.0)
    assert x.grad.tolist() == [7.0, 8.0]


def test_node_post_hook_sees_the_gradient() -> None:
    x = _leaf(1.0, 2.0)
    seen: list[Any] = []
    y = x * 3.0
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: seen.append(grad_inputs[0]))
    y.backward(G.ones(2))
    _own(x.grad, seen[0])
    seen[0].add_(1.0)
    assert x.grad.tolist() == [3.0, 3.0]


def test_node_pre_hook_replacement_is_copied() -> None:
    x = _leaf(1.0, 2.0)
    keep = G.tensor([4.0, 4.0])
    y = x + 0.0
    y.grad_fn.register_prehook(lambda grad_outputs: (keep,))
    y.backward(G.ones(2))
    _own(x.grad, keep)


def test_leaf_hook_sees_the_gradient() -> None:
    x = _leaf(1.0, 2.0)
    seen: list[Any] = []
    x.register_hook(lambda grad: seen.append(grad))
    (x * 3.0).backward(G.ones(2))
    _own(x.grad, seen[0])


def test_retain_graph_second_backward_accumulates_into_own_grad() -> None:
    x = _leaf(1.0, 2.0)
    y = x * 3.0
    y.backward(G.ones(2), retain_graph=True)
    first = x.grad
    y.backward(G.ones(2))
    assert x.grad is first and x.grad.tolist() == [6.0, 6.0]


def test_create_graph_gradient_is_not_the_formula_output(copies: list[Any]) -> None:
    x = _leaf(1.0, 2.0)
    (x * x).backward(G.ones(2), create_graph=True)
    assert x.grad.requires_grad and x.grad.tolist() == [2.0, 4.0]
    assert len(copies) == 1


def test_autograd_grad_result_is_not_accumulated() -> None:
    x = _leaf(1.0, 2.0)
    (gx,) = G.autograd.grad(x * 3.0, x, G.ones(2))
    assert gx.tolist() == [3.0, 3.0] and x.grad is None


def test_unshared_sees_pass_through_and_aliases() -> None:
    g = G.ones(3)
    assert engine._unshared(g, 0, [g, G.ones(3)], [G.ones(3)])
    assert not engine._unshared(g, 0, [g], [g])  # an incoming gradient passed through
    assert not engine._unshared(g, 0, [g, g], [])  # the same tensor to two inputs
    assert not engine._unshared(g, 0, [g, g.view(3)], [])  # a view of it to another input
    assert not engine._unshared(g, 1, [None, g, g[1:]], [])  # a slice of its memory
