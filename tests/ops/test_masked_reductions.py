"""G.masked (runtime/masked.py) against torch.masked: the edge cases the OpInfo samples do not reach
(fully masked-out slices, broadcast and non-bool masks, dtypes, gradients of masked-out elements) and
the refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest

import generated as G

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4))
MASK = np.array([[True, False, True, False], [False, False, False, False], [True, True, True, True]])


def _both(name: str, *args, mask=MASK, x=X, dtype: str | None = None, **kwargs):
    """torch.masked.<name> and G.masked.<name> of the same call (`dtype` by name)."""
    t_dtype = {} if dtype is None else {"dtype": getattr(torch, dtype)}
    g_dtype = {} if dtype is None else {"dtype": getattr(G, dtype)}
    t = getattr(torch.masked, name)(torch.tensor(x), *args, mask=torch.tensor(mask), **kwargs, **t_dtype)
    g = getattr(G.masked, name)(G.tensor(x), *args, mask=G.tensor(mask), **kwargs, **g_dtype)
    return t, g


def _close(t, g) -> None:
    assert str(g.dtype).removeprefix("opgen.") == str(t.dtype).removeprefix("torch.")
    assert tuple(g.shape) == tuple(t.shape)
    np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-12, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("name", ["sum", "prod", "amax", "amin", "mean", "logsumexp", "var", "std"])
def test_fully_masked_row_reduces_to_what_torch_gives(name: str) -> None:
    t, g = _both(name, 1)
    _close(t, g)
    row = g.numpy()[1]
    if name in ("mean", "var", "std"):
        assert math.isnan(row)  # 0 / 0
    if name == "sum":
        assert row == 0


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin", "cumsum", "cumprod"])
def test_normalizations_over_a_fully_masked_row(name: str) -> None:
    _close(*_both(name, 1))


def test_norm_and_normalize_with_orders() -> None:
    for ord_ in (1.0, 2.0, math.inf, -math.inf, 0.5):
        _close(*_both("norm", ord_, 1))
        _close(*_both("normalize", ord_, 1))


def test_mask_with_fewer_dims_broadcasts_and_non_bool_mask_is_read_as_bool() -> None:
    row_mask = np.array([1, 0, 2, 0], dtype=np.int64)
    _close(*_both("sum", 0, mask=row_mask))
    _close(*_both("amax", (0, 1), mask=row_mask, keepdim=True))


def test_integer_inputs_widen_and_keep_their_identity() -> None:
    xi = RNG.integers(-5, 5, size=(3, 4)).astype(np.int32)
    t, g = _both("sum", 1, x=xi)
    _close(t, g)
    assert g.dtype == G.int64
    _close(*_both("amax", 1, x=xi))  # the fully masked row gives int32's lowest value
    assert int(_both("amin", 1, x=xi)[1][1]) == np.iinfo(np.int32).max
    _close(*_both("argmax", 1, x=xi))
    _close(*_both("median", 1, mask=np.ones((3, 4), bool), x=xi))


def test_mean_and_var_with_dtype_and_correction() -> None:
    t, g = _both("mean", 1, dtype="float32")
    assert g.dtype == G.float32
    np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-6, equal_nan=True)
    _close(*_both("sum", 1, dtype="float64", x=RNG.integers(0, 4, size=(3, 4))))
    for correction in (0, 1, 2, 5):
        _close(*_both("var", 1, correction=correction))
    _close(*_both("std", (0, 1), unbiased=False, keepdim=True))


def test_gradient_of_masked_out_elements_is_zero() -> None:
    x = G.tensor(X, requires_grad=True)
    G.masked.sum(x, 1, mask=G.tensor(MASK)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), MASK.astype(np.float64))
    x = G.tensor(X, requires_grad=True)
    G.masked.amax(x, 1, mask=G.tensor(MASK)).sum().backward()
    assert not x.grad.numpy()[~MASK].any()


def test_gradients_agree_with_torch() -> None:
    for name, args in (("mean", (1,)), ("var", (1,)), ("softmax", (1,)), ("norm", (2.0, 1)),
                       ("logsumexp", (1,)), ("median", (1,))):
        full = np.ones((3, 4), bool)
        full[0, 1] = False
        tx = torch.tensor(X, requires_grad=True)
        gx = G.tensor(X, requires_grad=True)
        t = getattr(torch.masked, name)(tx, *args, mask=torch.tensor(full))
        g = getattr(G.masked, name)(gx, *args, mask=G.tensor(full))
        cot = RNG.standard_normal(tuple(t.shape))
        t.backward(torch.tensor(cot))
        g.backward(G.tensor(cot))
        np.testing.assert_allclose(gx.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12, err_msg=name)


def test_refusals() -> None:
    x = G.tensor(X)
    with pytest.raises(IndexError):
        G.masked.sum(x, 2)
    with pytest.raises(RuntimeError):
        G.masked.sum(x, (1, -1))
    with pytest.raises(IndexError):
        G.masked.sum(x, 1, mask=G.ones(2, 3, 4, dtype=G.bool))
    with pytest.raises(ValueError):
        G.masked.mean(G.tensor([1, 2, 3]))
    with pytest.raises(ValueError):
        G.masked.median(G.tensor([[1, 2], [3, 4]]), 1, mask=G.tensor([[True, True], [False, False]]))
    with pytest.raises(ValueError):
        G.masked.var(x, 1, True, correction=1)
    with pytest.raises(TypeError):
        G.masked.sum(X)
