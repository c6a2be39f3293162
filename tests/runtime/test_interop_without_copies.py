"""Interop without copies (checked by pointer): from_numpy, numpy(), __array__, DLPack, tolist, item, to()."""

from __future__ import annotations

import numpy as np
import pytest

import generated as G
from runtime.dtypes import from_numpy as from_numpy_dtype


def ptr(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32, np.uint8, np.bool_, np.float16])
def test_from_numpy_and_numpy_share_memory(dtype: type) -> None:
    a = np.zeros((3, 4), dtype=dtype)[:, 1:]
    t = G.from_numpy(a)
    assert t.data_ptr() == ptr(a) and ptr(t.numpy()) == ptr(a)
    assert t.stride() == (4, 1) and t.dtype is from_numpy_dtype(dtype)
    t[0, 0] = 1
    assert a[0, 0] == 1
    assert ptr(np.asarray(t)) == ptr(a)


def test_numpy_of_a_view_shares_memory() -> None:
    t = G.arange(12.0).view(3, 4).t()
    n = t.numpy()
    assert ptr(n) == t.data_ptr() and np.shares_memory(n, t.storage.data)
    n[0, 0] = 42
    assert t[0, 0].item() == 42


@pytest.mark.parametrize("dtype", [G.float32, G.float64, G.int64, G.int16, G.uint8, G.bool, G.float16])
def test_dlpack_round_trip_with_numpy(dtype: G.dtype) -> None:
    t = G.ones(2, 3, dtype=dtype)[:, 1:]
    a = np.from_dlpack(t)
    assert ptr(a) == t.data_ptr() and a.shape == (2, 2) and a.strides == t.numpy().strides
    back = G.from_dlpack(a)
    assert back.data_ptr() == t.data_ptr() and back.dtype is dtype
    n = np.arange(6, dtype=np.int32).reshape(2, 3)
    g = G.from_dlpack(n)
    assert g.data_ptr() == ptr(n) and g.tolist() == n.tolist()
    assert G.from_dlpack(n.__dlpack__()).data_ptr() == ptr(n)  # a bare capsule
    assert t.__dlpack_device__() == (1, 0)


def test_dlpack_refuses_requires_grad_and_cuda_interface_on_cpu() -> None:
    x = G.zeros(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="Can't export tensors that require gradient"):
        x.__dlpack__()
    assert not hasattr(G.zeros(2), "__cuda_array_interface__")
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        x.numpy()
    assert np.asarray(x.detach()).shape == (2,)


def test_torch_dlpack_round_trip() -> None:
    torch = pytest.importorskip("torch")
    t = G.arange(6.0).view(2, 3)
    pt = torch.from_dlpack(t)
    assert pt.data_ptr() == t.data_ptr()
    back = G.from_dlpack(pt)
    assert back.data_ptr() == t.data_ptr()


def test_tolist_item_and_scalars() -> None:
    t = G.tensor([[1, 2], [3, 4]])
    assert t.tolist() == [[1, 2], [3, 4]] and isinstance(t.tolist()[0][0], int)
    assert G.tensor(2.5).item() == 2.5 and isinstance(G.tensor([7]).item(), int)
    assert G.tensor([True]).item() is True
    with pytest.raises(RuntimeError, match="a Tensor with 4 elements cannot be converted to Scalar"):
        t.item()
    assert int(G.tensor(3)) == 3 and float(G.tensor(1.5)) == 1.5


def test_to_dtype_device_and_copy_semantics() -> None:
    t = G.tensor([1.5, -2.5])
    assert t.to(G.float32) is t and t.to("cpu") is t and t.to(t) is t
    assert t.to(G.float32, copy=True) is not t
    i = t.to(G.int64)
    assert i.dtype is G.int64 and i.tolist() == [1, -2]
    assert t.to("cpu", G.float64).dtype is G.float64 and t.to(dtype=G.float16).dtype is G.float16
    assert t.double().dtype is G.float64 and t.long().dtype is G.int64 and t.bool().tolist() == [True, True]
    assert t.cpu() is t
    x = G.tensor([1.0, 2.0], requires_grad=True)
    x.to(G.float64).sum().backward()
    assert x.grad.dtype is G.float32 and x.grad.tolist() == [1.0, 1.0]


def test_copy_broadcasts_and_converts() -> None:
    dst = G.zeros(2, 3, dtype=G.int32)
    dst.copy_(G.tensor([1.9, 2.1, -3.7]))
    assert dst.tolist() == [[1, 2, -3], [1, 2, -3]]
    b = G.zeros(3, dtype=G.bool)
    b.copy_(G.tensor([0.0, 0.5, 2.0]))
    assert b.tolist() == [False, True, True]
    with pytest.raises(RuntimeError, match=r"Target sizes: \[2, 3\].*Tensor sizes: \[4\]"):
        dst.copy_(G.zeros(4))
    a = G.arange(5)
    with pytest.raises(RuntimeError, match="some elements of the input tensor and the written-to tensor"):
        a[1:].copy_(a[:-1])  # partially overlapping source and destination: refused, as PyTorch does
    a[1:].copy_(a[:-1].clone())
    assert a.tolist() == [0, 0, 1, 2, 3]
    x = G.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = G.zeros(2, 3, dtype=G.float64)
    y2 = y * 1  # a non-leaf so that copy_ may write into it
    y2.copy_(x)
    y2.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
