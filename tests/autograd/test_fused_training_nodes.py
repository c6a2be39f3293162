"""Cross entropy over class indices and linear are one op and one backward node each (Note [Cross entropy as
one node] in runtime/kernels/nn_ops.py, Note [Linear as one node] in runtime/kernels/linalg.py): values and
gradients against PyTorch over reductions, class weights, ignored targets, extra dims, single samples and
input ranks; the graph they record; second derivatives; PyTorch's errors; and the weight gradient that
reaches a Linear layer without a copy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import generated as G
from runtime.autograd import engine
from runtime.autograd.gradcheck import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")
F = G.nn.functional
TF = torch.nn.functional


def _pair(x: np.ndarray, requires_grad: bool = True) -> tuple[Any, Any]:
    return G.tensor(x, requires_grad=requires_grad), torch.tensor(x, requires_grad=requires_grad)


def _close(ours: Any, theirs: Any, tol: float) -> None:
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tol, atol=tol)


# -- cross entropy --------------------------------------------------------------------------------------
CE_SHAPES = [((6, 5), (6,)), ((5,), ()), ((3, 5, 2, 4), (3, 2, 4)), ((0, 5), (0,))]


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-10), (np.float32, 1e-5)])
@pytest.mark.parametrize("shape,tshape", CE_SHAPES, ids=lambda s: "x".join(map(str, s)) or "0d")
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True], ids=["noweight", "weight"])
@pytest.mark.parametrize("ignore", [None, 2, -1], ids=["noignore", "ignore2", "ignore-1"])
def test_cross_entropy_matches_torch(dtype: Any, tol: float, shape: tuple[int, ...], tshape: tuple[int, ...],
                                     reduction: str, weighted: bool, ignore: int | None) -> None:
    rng = np.random.default_rng(len(shape) * 7 + len(reduction))
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    classes = shape[0] if len(shape) == 1 else shape[1]
    t = rng.integers(0, classes, tshape)
    if ignore is not None and t.size:
        t.reshape(-1)[:2] = ignore  # some targets ignored (-1 is also out of range: it must not be checked)
    kw = {"reduction": reduction, "ignore_index": -100 if ignore is None else ignore}
    w = rng.uniform(0.2, 2.0, classes).astype(dtype) if weighted else None
    (gx, tx) = _pair(x)
    ours = F.cross_entropy(gx, G.tensor(t), None if w is None else G.tensor(w), **kw)
    theirs = TF.cross_entropy(tx, torch.tensor(t), None if w is None else torch.tensor(w), **kw)
    _close(ours, theirs, tol)
    assert ours.dtype is getattr(G, np.dtype(dtype).name)
    upstream = rng.standard_normal(tuple(theirs.shape)).astype(dtype)
    ours.backward(G.tensor(upstream))
    theirs.backward(torch.tensor(upstream))
    _close(gx.grad, tx.grad, tol)


def test_cross_entropy_records_one_node() -> None:
    x = G.randn(4, 3, requires_grad=True)
    loss = F.cross_entropy(x, G.tensor([0, 2, 1, 2]))
    fn = loss.grad_fn
    assert fn.name() == "CrossEntropyIndicesBackward0"
    assert [e[0] for e in fn.next_functions] == [x.grad_fn or x._leaf_edge[0], None, None]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_second_derivative(reduction: str, weighted: bool) -> None:
    x = G.randn(3, 4, dtype=G.float64, requires_grad=True)
    t = G.tensor([0, 3, 1])
    w = G.rand(4, dtype=G.float64) + 0.5 if weighted else None

    def fn(x: Any) -> Any:
        return F.cross_entropy(x, t, w, reduction=reduction, ignore_index=1)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_cross_entropy_other_forms_still_match_torch() -> None:
    """Label smoothing and probability targets take the composite."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 5))
    t = np.array([0, 4, 2, 1])
    probs = rng.dirichlet(np.ones(5), 4)
    for make in (lambda L, x, T: L.nn.functional.cross_entropy(x, T(t), label_smoothing=0.1),
                 lambda L, x, T: L.nn.functional.cross_entropy(x, T(probs))):
        gx, tx = _pair(x)
        ours, theirs = make(G, gx, G.tensor), make(torch, tx, torch.tensor)
        _close(ours, theirs, 1e-10)
        ours.backward()
        theirs.backward()
        _close(gx.grad, tx.grad, 1e-10)


def test_cross_entropy_weight_that_requires_grad_is_differentiated() -> None:
    """A class weight that requires grad (PyTorch refuses it) keeps the composite, which differentiates it."""
    x = G.randn(4, 3, dtype=G.float64, requires_grad=True)
    w = (G.rand(3, dtype=G.float64) + 0.5).requires_grad_()
    t = G.tensor([0, 2, 1, 2])
    assert F.cross_entropy(x, t, w).grad_fn.name() != "CrossEntropyIndicesBackward0"
    assert gradcheck(lambda x, w: F.cross_entropy(x, t, w), (x, w))


CE_ERRORS = {
    "target out of range": lambda L: L.nn.functional.cross_entropy(L.ones(2, 3), L.tensor([0, 3])),
    "negative target": lambda L: L.nn.functional.cross_entropy(L.ones(2, 3), L.tensor([-2, 0])),
    "batch size": lambda L: L.nn.functional.cross_entropy(L.ones(2, 3), L.tensor([0, 1, 2])),
    "extra dims": lambda L: L.nn.functional.cross_entropy(L.ones(2, 3, 4), L.tensor([0, 1])),
    "weight size": lambda L: L.nn.functional.cross_entropy(L.ones(2, 3), L.tensor([0, 1]), L.ones(2)),
}


