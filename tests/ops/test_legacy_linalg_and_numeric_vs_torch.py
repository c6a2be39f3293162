"""torch's legacy linalg names (svd, qr, cholesky*, lu*, triangular_solve, ormqr, matrix_exp ...) and the
numeric ops of issue 21 (shifts, gcd/lcm, frexp, nanmedian, logspace, unique_consecutive, masked_scatter,
put, histogram(dd), gradient, unravel_index, combinations): edge cases against PyTorch, and refusals."""

from __future__ import annotations

import numpy as np
import pytest

import generated as G

torch = pytest.importorskip("torch")


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def _same(mine, theirs, atol=1e-6, rtol=1e-6):
    if isinstance(theirs, (tuple, list)):
        assert len(mine) == len(theirs)
        for a, b in zip(mine, theirs, strict=True):
            _same(a, b, atol, rtol)
        return
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(mine.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(_np(mine), theirs.detach().numpy(), atol=atol, rtol=rtol, equal_nan=True)


# -- shifts, gcd, lcm ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64"])
def test_shifts_with_counts_out_of_range_follow_pytorch(dtype: str) -> None:
    a = np.array([1, 5, 100, 127, 0, 3, 7, 1], dtype=dtype)
    if dtype != "uint8":
        a[3:5] = [-3, -128 if dtype == "int8" else -1000]
    b = np.array([0, 1, 3, 7, 8, 15, 63, 200 if dtype == "uint8" else -1], dtype=dtype)
    for name in ("bitwise_left_shift", "bitwise_right_shift"):
        mine = getattr(G, name)(G.tensor(a), G.tensor(b))
        theirs = getattr(torch, name)(torch.from_numpy(a), torch.from_numpy(b))
        assert np.array_equal(_np(mine), theirs.numpy()), name
    assert np.array_equal(_np(G.tensor(a) << 2), (torch.from_numpy(a) << 2).numpy())
    assert np.array_equal(_np(G.tensor(a) >> 1), (torch.from_numpy(a) >> 1).numpy())
    for name in ("bitwise_left_shift", "bitwise_right_shift"):  # a number first: the tensor's dtype
        _same(getattr(G, name)(-7, G.tensor(b % 8)), getattr(torch, name)(-7, torch.from_numpy(b % 8)))


def test_shifts_and_gcd_refuse_floats() -> None:
    with pytest.raises(NotImplementedError):
        G.bitwise_left_shift(G.tensor([1.0]), G.tensor([1.0]))
    with pytest.raises(NotImplementedError):
        G.gcd(G.tensor([4.0]), G.tensor([6.0]))
    with pytest.raises(NotImplementedError):
        G.bitwise_left_shift(2.5, G.tensor([1]))


def test_gcd_lcm_of_signs_and_zeros() -> None:
    a = np.array([0, 0, -4, 6, -12, 7], dtype=np.int64)
    b = np.array([0, 5, 6, -4, -18, 0], dtype=np.int64)
    for name in ("gcd", "lcm"):
        _same(getattr(G, name)(G.tensor(a), G.tensor(b)), getattr(torch, name)(torch.from_numpy(a),
                                                                               torch.from_numpy(b)))
    t = G.tensor(a.copy())
    assert t.gcd_(G.tensor(b)) is t and np.array_equal(_np(t), np.gcd(a, b))


# -- frexp, nanmedian -----------------------------------------------------------------------------------------

def test_frexp_special_values_and_gradient() -> None:
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, 3.0, -0.75, 1e300])
    m, e = G.frexp(G.tensor(x))
    tm, te = torch.frexp(torch.from_numpy(x))
    _same(m, tm)
    _same(e, te)
    g = G.tensor([3.0, 40.0, -0.1], dtype=G.float64, requires_grad=True)
    G.frexp(g).mantissa.sum().backward()
    tg = torch.tensor([3.0, 40.0, -0.1], dtype=torch.float64, requires_grad=True)
    torch.frexp(tg).mantissa.sum().backward()
    _same(g.grad, tg.grad)
    with pytest.raises(RuntimeError, match="floating-point"):
        G.frexp(G.tensor([1, 2]))


