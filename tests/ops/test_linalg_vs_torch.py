"""torch.linalg functions and their gradients (including three once-wrong ones), against PyTorch (values and gradients):
eigh/eigvalsh, slogdet, pinv, lstsq, cond, matrix_rank, lu/lu_factor/lu_solve, solve_triangular, cholesky_ex,
inv_ex, multi_dot, householder_product, vander, vecdot."""

from __future__ import annotations

import numpy as np
import pytest

from tests.torch_oracle import compare

torch = pytest.importorskip("torch")
TL = torch.linalg


def _L():
    import generated as G
    return G.linalg


def r(*shape: int) -> np.ndarray:
    return np.random.default_rng(sum(shape) * 13 + len(shape)).standard_normal(shape)


def sym(a):
    return a + a.transpose(-2, -1)


# -- the bugs -------------------------------------------------------------------------------------------------

def test_nuclear_norm_gradient_of_zeros_is_finite() -> None:
    """The gradient went through svd's 1 / (s_i^2 - s_j^2) and was NaN for a zero (or repeated) spectrum."""
    L = _L()
    compare(lambda a: L.norm(a * 0, "nuc"), lambda a: TL.norm(a * 0, "nuc"), r(3, 3))
    compare(lambda a: L.matrix_norm(a, "nuc"), lambda a: TL.matrix_norm(a, "nuc"), r(2, 3, 4))
    compare(lambda a: L.matrix_norm(a, 2), lambda a: TL.matrix_norm(a, 2), r(3, 4))


def test_matrix_power_zero_requires_grad() -> None:
    import generated as G
    a = G.tensor(r(3, 3), requires_grad=True)
    out = G.linalg.matrix_power(a, 0)
    assert out.requires_grad
    out.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.zeros((3, 3)))
    np.testing.assert_array_equal(out.detach().numpy(), np.eye(3))


@pytest.mark.parametrize("shape", [(3, 5), (2, 2, 4), (4, 4), (5, 3)])
def test_qr_backward_wide_and_tall(shape: tuple) -> None:
    L = _L()
    compare(lambda a: L.qr(a)[0].sum(-1) + L.qr(a)[1].sum(-2).narrow(-1, 0, 1),
            lambda a: TL.qr(a)[0].sum(-1) + TL.qr(a)[1].sum(-2).narrow(-1, 0, 1), r(*shape))
    compare(lambda a: L.qr(a)[1], lambda a: TL.qr(a)[1], r(*shape))


# -- the new functions ------------------------------------------------------------------------------------------

def test_eigh_and_eigvalsh() -> None:
    L = _L()
    compare(lambda a: L.eigh(sym(a))[0], lambda a: TL.eigh(sym(a))[0], r(2, 4, 4))
    # eigenvectors are defined up to sign: compare their squares
    compare(lambda a: L.eigh(sym(a))[1] ** 2, lambda a: TL.eigh(sym(a))[1] ** 2, r(2, 4, 4))
    compare(lambda a: L.eigh(a, "U").eigenvalues, lambda a: TL.eigh(a, "U").eigenvalues, r(3, 3))
    compare(lambda a: L.eigvalsh(sym(a)), lambda a: TL.eigvalsh(sym(a)), r(4, 4))


def test_eigvalsh_of_repeated_eigenvalues_has_a_finite_gradient() -> None:
    import generated as G
    a = G.eye(3, dtype=G.float64).requires_grad_()
    G.linalg.eigvalsh(a).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.eye(3))


def test_eig_refuses_clearly() -> None:
    import generated as G
    with pytest.raises(NotImplementedError, match="complex"):
        G.linalg.eig(G.eye(2))
    with pytest.raises(NotImplementedError, match="complex"):
        G.linalg.eigvals(G.eye(2))


def test_slogdet() -> None:
    L = _L()
    compare(lambda a: L.slogdet(a).logabsdet, lambda a: TL.slogdet(a).logabsdet, r(2, 3, 3))
    compare(lambda a: L.slogdet(a)[0], lambda a: TL.slogdet(a)[0], r(2, 3, 3), grad=False)


@pytest.mark.parametrize("shape", [(2, 5, 3), (3, 5)])
def test_pinv(shape: tuple) -> None:
    L = _L()
    compare(lambda a: L.pinv(a), lambda a: TL.pinv(a), r(*shape))


