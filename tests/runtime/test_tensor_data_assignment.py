"""`t.data = u`: the tensor keeps its identity, autograd flags, `.grad` and hooks and takes `u`'s memory,
shape and dtype; a leaf whose shape changes this way gets gradients of its new shape."""

from __future__ import annotations

import numpy as np
import pytest

import generated as G


def test_a_parameter_takes_new_values_and_shape_and_keeps_its_hooks() -> None:
    m = G.nn.Linear(3, 2)
    m(G.ones(1, 3)).sum().backward()  # the leaf's edge into its AccumulateGrad exists now
    seen = []
    m.weight.register_hook(lambda g: seen.append(tuple(g.shape)))
    w = m.weight
    m.weight.data = G.ones(4, 3)
    assert m.weight is w and w.requires_grad and isinstance(w, G.nn.Parameter) and w.is_leaf
    assert w.grad is not None  # the .grad it had stays
    w.grad = None
    (w * 3).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), np.full((4, 3), 3.0, np.float32))
    assert seen == [(4, 3)]


def test_data_shares_the_new_tensors_memory_and_dtype() -> None:
    x, u = G.zeros(3), G.arange(4)
    x.data = u
    assert x.dtype == G.int64 and tuple(x.shape) == (4,)
    u.add_(1)
    np.testing.assert_array_equal(x.numpy(), [1, 2, 3, 4])


def test_bad_data_is_refused() -> None:
    w = G.zeros(2, requires_grad=True)
    with pytest.raises(TypeError):
        w.data = [1.0, 2.0]  # type: ignore[assignment]
    with pytest.raises(RuntimeError, match="requires grad"):
        w.data = G.ones(2, dtype=G.int64)
    assert w.dtype == G.float32