def test_nanmedian_rows_of_nan_ties_and_gradient() -> None:
    nan = np.nan
    x = np.array([[nan, nan, nan], [1.0, nan, 2.0], [3.0, 3.0, 1.0], [nan, 4.0, nan]])
    v, i = G.nanmedian(G.tensor(x), 1)
    tv, ti = torch.nanmedian(torch.from_numpy(x), 1)
    _same(v, tv)
    np.testing.assert_array_equal(_np(i)[[0, 1, 3]], ti.numpy()[[0, 1, 3]])
    _same(G.nanmedian(G.tensor(x)), torch.nanmedian(torch.from_numpy(x)))
    _same(G.nanmedian(G.tensor(np.array([], dtype=np.float32))), torch.nanmedian(torch.tensor([])))
    g = G.tensor(x, requires_grad=True)
    G.nanmedian(g, 0, keepdim=True)[0].nansum().backward()
    t = torch.from_numpy(x).requires_grad_(True)
    torch.nanmedian(t, 0, keepdim=True)[0].nansum().backward()
    _same(g.grad, t.grad)
    with pytest.raises(IndexError):
        G.nanmedian(G.zeros(2, 0), 1)


# -- factories and Python functions ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["int64", "uint8", "float16", "float32", "float64"])
def test_logspace_rounds_as_pytorch(dtype: str) -> None:
    for start, end, steps, base in [(0.7, 3, 5, 10.0), (4.3, -3, 2, 10.0), (2.5, 3, 1, 10.0), (0, 5, 6, 2.0),
                                    (1, 1, 0, 10.0)]:
        try:
            theirs = torch.logspace(start, end, steps, base, dtype=getattr(torch, dtype))
        except RuntimeError:  # -3 as uint8: PyTorch refuses the overflow, so does opgen
            with pytest.raises(RuntimeError, match="overflow"):
                G.logspace(start, end, steps, base, dtype=getattr(G, dtype))
            continue
        _same(G.logspace(start, end, steps, base, dtype=getattr(G, dtype)), theirs, atol=0, rtol=1e-6)
    _same(G.logspace(G.tensor(1.0), 2, 3), torch.logspace(torch.tensor(1.0), 2, 3))
    out = G.empty(4)
    assert G.logspace(0, 1, 4, out=out) is out
    with pytest.raises(RuntimeError, match="non-negative"):
        G.logspace(0, 1, -1)


def test_gradient_coordinates_and_refusals() -> None:
    x = np.random.default_rng(0).standard_normal((4, 5))
    cx, cy = np.array([0.0, 0.5, 1.7, 2.0]), np.array([1.0, 1.1, 1.5, 2.5, 4.0])
    for edge_order in (1, 2):
        mine = G.gradient(G.tensor(x), spacing=[G.tensor(cx), G.tensor(cy)], edge_order=edge_order)
        theirs = torch.gradient(torch.from_numpy(x), spacing=[torch.from_numpy(cx), torch.from_numpy(cy)],
                                edge_order=edge_order)
        _same(mine, theirs)
    _same(G.gradient(G.tensor([1, 4, 9, 16]), spacing=2.0), torch.gradient(torch.tensor([1, 4, 9, 16]), spacing=2.0))
    _same(G.gradient(G.tensor(x), dim=-1), torch.gradient(torch.from_numpy(x), dim=-1))
    with pytest.raises(RuntimeError, match="edge_order"):
        G.gradient(G.tensor([1.0, 2.0]), edge_order=2)
    with pytest.raises(RuntimeError):
        G.gradient(G.tensor(x), spacing=[1.0, 2.0, 3.0])


def test_unravel_index_wraps_negative_indices_and_refuses_floats() -> None:
    idx = np.array([[3, -1], [0, 5]])
    _same(G.unravel_index(G.tensor(idx), (2, 3)), torch.unravel_index(torch.from_numpy(idx), (2, 3)))
    _same(G.unravel_index(G.tensor(7, dtype=G.int16), 10), torch.unravel_index(torch.tensor(7, dtype=torch.int16), 10))
    with pytest.raises(TypeError):
        G.unravel_index(G.tensor([1.0]), (2, 3))


def test_unique_consecutive_along_a_dim_and_empty() -> None:
    x = np.array([[1, 1], [1, 1], [2, 3], [2, 3], [1, 1]])
    for dim in (None, 0, 1):
        mine = G.unique_consecutive(G.tensor(x), return_inverse=True, return_counts=True, dim=dim)
        theirs = torch.unique_consecutive(torch.from_numpy(x), return_inverse=True, return_counts=True, dim=dim)
        _same(mine, theirs)
    empty = np.array([], dtype=np.float32)
    _same(G.unique_consecutive(G.tensor(empty), return_counts=True),
          torch.unique_consecutive(torch.from_numpy(empty), return_counts=True))
    _same(G.tensor(x).unique_consecutive(), torch.from_numpy(x).unique_consecutive())


def test_combinations_degenerate_sizes() -> None:
    x = np.array([1.0, 2.0, 3.0])
    for r, rep in [(0, False), (4, False), (4, True), (2, True)]:
        _same(G.combinations(G.tensor(x), r, rep), torch.combinations(torch.from_numpy(x), r, rep))
    with pytest.raises(RuntimeError, match="1D"):
        G.combinations(G.zeros(2, 2))


