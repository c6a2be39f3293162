"""Every lr scheduler of torch.optim.lr_scheduler against PyTorch: the lr (and momentum) of two param groups
over many steps, and a state_dict taken half-way that a fresh scheduler continues from."""

from __future__ import annotations

import math

import pytest

import generated as G

torch = pytest.importorskip("torch")

STEPS = 25


def _make(lib, name: str, kind: str = "sgd"):
    a = lib.nn.Parameter(lib.zeros(2))
    b = lib.nn.Parameter(lib.zeros(2))
    groups = [{"params": [a]}, {"params": [b], "lr": 0.05}]
    opt = lib.optim.SGD(groups, lr=0.1, momentum=0.9) if kind == "sgd" else lib.optim.Adam(groups, lr=0.1)
    S = lib.optim.lr_scheduler
    makers = {
        "LambdaLR": lambda: S.LambdaLR(opt, lambda e: 0.9 ** e),
        "MultiplicativeLR": lambda: S.MultiplicativeLR(opt, [lambda e: 0.95, lambda e: 0.9]),
        "StepLR": lambda: S.StepLR(opt, step_size=4, gamma=0.5),
        "MultiStepLR": lambda: S.MultiStepLR(opt, milestones=[3, 7, 7, 12], gamma=0.3),
        "ConstantLR": lambda: S.ConstantLR(opt, factor=0.25, total_iters=6),
        "LinearLR": lambda: S.LinearLR(opt, start_factor=0.2, total_iters=8),
        "ExponentialLR": lambda: S.ExponentialLR(opt, gamma=0.9),
        "PolynomialLR": lambda: S.PolynomialLR(opt, total_iters=10, power=2.0),
        "CosineAnnealingLR": lambda: S.CosineAnnealingLR(opt, T_max=6, eta_min=0.001),
        "CosineAnnealingWarmRestarts": lambda: S.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2, eta_min=0.01),
        "CyclicLR": lambda: S.CyclicLR(opt, base_lr=0.01, max_lr=[0.1, 0.2], step_size_up=3, step_size_down=5,
                                       mode="triangular2"),
        "CyclicLR-exp": lambda: S.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=4, mode="exp_range",
                                           gamma=0.9),
        "OneCycleLR": lambda: S.OneCycleLR(opt, max_lr=[1.0, 0.5], total_steps=STEPS + 1),
        "OneCycleLR-3": lambda: S.OneCycleLR(opt, max_lr=1.0, epochs=2, steps_per_epoch=13, three_phase=True,
                                             anneal_strategy="linear"),
        "SequentialLR": lambda: S.SequentialLR(opt, [S.LinearLR(opt, start_factor=0.1, total_iters=4),
                                                     S.ExponentialLR(opt, gamma=0.8),
                                                     S.StepLR(opt, 3, 0.5)], milestones=[5, 12]),
        "ChainedScheduler": lambda: S.ChainedScheduler([S.ConstantLR(opt, factor=0.5, total_iters=4),
                                                        S.ExponentialLR(opt, gamma=0.9)]),
    }
    return opt, makers[name]()


NAMES = ["LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR", "ExponentialLR",
         "PolynomialLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts", "CyclicLR", "CyclicLR-exp",
         "OneCycleLR", "OneCycleLR-3", "SequentialLR", "ChainedScheduler"]


def _trace(lib, name: str, kind: str = "sgd", resume_at: int | None = None) -> list[list[float]]:
    opt, sched = _make(lib, name, kind)
    out = []
    for i in range(STEPS):
        if resume_at is not None and i == resume_at:
            opt_state, sched_state = opt.state_dict(), sched.state_dict()
            opt, sched = _make(lib, name, kind)
            opt.load_state_dict(opt_state)
            sched.load_state_dict(sched_state)
        opt.step()
        sched.step()
        moms = [g["betas"][0] if "betas" in g else g["momentum"] for g in opt.param_groups]
        out.append([*sched.get_last_lr(), *(g["lr"] for g in opt.param_groups), *moms])
    return out


def _close(got: list[list[float]], want: list[list[float]]) -> None:
    for step, (g_row, w_row) in enumerate(zip(got, want, strict=True)):
        for g, w in zip(g_row, w_row, strict=True):
            assert math.isclose(float(g), float(w), rel_tol=1e-9, abs_tol=1e-12), (step, g_row, w_row)


@pytest.mark.parametrize("name", NAMES)
def test_schedule_matches_torch(name: str) -> None:
    _close(_trace(G, name), _trace(torch, name))


@pytest.mark.parametrize("name", ["CyclicLR", "OneCycleLR"])
def test_momentum_cycles_adams_beta1(name: str) -> None:
    _close(_trace(G, name, "adam"), _trace(torch, name, "adam"))


@pytest.mark.parametrize("name", NAMES)
def test_state_dict_resume(name: str) -> None:
    _close(_trace(G, name, resume_at=9), _trace(torch, name, resume_at=9))


def test_step_with_epoch_and_fractional_warm_restarts() -> None:
    got, want = [], []
    for lib, out in ((G, got), (torch, want)):
        opt, sched = _make(lib, "CosineAnnealingWarmRestarts")
        for e in (0.5, 1.25, 4.0, 9.5, 20.0):
            sched.step(e)
            out.append(sched.get_last_lr())
    _close(got, want)


def test_bad_arguments_are_refused() -> None:
    p = G.nn.Parameter(G.zeros(1))
    opt = G.optim.SGD([p], lr=0.1)
    S = G.optim.lr_scheduler
    with pytest.raises(ValueError):
        S.ConstantLR(opt, factor=2.0)
    with pytest.raises(ValueError):
        S.CosineAnnealingWarmRestarts(opt, T_0=0)
    with pytest.raises(ValueError):
        S.OneCycleLR(opt, max_lr=0.1)
    with pytest.raises(ValueError):
        S.SequentialLR(opt, [S.StepLR(opt, 2)], milestones=[1])
    other = G.optim.SGD([G.nn.Parameter(G.zeros(1))], lr=0.1)
    with pytest.raises(ValueError):
        S.ChainedScheduler([S.StepLR(opt, 2), S.StepLR(other, 2)])
    with pytest.raises(ValueError):
        S.CyclicLR(G.optim.Adagrad([p]), base_lr=0.01, max_lr=0.1)
    sched = S.OneCycleLR(opt, max_lr=0.1, total_steps=2)
    sched.step()
    sched.step()
    with pytest.raises(ValueError):
        sched.step()
