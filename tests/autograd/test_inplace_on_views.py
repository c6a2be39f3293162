"""In-place ops on views of tensors that take part in autograd (Note [In-place ops on views]).

Expected gradients are worked out by hand from the forward computation; each test states it."""

from __future__ import annotations

import numpy as np
import pytest

import generated as G


def leaf(values: list[float]) -> G.Tensor:
    return G.tensor(np.array(values, dtype=np.float64), requires_grad=True)


def grad_of(x: G.Tensor) -> list[float]:
    assert x.grad is not None
    return x.grad.tolist()


def test_inplace_on_a_slice_rewrites_the_base_history() -> None:
    x = leaf([1.0, 2.0, 3.0, 4.0])
    y = x * 1
    y[0:2].mul_(3)
    assert y.grad_fn.name() == "CopySlices"
    assert y.tolist() == [3.0, 6.0, 3.0, 4.0]
    y.sum().backward()
    assert grad_of(x) == [3.0, 3.0, 1.0, 1.0]


def test_setitem_on_a_tensor_that_requires_grad() -> None:
    x = leaf([1.0, 2.0, 3.0])
    y = x.clone()
    y[1] = 0.0
    (y * y).sum().backward()
    assert grad_of(x) == [2.0, 0.0, 6.0]


def test_the_other_input_of_the_inplace_op_gets_its_gradient() -> None:
    x = leaf([1.0, 2.0, 3.0])
    w = leaf([10.0, 20.0])
    y = x * 1
    y[:2].mul_(w)  # y = [x0*w0, x1*w1, x2]
    (y * 2).sum().backward()
    assert grad_of(x) == [20.0, 40.0, 2.0]
    assert grad_of(w) == [2.0, 4.0]


def test_a_base_that_did_not_require_grad_starts_to() -> None:
    w = leaf([1.0, 2.0])
    z = G.zeros(4, dtype=G.float64)
    z[1:3].add_(w)
    assert z.requires_grad and z.grad_fn.name() == "CopySlices"
    (z * z).sum().backward()
    assert grad_of(w) == [2.0, 4.0]


def test_views_used_after_the_inplace_op_see_it() -> None:
    x = leaf([1.0, 2.0, 3.0, 4.0])
    y = x * 1
    a = y[0:2]
    y[1:3].mul_(2)  # a[1] is y[1], now 2 * x1
    assert a.grad_fn.name() == "AsStridedBackward0"
    a.sum().backward()
    assert grad_of(x) == [1.0, 2.0, 0.0, 0.0]


def test_uses_of_a_view_before_the_inplace_op_keep_their_history() -> None:
    x = leaf([1.0, 2.0, 3.0, 4.0])
    y = x * 1
    a = y[0:2]
    c = a * 3
    y[1:3].mul_(2)
    c.sum().backward()
    assert grad_of(x) == [3.0, 3.0, 0.0, 0.0]


def test_inplace_on_the_base_updates_its_views() -> None:
    x = leaf([1.0, 2.0, 3.0])
    y = x * 1
    a = y[0:2]
    y.mul_(2)
    a.sum().backward()
    assert grad_of(x) == [2.0, 2.0, 0.0]


def test_view_of_a_view() -> None:
    x = leaf([1.0, 2.0, 3.0, 4.0])
    y = x * 1
    v = y[1:]
    v[0:2].mul_(5)
    (y * G.tensor([1.0, 10.0, 100.0, 1000.0], dtype=G.float64)).sum().backward()
    assert grad_of(x) == [1.0, 50.0, 500.0, 1000.0]


def test_strided_view_of_a_transposed_view() -> None:
    x = G.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    y = x * 1
    col = y.t()[1]  # y[:, 1], a strided view
    col.mul_(G.tensor([10.0, 100.0], dtype=G.float64))
    np.testing.assert_allclose(y.detach().numpy(), [[0.0, 10.0, 2.0], [3.0, 400.0, 5.0]])
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[1.0, 10.0, 1.0], [1.0, 100.0, 1.0]])


def test_gradcheck_through_copy_slices() -> None:
    def fn(x: G.Tensor, w: G.Tensor) -> G.Tensor:
        y = x * 1.5  # (exp would save its output, which the in-place ops change: PyTorch refuses that too)
        y[1:3].mul_(w)
        y[0].add_(y[2])
        return (y * y).sum()

    x = G.tensor(np.array([0.1, -0.3, 0.5, 0.7]), requires_grad=True)
    w = G.tensor(np.array([1.5, -2.0]), requires_grad=True)
    assert G.autograd.gradcheck(fn, (x, w))


def test_view_made_in_no_grad_mode_refuses_inplace_with_grad_before_writing() -> None:
    x = leaf([1.0, 2.0, 3.0])
    w = leaf([2.0, 2.0])
    y = x * 1
    with G.no_grad():
        v = y[:2]
    with pytest.raises(RuntimeError, match="no_grad mode"):
        v.mul_(w)
    assert y.tolist() == [1.0, 2.0, 3.0]  # nothing was written
    with G.no_grad():
        v.mul_(w)  # fine without grad mode
    assert y.tolist() == [2.0, 4.0, 3.0]


def test_view_of_a_leaf_still_refuses_inplace() -> None:
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="view of a leaf Variable"):
        x[0:1].mul_(2)


def test_backward_twice_through_copy_slices_needs_retain_graph() -> None:
    x = leaf([1.0, 2.0])
    w = leaf([3.0])
    y = x * 1
    y[0:1].mul_(w)  # MulBackward0 saves both operands
    loss = y.sum()
    loss.backward(retain_graph=True)
    loss.backward()
    assert grad_of(w) == [2.0] and grad_of(x) == [6.0, 2.0]
    loss2 = (x * 1)
    loss2[0:1].mul_(w)
    out = loss2.sum()
    out.backward()
    with pytest.raises(RuntimeError, match="second time"):
        out.backward()


def test_detach_is_not_a_view() -> None:
    x = leaf([1.0, 2.0])
    y = (x * 1)[0:1]
    d = y.detach()
    assert d._base is None and d._version == y._version
    d.mul_(leaf([2.0]))  # a tensor of its own: no CopySlices on x's graph
    assert d.grad_fn.name() == "MulBackward0"
    assert y._version == d._version  # the version counter is still shared
