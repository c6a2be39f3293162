"""Tensor basics: storage, version counter, devices, repr, conversions and their errors."""

from __future__ import annotations

import numpy as np
import pytest

import generated as G


def test_storage_fields_and_sharing() -> None:
    t = G.zeros(3, 4)
    s = t.storage
    assert s.nbytes == 48 and s.device == G.device("cpu") and s.version == 0
    assert s.data_ptr() == t.data_ptr() and t.storage_offset() == 0
    v = t[1:, 2]
    assert v.storage is s and v.storage_offset() == 6 and v.stride() == (4,)
    assert t.untyped_storage() is s
    assert t.element_size() == 4 and t.numel() == 12 and t.dim() == 2 and t.size(-1) == 4 and len(t) == 3


def test_version_counter_shared_by_views() -> None:
    t = G.zeros(4)
    v = t[:2]
    t.add_(1)
    assert t._version == v._version == 1
    v.mul_(2)
    assert t._version == 2 and t.tolist() == [2.0, 2.0, 1.0, 1.0]


def test_saved_tensor_modified_in_place_is_detected() -> None:
    x = G.ones(3, requires_grad=True)
    y = x * 1
    z = y * y
    with G.no_grad():
        y[0:1].fill_(5.0)  # a write through a view bumps the shared version counter
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_devices() -> None:
    assert G.device("cpu") == "cpu" and str(G.device("cuda:1")) == "cuda:1"
    assert repr(G.device("cuda", 0)) == "device(type='cuda', index=0)"
    assert G.device("cuda").index is None
    assert isinstance(G.cuda.is_available(), bool)
    with pytest.raises(RuntimeError, match="unknown device type"):
        G.device("gpu")
    t = G.zeros(1)
    assert t.device == G.device("cpu") and t.is_cpu and not t.is_cuda and t.get_device() == -1


@pytest.mark.skipif(G.cuda.is_available(), reason="checks the CPU-only error")
def test_cuda_without_cupy_or_device_says_what_to_do() -> None:
    with pytest.raises(Exception, match="(?i)cupy|cuda"):
        G.zeros(2, device="cuda")


def test_repr_like_pytorch() -> None:
    a = G.tensor([[1.0, 2.0]], requires_grad=True)
    assert repr(a * a) == "tensor([[1., 4.]], grad_fn=<MulBackward0>)"
    assert repr(a) == "tensor([[1., 2.]], requires_grad=True)"
    assert repr(G.arange(6).view(2, 3)) == "tensor([[0, 1, 2],\n        [3, 4, 5]])"
    assert repr(G.tensor([1.5, -2.25])) == "tensor([ 1.5000, -2.2500])"
    assert repr(G.tensor([True, False])) == "tensor([ True, False])"
    assert repr(G.zeros(2, dtype=G.int32)) == "tensor([0, 0], dtype=opgen.int32)"
    assert repr(G.zeros(0, 3)) == "tensor([], size=(0, 3))"
    assert repr(G.tensor(3.0)) == "tensor(3.)"


def test_legacy_tensor_constructor() -> None:
    """`G.Tensor(...)` as PyTorch's legacy constructor: data in the default dtype, or sizes."""
    a = G.Tensor([[1, 2], [3, 4]])
    assert a.dtype is G.float32 and a.tolist() == [[1.0, 2.0], [3.0, 4.0]] and a.is_leaf
    assert G.Tensor(2, 3).shape == (2, 3) and G.Tensor().shape == (0,) and G.Tensor(G.Size([4])).shape == (4,)
    a.requires_grad_()
    (a * a).sum().backward()
    assert a.grad.tolist() == [[2.0, 4.0], [6.0, 8.0]]
    for bad in (1.5, "ab", G.ones(2)):
        with pytest.raises(TypeError):
            G.Tensor(bad)


def test_conversions_and_bool() -> None:
    assert bool(G.tensor([1])) and not bool(G.tensor(0.0))
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with 2 values is ambiguous"):
        bool(G.zeros(2))
    assert [0, 1, 2][G.tensor(1)] == 1
    with pytest.raises(TypeError, match="only integer tensors of a single element"):
        [0][G.tensor(0.0)]
    np.testing.assert_array_equal(np.asarray(G.ones(2), dtype=np.float64), [1.0, 1.0])


def test_detach_shares_storage() -> None:
    x = G.ones(2, requires_grad=True)
    d = x.detach()
    assert d.storage is x.storage and not d.requires_grad
    d.zero_()
    assert x.tolist() == [0.0, 0.0]


def test_new_factories_and_fill() -> None:
    x = G.ones(2, dtype=G.float64)
    assert x.new_zeros((3,)).dtype is G.float64 and x.new_ones(2).tolist() == [1.0, 1.0]
    assert x.new_full((2,), 4).tolist() == [4.0, 4.0] and x.new_empty((0,)).shape == (0,)
    assert G.zeros(2).fill_(G.tensor(3.0)).tolist() == [3.0, 3.0]
