"""Tensors on device 'meta' (Note [Meta tensors] in runtime/meta_array.py): geometry without data.

Factories and copies make them, every op computes their shapes, strides and dtypes without reading a
value, printing shows their size, and reading their data is a clear error."""

from __future__ import annotations

import resource

import pytest

import generated as G
from runtime.kernels.meta_shape import DataDependentOutputError
from runtime.meta_array import MetaDataError


def meta(*shape: int, dtype=None):
    return G.empty(*shape, dtype=dtype, device="meta")


def test_factories_make_meta_tensors() -> None:
    made = [G.empty(2, 3, device="meta"), G.zeros(2, 3, device="meta"), G.ones(2, 3, device="meta"),
            G.full((2, 3), 7.0, device="meta"), G.rand(2, 3, device="meta"), G.randn(2, 3, device="meta"),
            G.empty_strided((2, 3), (3, 1), device="meta"), G.empty_like(meta(2, 3)), G.zeros_like(meta(2, 3)),
            G.tensor([[1.0, 2, 3], [4, 5, 6]], device="meta"), G.ones(2, 3).to("meta")]
    for t in made:
        assert t.is_meta and t.device.type == "meta"
        assert tuple(t.shape) == (2, 3) and t.stride() == (3, 1) and t.dtype is G.float32
    assert G.arange(5, device="meta").dtype is G.int64 and G.arange(5, device="meta").shape == (5,)
    assert G.randint(0, 3, (4,), device="meta").dtype is G.int64
    assert G.eye(3, 4, device="meta").shape == (3, 4)
    assert G.linspace(0, 1, 7, device="meta").shape == (7,)


def test_empty_strided_keeps_geometry() -> None:
    t = G.empty_strided((2, 3), (1, 2), device="meta")
    assert t.stride() == (1, 2) and t.storage_offset() == 0 and not t.is_contiguous()
    view = t[:, 1:]
    assert view.stride() == (1, 2) and view.storage_offset() == 2 and view.is_meta
    assert t.untyped_storage().nbytes == 6 * 4


def test_huge_meta_tensors_take_no_memory() -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    x = G.empty(100_000, 100_000, device="meta")  # 40 GB as float32
    y = (x @ x.t()).sum(1, keepdim=True) * 2
    assert y.shape == (100_000, 1) and y.is_meta
    grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kb < 200_000


def test_repr_shows_size_not_values() -> None:
    assert repr(meta(2, 3)) == "tensor(..., device='meta', size=(2, 3))"
    assert repr(meta(4, dtype=G.int64)) == "tensor(..., device='meta', size=(4,), dtype=opgen.int64)"
    assert "requires_grad=True" in repr(meta(2).requires_grad_())


@pytest.mark.parametrize("read", [lambda t: t.item(), lambda t: t.numpy(), lambda t: t.tolist(),
                                  lambda t: t.cpu(), lambda t: G.zeros(1).copy_(t), lambda t: float(t),
                                  lambda t: bool(t)])
def test_reading_data_is_an_error(read) -> None:
    with pytest.raises(MetaDataError, match="meta tensors have no data"):
        read(meta(1))


def test_data_dependent_shapes_name_the_op() -> None:
    x = meta(5)
    with pytest.raises(DataDependentOutputError, match="nonzero"):
        x.nonzero()
    with pytest.raises(DataDependentOutputError, match="unique"):
        G.unique(x)
    with pytest.raises(DataDependentOutputError, match="boolean mask"):
        x[x > 0]
    with pytest.raises(DataDependentOutputError, match="bincount"):
        G.bincount(meta(3, dtype=G.int64))


