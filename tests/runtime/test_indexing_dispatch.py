"""Note [Indexing without the op functions] (runtime/indexing.py): `t[None]`, `t[..., i]`, `t[idx]` dispatch
on their op's table, and `t[idx] = number` skips the 0-d tensor only where dispatch would reach this
package's own kernel; values, versions, autograd and run-time registrations are as through the ops."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import generated as G
from runtime.dispatcher import dispatcher, exclude_keys, include_keys

torch = pytest.importorskip("torch")

DTYPES = ["float32", "float64", "int64", "int32", "uint8", "bool"]


def _pair(dtype: str, shape: tuple[int, ...] = (4, 3)) -> tuple[Any, Any]:
    values = (np.arange(int(np.prod(shape))) % 5).reshape(shape)
    return G.tensor(values, dtype=getattr(G, dtype)), torch.tensor(values, dtype=getattr(torch, dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("key", ["mask", "rows", "idx", "neg", "mask2d", "empty"])
@pytest.mark.parametrize("value", [0.5, 3, True, -1.75])
def test_setitem_of_a_number_through_one_index_tensor(dtype: str, key: str, value: object) -> None:
    g, t = _pair(dtype)
    keys = {"mask": np.array([True, False, True, False]), "rows": np.array([[0, 1], [3, 3]]),
            "idx": np.array([0, 2]), "neg": np.array([-1, 1]), "mask2d": (np.arange(12) % 3 == 0).reshape(4, 3),
            "empty": np.zeros(0, dtype=np.int64)}
    if dtype == "uint8" and value == -1.75:
        value = 2.25
    kg, kt = G.tensor(keys[key]), torch.tensor(keys[key])
    view = g[1:]
    before = g._version
    g[kg] = value
    t[kt] = value
    np.testing.assert_array_equal(g.numpy(), t.numpy())
    assert g._version == before + 1 == view._version
    np.testing.assert_array_equal(view.numpy(), t[1:].numpy())  # the memory is shared


def test_setitem_errors_are_the_ops() -> None:
    x = G.zeros(4, 3)
    with pytest.raises(IndexError, match="index 7 is out of bounds for dimension 0 with size 4"):
        x[G.tensor([7])] = 1.0
    with pytest.raises(IndexError, match="shape of the mask"):
        x[G.tensor([True, False])] = 1.0
    with pytest.raises(IndexError, match="tensors used as indices must be long"):
        x[G.tensor([0.5])] = 1.0
    with pytest.raises(ValueError):  # NaN into an integer tensor: NumPy's error, as before
        G.zeros(3, dtype=G.int64)[G.tensor([0])] = float("nan")
    leaf = G.zeros(4, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        leaf[G.tensor([1])] = 2.0
    with G.no_grad():
        leaf[G.tensor([1])] = 2.0  # allowed without grad mode, as in PyTorch
    assert leaf.tolist() == [0.0, 2.0, 0.0, 0.0]


def test_setitem_on_a_non_leaf_records_the_write() -> None:
    for lib in (G, torch):
        a = lib.arange(4.0).requires_grad_()
        b = a * 2
        b[lib.tensor([True, False, True, False])] = 0.5
        b[lib.tensor([3])] = 7
        b.sum().backward()
        assert a.grad.tolist() == [0.0, 2.0, 0.0, 0.0]
        assert b.tolist() == [0.5, 2.0, 0.5, 7.0]


def test_registered_index_put_kernel_still_sees_number_writes() -> None:
    default = dispatcher.find("index_put_").kernels["CompositeExplicitAutograd"]
    seen = []

    def mine(self: Any, indices: Any, values: Any, accumulate: bool = False) -> Any:
        seen.append(float(values))
        return default(self, indices, values, accumulate)

    x = G.zeros(4)
    undo = dispatcher.register("index_put_", "CPU", mine)
    try:
        x[G.tensor([1, 2])] = 3.0
        x[G.tensor([True, False, False, False])] = 4
    finally:
        undo()
    assert seen == [3.0, 4.0] and x.tolist() == [4.0, 3.0, 3.0, 0.0]
    x[G.tensor([0])] = 1.0  # the registration undone: the plain path again
    assert len(seen) == 2 and x.tolist() == [1.0, 3.0, 3.0, 0.0]


def test_getitem_fast_keys_dispatch() -> None:
    calls = []

    def fallback(op: Any, args: list[Any]) -> Any:
        calls.append(op.name)
        with exclude_keys("Tracer"):
            return op.call(*args)

    x = G.arange(12.0).view(4, 3)
    undo = dispatcher.register_fallback("Tracer", fallback)
    try:
        with include_keys("Tracer"):
            x[None], x[..., 1], x[G.tensor([0, 2])]
            x[G.tensor([1])] = 5.0  # not the default dispatch state: through index_put_
    finally:
        undo()
    assert calls == ["unsqueeze", "select.int", "index.Tensor", "index_put_"]


@pytest.mark.parametrize("shape", [(4, 3), (5,), (2, 3, 4), (0, 3)])
def test_getitem_fast_keys_match_torch(shape: tuple[int, ...]) -> None:
    g, t = _pair("float32", shape)
    for key_g, key_t in [(None, None), ((Ellipsis, 1), (Ellipsis, 1)), ((Ellipsis, -1), (Ellipsis, -1)),
                         (G.tensor([0, -1]), torch.tensor([0, -1]))]:
        if shape[0] == 0 and key_g is not None and not isinstance(key_g, tuple):
            continue
        got, want = g[key_g], t[key_t]
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        if key_g is None or isinstance(key_g, tuple):  # views: PyTorch's strides, the same memory
            assert got._base is g
            if g.numel():  # (an empty tensor's strides are NumPy's zeros: not this path's doing)
                assert got.stride() == want.stride()
    with pytest.raises(IndexError, match="out of bounds"):
        g[..., 9]
    a = G.arange(6.0).view(2, 3).requires_grad_()
    ta = torch.arange(6.0).view(2, 3).requires_grad_()
    (a[None].sum() * 2 + a[..., 1].sum() + a[G.tensor([1, 1])].sum()).backward()
    (ta[None].sum() * 2 + ta[..., 1].sum() + ta[torch.tensor([1, 1])].sum()).backward()
    np.testing.assert_array_equal(a.grad.numpy(), ta.grad.numpy())
