"""PyTorch's legacy tensor types (Note [Legacy tensor types] in runtime/legacy_types.py): construction from
sizes, data and tensors, isinstance, Tensor.type(cls), refusals; values and dtypes against PyTorch."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import generated as G

NAMES = ["FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ShortTensor", "CharTensor",
         "ByteTensor", "BoolTensor"]
DATA: list[Any] = [[1.7, -2.5, 0.0], [[1, 2], [3, 4]], np.array([3, 0, 1]), [True, False]]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("data", DATA, ids=["floats", "nested", "array", "bools"])
def test_data_is_cast_as_torch(name: str, data: Any) -> None:
    torch = pytest.importorskip("torch")
    if name == "ByteTensor" and isinstance(data, list) and data and data[0] == 1.7:
        data = [1.7, 2.5, 0.0]  # PyTorch's cast of a negative float to uint8 is undefined behaviour
    want = getattr(torch, name)(data)
    got = getattr(G, name)(data)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert got.tolist() == want.tolist()


@pytest.mark.parametrize("name", NAMES)
def test_sizes_give_an_uninitialised_tensor_of_the_type(name: str) -> None:
    cls = getattr(G, name)
    for args, shape in [((2, 3), (2, 3)), ((), (0,)), ((G.Size([4, 1]),), (4, 1)), ((0,), (0,))]:
        t = cls(*args)
        assert tuple(t.shape) == shape and t.dtype is cls.dtype and t.device.type == "cpu"
        assert isinstance(t, cls) and type(t) is G.Tensor


def test_isinstance_asks_dtype_and_device() -> None:
    x = G.ones(2)
    assert isinstance(x, G.FloatTensor) and isinstance(x, G.Tensor)
    assert not isinstance(x, G.DoubleTensor) and not isinstance(x, G.cuda.FloatTensor)
    assert not isinstance(np.ones(2, dtype=np.float32), G.FloatTensor)
    assert isinstance(G.ones(1, dtype=G.int64), G.LongTensor)
    assert not issubclass(G.FloatTensor, G.Tensor) and issubclass(G.FloatTensor, G.FloatTensor)


def test_type_converts_to_a_legacy_type_and_names_it() -> None:
    x = G.tensor([1.5, -2.0])
    assert x.type(G.DoubleTensor).dtype is G.float64
    assert x.type(G.LongTensor).tolist() == [1, -2]
    assert x.type() == "torch.FloatTensor" and repr(G.FloatTensor) == "<class 'torch.FloatTensor'>"
    assert G.cuda.LongTensor.__legacy_type_name__ == "torch.cuda.LongTensor" and G.cuda.LongTensor.is_cuda


def test_a_tensor_of_the_same_type_is_aliased_detached() -> None:
    x = G.ones(3, requires_grad=True)
    y = G.FloatTensor(x)
    assert y is not x and y.data_ptr() == x.data_ptr() and not y.requires_grad


def test_refusals() -> None:
    with pytest.raises(TypeError):
        G.FloatTensor(G.ones(2, dtype=G.int64))  # another dtype: PyTorch refuses too
    with pytest.raises(TypeError):
        G.FloatTensor("a")
    with pytest.raises(RuntimeError):
        G.FloatTensor(2, device="cuda")
    if not G.cuda.is_available():
        with pytest.raises(TypeError, match="not available"):
            G.cuda.FloatTensor(2)


def test_legacy_types_under_the_torch_name() -> None:
    """Programs that index with `torch.LongTensor(ids)` run as they do in PyTorch."""
    emb = G.nn.Embedding(5, 2)
    ids = G.LongTensor([[0, 4, 1]])
    assert tuple(emb(ids).shape) == (1, 3, 2)
