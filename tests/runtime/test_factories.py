"""Factories: values, dtypes, devices, requires_grad, BackendSelect routing, reproducible random numbers."""

from __future__ import annotations

import numpy as np
import pytest

import generated as G
from runtime.dispatcher import dispatcher


def test_shapes_values_and_default_dtypes() -> None:
    assert G.zeros(2, 3).shape == (2, 3) and G.zeros((2, 3)).dtype is G.float32
    assert G.ones([4]).tolist() == [1.0] * 4
    assert G.empty(0, 2).numel() == 0
    assert G.full((2,), 7).dtype is G.int64 and G.full((2,), 7.0).dtype is G.float32
    assert G.full((2,), True).dtype is G.bool and G.full((1,), 2, dtype=G.float64).tolist() == [2.0]
    assert G.tensor([1, 2]).dtype is G.int64 and G.tensor([1.0, 2]).dtype is G.float32
    assert G.tensor([True]).dtype is G.bool and G.tensor([]).dtype is G.float32
    assert G.tensor(np.zeros(2, np.float64)).dtype is G.float64
    assert G.tensor(3.5).shape == () and G.tensor(3.5).item() == 3.5


def test_like_factories_follow_the_input() -> None:
    x = G.tensor([[1, 2, 3]], dtype=G.int32)
    for fn in (G.zeros_like, G.ones_like, G.empty_like):
        y = fn(x)
        assert y.shape == x.shape and y.dtype is G.int32
    assert G.full_like(x, 4).tolist() == [[4, 4, 4]]
    assert G.ones_like(x, dtype=G.float64).dtype is G.float64
    assert G.randn_like(x.float()).shape == (1, 3)
    r = G.randint_like(x, 5)
    assert r.dtype is G.int32 and 0 <= r.numpy().min() and r.numpy().max() < 5


def test_arange_linspace_eye() -> None:
    np.testing.assert_array_equal(G.arange(5).numpy(), np.arange(5))
    assert G.arange(5).dtype is G.int64 and G.arange(0, 1, 0.25).dtype is G.float32
    np.testing.assert_allclose(G.arange(1, 2.5, 0.5).numpy(), [1.0, 1.5, 2.0])
    np.testing.assert_array_equal(G.arange(10, 0, -3).numpy(), [10, 7, 4, 1])
    np.testing.assert_allclose(G.linspace(0, 1, 5).numpy(), np.linspace(0, 1, 5))
    assert G.linspace(0, 1, 0).shape == (0,)
    np.testing.assert_array_equal(G.eye(2, 3).numpy(), np.eye(2, 3))
    assert G.eye(3, dtype=G.int64).dtype is G.int64
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        G.arange(0, 1, 0)
    with pytest.raises(RuntimeError, match="upper bound and larger bound inconsistent with step sign"):
        G.arange(0, 5, -1)
    with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
        G.linspace(0, 1, -1)


def test_requires_grad_and_errors() -> None:
    assert G.zeros(2, requires_grad=True).requires_grad
    assert G.rand(2, requires_grad=True).is_leaf
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require gradients"):
        G.zeros(2, dtype=G.int64, requires_grad=True)
    with pytest.raises(RuntimeError, match="negative dimension"):
        G.empty(2, -1)
    with pytest.raises(RuntimeError, match="unknown device type 'tpu'"):
        G.zeros(2, device="tpu")


def test_random_reproducible_per_seed_and_generator() -> None:
    G.manual_seed(123)
    a = G.rand(5)
    b = G.randn(3, 2)
    c = G.randint(0, 10, (4,))
    G.manual_seed(123)
    np.testing.assert_array_equal(a.numpy(), G.rand(5).numpy())
    np.testing.assert_array_equal(b.numpy(), G.randn(3, 2).numpy())
    np.testing.assert_array_equal(c.numpy(), G.randint(0, 10, (4,)).numpy())
    g1, g2 = G.Generator().manual_seed(7), G.Generator().manual_seed(7)
    np.testing.assert_array_equal(G.rand(4, generator=g1).numpy(), G.rand(4, generator=g2).numpy())
    assert g1.initial_seed() == 7 and G.initial_seed() == 123
    state = g1.get_state()
    first = G.randn(3, generator=g1)
    g1.set_state(state)
    np.testing.assert_array_equal(first.numpy(), G.randn(3, generator=g1).numpy())
    x = G.rand(1000)
    assert 0.0 <= float(x.numpy().min()) and float(x.numpy().max()) < 1.0
    n = G.randn(20000, dtype=G.float64).numpy()
    assert abs(n.mean()) < 0.05 and abs(n.std() - 1) < 0.05
    assert G.randint(3, (2,)).dtype is G.int64 and G.randint(5, 6, (3,)).tolist() == [5, 5, 5]


def test_random_errors() -> None:
    with pytest.raises(RuntimeError, match="\"uniform_\" not implemented for 'int64'"):
        G.rand(2, dtype=G.int64)
    with pytest.raises(RuntimeError, match="Expected a 'cpu' device type for generator but found 'cuda:0'"):
        G.rand(2, generator=G.Generator("cuda"))
    with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to'"):
        G.randint(5, 5, (2,))


def test_factories_allocate_through_backend_select() -> None:
    op = dispatcher.find("empty_strided")
    assert op.kernels["BackendSelect"].__name__ == "empty_strided_backend_select"
    seen: list[tuple[int, ...]] = []
    original = op.kernels["CPU"]

    def counting(size, stride, dtype, layout, device, pin_memory):
        seen.append(tuple(size))
        return original(size, stride, dtype, layout, device, pin_memory)

    with G.library.impl("empty_strided", "CPU", counting):
        G.zeros(2, 3)
        G.rand(4)
        G.arange(3)
    assert seen == [(2, 3), (4,), (3,)]
    G.zeros(1)
    assert len(seen) == 3  # removed again
    t = G.empty_strided((2, 3), (1, 2))
    assert t.stride() == (1, 2) and t.shape == (2, 3)


@pytest.mark.parametrize("method", ["new_empty", "new_zeros", "new_ones", "new_full"])
def test_new_factories_of_a_tensor_that_requires_grad_do_not_require_grad(method: str) -> None:
    import generated as G

    x = G.randn(3, requires_grad=True)
    args = ((2,), 1.5) if method == "new_full" else ((2,),)
    y = getattr(x, method)(*args)
    assert not y.requires_grad and y.grad_fn is None
    (y * x[:2]).sum().backward()  # usable as a constant in a graph
    assert x.grad is not None