@pytest.mark.parametrize("driver", ["gelsy", "gelsd", "gelss", "gels"])
def test_lstsq(driver: str) -> None:
    L = _L()
    compare(lambda a, b: L.lstsq(a, b, driver=driver).solution, lambda a, b: TL.lstsq(a, b, driver=driver).solution,
            r(5, 3), r(5, 2))
    compare(lambda a, b: L.lstsq(a, b, driver=driver).residuals,
            lambda a, b: TL.lstsq(a, b, driver=driver).residuals, r(5, 3), r(5, 2))
    compare(lambda a, b: L.lstsq(a, b, driver=driver).singular_values,
            lambda a, b: TL.lstsq(a, b, driver=driver).singular_values, r(5, 3), r(5, 2), grad=False)


@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", 1, -1, float("inf")])
def test_cond(p: object) -> None:
    L = _L()
    # PyTorch's own backward of cond fails for the norms computed through inv_ex, so gradients only for 2-norms
    compare(lambda a: L.cond(a, p), lambda a: TL.cond(a, p), r(2, 3, 3), grad=p in (None, 2, -2))


def test_matrix_rank() -> None:
    L = _L()
    low = r(3, 5, 2) @ r(3, 2, 4)
    compare(lambda a: L.matrix_rank(a), lambda a: TL.matrix_rank(a), low, grad=False)
    compare(lambda a: L.matrix_rank(a, atol=1.0, rtol=0.1), lambda a: TL.matrix_rank(a, atol=1.0, rtol=0.1),
            r(3, 5, 4), grad=False)


def test_lu_family() -> None:
    L = _L()
    for i in range(3):
        compare(lambda a, i=i: L.lu(a)[i], lambda a, i=i: TL.lu(a)[i], r(2, 4, 4))
    for shape in ((5, 3), (3, 5), (2, 4, 6)):
        compare(lambda a: L.lu(a).L, lambda a: TL.lu(a).L, r(*shape))
        compare(lambda a: L.lu(a).U, lambda a: TL.lu(a).U, r(*shape))
        compare(lambda a: L.lu(a).L.sum(-1).unsqueeze(-1) * L.lu(a).U.sum(-2).unsqueeze(-2),
                lambda a: TL.lu(a).L.sum(-1).unsqueeze(-1) * TL.lu(a).U.sum(-2).unsqueeze(-2), r(*shape))
    compare(lambda a: L.lu_factor(a).LU, lambda a: TL.lu_factor(a).LU, r(2, 4, 4))
    compare(lambda a: L.lu_factor(a).pivots, lambda a: TL.lu_factor(a).pivots, r(2, 4, 4), grad=False)
    compare(lambda a: L.lu_factor(a).LU, lambda a: TL.lu_factor(a).LU, r(3, 5))
    compare(lambda a: L.lu_factor(a).LU, lambda a: TL.lu_factor(a).LU, r(5, 3))


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_lu_solve(left: bool, adjoint: bool) -> None:
    L = _L()
    compare(lambda a, b: L.lu_solve(*L.lu_factor(a), b, left=left, adjoint=adjoint),
            lambda a, b: TL.lu_solve(*TL.lu_factor(a), b, left=left, adjoint=adjoint), r(2, 4, 4), r(2, 4, 4))


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unitriangular", [False, True])
def test_solve_triangular(upper: bool, left: bool, unitriangular: bool) -> None:
    L = _L()
    compare(lambda a, b: L.solve_triangular(a, b, upper=upper, left=left, unitriangular=unitriangular),
            lambda a, b: TL.solve_triangular(a, b, upper=upper, left=left, unitriangular=unitriangular),
            r(3, 3) + 3 * np.eye(3), r(3, 3))


def test_ex_variants() -> None:
    import generated as G
    L = _L()
    compare(lambda a: L.cholesky_ex(a @ a.mT + G.eye(3, dtype=G.float64))[0],
            lambda a: TL.cholesky_ex(a @ a.mT + torch.eye(3, dtype=torch.float64))[0], r(3, 3))
    compare(lambda a: L.inv_ex(a).inverse, lambda a: TL.inv_ex(a).inverse, r(2, 3, 3))
    bad = np.stack([np.eye(2), -np.eye(2)])
    np.testing.assert_array_equal(L.cholesky_ex(G.tensor(bad)).info.numpy(), [0, 1])
    with pytest.raises(G.linalg.LinAlgError):
        L.cholesky_ex(G.tensor(bad), check_errors=True)


