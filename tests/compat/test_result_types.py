"""PyTorch compatibility of tensor results and types: named-tuple results, Size, finfo/iinfo, __format__,
repr and set_printoptions, autograd node names, errors, assert_close, varargs functions and torch.linalg.
Each is compared with torch itself (skipped where torch is not installed)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import generated as G
from runtime import formatting

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _default_printoptions() -> Iterator[None]:
    yield
    G.set_printoptions(profile="default")
    torch.set_printoptions(profile="default")


def _both(make: Callable[[Any], Any]) -> tuple[Any, Any]:
    return make(torch), make(G)


# -- named tuples ------------------------------------------------------------------------------------------
NAMED = {
    "max": lambda M, x: M.max(x, 1), "min": lambda M, x: x.min(0, keepdim=True), "sort": lambda M, x: M.sort(x),
    "topk": lambda M, x: x.topk(2), "median": lambda M, x: M.median(x, 1), "mode": lambda M, x: M.mode(x),
    "kthvalue": lambda M, x: M.kthvalue(x, 2, 1), "cummax": lambda M, x: M.cummax(x, 1),
    "cummin": lambda M, x: x.cummin(0),
}


@pytest.mark.parametrize("name", NAMED)
def test_values_indices_results_are_named_tuples(name: str) -> None:
    x = np.random.default_rng(0).permutation(12).reshape(3, 4).astype(np.float32)
    expected = NAMED[name](torch, torch.tensor(x))
    actual = NAMED[name](G, G.tensor(x))
    assert type(actual).__name__ == type(expected).__name__ == name
    assert actual._fields == ("values", "indices")
    np.testing.assert_array_equal(actual.values.numpy(), expected.values.numpy())
    np.testing.assert_array_equal(actual.indices.numpy(), expected.indices.numpy())
    values, indices = actual  # still a tuple
    assert values is actual[0] and indices is actual.indices
    assert repr(actual).replace("opgen.", "torch.") == repr(expected)


def test_named_tuple_keeps_autograd_and_linalg_fields() -> None:
    x = G.randn(3, 4, requires_grad=True)
    r = x.max(1)
    assert r.values.grad_fn.name() == "MaxBackward0"
    r.values.sum().backward()
    assert x.grad.sum().item() == 3
    assert G.linalg.qr(G.randn(3, 2))._fields == ("Q", "R")
    assert G.linalg.svd(G.randn(3, 2))._fields == ("U", "S", "Vh")


# -- Size, finfo/iinfo, __format__ -----------------------------------------------------------------------

def test_size_is_a_tuple_printed_like_torch_size() -> None:
    t, g = _both(lambda M: M.zeros(2, 3, 4))
    for get in (lambda a: a.shape, lambda a: a.size(), lambda a: a.shape[1:], lambda a: a.shape + (5,)):
        s, o = get(t), get(g)
        assert isinstance(o, G.Size) and isinstance(o, tuple)
        assert tuple(o) == tuple(s) and repr(o) == repr(s).replace("torch.", "opgen.")
    assert g.shape == (2, 3, 4) and g.shape.numel() == 24 and g.size(1) == 3 and type(g.size(1)) is int
    assert G.zeros(g.shape).shape == g.shape


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64"])
def test_finfo_matches_torch(name: str) -> None:
    f, o = torch.finfo(getattr(torch, name)), G.finfo(getattr(G, name))
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(o, attr) == pytest.approx(getattr(f, attr), rel=1e-6), attr
    assert o.dtype == f.dtype  # a string: pytest.approx takes numbers only (pytest 9 refuses a str)
    assert repr(o) == repr(f)
    assert G.finfo().dtype == "float32"


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "int32", "int64"])
def test_iinfo_matches_torch(name: str) -> None:
    f, o = torch.iinfo(getattr(torch, name)), G.iinfo(getattr(G, name))
    assert (o.bits, o.min, o.max, o.dtype) == (f.bits, f.min, f.max, f.dtype)
    assert repr(o) == repr(f)


def test_finfo_iinfo_refuse_the_other_kind() -> None:
    with pytest.raises(TypeError, match="floating point"):
        G.finfo(G.int32)
    with pytest.raises(TypeError, match="integer"):
        G.iinfo(G.float32)
    with pytest.raises(TypeError, match="bool"):
        G.iinfo(G.bool)


@pytest.mark.parametrize("spec", ["", ".3f", ">10.2e", "g"])
def test_format_of_0d_tensors_is_the_value(spec: str) -> None:
    t, g = _both(lambda M: M.tensor(3.14159, requires_grad=True))
    assert format(g, spec) == format(t, spec)
    assert f"{G.tensor(7):d}" == "7"
    assert f"{G.ones(2)}" == str(G.ones(2))


def test_format_spec_on_a_tensor_with_elements_is_refused() -> None:
    with pytest.raises(TypeError, match="unsupported format string"):
        f"{G.ones(1):.2f}"


# -- repr and set_printoptions ---------------------------------------------------------------------------
REPRS = [
    "tensor([0.001, 2.0])", "tensor([1e-5, 1.0])", "tensor([1e5, 1.0])", "tensor([123456789.0, 1.0])",
    "tensor([1.5, float('nan'), float('inf')])", "tensor([0.0, -0.0])", "tensor([float('nan')])",
    "tensor([1, 2, 3])", "tensor([True, False])", "tensor([[1.5, 2.25], [3.125, -4.0]])", "tensor(2.5)",
    "tensor([100.0, 2.0])", "tensor([1000.5, 1.25])", "tensor([[1e10]])", "arange(2000.)",
    "arange(2000).reshape(100, 20)", "arange(12.).reshape(2, 3, 2) * 1e-5", "arange(3000.).reshape(10, 10, 30) / 7",
    "arange(30.) / 7", "ones(2, 3, dtype=M.float64)", "ones(0, 3)", "arange(1100) * 1.5",
    "zeros(5, dtype=M.int32)", "ones(40, dtype=M.float64) / 3", "arange(25.).reshape(5, 5) - 12",
    "ones(3, requires_grad=True)", "ones(3, requires_grad=True) * 2", "ones(2, 2, dtype=M.float16) / 3",
    "arange(6, dtype=M.uint8).reshape(2, 3)", "arange(100.).reshape(1, 100) * 1.5",
]


@pytest.mark.parametrize("expr", REPRS)
def test_repr_matches_torch(expr: str) -> None:
    t, g = _both(lambda M: eval("M." + expr, {"M": M}))
    assert repr(g).replace("opgen.", "torch.") == repr(t)


@pytest.mark.parametrize("options", [
    {"precision": 2}, {"sci_mode": True}, {"sci_mode": False}, {"threshold": 5, "edgeitems": 2},
    {"linewidth": 30}, {"profile": "short"}, {"profile": "full"},
])
def test_set_printoptions_matches_torch(options: dict[str, Any]) -> None:
    torch.set_printoptions(**options)
    G.set_printoptions(**options)
    for expr in ("tensor([1.23456, 2.5, 1e-5])", "arange(20.) / 3", "arange(1200).reshape(40, 30)",
                 "tensor([1.5, 2.0])"):
        t, g = _both(lambda M, e=expr: eval("M." + e, {"M": M}))
        assert repr(g) == repr(t), (options, expr)


def test_set_printoptions_rejects_an_unknown_profile_and_resets() -> None:
    with pytest.raises(ValueError, match="profile"):
        G.set_printoptions(profile="tiny")
    G.set_printoptions(precision=1)
    G.set_printoptions(profile="default")
    assert formatting.OPTIONS.precision == 4


# -- autograd node names ---------------------------------------------------------------------------------
NODE_EXPRS = [
    "t * 2", "t * u", "t + 2", "t - 2", "t / 2", "t.sum()", "t.sum(1)", "t.mean()", "t.mean(1)", "t.max()",
    "t.max(1)[0]", "t.min()", "t.min(1)[0]", "t.clamp(0, 1)", "t.clip(0, 1)", "t.square()", "t ** 2",
    "t.pow(u)", "t.relu()", "t.exp()", "t.softmax(1)", "t.log_softmax(1)", "t.t()", "t.view(12)", "t[0]",
    "t.transpose(0, 1)", "t.unsqueeze(0)", "t.squeeze()", "t.expand(2, 3, 4)", "t.sort()[0]", "t.topk(2)[0]",
    "t.cumsum(1)", "t.prod()", "t.var()", "t.std(1)", "t.norm()", "t.abs()", "t.sigmoid()", "t.tanh()",
    "t.to(M.float64)", "M.remainder(t, u)", "M.remainder(t, 2)", "M.fmod(t, u)", "M.fmod(t, 2)",
    "M.cat([t, t])", "t.clone().fill_(1)", "t.clone().copy_(u)", "M.addcmul(t, t, u)", "M.logaddexp(t, u)",
    "t.median(1)[0]", "t.median()", "t.cummax(1)[0]", "M.linalg.inv(t[:, :3] + 3 * M.eye(3))",
    "t.div(u, rounding_mode='floor')", "t.lerp(u, 0.5)", "t.amax(1)", "t.logsumexp(1)", "t @ u.T",
    "t.masked_fill(u > 0, 1.0)", "t.index_select(0, M.tensor([0]))", "t.flip(0)", "t.roll(1)", "t.tril()",
    "M.addcdiv(t, t, u)", "t.kthvalue(2)[0]", "t.mode(1)[0]", "t.cummin(0)[0]", "t.var(unbiased=False)",
    "t.std(1, True)", "M.norm(t)", "t.norm(dim=1)", "t.movedim(0, 1)", "M.einsum('ij->i', t)",
    "M.linalg.det(t[:, :3])", "M.linalg.solve(t[:, :3] + 3 * M.eye(3), u[:, :2])", "M.linalg.qr(t)[0]",
    "M.linalg.svd(t)[0]", "M.linalg.cholesky(t[:, :3] @ t[:, :3].T + M.eye(3))",
]


@pytest.mark.parametrize("expr", NODE_EXPRS)
def test_autograd_node_names_match_torch(expr: str) -> None:
    names = []
    for M in (torch, G):
        t = M.tensor(np.linspace(-1, 1, 12).reshape(3, 4), dtype=M.float32, requires_grad=True) * 1
        u = M.tensor(np.linspace(0.5, 2, 12).reshape(3, 4), dtype=M.float32)
        r = eval(expr, {"M": M, "t": t, "u": u})
        names.append(type(r.grad_fn).__name__)
        if M is G:
            assert r.grad_fn.name() == type(r.grad_fn).__name__ == type(r.grad_fn).__qualname__
    assert names[1] == names[0]


# -- errors ----------------------------------------------------------------------------------------------
ERRORS = [
    "M.add(M.ones(3, dtype=M.int64), M.ones(3, dtype=M.int64), alpha=0.5)",
    "M.sub(M.ones(3, dtype=M.int32), 1, alpha=0.5)",
    "M.ones(3, dtype=M.int64).add_(M.ones(3, dtype=M.int64), alpha=1.5)",
    "M.ones(3).gather(0, M.tensor([[0]]))",
    "M.einsum('ij,jk->ik', M.ones(2, 3), M.ones(2, 3))", "M.einsum('ij,jk', M.ones(2, 3))",
    "M.einsum('ij->', M.ones(2))", "M.einsum('ii->j', M.ones(2, 2))",
    "M.movedim(M.ones(2, 3), 0, 2)", "M.movedim(M.ones(2, 3), (0, 1), (1, 1))",
    "M.diag(M.ones(2, 2, 2))", "M.cdist(M.ones(2, 3), M.ones(2, 4))",
    "M.repeat_interleave(M.ones(3), M.tensor([1, 2]))", "M.masked_select(M.ones(3), M.ones(3))",
    "M.isclose(M.ones(3), M.ones(3, dtype=M.float64))", "M.randperm(-1)", "M.bucketize(M.ones(3), M.ones(2, 2))",
    "M.kthvalue(M.ones(3), 5)", "M.clamp(M.ones(3), M.ones(2))", "M.ones(3, dtype=M.int64).var()",
    "M.outer(M.ones(2, 2), M.ones(3))", "M.meshgrid(M.ones(2, 2), indexing='ij')",
    "M.meshgrid(M.ones(2), indexing='x')", "M.linalg.inv(M.ones(2, 3))", "M.linalg.det(M.ones(2, 3))",
    "M.linalg.solve(M.eye(2), M.ones(3))", "M.linalg.solve(M.eye(2), M.ones(2, dtype=M.float64))",
    "M.linalg.qr(M.ones(2))", "M.linalg.svd(M.ones(2))", "M.linalg.cholesky(M.ones(2, 3))",
    "M.linalg.inv(M.ones(2, 2, dtype=M.int64))", "M.linalg.qr(M.ones(2, 2), mode='x')",
    "M.linalg.matrix_norm(M.ones(3))", "M.ones(2, 3).cummax(2)", "M.ones(3).clamp_(M.ones(2))",
    "M.ones(3, requires_grad=True).clamp_(0, 1)",
]


@pytest.mark.parametrize("expr", ERRORS)
def test_errors_have_torch_types(expr: str) -> None:
    with pytest.raises(Exception) as expected:
        eval(expr, {"M": torch})
    with pytest.raises(Exception) as actual:
        eval(expr, {"M": G})
    assert isinstance(actual.value, expected.type.__mro__[0] if not expected.type.__name__.startswith("_")
                      else RuntimeError), (expected.value, actual.value)


@pytest.mark.parametrize("expr", ["M.linalg.inv(M.zeros(2, 2))", "M.linalg.cholesky(-M.eye(2))",
                                  "M.linalg.solve(M.zeros(2, 2), M.ones(2))"])
def test_singular_matrices_raise_linalg_error(expr: str) -> None:
    with pytest.raises(torch.linalg.LinAlgError):
        eval(expr, {"M": torch})
    with pytest.raises(G.linalg.LinAlgError) as e:
        eval(expr, {"M": G})
    assert isinstance(e.value, RuntimeError)


# -- bool results, varargs functions, randperm ----------------------------------------------------------

def test_equal_and_allclose_return_python_bools() -> None:
    a = G.tensor([1.0, 2.0, float("nan")])
    assert G.equal(a[:2], G.tensor([1.0, 2.0])) is True
    assert G.equal(a, a[:2]) is False and a.equal(a) is False  # NaN != NaN, as torch
    assert G.allclose(a, a, equal_nan=True) is True and G.allclose(a, a) is False
    assert G.allclose(G.tensor([1.0]), G.tensor([1.0 + 1e-6])) is True
    assert a.allclose(a + 1, atol=1.0, equal_nan=True) is True


def test_nonzero_as_tuple() -> None:
    x = np.array([[0, 1, 0], [2, 0, 3]])
    for as_tuple in (True, False):
        t, g = torch.nonzero(torch.tensor(x), as_tuple=as_tuple), G.nonzero(G.tensor(x), as_tuple=as_tuple)
        if as_tuple:
            assert isinstance(g, tuple) and len(g) == 2
            for a, b in zip(g, t, strict=True):
                np.testing.assert_array_equal(a.numpy(), b.numpy())
        else:
            np.testing.assert_array_equal(g.numpy(), t.numpy())
    assert [a.tolist() for a in G.tensor(5).nonzero(as_tuple=True)] == [[0]]


def test_unique_returns_as_torch() -> None:
    x = [3, 1, 3, 2, 1]
    for kw in ({}, {"return_inverse": True}, {"return_counts": True}, {"return_inverse": True, "return_counts": True}):
        t, g = torch.unique(torch.tensor(x), **kw), G.unique(G.tensor(x), **kw)
        ts, gs = (t, g) if isinstance(t, tuple) else ((t,), (g,))
        assert len(gs) == len(ts)
        for a, b in zip(gs, ts, strict=True):
            np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_randperm_is_a_permutation_reproducible_with_the_seed() -> None:
    G.manual_seed(3)
    p = G.randperm(50)
    assert p.dtype is G.int64 and sorted(p.tolist()) == list(range(50))
    G.manual_seed(3)
    assert G.randperm(50).tolist() == p.tolist()
    assert G.randperm(4, dtype=G.float32).dtype is G.float32
    gen = G.Generator().manual_seed(1)
    assert G.randperm(10, generator=gen).tolist() == G.randperm(10, generator=G.Generator().manual_seed(1)).tolist()
    assert G.randperm(0).shape == (0,)


def test_einsum_meshgrid_broadcast_gradients_flow() -> None:
    a = G.randn(2, 3, dtype=G.float64, requires_grad=True)
    b = G.randn(3, 4, dtype=G.float64, requires_grad=True)
    from runtime.autograd.gradcheck import gradcheck
    assert gradcheck(lambda x, y: G.einsum("ij,jk->ik", x, y), [a, b])
    assert gradcheck(lambda x: G.einsum("ij,ij->i", x, x), [a])
    assert gradcheck(lambda x, y: G.meshgrid(x[0], y[:, 0], indexing="xy")[0] * 2, [a, b])
    assert gradcheck(lambda x, y: G.broadcast_tensors(x[:, :1], y[:2, :1].t())[0].sum(0), [a, b])
    assert tuple(G.broadcast_shapes((2, 1), (3,), 1)) == tuple(torch.broadcast_shapes((2, 1), (3,), 1))


# -- torch.linalg ----------------------------------------------------------------------------------------

def _spd(M: Any, n: int = 3) -> Any:
    a = M.tensor(np.random.default_rng(0).uniform(-1, 1, (n, n)))
    return a @ a.T + M.eye(n, dtype=M.float64)


LINALG = {
    "inv": lambda M, A: M.linalg.inv(A), "det": lambda M, A: M.linalg.det(A), "tdet": lambda M, A: A.det(),
    "solve": lambda M, A: M.linalg.solve(A, A[:, :2]), "solve_left": lambda M, A: M.linalg.solve(A, A[:2], left=False),
    "cholesky": lambda M, A: M.linalg.cholesky(A), "cholesky_upper": lambda M, A: M.linalg.cholesky(A, upper=True),
    "qr": lambda M, A: M.linalg.qr(A), "svdvals": lambda M, A: M.linalg.svdvals(A),
    "svd_S": lambda M, A: M.linalg.svd(A).S, "norm": lambda M, A: M.linalg.norm(A),
    "norm_2": lambda M, A: M.linalg.norm(A, 2), "norm_nuc": lambda M, A: M.linalg.norm(A, "nuc"),
    "norm_1": lambda M, A: M.linalg.matrix_norm(A, 1), "norm_m_inf": lambda M, A: M.linalg.matrix_norm(A, -math.inf),
    "vector_norm": lambda M, A: M.linalg.vector_norm(A, 0.5, dim=1, keepdim=True),
    "tnorm_fro": lambda M, A: A.norm(p="fro", dim=(0, 1)), "tnorm_dim": lambda M, A: M.norm(A, dim=1),
}


@pytest.mark.parametrize("name", LINALG)
def test_linalg_matches_torch(name: str) -> None:
    expected = LINALG[name](torch, _spd(torch))
    actual = LINALG[name](G, _spd(G))
    G.testing.assert_close(actual, G.tensor(expected.numpy()) if not isinstance(expected, tuple) else
                           tuple(G.tensor(e.numpy()) for e in expected))


@pytest.mark.parametrize("name", ["inv", "det", "solve", "solve_left", "cholesky", "cholesky_upper", "qr",
                                  "svdvals", "norm_2", "norm_nuc"])
def test_linalg_gradients_match_torch(name: str) -> None:
    grads = []
    for M in (torch, G):
        x = M.tensor(np.random.default_rng(1).uniform(-1, 1, (3, 3)), requires_grad=True)
        A = x @ x.T + M.eye(3, dtype=M.float64)  # symmetric positive-definite, as cholesky needs
        out = LINALG[name](M, A)
        outs = out if isinstance(out, tuple) else (out,)
        sum(((o * o).sum() if o.dim() else o) for o in outs).backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6, atol=1e-8)


# -- testing.assert_close -----------------------------------------------------------------------------------
CLOSE_FAILS = [
    "M.testing.assert_close(M.tensor([1., 2, 3]), M.tensor([1., 2, 4]))",
    "M.testing.assert_close(M.tensor([1, 2, 3]), M.tensor([1, 2, 4]))",
    "M.testing.assert_close(M.ones(2), M.ones(3))",
    "M.testing.assert_close(M.ones(2), M.ones(2, dtype=M.float64))",
    "M.testing.assert_close(1.0, 1.1)",
    "M.testing.assert_close([M.ones(2), 1], [M.ones(2), 2])",
    "M.testing.assert_close({'a': M.ones(2)}, {'a': M.zeros(2)})",
    "M.testing.assert_close(M.tensor([float('nan'), 1.0]), M.tensor([float('nan'), 1.0]))",
]


@pytest.mark.parametrize("expr", CLOSE_FAILS)
def test_assert_close_fails_as_torch(expr: str) -> None:
    with pytest.raises(AssertionError) as expected:
        eval(expr, {"M": torch})
    with pytest.raises(AssertionError) as actual:
        eval(expr, {"M": G})
    assert str(actual.value).replace("opgen.", "torch.") == str(expected.value)


def test_assert_close_passes_within_tolerance() -> None:
    G.testing.assert_close(G.tensor([1.0, 2.0]), G.tensor([1.0, 2.0 + 1e-6]))
    G.testing.assert_close(G.tensor([1.0, float("nan")]), G.tensor([1.0, float("nan")]), equal_nan=True)
    G.testing.assert_close(G.tensor([1.0]), G.tensor([1.1]), rtol=0.2, atol=0.0)
    G.testing.assert_close(G.ones(2), G.ones(2, dtype=G.float64), check_dtype=False)
    G.testing.assert_close((G.ones(2), {"k": 3}), (G.ones(2), {"k": 3}))
    with pytest.raises(ValueError, match="atol"):
        G.testing.assert_close(G.ones(1), G.ones(1), rtol=0.1)
    with pytest.raises(AssertionError, match="custom"):
        G.testing.assert_close(G.ones(1), G.zeros(1), msg="custom")


@pytest.mark.parametrize("full_matrices", [True, False])
def test_svd_gradient_of_non_square_input_matches_torch(full_matrices: bool) -> None:
    a = np.random.default_rng(2).standard_normal((4, 3))
    grads = []
    for M in (torch, G):
        A = M.tensor(a, requires_grad=True)
        U, S, Vh = M.linalg.svd(A, full_matrices=full_matrices)
        k = S.shape[-1]
        # gauge-invariant: the projector onto the left singular space, weighted, plus the values
        P = (U[:, :k] * S) @ U[:, :k].T
        ((P * P).sum() + (Vh[:k].T @ Vh[:k]).sum() + S.sum()).backward()
        grads.append(A.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6, atol=1e-8)