# -- masked_scatter, put -------------------------------------------------------------------------------------

def test_masked_scatter_broadcast_gradient_and_refusals() -> None:
    rng = np.random.default_rng(1)
    x, src = rng.standard_normal((3, 4)), rng.standard_normal((20,))
    mask = np.array([True, False, True, True])
    g, gs = G.tensor(x, requires_grad=True), G.tensor(src, requires_grad=True)
    t, ts = torch.from_numpy(x).requires_grad_(True), torch.from_numpy(src).requires_grad_(True)
    out, tout = G.masked_scatter(g, G.tensor(mask), gs), torch.masked_scatter(t, torch.from_numpy(mask), ts)
    _same(out, tout)
    cot = rng.standard_normal((3, 4))
    out.backward(G.tensor(cot))
    tout.backward(torch.from_numpy(cot))
    _same(g.grad, t.grad)
    _same(gs.grad, ts.grad)
    y = G.tensor(x)
    assert y.masked_scatter_(G.tensor(mask), G.tensor(src)) is y
    _same(y, tout)
    with pytest.raises(RuntimeError, match="boolean"):
        G.masked_scatter(G.tensor(x), G.tensor(mask.astype(np.int64)), G.tensor(src))
    with pytest.raises(RuntimeError, match="source"):
        G.masked_scatter(G.tensor(x), G.tensor(mask), G.tensor(src[:3]))


def test_put_negative_indices_accumulate_and_refusals() -> None:
    x = np.arange(6.0).reshape(2, 3)
    idx, src = np.array([-1, 0, 4]), np.array([10.0, 20.0, 30.0])
    for acc in (False, True):
        _same(G.put(G.tensor(x), G.tensor(idx), G.tensor(src), acc),
              torch.put(torch.from_numpy(x), torch.from_numpy(idx), torch.from_numpy(src), acc))
    t = G.tensor(x)
    assert t.put_(G.tensor(idx), G.tensor(src), accumulate=True) is t
    with pytest.raises(IndexError):
        G.put(G.tensor(x), G.tensor([6]), G.tensor([1.0], dtype=G.float64))
    with pytest.raises(RuntimeError, match="long"):
        G.put(G.tensor(x), G.tensor([1], dtype=G.int32), G.tensor([1.0], dtype=G.float64))


# -- histograms ----------------------------------------------------------------------------------------------

def test_histogram_range_weights_density_and_degenerate_data() -> None:
    x = np.array([0.0, 0.5, 1.0, 1.0, 2.0, 7.0, np.nan], dtype=np.float32)
    w = np.linspace(0.5, 2.0, 7).astype(np.float32)
    for kwargs in [dict(bins=4), dict(bins=3, range=(0.0, 2.0)), dict(bins=3, density=True)]:
        _same(G.histogram(G.tensor(x[:-1]), **kwargs), torch.histogram(torch.from_numpy(x[:-1]), **kwargs))
    _same(G.histogram(G.tensor(x), 3, range=(0.0, 2.0), weight=G.tensor(w)),
          torch.histogram(torch.from_numpy(x), 3, range=(0.0, 2.0), weight=torch.from_numpy(w)))
    _same(G.histogram(G.tensor([2.0, 2.0]), 2), torch.histogram(torch.tensor([2.0, 2.0]), 2))
    _same(G.tensor(x[:-1]).histogram(G.tensor([0.0, 1.0, 5.0])),
          torch.from_numpy(x[:-1]).histogram(torch.tensor([0.0, 1.0, 5.0])))
    with pytest.raises(RuntimeError):
        G.histogram(G.tensor([1, 2]), 2)
    with pytest.raises(ValueError):
        G.histogram(G.tensor([1.0]), 2, range=(2.0, 1.0))


def test_histogramdd_mixed_bins_and_range() -> None:
    x = np.random.default_rng(2).standard_normal((50, 2))
    mine = G.histogramdd(G.tensor(x), [3, 4], range=[-1.0, 1.0, -2.0, 2.0], density=True)
    theirs = torch.histogramdd(torch.from_numpy(x), [3, 4], range=[-1.0, 1.0, -2.0, 2.0], density=True)
    _same(mine.hist, theirs.hist)
    _same(list(mine.bin_edges), list(theirs.bin_edges))
    with pytest.raises(RuntimeError, match="dimensions"):
        G.histogramdd(G.tensor([1.0, 2.0]), 2)


# -- linalg --------------------------------------------------------------------------------------------------

