"""The aten-level ops of PyTorch's OpInfo database (runtime/kernels/aten_composites.py), `G.ops.aten`,
`G.empty_permuted` and `G.linalg.ldl_*`: behaviour the OpInfo samples do not reach (running statistics
updated in place, slices that are -inf throughout, batch broadcasting) and the refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest

import generated as G

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(1)


def _g(a: np.ndarray, **kw):
    return G.tensor(a, **kw)


def test_native_batch_norm_updates_running_statistics_as_torch() -> None:
    x = RNG.standard_normal((4, 3, 5))
    rm, rv = RNG.standard_normal(3), RNG.random(3) + 0.5
    t_rm, t_rv = torch.tensor(rm), torch.tensor(rv)
    g_rm, g_rv = _g(rm), _g(rv)
    t = torch.native_batch_norm(torch.tensor(x), None, None, t_rm, t_rv, True, 0.3, 1e-5)
    g = G.native_batch_norm(_g(x), None, None, g_rm, g_rv, True, 0.3, 1e-5)
    for a, b in zip(t, g, strict=True):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(g_rm.numpy(), t_rm.numpy(), rtol=1e-12)
    np.testing.assert_allclose(g_rv.numpy(), t_rv.numpy(), rtol=1e-12)
    assert not g[1].requires_grad  # the saved statistics are not differentiable outputs


def test_native_batch_norm_in_evaluation_returns_empty_saved_statistics() -> None:
    out, mean, invstd = G.native_batch_norm(G.ones(2, 3), None, None, G.zeros(3), G.ones(3), False, 0.1, 1e-5)
    assert tuple(mean.shape) == (0,) and tuple(invstd.shape) == (0,)
    with pytest.raises(RuntimeError):
        G.native_batch_norm(G.ones(2, 3), None, None, None, None, False, 0.1, 1e-5)
    with pytest.raises(RuntimeError):
        G.native_batch_norm(G.ones(2, 3), G.ones(4), None, None, None, True, 0.1, 1e-5)


def test_batch_norm_with_update_returns_an_empty_uint8_reserve() -> None:
    out = G._batch_norm_with_update(G.randn(4, 2), None, None, G.zeros(2), G.ones(2), 0.1, 1e-5)
    assert len(out) == 4 and out[3].dtype == G.uint8 and out[3].numel() == 0


def test_native_group_norm_refuses_mismatched_sizes() -> None:
    with pytest.raises(RuntimeError):
        G.native_group_norm(G.randn(2, 6, 3), None, None, 2, 6, 3, 4, 1e-5)  # 6 channels in 4 groups
    with pytest.raises(RuntimeError):
        G.native_group_norm(G.randn(2, 6, 3), None, None, 2, 6, 5, 2, 1e-5)  # HxW does not match


def test_safe_softmax_zeroes_slices_that_are_minus_inf_throughout() -> None:
    x = np.array([[-math.inf, -math.inf, -math.inf], [0.0, 1.0, -math.inf]])
    gx = _g(x, requires_grad=True)
    out = G._safe_softmax(gx, 1)
    expected = torch.ops.aten._safe_softmax.default(torch.tensor(x), 1)
    np.testing.assert_allclose(out.detach().numpy(), expected.numpy(), rtol=1e-12)
    out.sum().backward()
    assert np.isfinite(gx.grad.numpy()).all()


def test_softmax_backward_data_is_softmax_gradient() -> None:
    x = G.randn(3, 4, dtype=G.float64, requires_grad=True)
    y = G.softmax(x, 1)
    g = G.randn(3, 4, dtype=G.float64)
    (expected,) = G.autograd.grad(y, x, g)
    got = G._softmax_backward_data(g, y.detach(), 1, G.float64)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12)


@pytest.mark.parametrize("mode,padding", [(0, 0), (1, 1), (2, 2), (0, 2)])
def test_grid_sampler_2d_is_grid_sample_with_integer_modes(mode: int, padding: int) -> None:
    x, grid = RNG.standard_normal((1, 2, 4, 5)), RNG.uniform(-1.2, 1.2, (1, 3, 3, 2))
    t = torch.grid_sampler_2d(torch.tensor(x), torch.tensor(grid), mode, padding, False)
    g = G.grid_sampler_2d(_g(x), _g(grid), mode, padding, False)
    np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-10, atol=1e-12)


def test_grid_sampler_refuses_unknown_modes_and_ranks() -> None:
    x, grid = G.randn(1, 1, 3, 3), G.zeros(1, 2, 2, 2)
    with pytest.raises(RuntimeError):
        G.grid_sampler_2d(x, grid, 3, 0, False)
    with pytest.raises(RuntimeError):
        G.grid_sampler_2d(x, grid, 0, 5, False)
    with pytest.raises(RuntimeError):
        G.grid_sampler_3d(x, grid, 0, 0, False)


def test_unsafe_masked_index_clamps_indices_under_the_mask() -> None:
    x = RNG.standard_normal((4, 4))
    idx = np.array([[-3], [1], [7]])
    mask = np.array([[False], [True], [False]])
    t = torch._unsafe_masked_index(torch.tensor(x), torch.tensor(mask), [torch.tensor(idx)], 2.5)
    g = G._unsafe_masked_index(_g(x), _g(mask), [_g(idx)], 2.5)
    np.testing.assert_array_equal(g.numpy(), t.numpy())
    with pytest.raises(RuntimeError):
        G._unsafe_masked_index(_g(x), _g(mask.astype(np.int64)), [_g(idx)], 0.0)
    with pytest.raises(IndexError):
        G._unsafe_masked_index(_g(x), _g(mask), [_g(idx.astype(np.float64))], 0.0)


def test_unsafe_masked_index_put_accumulate_adds_only_where_the_mask_holds() -> None:
    x, values = RNG.standard_normal((3, 3)), RNG.standard_normal((2, 2))
    i0, i1 = np.array([[0], [2]]), np.array([[1, 1]])
    mask = np.array([[True, False], [True, True]])
    t = torch._unsafe_masked_index_put_accumulate(torch.tensor(x), torch.tensor(mask),
                                                  [torch.tensor(i0), torch.tensor(i1)], torch.tensor(values))
    g = G._unsafe_masked_index_put_accumulate(_g(x), _g(mask), [_g(i0), _g(i1)], _g(values))
    np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-12)


def test_chunk_cat_pads_and_refuses() -> None:
    a, b = RNG.standard_normal((2, 5)), RNG.standard_normal((2, 3))
    t = torch._chunk_cat([torch.tensor(a), torch.tensor(b)], 1, 2)
    g = G._chunk_cat([_g(a), _g(b)], 1, 2)
    np.testing.assert_array_equal(g.numpy(), t.numpy())
    with pytest.raises(RuntimeError):
        G._chunk_cat([_g(a)], 1, 0)
    with pytest.raises(RuntimeError):
        G._chunk_cat([], 0, 2)
    with pytest.raises(RuntimeError):
        G._chunk_cat([_g(a), G.ones(3, 3, dtype=G.float64)], 1, 2)  # leading dims differ


def test_constant_pad_nd_negative_padding_crops() -> None:
    x = RNG.standard_normal((3, 4))
    t = torch.constant_pad_nd(torch.tensor(x), [-1, 2, 1, -2], 7.0)
    g = G.constant_pad_nd(_g(x), [-1, 2, 1, -2], 7.0)
    np.testing.assert_array_equal(g.numpy(), t.numpy())


@pytest.mark.parametrize("size", [(3, 7), (12, 30), (5, 5)])
def test_antialiased_resize_agrees_with_interpolate(size: tuple[int, int]) -> None:
    x = RNG.standard_normal((1, 2, 9, 16)).astype(np.float32)
    t = torch.nn.functional.interpolate(torch.tensor(x), size=size, mode="bilinear", antialias=True)
    g = G._upsample_bilinear2d_aa(_g(x), list(size), False)
    np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError):
        G._upsample_bilinear2d_aa(_g(x[0]), list(size), False)


def test_native_dropout_backward_scales_kept_gradients() -> None:
    g, mask = G.ones(4), G.tensor([True, False, True, False])
    np.testing.assert_array_equal(G.native_dropout_backward(g, mask, 2.0).numpy(), [2.0, 0.0, 2.0, 0.0])


def test_ops_namespace_reaches_every_overload() -> None:
    x = G.tensor([-1.0, 2.0])
    assert G.ops.aten.abs.default(x).tolist() == [1.0, 2.0]
    assert G.ops.aten.add.Tensor(x, x).tolist() == [-2.0, 4.0]
    assert "Tensor" in G.ops.aten.add.overloads()
    assert G.ops.aten.sum(x).item() == 1.0
    assert "add.Tensor" in G.ops.aten.add.Tensor.schema
    with pytest.raises(AttributeError):
        _ = G.ops.aten.add.NoSuchOverload
    with pytest.raises(AttributeError):
        _ = G.ops.aten.no_such_operator


def test_empty_permuted_strides_follow_the_physical_layout() -> None:
    for size, layout in (((2, 3, 4), (0, 2, 1)), ((2, 3, 4, 5), (0, 2, 3, 1)), ((), ()), ((3,), (0,))):
        t = torch.empty_permuted(size, layout)
        g = G.empty_permuted(size, layout, dtype=G.float64)
        assert tuple(g.shape) == tuple(t.shape) and g.stride() == t.stride()
    assert G.empty_permuted((2, 2), (1, 0), requires_grad=True).requires_grad
    with pytest.raises(RuntimeError):
        G.empty_permuted((2, 3), (0, 0))


def _symmetric(*shape: int) -> np.ndarray:
    a = RNG.standard_normal(shape)
    return a + np.swapaxes(a, -1, -2)


def test_ldl_factor_gives_lapack_pivots_and_solves() -> None:
    a = _symmetric(3, 6, 6)
    t_ld, t_piv = torch.linalg.ldl_factor(torch.tensor(a))
    g_ld, g_piv = G.linalg.ldl_factor(_g(a))
    np.testing.assert_array_equal(g_piv.numpy(), t_piv.numpy())
    assert g_piv.dtype == G.int32
    np.testing.assert_allclose(g_ld.numpy(), t_ld.numpy(), rtol=1e-10, atol=1e-12)
    b = RNG.standard_normal((6, 2))  # broadcast over the batch of factorisations
    x = G.linalg.ldl_solve(g_ld, g_piv, _g(b))
    np.testing.assert_allclose(a @ x.numpy(), np.broadcast_to(b, (3, 6, 2)), atol=1e-9)


def test_ldl_factor_ex_reports_singular_matrices() -> None:
    zero = G.zeros(2, 3, 3)
    LD, pivots, info = G.linalg.ldl_factor_ex(zero)
    assert info.tolist() == [1, 1] and info.dtype == G.int32
    with pytest.raises(G.linalg.LinAlgError):
        G.linalg.ldl_factor(zero)
    with pytest.raises(G.linalg.LinAlgError):
        G.linalg.ldl_factor_ex(zero, check_errors=True)
    with pytest.raises(RuntimeError):
        G.linalg.ldl_factor(G.zeros(3, 4))
    with pytest.raises(RuntimeError):
        G.linalg.ldl_factor(G.zeros(3, 3, dtype=G.int64))
    with pytest.raises(RuntimeError):
        G.linalg.ldl_solve(G.eye(3), G.ones(3, dtype=G.int64), G.ones(3, 1))


@pytest.mark.parametrize("kwargs", [{"scale_factor": 0.37}, {"scale_factor": (0.5, 1.7)},
                                    {"size": (20, 6), "align_corners": True}])
def test_interpolate_antialias_bilinear_agrees_with_torch(kwargs: dict) -> None:
    x = RNG.standard_normal((2, 3, 11, 17))
    t = torch.nn.functional.interpolate(torch.tensor(x), mode="bilinear", antialias=True, **kwargs)
    g = G.nn.functional.interpolate(_g(x), mode="bilinear", antialias=True, **kwargs)
    np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-10, atol=1e-12)
    with pytest.raises(NotImplementedError):
        G.nn.functional.interpolate(_g(x), mode="bicubic", antialias=True, **kwargs)