@pytest.mark.parametrize("case", list(CE_ERRORS))
def test_cross_entropy_errors_match_torch(case: str) -> None:
    with pytest.raises(Exception) as theirs:
        CE_ERRORS[case](torch)
    with pytest.raises(type(theirs.value)) as ours:
        CE_ERRORS[case](G)
    assert str(ours.value) == str(theirs.value)


# -- linear --------------------------------------------------------------------------------------------
LINEAR_CASES = [((5, 3), (4, 3), (4,)), ((5, 3), (4, 3), None), ((3,), (4, 3), (4,)), ((2, 5, 3), (4, 3), (4,)),
                ((2, 5, 3), (4, 3), (5, 4)), ((5, 3), (4, 3), (5, 1)), ((5, 3), (3,), None), ((3,), (3,), None),
                ((0, 3), (4, 3), (4,))]


@pytest.mark.parametrize("xs,ws,bs", LINEAR_CASES, ids=str)
def test_linear_matches_torch(xs: tuple[int, ...], ws: tuple[int, ...], bs: tuple[int, ...] | None) -> None:
    rng = np.random.default_rng(len(xs) + len(ws))
    (gx, tx), (gw, tw) = _pair(rng.standard_normal(xs)), _pair(rng.standard_normal(ws))
    gb, tb = _pair(rng.standard_normal(bs)) if bs is not None else (None, None)
    ours, theirs = F.linear(gx, gw, gb), TF.linear(tx, tw, tb)
    _close(ours, theirs, 1e-12)
    upstream = rng.standard_normal(tuple(theirs.shape))
    ours.backward(G.tensor(upstream))
    theirs.backward(torch.tensor(upstream))
    for a, b in ((gx, tx), (gw, tw), (gb, tb)):
        if a is not None:
            _close(a.grad, b.grad, 1e-12)
    if gx.numel():
        args = tuple(t.detach().requires_grad_() for t in (gx, gw, gb) if t is not None)
        assert gradgradcheck(lambda *a: F.linear(*a), args)


def test_linear_records_one_node_and_its_weight_gradient_is_not_copied(monkeypatch: pytest.MonkeyPatch) -> None:
    copies: list[Any] = []
    real = engine._accumulate
    monkeypatch.setattr(engine, "_accumulate", lambda v, g, c: (copies.append(g), real(v, g, c)))
    layer = G.nn.Linear(6, 4)
    out = layer(G.randn(5, 6))
    assert out.grad_fn.name() == "LinearBackward0"
    assert all(e[0].__class__ is engine.AccumulateGrad for e in out.grad_fn.next_edges[1:])
    out.sum().backward()
    assert copies == []  # both gradients stored as the formulas made them
    assert layer.weight.grad.is_contiguous() and layer.weight.grad.shape == (4, 6)


LINEAR_ERRORS = {
    "shapes": lambda L: L.nn.functional.linear(L.ones(2, 3), L.ones(4, 5)),
    "shapes 3-D": lambda L: L.nn.functional.linear(L.ones(2, 2, 3), L.ones(4, 5)),
    "shapes 1-D": lambda L: L.nn.functional.linear(L.ones(3), L.ones(4, 5)),
    "0-D input": lambda L: L.nn.functional.linear(L.tensor(1.0), L.ones(4, 3)),
    "3-D weight": lambda L: L.nn.functional.linear(L.ones(2, 3), L.ones(4, 3, 2)),
}


@pytest.mark.parametrize("case", list(LINEAR_ERRORS))
def test_linear_errors_match_torch(case: str) -> None:
    with pytest.raises(Exception) as theirs:
        LINEAR_ERRORS[case](torch)
    with pytest.raises(type(theirs.value)) as ours:
        LINEAR_ERRORS[case](G)
    assert str(ours.value) == str(theirs.value)


def test_linear_bias_that_does_not_fit_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="must match the existing size"):
        F.linear(G.ones(2, 3), G.ones(4, 3), G.ones(3))
    with pytest.raises(RuntimeError, match="does not broadcast"):
        F.linear(G.ones(2, 2, 3), G.ones(4, 3), G.ones(3))


@pytest.mark.parametrize("with_bias", [True, False], ids=["bias", "nobias"])
def test_linear_saves_the_bias_shape_not_the_bias(with_bias: bool) -> None:
    """Note [Saving metadata instead of tensors] for an optional tensor: the bias gradient needs only the
    bias's shape, so the node keeps no reference to it and, as PyTorch's addmm, an in-place change of the
    bias between forward and backward is no version error."""
    rng = np.random.default_rng(3)
    x, w, b = (rng.standard_normal(s) for s in ((4, 3), (2, 3), (2,)))
    results = []
    for lib in (G, torch):
        xt, wt = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        bt = lib.tensor(b, requires_grad=True) if with_bias else None
        y = lib.nn.functional.linear(xt, wt, bt)
        if with_bias:
            with lib.no_grad():
                bt.mul_(2.0)
        (y * y).sum().backward()
        results.append([t.grad.detach().numpy() for t in (xt, wt, bt) if t is not None])
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10)
    if with_bias:
        node = F.linear(G.tensor(x), G.tensor(w, requires_grad=True), G.tensor(b)).grad_fn
        assert not any(f.endswith("bias") for f in node._saved_fields)
