"""SGD and Adam/AdamW update plain float arrays directly (Note [One update rule, two kinds of operand] in
runtime/optim/arith.py): the same bits as the op path for every option, the version counters the
in-place ops would bump, the op path for what the host path does not take, and PyTorch's numbers."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import generated as G
from runtime.optim import arith

STEPS = 4
SGD_OPTIONS = [dict(zip(("momentum", "dampening", "weight_decay", "nesterov", "maximize"), v, strict=True))
               for v in itertools.product((0.0, 0.9), (0.0, 0.3), (0.0, 0.1), (False, True), (False, True))
               if not (v[3] and (v[0] == 0 or v[1] != 0))]
ADAM_OPTIONS = [dict(zip(("weight_decay", "amsgrad", "maximize"), v, strict=True))
                for v in itertools.product((0.0, 0.1), (False, True), (False, True))]


def _params(dtype: Any, seed: int) -> list[Any]:
    rng = np.random.default_rng(seed)
    return [G.nn.Parameter(G.tensor(rng.standard_normal(s), dtype=dtype)) for s in ((3, 4), (4,), ())]


def _train(make: Any, dtype: Any, host: bool, monkeypatch: pytest.MonkeyPatch) -> list[np.ndarray]:
    """The parameters and every state tensor after STEPS steps, on the host path or (host=False) the op path."""
    with monkeypatch.context() as m:
        if not host:
            m.setattr("runtime.optim.arith.host_arrays", lambda params: None)
        params = _params(dtype, 0)
        opt = make(params)
        rng = np.random.default_rng(1)
        for _ in range(STEPS):
            for p in params:
                p.grad = G.tensor(rng.standard_normal(tuple(p.shape)), dtype=dtype)
            opt.step()
        state = [v.numpy() for p in params for v in opt.state.get(p, {}).values() if isinstance(v, G.Tensor)]
        return [p.detach().numpy() for p in params] + state


@pytest.mark.parametrize("dtype", [G.float32, G.float64], ids=str)
@pytest.mark.parametrize("options", SGD_OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_sgd_host_path_gives_the_op_path_bits(dtype: Any, options: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    def make(ps: list[Any]) -> Any:
        return G.optim.SGD(ps, lr=0.05, **options)
    host, ops = _train(make, dtype, True, monkeypatch), _train(make, dtype, False, monkeypatch)
    assert len(host) == len(ops)
    for a, b in zip(host, ops, strict=True):
        assert a.dtype == b.dtype and np.array_equal(a, b)


@pytest.mark.parametrize("dtype", [G.float32, G.float64], ids=str)
@pytest.mark.parametrize("cls", ["Adam", "AdamW"])
@pytest.mark.parametrize("options", ADAM_OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_adam_host_path_gives_the_op_path_bits(dtype: Any, cls: str, options: dict,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    def make(ps: list[Any]) -> Any:
        return getattr(G.optim, cls)(ps, lr=0.05, **options)
    host, ops = _train(make, dtype, True, monkeypatch), _train(make, dtype, False, monkeypatch)
    assert len(host) == len(ops)
    for a, b in zip(host, ops, strict=True):
        assert a.dtype == b.dtype and np.array_equal(a, b)


@pytest.mark.parametrize("make", [lambda ps: G.optim.SGD(ps, lr=0.1, momentum=0.9),
                                  lambda ps: G.optim.Adam(ps, lr=0.1, amsgrad=True)], ids=["sgd", "adam"])
def test_host_path_bumps_versions_so_saved_tensors_notice(make: Any) -> None:
    p = G.nn.Parameter(G.tensor([1.0, 2.0]))
    opt = make([p])
    for _ in range(2):  # the second step also updates the state made by the first
        before = [p._version] + [v._version for v in opt.state.get(p, {}).values() if isinstance(v, G.Tensor)]
        y = p * p  # saves p
        p.grad = G.tensor([0.5, -0.5])
        opt.step()
        after = [p._version] + [v._version for v in opt.state[p].values() if isinstance(v, G.Tensor)]
        assert after[0] == before[0] + 1
        assert all(a > b for a, b in zip(after[1:], before[1:], strict=False))
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def test_what_the_host_path_does_not_take_uses_the_ops() -> None:
    """A parameter that is a view, a float16 one, a gradient of another dtype: the op path, same numbers."""
    base = G.zeros(2, 3)
    view = base[:, 1].detach().requires_grad_()
    half = G.nn.Parameter(G.ones(2, dtype=G.float16))
    plain = G.nn.Parameter(G.ones(2))
    for p, g, start in ((view, G.ones(2), 0.0), (half, G.ones(2, dtype=G.float16), 1.0),
                        (plain, G.ones(2, dtype=G.float64), 1.0)):
        p._grad = g  # a float64 gradient of a float32 parameter: `p.grad = g` refuses it, as PyTorch
        assert arith.host_arrays([p]) is None
        opt = G.optim.SGD([p], lr=0.5, momentum=0.9)
        opt.step()
        opt.step()  # buf = 1, then 0.9 * 1 + 1
        assert p.detach().tolist() == pytest.approx([start - 0.5 * (1 + 1.9)] * 2, abs=1e-3)  # float16
    assert base[:, 1].tolist() == pytest.approx([-1.45, -1.45])  # the view wrote through to its base


def test_host_path_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    p0 = rng.standard_normal((3, 4)).astype(np.float32)
    grads = [rng.standard_normal((3, 4)).astype(np.float32) for _ in range(STEPS)]
    for ours_cls, theirs_cls, kw in ((G.optim.SGD, torch.optim.SGD, {"lr": 0.1, "momentum": 0.9, "nesterov": True,
                                                                     "weight_decay": 0.01}),
                                     (G.optim.Adam, torch.optim.Adam, {"lr": 0.1, "amsgrad": True}),
                                     (G.optim.AdamW, torch.optim.AdamW, {"lr": 0.1})):
        p, q = G.nn.Parameter(G.tensor(p0)), torch.nn.Parameter(torch.tensor(p0))
        ours, theirs = ours_cls([p], **kw), theirs_cls([q], **kw)
        for g in grads:
            p.grad, q.grad = G.tensor(g), torch.tensor(g)
            ours.step()
            theirs.step()
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_the_rule_runs_on_arrays_only_where_nothing_can_fail_or_alias() -> None:
    plain = [G.nn.Parameter(G.ones(2, 3)), G.nn.Parameter(G.ones(3))]
    for p in plain:
        p.grad = G.ones_like(p)
    assert arith.arith_for(plain, {}, ("buf",), (0.1, 0.9)) is arith.ARRAY_ARITH
    assert arith.arith_for(plain, {}, ("buf",), (G.tensor(0.1), 0.9)) is arith.TENSOR_ARITH  # a tensor lr
    view_state = {plain[0]: {"buf": G.zeros(3, 2).t()}}  # a state tensor that is a view
    assert arith.arith_for(plain, view_state, ("buf",), (0.1,)) is arith.TENSOR_ARITH
    other_dtype = {plain[1]: {"buf": G.zeros(3, dtype=G.float64)}}
    assert arith.arith_for(plain, other_dtype, ("buf",), (0.1,)) is arith.TENSOR_ARITH
    assert arith.arith_for(plain, other_dtype, ("unrelated",), (0.1,)) is arith.ARRAY_ARITH


def test_array_arith_bumps_the_version_of_what_it_updates() -> None:
    t = G.zeros(3)
    before = t._version
    arith.ARRAY_ARITH.add_(t, np.ones(3, dtype=np.float32), 2.0)
    arith.ARRAY_ARITH.mul_(t, 3.0)
    arith.ARRAY_ARITH.take_max_(t, np.full(3, 7.0, dtype=np.float32))
    assert t._version == before + 3
    assert t.tolist() == [7.0, 7.0, 7.0]
