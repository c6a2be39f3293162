"""The ops of native_functions.yaml's "PyTorch compatibility: more" section and the binding forms added with
them (`x.var(1, True, True)`, `G.max(a, b)`, `G.where(cond)`), each compared with torch itself: values,
dtypes, shapes, gradients (same upstream gradient through both) and the errors of bad input."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import generated as G

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(12)
X34 = RNG.normal(size=(3, 4)).astype(np.float64)
Y34 = RNG.normal(size=(3, 4)).astype(np.float64)
V3 = RNG.normal(size=(2, 3)).astype(np.float64)
W3 = RNG.normal(size=(2, 3)).astype(np.float64)
SQ = (RNG.normal(size=(3, 3)) + 3 * np.eye(3)).astype(np.float64)

# name -> (inputs, function of (module, *tensors)); each input gets requires_grad in the gradient test
CASES: dict[str, tuple[tuple[np.ndarray, ...], Callable[..., Any]]] = {
    "fliplr": ((X34,), lambda M, x: M.fliplr(x)),
    "flipud": ((X34,), lambda M, x: x.flipud()),
    "hstack": ((X34, Y34), lambda M, x, y: M.hstack([x, y])),
    "vstack": ((X34[0], Y34[1]), lambda M, x, y: M.vstack((x, y))),
    "dstack": ((X34, Y34), lambda M, x, y: M.dstack([x, y])),
    "column_stack": ((X34[0], Y34), lambda M, x, y: M.column_stack([x[:3], y])),
    "atleast_2d": ((X34[0],), lambda M, x: M.atleast_2d(x)),
    "atleast_3d": ((X34,), lambda M, x: M.atleast_3d(x)),
    "swapaxes": ((X34,), lambda M, x: x.swapaxes(0, 1)),
    "swapdims": ((X34,), lambda M, x: M.swapdims(x, 1, 0)),
    "broadcast_to": ((X34[0],), lambda M, x: M.broadcast_to(x, (2, 4))),
    "unfold": ((X34,), lambda M, x: x.unfold(1, 2, 1)),
    "unfold_step": ((X34,), lambda M, x: x.t().unfold(0, 2, 2)),
    "clamp_min": ((X34,), lambda M, x: x.clamp_min(0.1)),
    "clamp_max": ((X34,), lambda M, x: M.clamp_max(x, -0.2)),
    "hypot": ((X34, Y34), lambda M, x, y: M.hypot(x, y)),
    "cumprod": ((X34,), lambda M, x: M.cumprod(x, 1)),
    "cumprod_dtype": ((X34,), lambda M, x: x.cumprod(dim=0, dtype=M.float32)),
    "take": ((X34,), lambda M, x: M.take(x, M.tensor([[0, -1], [5, 6]]))),
    "nansum": ((X34,), lambda M, x: M.nansum(x, 1)),
    "nansum_keep": ((X34,), lambda M, x: x.nansum(dim=(0, 1), keepdim=True)),
    "aminmax": ((X34,), lambda M, x: M.aminmax(x, dim=1).max),
    "aminmax_all": ((X34,), lambda M, x: x.aminmax().min),
    "var_mean": ((X34,), lambda M, x: M.var_mean(x, 1)[0] + M.var_mean(x, 1)[1]),
    "var_mean_pos": ((X34,), lambda M, x: M.var_mean(x, 0, False, True)[0]),
    "std_mean": ((X34,), lambda M, x: M.std_mean(x, dim=0, correction=0)[0]),
    "std_mean_all": ((X34,), lambda M, x: M.stack(list(M.std_mean(x)))),
    "var_positional": ((X34,), lambda M, x: x.var(1, True, True)),
    "std_positional": ((X34,), lambda M, x: M.std(x, 0, False, True)),
    "max_other": ((X34, Y34), lambda M, x, y: M.max(x, y)),
    "min_other": ((X34, Y34), lambda M, x, y: x.min(y)),
    "max_other_kw": ((X34, Y34), lambda M, x, y: M.max(x, other=y)),
    "round_decimals": ((X34,), lambda M, x: M.round(x * 100, decimals=-1) + x.round(decimals=2)),
    "index_fill": ((X34,), lambda M, x: x.index_fill(1, M.tensor([0, 2]), -1.5)),
    "index_fill_tensor": ((X34,), lambda M, x: M.index_fill(x, 0, M.tensor([1]), M.tensor(2.0))),
    "cosine_similarity": ((X34, Y34), lambda M, x, y: M.nn.functional.cosine_similarity(x, y)),
    "cosine_similarity_dim0": ((X34, Y34), lambda M, x, y: M.cosine_similarity(x, y, dim=0)),
    "pairwise_distance": ((X34, Y34), lambda M, x, y: M.nn.functional.pairwise_distance(x, y, p=1.0)),
    "glu": ((X34,), lambda M, x: M.nn.functional.glu(x, dim=1)),
    "threshold": ((X34,), lambda M, x: M.nn.functional.threshold(x, 0.2, -3.0)),
    "softmin": ((X34,), lambda M, x: M.nn.functional.softmin(x, dim=1)),
    "softsign": ((X34,), lambda M, x: M.nn.functional.softsign(x)),
    "tanhshrink": ((X34,), lambda M, x: M.nn.functional.tanhshrink(x)),
    "trace": ((SQ,), lambda M, x: M.trace(x)),
    "mv": ((SQ, SQ[0]), lambda M, a, v: M.mv(a, v)),
    "inverse": ((SQ,), lambda M, x: x.inverse()),
    "linalg_cross": ((V3, W3), lambda M, a, b: M.linalg.cross(a, b)),
    "linalg_cross_bcast": ((V3, W3[:1]), lambda M, a, b: M.linalg.cross(a, b, dim=1)),
    "matrix_power": ((SQ,), lambda M, x: M.linalg.matrix_power(x, 3)),
    "matrix_power_neg": ((SQ,), lambda M, x: M.linalg.matrix_power(x, -2)),
    "matrix_power_zero": ((SQ,), lambda M, x: M.linalg.matrix_power(x, 0) + x),
}


def _run(M: Any, name: str, grad: bool) -> tuple[Any, list[Any]]:
    arrays, fn = CASES[name]
    ts = [M.tensor(a.copy(), requires_grad=grad) for a in arrays]
    return fn(M, *ts), ts


@pytest.mark.parametrize("name", CASES)
def test_values_match_torch(name: str) -> None:
    want, _ = _run(torch, name, False)
    got, _ = _run(G, name, False)
    assert list(got.shape) == list(want.shape)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", [n for n in CASES if n not in ("round_decimals",)])
def test_gradients_match_torch(name: str) -> None:
    want, want_in = _run(torch, name, True)
    got, got_in = _run(G, name, True)
    upstream = RNG.normal(size=tuple(want.shape))
    want.backward(torch.tensor(upstream, dtype=want.dtype))
    got.backward(G.tensor(upstream, dtype=got.dtype))
    for w, g in zip(want_in, got_in, strict=True):
        if w.grad is None:
            assert g.grad is None or not g.grad.abs().sum().item()
            continue
        np.testing.assert_allclose(g.grad.numpy(), w.grad.numpy(), rtol=1e-6, atol=1e-9)


def test_cumprod_gradient_through_zeros() -> None:
    a = np.array([[2.0, 0.0, 3.0, 0.0], [1.0, -1.0, 0.0, 5.0]])
    x, t = G.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    G.cumprod(x, 1).sum().backward()
    torch.cumprod(t, 1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy())


def test_unfold_is_a_view() -> None:
    x = G.arange(6.0)
    u = x.unfold(0, 3, 2)
    x[2] = 100.0
    assert u.tolist() == [[0.0, 1.0, 100.0], [100.0, 3.0, 4.0]]


IN_PLACE: dict[str, Callable[..., Any]] = {
    "scatter_src": lambda M, x: x.scatter_(1, M.tensor([[0, 2], [1, 0], [3, 3]]), M.ones(3, 2, dtype=x.dtype)),
    "scatter_value": lambda M, x: x.scatter_(0, M.tensor([[2, 0, 1, 0]]), 7.0),
    "scatter_add_": lambda M, x: x.scatter_add_(1, M.tensor([[0, 0], [1, 1], [2, 2]]), M.ones(3, 2, dtype=x.dtype)),
    "index_add_": lambda M, x: x.index_add_(0, M.tensor([0, 2, 0]), M.ones(3, 4, dtype=x.dtype), alpha=2),
    "index_fill_": lambda M, x: x.index_fill_(1, M.tensor([3]), 0.5),
    "clamp_min_": lambda M, x: x.clamp_min_(0.0),
    "clamp_max_": lambda M, x: M.clamp_max_(x, 0.0),
}


@pytest.mark.parametrize("name", IN_PLACE)
def test_in_place_forms(name: str) -> None:
    xt, xg = torch.tensor(X34), G.tensor(X34)
    rt, rg = IN_PLACE[name](torch, xt), IN_PLACE[name](G, xg)
    assert rg is xg and rt is xt
    np.testing.assert_allclose(xg.numpy(), xt.numpy())


def test_in_place_index_ops_record_history() -> None:
    w = G.tensor(X34, requires_grad=True)
    x = w * 1.0
    x.index_add_(0, G.tensor([0, 2]), G.ones(2, 4, dtype=G.float64))
    x.scatter_(1, G.tensor([[0], [1], [2]]), 0.0)
    x.sum().backward()
    wt = torch.tensor(X34, requires_grad=True)
    xt = wt * 1.0
    xt.index_add_(0, torch.tensor([0, 2]), torch.ones(2, 4, dtype=torch.float64))
    xt.scatter_(1, torch.tensor([[0], [1], [2]]), 0.0)
    xt.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), wt.grad.numpy())


def test_where_with_condition_only_and_max_positional_forms() -> None:
    c = np.array([[True, False], [False, True]])
    assert [t.tolist() for t in G.where(G.tensor(c))] == [t.tolist() for t in torch.where(torch.tensor(c))]
    x = G.tensor(X34)
    assert G.max(x, 1).indices.tolist() == torch.max(torch.tensor(X34), 1).indices.tolist()
    assert x.max(dim=0)[0].tolist() == torch.tensor(X34).max(dim=0)[0].tolist()
    assert G.max(x).item() == torch.tensor(X34).max().item()


ERRORS: dict[str, Callable[[Any], Any]] = {
    "fliplr_1d": lambda M: M.fliplr(M.ones(3)),
    "take_oob": lambda M: M.take(M.ones(2, 2), M.tensor([4])),
    "unfold_too_big": lambda M: M.ones(3).unfold(0, 4, 1),
    "glu_odd": lambda M: M.nn.functional.glu(M.ones(2, 3)),
    "cross_len": lambda M: M.linalg.cross(M.ones(2, 4), M.ones(2, 4)),
    "cross_ndim": lambda M: M.linalg.cross(M.ones(2, 3), M.ones(3)),
    "matrix_power_rect": lambda M: M.linalg.matrix_power(M.ones(2, 3), 2),
    "trace_3d": lambda M: M.trace(M.ones(2, 2, 2)),
    "max_other_shape": lambda M: M.max(M.ones(2, 3), M.ones(4)),
    "index_fill_2d_index": lambda M: M.ones(3).index_fill(0, M.tensor([[0]]), 1.0),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_match_torch_types(name: str) -> None:
    with pytest.raises(Exception) as want:
        ERRORS[name](torch)
    with pytest.raises(Exception) as got:
        ERRORS[name](G)
    assert type(got.value).__name__ == type(want.value).__name__, (got.value, want.value)


def test_type_strings_and_new_tensor() -> None:
    for dtype in ("float32", "float64", "int64", "int32", "bool", "uint8", "float16"):
        assert G.ones(1, dtype=getattr(G, dtype)).type() == torch.ones(1, dtype=getattr(torch, dtype)).type()
    assert G.ones(2).type("torch.LongTensor").dtype is G.int64
    x = G.ones(2, dtype=G.float64)
    n = x.new_tensor([1, 2])
    assert n.dtype is G.float64 and n.tolist() == [1.0, 2.0] and not n.requires_grad
    assert G.is_tensor(x) and not G.is_tensor([1.0]) and G.numel(G.ones(2, 3)) == 6
    with pytest.raises(TypeError):
        G.numel([1, 2])


def test_prelu_module_matches_torch() -> None:
    x = np.linspace(-2, 2, 24).reshape(2, 3, 4)
    mg, mt = G.nn.PReLU(3, init=0.1), torch.nn.PReLU(3, init=0.1)
    yg, yt = mg(G.tensor(x, dtype=G.float32)), mt(torch.tensor(x, dtype=torch.float32))
    np.testing.assert_allclose(yg.detach().numpy(), yt.detach().numpy(), rtol=1e-6)
    yg.sum().backward()
    yt.sum().backward()
    np.testing.assert_allclose(mg.weight.grad.numpy(), mt.weight.grad.numpy(), rtol=1e-5)
    assert repr(mg) == repr(mt)


def test_variable_type_as_ndimension_is_nonzero_dist() -> None:
    base = G.ones(2)
    v = G.autograd.Variable(base, requires_grad=True)
    assert v is not base and v.requires_grad and v.is_leaf and not base.requires_grad
    assert v.data_ptr() == base.data_ptr()
    y = G.autograd.Variable(v * 2)
    assert y.grad_fn is None and not y.requires_grad
    with pytest.raises(TypeError):
        G.autograd.Variable([1.0])
    assert G.ones(2).type_as(G.tensor([1])).dtype is G.int64 and G.ones(2, 3).ndimension() == 2
    assert G.is_nonzero(G.tensor([2])) is True and G.is_nonzero(G.tensor(0.0)) is False
    for bad in (G.ones(2), G.ones(0)):
        with pytest.raises(RuntimeError):
            G.is_nonzero(bad)
    a, b = X34, Y34[0]
    for p in (2, 1, 0, float("inf")):
        assert G.dist(G.tensor(a), G.tensor(b), p).item() == pytest.approx(
            torch.dist(torch.tensor(a), torch.tensor(b), p).item())


def test_linear_lr_matches_torch() -> None:
    got, want = [], []
    for M, out in ((G, got), (torch, want)):
        p = M.ones(1, requires_grad=True)
        opt = M.optim.SGD([p], lr=0.1)
        sched = M.optim.lr_scheduler.LinearLR(opt, start_factor=0.2, end_factor=0.9, total_iters=3)
        for _ in range(6):
            opt.step()
            sched.step()
            out.append(sched.get_last_lr()[0])
    assert got == pytest.approx(want)
    with pytest.raises(ValueError):
        G.optim.lr_scheduler.LinearLR(G.optim.SGD([G.ones(1, requires_grad=True)], lr=0.1), start_factor=0.0)


# -- a Python number as `self` (found by the exhaustive OpInfo run's reference inputs) ---------------------------

NUMBER_SELF = ["add", "sub", "mul", "div", "true_divide", "floor_divide", "multiply", "subtract", "divide", "pow",
               "remainder", "xlogy", "bitwise_and", "bitwise_or", "bitwise_xor", "bucketize", "isin"]


@pytest.mark.parametrize("name", NUMBER_SELF)
@pytest.mark.parametrize("number, array", [(2.5, np.array([1.0, 2.0, 4.0])), (3, np.array([1, 2, 5])),
                                           (3, np.array([1.0, 2.0, 4.0], dtype=np.float16)),
                                           (-2, np.array([1, 2, 5], dtype=np.int16))])
def test_number_as_self(name: str, number: Any, array: np.ndarray) -> None:
    """`torch.add(2, t)`, `torch.pow(2, t)`: PyTorch takes a number for `self` of these ops (as a wrapped number,
    which promotes as a Python scalar); opgen raised TypeError."""
    try:
        expected = getattr(torch, name)(number, torch.from_numpy(array))
    except (RuntimeError, TypeError):
        with pytest.raises((RuntimeError, TypeError)):
            getattr(G, name)(number, G.tensor(array))
        return
    actual = getattr(G, name)(number, G.tensor(array))
    assert str(actual.dtype).removeprefix("opgen.") == str(expected.dtype).removeprefix("torch.")
    assert tuple(actual.shape) == tuple(expected.shape)
    np.testing.assert_allclose(actual.numpy().astype(np.float64), expected.numpy().astype(np.float64), rtol=1e-3)


def test_number_as_self_gradient_and_refusals() -> None:
    x = G.tensor([1.0, 2.0], requires_grad=True)
    (G.pow(2.0, x) * G.sub(3, x)).sum().backward()
    tx = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    (torch.pow(2.0, tx) * torch.sub(3, tx)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)
    out = G.empty(2)
    assert G.add(2, G.tensor([1.0, 2.0]), out=out) is out and out.tolist() == [3.0, 4.0]
    with pytest.raises(TypeError):
        G.atan2(2.5, G.tensor([1.0]))  # PyTorch refuses a number there too
    with pytest.raises(TypeError):
        G.add(2, 3)  # no tensor at all