def _grads(fn_g, fn_t, *arrays):
    gs = [G.tensor(a, requires_grad=True) for a in arrays]
    ts = [torch.from_numpy(a).requires_grad_(True) for a in arrays]
    out_g, out_t = fn_g(*gs), fn_t(*ts)
    _same(out_g, out_t, atol=1e-9, rtol=1e-8)
    cot = np.random.default_rng(3).standard_normal(tuple(out_t.shape))
    out_g.backward(G.tensor(cot))
    out_t.backward(torch.from_numpy(cot))
    for g, t in zip(gs, ts, strict=True):
        _same(g.grad, t.grad, atol=1e-8, rtol=1e-7)


def test_matrix_exp_large_norm_batches_and_gradient() -> None:
    rng = np.random.default_rng(4)
    a = rng.standard_normal((3, 4, 4)) * np.array([0.01, 1.0, 20.0])[:, None, None]
    _grads(G.matrix_exp, torch.matrix_exp, a)
    _same(G.matrix_exp(G.zeros(0, 0)), torch.matrix_exp(torch.zeros(0, 0)))
    with pytest.raises(RuntimeError, match="square"):
        G.matrix_exp(G.zeros(2, 3))


def test_cholesky_inverse_and_solve_differentiate_the_whole_factor() -> None:
    rng = np.random.default_rng(5)
    L = rng.standard_normal((3, 3)) + 3 * np.eye(3)  # not triangular: only the triangle is read
    b = rng.standard_normal((3, 2))
    for upper in (False, True):
        _grads(lambda x, u=upper: G.cholesky_inverse(x, u), lambda x, u=upper: torch.cholesky_inverse(x, u), L)
        _grads(lambda y, x, u=upper: G.cholesky_solve(y, x, u), lambda y, x, u=upper: torch.cholesky_solve(y, x, u),
               b, L)


def test_triangular_solve_broadcasts_and_svd_without_uv() -> None:
    rng = np.random.default_rng(6)
    A = rng.standard_normal((2, 1, 3, 3)) + 3 * np.eye(3)
    b = rng.standard_normal((4, 3, 2))
    for transpose in (False, True):
        mine = G.triangular_solve(G.tensor(b), G.tensor(A), upper=False, transpose=transpose, unitriangular=True)
        theirs = torch.triangular_solve(torch.from_numpy(b), torch.from_numpy(A), upper=False, transpose=transpose,
                                        unitriangular=True)
        _same(tuple(mine), tuple(theirs))
    m = rng.standard_normal((2, 3, 5))
    _same(tuple(G.svd(G.tensor(m), compute_uv=False)), tuple(torch.svd(torch.from_numpy(m), compute_uv=False)))
    q, r = G.qr(G.tensor(m.transpose(0, 2, 1)), some=False)
    assert tuple(q.shape) == (2, 5, 5) and tuple(r.shape) == (2, 5, 3)
    np.testing.assert_allclose(_np(q.matmul(r)), m.transpose(0, 2, 1), atol=1e-12)


def test_lu_family_and_householder_forms() -> None:
    rng = np.random.default_rng(7)
    A = rng.standard_normal((2, 4, 4))
    LU, piv, info = G.lu(G.tensor(A), get_infos=True)
    tLU, tpiv, tinfo = torch.lu(torch.from_numpy(A), get_infos=True)
    _same((LU, piv, info), (tLU, tpiv, tinfo))
    _same(tuple(G.lu_unpack(LU, piv)), tuple(torch.lu_unpack(tLU, tpiv)))
    assert tuple(G.lu_unpack(LU, piv, unpack_pivots=False).P.shape) == (0,)
    with pytest.raises(RuntimeError, match="int32"):
        G.lu_unpack(LU, piv.to(G.int64))
    b = rng.standard_normal((2, 4, 3))
    _same(G.lu_solve(G.tensor(b), LU, piv), torch.lu_solve(torch.from_numpy(b), tLU, tpiv), atol=1e-10)
    M = rng.standard_normal((5, 3))
    a, tau = G.geqrf(G.tensor(M))
    ta, ttau = torch.geqrf(torch.from_numpy(M))
    _same((a, tau), (ta, ttau), atol=1e-12)
    C = rng.standard_normal((5, 2))
    for transpose in (False, True):
        _same(G.ormqr(a, tau, G.tensor(C), True, transpose),
              torch.ormqr(ta, ttau, torch.from_numpy(C), True, transpose))
    _same(a.orgqr(tau), ta.orgqr(ttau))
    with pytest.raises(RuntimeError, match="ormqr"):
        G.ormqr(a, tau, G.tensor(C.T))