def test_products_and_helpers() -> None:
    L = _L()
    compare(lambda a, b, c: L.multi_dot([a, b, c]), lambda a, b, c: TL.multi_dot([a, b, c]), r(3), r(3, 4), r(4))
    compare(lambda a, b, c: L.multi_dot([a, b, c]), lambda a, b, c: TL.multi_dot([a, b, c]), r(2, 3), r(3, 4),
            r(4, 5))
    compare(lambda a, t: L.householder_product(a, t), lambda a, t: TL.householder_product(a, t), r(2, 5, 3), r(2, 2))
    compare(lambda a, t: L.householder_product(a, t), lambda a, t: TL.householder_product(a, t), r(4, 3), r(0))
    compare(lambda x: L.vander(x), lambda x: TL.vander(x), r(2, 4))
    compare(lambda x: L.vander(x, N=3), lambda x: TL.vander(x, N=3), np.array([0.0, 1.0, 2.0]))
    compare(lambda x, y: L.vecdot(x, y, dim=0), lambda x, y: TL.vecdot(x, y, dim=0), r(3, 4), r(3, 1))


# -- found by the exhaustive OpInfo run (python3 -m tests.opinfo_coverage --exhaustive) ---------------------------

def test_cross_dim_does_not_broadcast() -> None:
    """A size-1 cross dim was broadcast to 3; PyTorch refuses it (both inputs need length 3 there)."""
    import generated as G
    with pytest.raises(RuntimeError):
        G.linalg.cross(G.ones(5, 3), G.ones(5, 1))
    with pytest.raises(RuntimeError):
        G.cross(G.ones(5, 1), G.ones(5, 3), dim=1)
    compare(lambda a, b: G.linalg.cross(a, b), lambda a, b: TL.cross(a, b), r(2, 3), r(1, 3))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64"])
def test_vander_of_integers_is_int64(dtype: str) -> None:
    """Powers of an integer tensor are int64 in PyTorch (int32 stayed int32); bool is refused."""
    import generated as G
    x = np.array([3, 2, 1], dtype=dtype)
    out = G.linalg.vander(G.tensor(x), N=4)
    expected = TL.vander(torch.tensor(x), N=4)
    assert out.dtype == G.int64
    np.testing.assert_array_equal(out.numpy(), expected.numpy())
    assert tuple(G.linalg.vander(G.tensor(x[0]), N=2).shape) == tuple(TL.vander(torch.tensor(x[0]), N=2).shape)
    with pytest.raises(RuntimeError):
        G.linalg.vander(G.tensor([True, False]))


def test_multi_dot_multiplies_in_the_cheapest_order() -> None:
    """In float16 every partial product is rounded, so the order matters: opgen went left to right, PyTorch
    takes the order of fewest multiplications; with that order the results agree bit for bit."""
    import generated as G
    rng = np.random.default_rng(0)
    for n in (3, 4, 5):
        for _ in range(20):
            dims = rng.integers(1, 7, size=n + 1)
            ms = [(rng.standard_normal((dims[i], dims[i + 1])) * 3).astype(np.float16) for i in range(n)]
            expected = TL.multi_dot([torch.from_numpy(m) for m in ms]).numpy()
            np.testing.assert_array_equal(G.linalg.multi_dot([G.tensor(m) for m in ms]).numpy(), expected)
    compare(lambda a, b, c, d: G.linalg.multi_dot([a, b, c, d]), lambda a, b, c, d: TL.multi_dot([a, b, c, d]),
            r(2, 6), r(6, 1), r(1, 5), r(5))


@pytest.mark.parametrize("ord", [3.5, 3, 1.5, 0.5, -1])
@pytest.mark.parametrize("x", [[0.0, 0.0, 0.0], [0.0, 1.0, -2.0]])
def test_vector_norm_derivatives_at_zero(ord: float, x: list) -> None:
    """The gradient divided by norm^(ord-1) inside a `where`: at a zero norm the discarded branch's 0/0 made the
    second derivative NaN (PyTorch: 0), and x |x|^(ord-2) made the gradient NaN at zero entries for ord < 2."""
    import generated as G
    v = np.array([0.3, -1.0, 2.0])
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    g = G.tensor(np.array(x), requires_grad=True)
    (tg,) = torch.autograd.grad(TL.vector_norm(t, ord), t, create_graph=True)
    (gg,) = G.autograd.grad(G.linalg.vector_norm(g, ord), g, create_graph=True)
    np.testing.assert_allclose(gg.detach().numpy(), tg.detach().numpy(), rtol=1e-7, atol=1e-12)
    if not tg.requires_grad:
        return
    (tgg,) = torch.autograd.grad((tg * torch.from_numpy(v)).sum(), t, allow_unused=True)
    (ggg,) = G.autograd.grad((gg * G.tensor(v)).sum(), g, allow_unused=True)
    expected = np.zeros(3) if tgg is None else tgg.numpy(force=True)
    actual = np.zeros(3) if ggg is None else ggg.numpy()
    np.testing.assert_allclose(actual, expected, rtol=1e-7, atol=1e-12)
