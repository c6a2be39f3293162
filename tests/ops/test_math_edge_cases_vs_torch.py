"""Edge cases of math, indexing, reductions and factories where a wrong answer or a refusal is easy,
each against PyTorch's answer, and a few properties of the ops (torch is the oracle; skipped without)."""

from __future__ import annotations

import numpy as np
import pytest

import generated as G

torch = pytest.importorskip("torch")


def _same(g, t, tol: float = 1e-6) -> None:
    assert str(g.dtype).removeprefix("opgen.") == str(t.dtype).removeprefix("torch.")
    assert tuple(g.shape) == tuple(t.shape)
    np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


def test_logsumexp_of_a_0d_tensor() -> None:
    x = G.tensor(100.0, requires_grad=True)
    y = G.logsumexp(x, 0)
    y.backward()
    tx = torch.tensor(100.0, requires_grad=True)
    ty = torch.logsumexp(tx, 0)
    ty.backward()
    _same(y, ty)
    _same(x.grad, tx.grad)


@pytest.mark.parametrize("name", ["all", "any"])
@pytest.mark.parametrize("dim", [(0, 2), (1,), (), (-1, 0)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_all_any_with_a_tuple_dim(name: str, dim: tuple[int, ...], keepdim: bool) -> None:
    a = (np.arange(24).reshape(2, 3, 4) % 5).astype(np.float32)
    _same(getattr(G, name)(G.tensor(a), dim, keepdim=keepdim), getattr(torch, name)(torch.tensor(a), dim,
                                                                                  keepdim=keepdim))


def test_index_select_of_a_0d_input() -> None:
    x = G.tensor(5.0, requires_grad=True)
    y = G.index_select(x, 0, G.tensor([0]))
    assert y.shape == ()
    y.backward()
    assert x.grad.item() == 1.0
    _same(y, torch.index_select(torch.tensor(5.0), 0, torch.tensor([0])))


def test_unfold_backward_of_a_0d_tensor() -> None:
    x = G.tensor(2.0, requires_grad=True)
    x.unfold(0, 1, 1).sum().backward()
    assert x.grad.item() == 1.0


@pytest.mark.parametrize("args", [(1.0, 5.000001, 2.0), (0.5, 3.7, 1.0), (0, 5, 1.5), (-2.7, 3.2, 1), (5.5,)])
def test_arange_with_an_integral_dtype_truncates_float_bounds(args) -> None:
    _same(G.arange(*args, dtype=G.int64), torch.arange(*args, dtype=torch.int64))


@pytest.mark.parametrize("args", [(4.3, 0, 50), (0, 7.9, 10), (-3.5, 7.9, 10), (2.5, 2.5, 1)])
@pytest.mark.parametrize("dtype", ["int64", "int32"])
def test_linspace_with_an_integral_dtype(args, dtype: str) -> None:
    _same(G.linspace(*args, dtype=getattr(G, dtype)), torch.linspace(*args, dtype=getattr(torch, dtype)))


def test_int_tensor_to_a_negative_int_tensor_power() -> None:
    b, e = [1, -1, 2, -1, 3, 0, -2], [-1, -3, -1, -2, 2, -1, -1]
    _same(G.tensor(b) ** G.tensor(e), torch.tensor(b) ** torch.tensor(e))
    _same(2 ** G.tensor([-1, 2]), 2 ** torch.tensor([-1, 2]))
    with pytest.raises(RuntimeError):  # a negative Python int exponent is still refused, as in PyTorch
        G.tensor([2, 3]) ** -1


def test_gather_and_scatter_take_an_int32_index() -> None:
    a = np.arange(12.0).reshape(4, 3)
    idx = np.array([[0, 1, 3]], dtype=np.int32)
    _same(G.gather(G.tensor(a), 0, G.tensor(idx)), torch.gather(torch.tensor(a), 0, torch.tensor(idx)))
    _same(G.scatter(G.tensor(a), 0, G.tensor(idx), G.ones(1, 3, dtype=G.float64)),
          torch.scatter(torch.tensor(a), 0, torch.tensor(idx), torch.ones(1, 3, dtype=torch.float64)))


def test_sign_of_bool() -> None:
    b = [True, False, True]
    _same(G.sign(G.tensor(b)), torch.sign(torch.tensor(b)))


@pytest.mark.parametrize("name", ["var", "std", "var_mean", "std_mean"])
@pytest.mark.parametrize("unbiased", [True, False])
def test_var_std_with_a_positional_unbiased(name: str, unbiased: bool) -> None:
    a = np.random.default_rng(0).standard_normal((4, 5))
    g, t = getattr(G, name)(G.tensor(a), unbiased), getattr(torch, name)(torch.tensor(a), unbiased)
    for x, y in zip(g if isinstance(g, tuple) else (g,), t if isinstance(t, tuple) else (t,), strict=True):
        _same(x, y)
    if name in ("var", "std"):
        _same(getattr(G.tensor(a), name)(unbiased), getattr(torch.tensor(a), name)(unbiased))


@pytest.mark.parametrize("reduce", ["add", "multiply"])
def test_scatter_with_reduce(reduce: str) -> None:
    a = np.arange(1.0, 13.0).reshape(4, 3)
    idx = np.array([[0, 1, 0], [0, 2, 3]])
    src = np.full((2, 3), 2.0)
    _same(G.scatter(G.tensor(a), 0, G.tensor(idx), G.tensor(src), reduce=reduce),
          torch.scatter(torch.tensor(a), 0, torch.tensor(idx), torch.tensor(src), reduce=reduce))
    _same(G.tensor(a).scatter_(0, G.tensor(idx), 3.0, reduce=reduce),
          torch.tensor(a).scatter_(0, torch.tensor(idx), 3.0, reduce=reduce))


def test_scalar_tensor_takes_device_and_dtype() -> None:
    _same(G.scalar_tensor(-5, device="cpu", dtype=G.float64), torch.scalar_tensor(-5, device="cpu",
                                                                                  dtype=torch.float64))
    _same(G.scalar_tensor(3), torch.scalar_tensor(3))
    assert G.scalar_tensor(1.5, requires_grad=True).requires_grad


def test_tensor_where_method_takes_self_as_the_value() -> None:
    a = np.array([1.0, -2.0, 3.0])
    _same(G.tensor(a).where(G.tensor(a) > 0, G.zeros(3, dtype=G.float64)),
          torch.tensor(a).where(torch.tensor(a) > 0, torch.zeros(3, dtype=torch.float64)))


def test_out_for_an_op_without_an_out_overload() -> None:
    x = G.tensor([0.5, 1.5])
    out = G.empty(0)
    assert G.special.i0e(x, out=out) is out
    _same(out, torch.special.i0e(torch.tensor([0.5, 1.5])))
    with pytest.raises(RuntimeError):  # float into int64: refused as PyTorch does
        G.logit(x, out=G.empty(2, dtype=G.int64))
    with pytest.raises(RuntimeError):  # out= does not differentiate
        G.logit(G.ones(2, requires_grad=True), out=G.empty(2))


def test_inplace_forms_write_back_and_refuse_narrower_dtypes() -> None:
    x = G.tensor([0.25, 0.5])
    assert x.logit_() is x
    _same(x, torch.tensor([0.25, 0.5]).logit_())
    with pytest.raises(RuntimeError):
        G.tensor([1, 2]).logit_()


def test_scatter_reduce_gradients_match_torch() -> None:
    rng = np.random.default_rng(1)
    a, src = rng.standard_normal((4, 3)), rng.standard_normal((5, 3))
    idx = rng.integers(0, 4, (5, 3))
    for reduce in ("sum", "mean", "amax", "amin", "prod"):
        for include_self in (True, False):
            ga, gs = G.tensor(a, requires_grad=True), G.tensor(src, requires_grad=True)
            ta, ts = torch.tensor(a, requires_grad=True), torch.tensor(src, requires_grad=True)
            g = G.scatter_reduce(ga, 0, G.tensor(idx), gs, reduce, include_self=include_self)
            t = torch.scatter_reduce(ta, 0, torch.tensor(idx), ts, reduce, include_self=include_self)
            _same(g, t)
            w = rng.standard_normal(t.shape)
            (g * G.tensor(w)).sum().backward()
            (t * torch.tensor(w)).sum().backward()
            _same(ga.grad, ta.grad, 1e-6)
            _same(gs.grad, ts.grad, 1e-6)


def test_multinomial_bernoulli_normal_distributions() -> None:
    G.manual_seed(0)
    p = G.tensor([0.1, 0.2, 0.7])
    draws = G.multinomial(p, 20000, replacement=True).numpy()
    np.testing.assert_allclose(np.bincount(draws, minlength=3) / draws.size, [0.1, 0.2, 0.7], atol=0.02)
    rows = G.multinomial(G.tensor([[1.0, 0, 1], [0, 1, 1]]), 2).numpy()
    assert sorted(rows[0]) == [0, 2] and sorted(rows[1]) == [1, 2]
    b = G.bernoulli(G.full((20000,), 0.3)).numpy()
    assert abs(b.mean() - 0.3) < 0.02 and set(np.unique(b)) <= {0.0, 1.0}
    n = G.normal(G.full((20000,), 2.0), 3.0).numpy()
    assert abs(n.mean() - 2.0) < 0.1 and abs(n.std() - 3.0) < 0.1


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_sign_of_nan_is_zero_and_abs_gradient_there(dtype: str) -> None:
    """PyTorch's sign is (0 < x) - (x < 0): 0 at NaN (NumPy's is NaN); abs's gradient, g * sign(x), follows."""
    values = np.array([np.nan, -2.0, 0.0, 3.0], dtype=dtype)
    _same(G.sign(G.tensor(values)), torch.sign(torch.from_numpy(values)))
    _same(G.tensor(values).sgn(), torch.from_numpy(values).sgn())
    if dtype == "float64":
        x = G.tensor(values, requires_grad=True)
        x.abs().sum().backward()
        tx = torch.from_numpy(values).requires_grad_()
        tx.abs().sum().backward()
        _same(x.grad, tx.grad)


def test_diff_of_order_zero_and_negative() -> None:
    """diff with n=0 is the input itself (prepend/append left out, as PyTorch); a negative order is refused."""
    x = np.arange(25.0).reshape(5, 5)
    t = torch.diff(torch.from_numpy(x), 0, 0, torch.zeros(1, 5, dtype=torch.float64),
                   torch.zeros(2, 5, dtype=torch.float64))
    _same(G.diff(G.tensor(x), 0, 0, G.zeros(1, 5, dtype=G.float64), G.zeros(2, 5, dtype=G.float64)), t)
    with pytest.raises(RuntimeError):
        G.diff(G.tensor(x), -1)


@pytest.mark.parametrize("dtype", ["int32", "int16", "bool", "float32"])
def test_sum_to_size_of_the_same_size_keeps_the_dtype(dtype: str) -> None:
    """Nothing to sum: PyTorch returns the input (int32 stays int32); a real sum promotes integers to int64."""
    x = np.ones((5, 5), dtype=dtype)
    _same(G.tensor(x).sum_to_size([5, 5]), torch.from_numpy(x).sum_to_size([5, 5]))
    _same(G.tensor(x).sum_to_size([1, 5]), torch.from_numpy(x).sum_to_size([1, 5]))
    _same(G.tensor(x[0, 0]).sum_to_size([]), torch.from_numpy(np.array(x[0, 0])).sum_to_size([]))


@pytest.mark.parametrize("form", ["clamp_min", "clamp_max", "clamp_both", "clamp_min_fn", "clamp_max_fn",
                                  "clamp_inplace"])
def test_clamp_with_a_nan_tensor_bound_propagates_nan(form: str) -> None:
    """clamp.Tensor where a bound is NaN is NaN there (comparisons with NaN are false, so a `where` on
    `x < min` alone kept x)."""
    def run(M):
        x = M.tensor([-1.0, 0.5, 2.0, float("nan")])
        b = M.tensor([float("nan"), 0.0, float("nan"), 1.0])
        return {"clamp_min": lambda: M.clamp(x, min=b), "clamp_max": lambda: M.clamp(x, max=b),
                "clamp_both": lambda: M.clamp(x, min=M.zeros(4), max=b),
                "clamp_min_fn": lambda: M.clamp_min(x, b), "clamp_max_fn": lambda: M.clamp_max(x, b),
                "clamp_inplace": lambda: x.clone().clamp_(min=b)}[form]()
    _same(run(G), run(torch))
