"""Optimizers against NumPy re-implementations of PyTorch's update formulas (torch/optim/sgd.py, adam.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import generated as G

STEPS = 5


def _grads(seed: int, shape: tuple[int, ...]) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape) for _ in range(STEPS)]


def _run_opgen(make_opt, p0: np.ndarray, grads: list[np.ndarray]) -> np.ndarray:
    p = G.nn.Parameter(G.tensor(p0, dtype=G.float64))
    opt = make_opt([p])
    for g in grads:
        p.grad = G.tensor(g, dtype=G.float64)
        opt.step()
    return p.detach().numpy()


def _sgd_numpy(p: np.ndarray, grads: list[np.ndarray], lr: float, momentum: float = 0.0,
               dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False,
               maximize: bool = False) -> np.ndarray:
    p, buf = p.copy(), None
    for g in grads:
        g = -g if maximize else g
        g = g + weight_decay * p
        if momentum:
            buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        p = p - lr * g
    return p


def _adam_numpy(p: np.ndarray, grads: list[np.ndarray], lr: float, betas: tuple[float, float] = (0.9, 0.999),
                eps: float = 1e-8, weight_decay: float = 0.0, amsgrad: bool = False,
                decoupled: bool = False) -> np.ndarray:
    p = p.copy()
    m, v, vmax = np.zeros_like(p), np.zeros_like(p), np.zeros_like(p)
    b1, b2 = betas
    for t, g in enumerate(grads, start=1):
        if decoupled:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        vmax = np.maximum(vmax, v)
        second = vmax if amsgrad else v
        denom = np.sqrt(second) / math.sqrt(1 - b2**t) + eps
        p = p - lr / (1 - b1**t) * m / denom
    return p


SGD_CASES = [
    {"lr": 0.1},
    {"lr": 0.05, "momentum": 0.9},
    {"lr": 0.05, "momentum": 0.9, "dampening": 0.3},
    {"lr": 0.05, "momentum": 0.9, "nesterov": True},
    {"lr": 0.1, "weight_decay": 0.01},
    {"lr": 0.05, "momentum": 0.8, "weight_decay": 0.1, "nesterov": True},
    {"lr": 0.1, "momentum": 0.5, "maximize": True},
]


@pytest.mark.parametrize("kwargs", SGD_CASES, ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()))
def test_sgd_matches_numpy(kwargs: dict) -> None:
    p0 = np.random.default_rng(1).standard_normal((3, 4))
    grads = _grads(2, p0.shape)
    got = _run_opgen(lambda ps: G.optim.SGD(ps, **kwargs), p0, grads)
    np.testing.assert_allclose(got, _sgd_numpy(p0, grads, **kwargs), rtol=1e-12, atol=1e-12)


ADAM_CASES = [
    {"lr": 0.01},
    {"lr": 0.1, "betas": (0.8, 0.99), "eps": 1e-6},
    {"lr": 0.01, "weight_decay": 0.1},
    {"lr": 0.01, "amsgrad": True},
]


@pytest.mark.parametrize("kwargs", ADAM_CASES, ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()))
def test_adam_matches_numpy(kwargs: dict) -> None:
    p0 = np.random.default_rng(3).standard_normal((5,))
    grads = _grads(4, p0.shape)
    got = _run_opgen(lambda ps: G.optim.Adam(ps, **kwargs), p0, grads)
    np.testing.assert_allclose(got, _adam_numpy(p0, grads, **kwargs), rtol=1e-10, atol=1e-12)


def test_adamw_decoupled_weight_decay() -> None:
    p0 = np.random.default_rng(5).standard_normal((2, 3))
    grads = _grads(6, p0.shape)
    got = _run_opgen(lambda ps: G.optim.AdamW(ps, lr=0.01, weight_decay=0.1), p0, grads)
    want = _adam_numpy(p0, grads, lr=0.01, weight_decay=0.1, decoupled=True)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_param_groups_have_their_own_hyperparameters() -> None:
    a = G.nn.Parameter(G.ones(2, dtype=G.float64))
    b = G.nn.Parameter(G.ones(2, dtype=G.float64))
    opt = G.optim.SGD([{"params": [a]}, {"params": [b], "lr": 1.0}], lr=0.1)
    a.grad = G.ones(2, dtype=G.float64)
    b.grad = G.ones(2, dtype=G.float64)
    opt.step()
    np.testing.assert_allclose(a.detach().numpy(), [0.9, 0.9])
    np.testing.assert_allclose(b.detach().numpy(), [0.0, 0.0])


def test_step_skips_parameters_without_grad_and_zero_grad_clears() -> None:
    a = G.nn.Parameter(G.ones(2))
    b = G.nn.Parameter(G.ones(2))
    opt = G.optim.SGD([a, b], lr=0.5, momentum=0.9)
    a.grad = G.ones(2)
    opt.step()
    assert b.detach().numpy().tolist() == [1.0, 1.0]
    assert a.detach().numpy().tolist() == [0.5, 0.5]
    opt.zero_grad()
    assert a.grad is None
    a.grad = G.ones(2)
    opt.zero_grad(set_to_none=False)
    assert a.grad.numpy().tolist() == [0.0, 0.0]


def test_update_is_not_recorded_by_autograd() -> None:
    w = G.nn.Parameter(G.tensor([1.0, 2.0]))
    (w * w).sum().backward()
    opt = G.optim.Adam([w], lr=0.1)
    opt.step()
    assert w.is_leaf and w.grad_fn is None and w.requires_grad


def test_closure_is_evaluated_with_grad() -> None:
    w = G.nn.Parameter(G.tensor([3.0]))
    opt = G.optim.SGD([w], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    with G.no_grad():
        loss = opt.step(closure)
    assert loss.item() == pytest.approx(9.0)
    assert w.item() == pytest.approx(3.0 - 0.1 * 6.0)


@pytest.mark.parametrize("make", [lambda ps: G.optim.SGD(ps, lr=0.1, momentum=0.9),
                                  lambda ps: G.optim.Adam(ps, lr=0.05, amsgrad=True)], ids=["sgd", "adam"])
def test_state_dict_round_trip_through_a_file_continues_identically(make, tmp_path) -> None:
    p0 = np.random.default_rng(7).standard_normal((4,))
    grads = _grads(8, p0.shape)
    ref = _run_opgen(make, p0, grads)

    p = G.nn.Parameter(G.tensor(p0, dtype=G.float64))
    opt = make([p])
    for g in grads[:2]:
        p.grad = G.tensor(g, dtype=G.float64)
        opt.step()
    G.save(opt.state_dict(), tmp_path / "opt.npz")
    saved_p = p.detach().numpy().copy()

    q = G.nn.Parameter(G.tensor(saved_p, dtype=G.float64))
    opt2 = make([q])
    opt2.load_state_dict(G.load(tmp_path / "opt.npz"))
    for g in grads[2:]:
        q.grad = G.tensor(g, dtype=G.float64)
        opt2.step()
    np.testing.assert_allclose(q.detach().numpy(), ref, rtol=1e-12)
    assert opt2.param_groups[0]["params"] == [q]


def test_bad_arguments() -> None:
    p = G.nn.Parameter(G.ones(1))
    with pytest.raises(ValueError, match="Invalid learning rate"):
        G.optim.SGD([p], lr=-1)
    assert G.optim.SGD([p]).defaults["lr"] == 1e-3  # PyTorch 2.13's default (lr is no longer required)
    with pytest.raises(ValueError, match="Nesterov"):
        G.optim.SGD([p], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="beta parameter at index 1"):
        G.optim.Adam([p], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="empty parameter list"):
        G.optim.Adam([])
    with pytest.raises(TypeError, match="iterable of Tensors"):
        G.optim.Adam(p)
    with pytest.raises(ValueError, match="more than one parameter group"):
        G.optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1)
    with pytest.raises(ValueError, match="non-leaf"):
        G.optim.SGD([p * 2], lr=0.1)
