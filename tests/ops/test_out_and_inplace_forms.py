"""out= on functions written in Python (Note [out= for functions written in Python]), the in-place form
and out= of overloads declared without them (Note [In-place forms of overloads declared without one],
Note [out= for ops without an out overload]) and `F.<activation>(inplace=True)` (Note [In-place
activations]), compared with PyTorch where it is installed."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import generated as G

F = G.nn.functional


def _spd(n: int = 3) -> G.Tensor:
    a = np.random.default_rng(0).standard_normal((n, n))
    return G.tensor(a @ a.T + n * np.eye(n), dtype=G.float32)


# -- out= on G.linalg / F functions written in Python ----------------------------------------------------

LINALG_OUT = [
    ("inv", lambda A: (A,), {}),
    ("det", lambda A: (A,), {}),
    ("cholesky", lambda A: (A,), {"upper": True}),
    ("matrix_power", lambda A: (A, 3), {}),
    ("solve", lambda A: (A, A[:, 0]), {}),
    ("svdvals", lambda A: (A,), {}),
    ("vector_norm", lambda A: (A,), {"ord": 3}),
    ("matrix_norm", lambda A: (A, "nuc"), {}),
    ("norm", lambda A: (A,), {}),
    ("eigvalsh", lambda A: (A,), {}),
    ("cond", lambda A: (A,), {}),
    ("pinv", lambda A: (A,), {}),
    ("matrix_rank", lambda A: (A,), {}),
    ("cross", lambda A: (A, A.flip(0)), {}),
    ("vecdot", lambda A: (A, A), {}),
    ("multi_dot", lambda A: ([A, A, A],), {}),
    ("householder_product", lambda A: (A, A[0]), {}),
    ("solve_triangular", lambda A: (A, A), {"upper": True}),
    ("tensorinv", lambda A: (A,), {"ind": 1}),
    ("tensorsolve", lambda A: (A, A[0]), {}),
]


@pytest.mark.parametrize("name,args,kwargs", LINALG_OUT, ids=[c[0] for c in LINALG_OUT])
def test_linalg_out_writes_the_result_into_out(name, args, kwargs):
    fn = getattr(G.linalg, name)
    a = args(_spd())
    expected = fn(*a, **kwargs)
    out = G.empty(0, dtype=expected.dtype)
    returned = fn(*a, **kwargs, out=out)
    assert returned is out
    np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-5, atol=1e-6)
    assert "out" in inspect.signature(fn).parameters
    assert inspect.signature(fn).parameters["out"].kind is inspect.Parameter.KEYWORD_ONLY


def test_linalg_out_of_another_shape_is_resized_with_a_warning():
    A = _spd()
    out = G.zeros(5)
    with pytest.warns(UserWarning, match="resized"):
        G.linalg.inv(A, out=out)
    assert tuple(out.shape) == (3, 3)
    np.testing.assert_allclose(out.numpy(), G.linalg.inv(A).numpy(), rtol=1e-6)


def test_linalg_out_tuple_for_a_tuple_result():
    A = _spd()
    w, v = G.empty(0), G.empty(0)
    result = G.linalg.eigh(A, out=(w, v))
    assert result[0] is w and result[1] is v and result.eigenvalues is w
    np.testing.assert_allclose(w.numpy(), G.linalg.eigvalsh(A).numpy(), rtol=1e-5)
    with pytest.raises(TypeError, match="tuple of 2"):
        G.linalg.eigh(A, out=G.empty(0))


def test_linalg_out_dtype_rules_and_inputs_that_require_grad():
    A = _spd()
    for dtype in (G.int64, G.float64):  # inv, as PyTorch's, wants out of the result's dtype
        out = G.zeros(3, 3, dtype=dtype)
        with pytest.raises(RuntimeError, match="dtype"):
            G.linalg.inv(A, out=out)
        assert out.numpy().sum() == 0  # nothing written
    wider = G.zeros(3, 3, dtype=G.float64)  # pinv takes any dtype the result can be cast to
    assert G.linalg.pinv(A, out=wider) is wider
    np.testing.assert_allclose(wider.numpy(), np.linalg.pinv(A.numpy()), rtol=1e-5)
    with pytest.raises(RuntimeError, match="can't be cast"):
        G.linalg.pinv(A, out=G.zeros(3, 3, dtype=G.int64))
    w, v = G.zeros(3), G.zeros(3, 3, dtype=G.float64)
    with pytest.raises(RuntimeError, match="dtype"):
        G.linalg.eigh(A, out=(w, v))
    assert w.numpy().sum() == 0  # a tuple out is checked whole before anything is written
    with pytest.raises(RuntimeError, match="automatic differentiation"):
        G.linalg.inv(A.clone().requires_grad_(), out=G.empty(0))


def test_linalg_out_is_keyword_only():
    with pytest.raises(TypeError):
        G.linalg.inv(_spd(), G.empty(0))


def test_ops_whose_kernel_is_a_linalg_function_still_work():
    A = _spd()
    np.testing.assert_allclose(G.det(A).item(), np.linalg.det(A.numpy()), rtol=1e-5)
    np.testing.assert_allclose(G.linalg_svdvals(A).numpy(), np.linalg.svd(A.numpy(), compute_uv=False), rtol=1e-5)
    np.testing.assert_allclose(G.linalg_matrix_norm(A, 1).item(), np.linalg.norm(A.numpy(), 1), rtol=1e-5)


@pytest.mark.parametrize("name,args", [("avg_pool2d", (2,)), ("avg_pool3d", (1,)), ("softshrink", ()),
                                       ("hardshrink", ())])
def test_functional_out(name, args):
    x = G.tensor(np.random.default_rng(1).standard_normal((1, 2, 4, 4)), dtype=G.float32)
    fn = getattr(F, name)
    expected = fn(x, *args)
    out = G.empty(0)
    assert fn(x, *args, out=out) is out
    np.testing.assert_allclose(out.numpy(), expected.numpy())


def test_nonzero_out_and_its_as_tuple_form_refuses_out():
    x = G.tensor([[0, 1], [2, 0]])
    out = G.empty(0, dtype=G.int64)
    assert G.nonzero(x, out=out) is out
    assert out.numpy().tolist() == [[0, 1], [1, 0]]
    with pytest.raises(TypeError):
        G.nonzero(x, as_tuple=True, out=out)


# -- the keyword of an overload in the in-place and out= forms ---------------------------------------------

@pytest.mark.parametrize("mode", ["floor", "trunc", None])
@pytest.mark.parametrize("scalar", [False, True])
def test_div_rounding_mode_in_place_and_out(mode, scalar):
    a = G.tensor([7.0, -7.0, 5.5, -0.5])
    b = 2.0 if scalar else G.tensor([2.0, 2.0, -3.0, 4.0])
    expected = G.div(a, b, rounding_mode=mode)
    x = a.clone()
    assert x.div_(b, rounding_mode=mode) is x
    np.testing.assert_allclose(x.numpy(), expected.numpy())
    out = G.empty(0)
    assert G.div(a, b, rounding_mode=mode, out=out) is out
    np.testing.assert_allclose(out.numpy(), expected.numpy())


def test_div_rounding_mode_in_place_refuses_an_integer_self_for_a_float_result():
    x = G.tensor([7, -7])
    with pytest.raises(RuntimeError, match="can't be cast"):
        x.div_(G.tensor([2.0, 2.0]), rounding_mode="floor")
    assert x.numpy().tolist() == [7, -7]


@pytest.mark.parametrize("decimals", [0, 2, -1])
def test_round_decimals_in_place_and_out(decimals):
    a = G.tensor([1.2345, -26.789, 150.5])
    expected = G.round(a, decimals=decimals)
    x = a.clone()
    assert x.round_(decimals=decimals) is x
    np.testing.assert_allclose(x.numpy(), expected.numpy())
    out = G.empty(0)
    assert G.round(a, decimals=decimals, out=out) is out
    np.testing.assert_allclose(out.numpy(), expected.numpy())


def test_in_place_of_an_overload_declared_without_one_is_differentiable():
    x = G.tensor([3.0, 4.0], dtype=G.float64, requires_grad=True)
    o = G.tensor([2.0, 5.0], dtype=G.float64, requires_grad=True)
    y = x * 1
    y.div_(o, rounding_mode=None)  # div saves self for o's gradient: the write-back must not break it
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.5, 0.2])
    np.testing.assert_allclose(o.grad.numpy(), [-3.0 / 4.0, -4.0 / 25.0])


def test_generic_in_place_form_is_differentiable():
    x = G.tensor([0.2, 0.7], dtype=G.float64, requires_grad=True)
    y = x * 1
    y.logit_()  # logit saves its input
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 1 / (np.array([0.2, 0.7]) * (1 - np.array([0.2, 0.7]))))


# -- F.<activation>(inplace=True) ------------------------------------------------------------------------

ACTIVATIONS = [("elu", (0.7,)), ("selu", ()), ("silu", ()), ("mish", ()), ("hardsigmoid", ()), ("hardswish", ()),
               ("hardtanh", (-0.5, 0.5)), ("relu6", ()), ("threshold", (0.1, 2.0)), ("celu", (0.8,)),
               ("rrelu", (0.1, 0.3, False)), ("leaky_relu", (0.1,)), ("relu", ())]


@pytest.mark.parametrize("name,args", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activation_inplace_matches_torch_values_and_gradients(name, args):
    torch = pytest.importorskip("torch")
    values = np.array([0.3, -0.4, 7.6, -3.5, 2.9, 0.05])
    weights = np.arange(1.0, 7.0)
    x = G.tensor(values, requires_grad=True)
    y = x * 1
    r = getattr(F, name)(y, *args, inplace=True)
    assert r is y
    (r * G.tensor(weights)).sum().backward()
    tx = torch.tensor(values, requires_grad=True)
    ty = tx * 1
    tr = getattr(torch.nn.functional, name)(ty, *args, inplace=True)
    (tr * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(r.detach().numpy(), tr.detach().numpy(), rtol=1e-7)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-7)
    # and the functional form leaves its input alone
    z = G.tensor(values)
    getattr(F, name)(z, *args)
    np.testing.assert_array_equal(z.numpy(), values)


def test_activation_inplace_on_a_leaf_that_requires_grad_is_refused():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = G.tensor([0.5, -0.5], requires_grad=True)
        with pytest.raises(RuntimeError):
            F.selu(x, inplace=True)


def test_elu_takes_torch_signature():
    x = G.tensor([-1.0, 1.0])
    np.testing.assert_allclose(F.elu(x, 0.5).numpy(), [0.5 * (np.exp(-1.0) - 1), 1.0], rtol=1e-6)
    with pytest.raises(ValueError):
        F.hardtanh(x, 1.0, -1.0)


# -- smaller agreements with PyTorch ---------------------------------------------------------------------

def test_factory_ops_take_requires_grad():
    t = G.empty_strided((2, 3), (3, 1), requires_grad=True)
    assert t.requires_grad and tuple(t.shape) == (2, 3) and t.is_leaf
    assert not G.empty_strided((2,), (1,)).requires_grad
    base = G.zeros(2)
    assert base.new_empty(3, requires_grad=True).requires_grad
    assert base.new_full((2,), 1.5, requires_grad=True).requires_grad
    assert not base.new_zeros((2,)).requires_grad


@pytest.mark.parametrize("op", ["fmax", "fmin", "heaviside"])
def test_bool_inputs_of_fmax_fmin_heaviside(op):
    a = G.tensor([True, False, True, False])
    b = G.tensor([False, False, True, True])
    r = getattr(G, op)(a, b)
    assert r.dtype == G.bool
    expected = {"fmax": np.maximum, "fmin": np.minimum,
                "heaviside": lambda x, y: np.where(x == 0, y, x > 0)}[op](a.numpy(), b.numpy())
    np.testing.assert_array_equal(r.numpy(), expected)


@pytest.mark.parametrize("beta,alpha", [(0.6, 2.7), (-1.6, -2.7)])
def test_integer_addmv_addbmm_baddbmm_truncate_float_scalars(beta, alpha):
    s = np.array([[1, 2], [3, 4]])
    m = G.tensor(s)
    ib, ia = int(beta), int(alpha)
    np.testing.assert_array_equal(G.addmv(G.tensor([1, 2]), m, G.tensor([1, 1]), beta=beta, alpha=alpha).numpy(),
                                  ib * np.array([1, 2]) + ia * (s @ [1, 1]))
    r = G.addbmm(m, m[None], m[None], beta=beta, alpha=alpha)
    assert r.dtype == G.int64
    np.testing.assert_array_equal(r.numpy(), ib * s + ia * (s @ s))
    r = G.baddbmm(m[None], m[None], m[None], beta=beta, alpha=alpha)
    np.testing.assert_array_equal(r.numpy(), (ib * s + ia * (s @ s))[None])
    y = G.tensor([1, 2])
    y.addmv_(m, G.tensor([1, 1]), beta=beta, alpha=alpha)
    np.testing.assert_array_equal(y.numpy(), ib * np.array([1, 2]) + ia * (s @ [1, 1]))


def test_addbmm_in_place_resizes_a_broadcast_self():
    rng = np.random.default_rng(3)
    b1, b2 = rng.standard_normal((5, 5, 5)), rng.standard_normal((5, 5, 10))
    x = G.tensor([0.5], dtype=G.float64)
    assert x.addbmm_(G.tensor(b1), G.tensor(b2)) is x
    assert tuple(x.shape) == (5, 10)
    np.testing.assert_allclose(x.numpy(), 0.5 + np.einsum("bij,bjk->ik", b1, b2))


def test_tensordot_broadcasts_a_size_one_contracted_dim():
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((1, 1, 1)), rng.standard_normal((2, 1, 2))
    r = G.tensordot(G.tensor(a), G.tensor(b), dims=[[0, 1], [2, 0]])
    np.testing.assert_allclose(r.numpy(), (a[0, 0, 0] * b.sum(axis=(0, 2)))[None, :])
    with pytest.raises(RuntimeError, match="contracted dimensions"):
        G.tensordot(G.ones(2, 3), G.ones(3, 2), dims=[[0], [0]])


def test_nextafter_gradient_is_the_identity_for_self():
    x = G.tensor([1.0, 2.0], dtype=G.float64, requires_grad=True)
    y = G.tensor(5.0, dtype=G.float64, requires_grad=True)
    gx, gy = G.autograd.grad(G.nextafter(x, y).sum(), [x, y])
    np.testing.assert_array_equal(gx.numpy(), [1.0, 1.0])
    assert gy.item() == 0.0


def test_slogdet_of_an_empty_matrix_and_its_sign_are_differentiable():
    A = G.zeros(0, 0, dtype=G.float64, requires_grad=True)
    sign, logabsdet = G.linalg.slogdet(A)
    assert sign.requires_grad and logabsdet.requires_grad
    B = G.tensor([[2.0, 1.0], [1.0, 3.0]], dtype=G.float64, requires_grad=True)
    (g,) = G.autograd.grad(G.linalg.slogdet(B)[0], [B])
    np.testing.assert_array_equal(g.numpy(), np.zeros((2, 2)))


def test_lstsq_differentiates_solution_and_residuals_only():
    A = G.tensor(np.random.default_rng(5).standard_normal((4, 2)), requires_grad=True)
    B = G.tensor(np.random.default_rng(6).standard_normal((4, 3)))
    for driver in ("gels", "gelsd"):
        result = G.linalg.lstsq(A, B, driver=driver)
        assert result.solution.requires_grad
        assert not result.singular_values.requires_grad and not result.rank.requires_grad


PINV_CASES = [((3, 3), {}), ((3, 5), {}), ((2, 5, 3), {}), ((4, 4), {"hermitian": True}), ((3, 3), {"atol": 0.5}),
              ("singular", {}), ("symmetric", {"hermitian": True})]


@pytest.mark.parametrize("shape,kwargs", PINV_CASES)
def test_pinv_gradient_is_the_pseudo_inverse_formula(shape, kwargs):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    if shape == "singular":
        b = rng.standard_normal((3, 2))
        a = b @ b.T
    elif shape == "symmetric":
        s = rng.standard_normal((4, 4))
        a = s + s.T
    else:
        a = rng.standard_normal(shape)
    tA, gA = torch.tensor(a, requires_grad=True), G.tensor(a, requires_grad=True)
    tp, gp = torch.linalg.pinv(tA, **kwargs), G.linalg.pinv(gA, **kwargs)
    np.testing.assert_allclose(gp.detach().numpy(), tp.detach().numpy(), rtol=1e-9, atol=1e-9)
    c = rng.standard_normal(tuple(tp.shape))
    (tg,) = torch.autograd.grad(tp, [tA], torch.tensor(c))
    (gg,) = G.autograd.grad(gp, [gA], G.tensor(c))
    np.testing.assert_allclose(gg.numpy(), tg.numpy(), rtol=1e-7, atol=1e-9)


def test_square_of_bool_is_int64_and_other_dtypes_keep_theirs():
    b = G.tensor([True, False, True])
    for r in (G.square(b), b.square(), G.square(b, out=G.empty(0, dtype=G.int64))):
        assert r.dtype == G.int64
        assert r.numpy().tolist() == [1, 0, 1]
    assert G.square(G.tensor([2, 3], dtype=G.int8)).dtype == G.int8
    assert G.square(G.tensor([1.5], dtype=G.float16)).dtype == G.float16
    with pytest.raises(RuntimeError, match="can't be cast"):
        b.clone().square_()
    x = G.tensor([1.5, -2.0], requires_grad=True)
    G.square(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, -4.0])


MODULES = [("ReLU6", ()), ("SELU", ()), ("SiLU", ()), ("Mish", ()), ("ELU", (0.7,)), ("Hardtanh", (-0.5, 0.5)),
           ("Threshold", (0.1, 2.0)), ("CELU", (0.8,)), ("RReLU", (0.1, 0.3))]


@pytest.mark.parametrize("name,args", MODULES, ids=[m[0] for m in MODULES])
def test_activation_modules_in_place_match_torch(name, args):
    torch = pytest.importorskip("torch")
    values = np.array([0.3, -0.4, 7.6, -3.5])
    m = getattr(G.nn, name)(*args, inplace=True)
    m.eval()
    x = G.tensor(values, requires_grad=True)
    y = x * 1
    r = m(y)
    assert r is y
    r.sum().backward()
    tm = getattr(torch.nn, name)(*args, inplace=True)
    tm.eval()
    tx = torch.tensor(values, requires_grad=True)
    ty = tx * 1
    tm(ty).sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-7)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-7)