def test_pointwise_shapes_dtypes_and_layouts() -> None:
    a, b = meta(3, 1), meta(1, 4, dtype=G.int64)
    r = a + b
    assert r.shape == (3, 4) and r.dtype is G.float32 and r.stride() == (4, 1)
    assert (b / 2).dtype is G.float32 and (b * 2).dtype is G.int64 and (a > b).dtype is G.bool
    assert (b + 2.5).dtype is G.float32 and (b + G.tensor(2.5, device="meta")).dtype is G.float32
    t = meta(4, 3).t()  # a transposed input gives a transposed output, as PyTorch's TensorIterator
    assert G.exp(t).stride() == (1, 3) and (t + t).stride() == (1, 3)
    with pytest.raises(RuntimeError, match="add"):
        meta(2, 3) + meta(4)


def test_in_place_and_out_forms() -> None:
    x = meta(2, 3)
    assert x.add_(1) is x and x.shape == (2, 3)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        meta(3).add_(meta(2, 3))
    with pytest.raises(RuntimeError, match="can't be cast"):
        meta(3, dtype=G.int64).add_(meta(3))
    out = meta(0)
    r = G.add(meta(2, 3), 1, out=out)
    assert r is out and out.shape == (2, 3)


def test_reductions() -> None:
    x = meta(2, 3, 4, dtype=G.int64)
    assert x.sum().shape == () and x.sum().dtype is G.int64
    assert x.sum((0, 2), keepdim=True).shape == (1, 3, 1)
    assert x.float().mean(1).shape == (2, 4)
    assert x.sum(1, dtype=G.float64).dtype is G.float64
    values, indices = x.max(-1)
    assert values.shape == indices.shape == (2, 3) and indices.dtype is G.int64
    assert x.argmax().shape == () and x.any(0).dtype is G.bool
    with pytest.raises(RuntimeError, match="mean"):
        x.mean()


def test_views_follow_cpu_view_semantics() -> None:
    x = meta(2, 3, 4)
    for make in (lambda t: t.transpose(0, 2), lambda t: t.permute(2, 0, 1), lambda t: t[:, 1:, ::2],
                 lambda t: t.unsqueeze(1), lambda t: t.view(6, 4), lambda t: t.expand(5, 2, 3, 4)[1],
                 lambda t: t.select(1, 2), lambda t: t.diagonal(0, 1, 2), lambda t: t[0].t()):
        m, c = make(x), make(G.zeros(2, 3, 4))
        assert m.is_meta and m.shape == c.shape and m.stride() == c.stride()
        assert m.storage_offset() == c.storage_offset()
    assert x.reshape(4, 6).shape == (4, 6) and x.transpose(0, 1).reshape(-1).is_contiguous()


def test_nn_and_linalg() -> None:
    x = meta(8, 3, 16, 16)
    conv = G.nn.Conv2d(3, 6, 3, padding=1).to("meta")
    y = G.nn.functional.max_pool2d(G.relu(conv(x)), 2)
    assert y.shape == (8, 6, 8, 8) and y.is_meta
    logits = G.nn.Linear(6 * 64, 10).to("meta")(y.flatten(1))
    loss = G.nn.functional.cross_entropy(logits, meta(8, dtype=G.int64))
    assert loss.shape == () and loss.dtype is G.float32
    assert G.linalg.inv(meta(5, 4, 4)).shape == (5, 4, 4)
    u, s, vh = G.linalg.svd(meta(3, 5), full_matrices=False)
    assert (u.shape, s.shape, vh.shape) == ((3, 3), (3,), (3, 5))


def test_index_with_cpu_indices() -> None:
    x = meta(5, 4)
    assert x[[0, 2, 4]].shape == (3, 4) and x[:, G.tensor([1, 2])].shape == (5, 2)
    assert x[G.tensor([[0, 1]]), G.tensor([1, 2])].shape == (1, 2)


def test_autograd_records_on_meta() -> None:
    w = meta(3, 2).requires_grad_()
    loss = (meta(4, 3) @ w).tanh().sum()
    loss.backward()
    assert w.grad is not None and w.grad.is_meta and w.grad.shape == (3, 2)


def test_meta_beside_cpu_tensors() -> None:
    assert (meta(3) + G.tensor(2.0)).is_meta  # a 0-dim CPU tensor moves to the meta device
    with pytest.raises(RuntimeError, match="same device"):
        meta(3) + G.ones(3)
