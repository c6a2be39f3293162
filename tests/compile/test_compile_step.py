"""G.compile of whole training steps: a compiled function that calls `opt.zero_grad()`, `loss.backward()` and
`opt.step()` runs as one program (Note [Capturing a training step]); every loss, gradient, parameter and
optimizer state is compared over several steps with the same step run eagerly on a twin model."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import generated as G
from runtime.compile.capture import GraphBreak
from runtime.compile.step_program import StepProgram

F = G.nn.functional
RNG = np.random.default_rng(0)
X = RNG.standard_normal((16, 12)).astype(np.float32)
Y = RNG.integers(0, 5, 16)
W = [(RNG.standard_normal((24, 12)) * 0.3).astype(np.float32), (RNG.standard_normal(24) * 0.1).astype(np.float32),
     (RNG.standard_normal((5, 24)) * 0.3).astype(np.float32), np.zeros(5, np.float32)]


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def params() -> list[G.Tensor]:
    return [G.from_numpy(a.copy()).requires_grad_(True) for a in W]


def mlp_loss(ps: list[G.Tensor], x: G.Tensor, y: G.Tensor) -> G.Tensor:
    return F.cross_entropy(F.linear(F.tanh(F.linear(x, ps[0], ps[1])), ps[2], ps[3]), y)


def standard_step(ps: list[G.Tensor], opt: Any) -> Callable[..., G.Tensor]:
    def step(x: G.Tensor, y: G.Tensor) -> G.Tensor:
        opt.zero_grad()
        loss = mlp_loss(ps, x, y)
        loss.backward()
        opt.step()
        return loss
    return step


def state_arrays(opt: Any) -> list[Any]:
    out = []
    for group in opt.param_groups:
        for p in group["params"]:
            for k, v in sorted(opt.state.get(p, {}).items()):
                out.append((k, v.numpy().copy() if isinstance(v, G.Tensor) else v))
    return out


def assert_twins(eager: tuple[list[G.Tensor], Any], compiled: tuple[list[G.Tensor], Any], tol: float) -> None:
    (pe, oe), (pc, oc) = eager, compiled
    for a, b in zip(pe, pc, strict=True):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=tol, atol=tol)
        assert (a.grad is None) == (b.grad is None)
        if a.grad is not None:
            np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=tol, atol=tol)
    se, sc = state_arrays(oe), state_arrays(oc)
    assert [k for k, _ in se] == [k for k, _ in sc]
    for (_, a), (_, b) in zip(se, sc, strict=True):
        np.testing.assert_allclose(np.asarray(b, dtype=np.float64), np.asarray(a, dtype=np.float64), rtol=tol,
                                   atol=tol)


def run_twins(make_opt: Callable[[list[G.Tensor]], Any], make_step: Callable[..., Any] = standard_step,
              steps: int = 4, between: Callable[[Any], None] | None = None, tol: float = 1e-5) -> Any:
    """The same step, eager and compiled, `steps` times from the same start; returns the compiled function."""
    x, y = G.from_numpy(X), G.from_numpy(Y)
    pe, pc = params(), params()
    oe, oc = make_opt(pe), make_opt(pc)
    se, sc = make_step(pe, oe), G.compile(make_step(pc, oc))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fall back to eager fails the test
        for _ in range(steps):
            le, lc = se(x, y), sc(x, y)
            np.testing.assert_allclose(lc.detach().numpy(), le.detach().numpy(), rtol=tol, atol=tol)
            assert_twins((pe, oe), (pc, oc), tol)
            if between is not None:
                between(oe)
                between(oc)
    assert sc.programs and all(isinstance(p, StepProgram) for p in sc.programs)
    return sc


@pytest.mark.parametrize("kwargs", [{}, {"momentum": 0.9}, {"momentum": 0.9, "nesterov": True},
                                    {"momentum": 0.8, "dampening": 0.1, "weight_decay": 0.01},
                                    {"weight_decay": 0.05, "maximize": True}])
def test_sgd_steps_agree_with_eager(kwargs: dict[str, Any]) -> None:
    sc = run_twins(lambda ps: G.optim.SGD(ps, lr=0.1, **kwargs))
    (program, *_) = sc.programs
    (step,) = [n for n in program.graph.nodes if "optimizer_step" in n.name]
    assert step.op.rule == "sgd"  # the fused update ran in the steps compared (Note [Fused optimizer updates])
    assert any(n.name.startswith("mm") for n in program.graph.nodes)  # the backward is in the graph


@pytest.mark.parametrize("make", [lambda ps: G.optim.Adam(ps, lr=0.01),
                                  lambda ps: G.optim.Adam(ps, lr=0.01, weight_decay=0.1, amsgrad=True),
                                  lambda ps: G.optim.AdamW(ps, lr=0.01),
                                  lambda ps: G.optim.RMSprop(ps, lr=0.01, momentum=0.5)])
def test_adam_family_steps_agree_with_eager(make: Callable[[list[G.Tensor]], Any]) -> None:
    sc = run_twins(make)
    rules = {n.op.rule for p in sc.programs for n in p.graph.nodes if "optimizer_step" in n.name}
    assert rules == ({None} if "RMSprop" in repr(make(params())) else {"adam"})


def test_a_subclass_with_its_own_update_runs_it() -> None:
    class Halved(G.optim.SGD):  # type: ignore[misc]
        def _update(self, group: dict[str, Any], params: list[G.Tensor]) -> None:
            super()._update({**group, "lr": group["lr"] * 0.5}, params)

    sc = run_twins(lambda ps: Halved(ps, lr=0.1, momentum=0.9))
    assert {n.op.rule for p in sc.programs for n in p.graph.nodes if "optimizer_step" in n.name} == {None}


def test_an_lr_scheduler_between_steps_is_honoured() -> None:
    scheds: dict[int, Any] = {}

    def make(ps: list[G.Tensor]) -> Any:
        opt = G.optim.Adam(ps, lr=0.05)
        scheds[id(opt)] = G.optim.lr_scheduler.LambdaLR(opt, lambda epoch: 1.0 / (1 + 3 * epoch))
        return opt

    run_twins(make, between=lambda opt: scheds[id(opt)].step(), steps=5)


def test_gradients_accumulate_without_zero_grad() -> None:
    def make_step(ps: list[G.Tensor], opt: Any) -> Callable[..., G.Tensor]:
        def step(x: G.Tensor, y: G.Tensor) -> G.Tensor:
            loss = mlp_loss(ps, x, y)
            loss.backward()
            opt.step()
            return loss
        return step

    sc = run_twins(lambda ps: G.optim.SGD(ps, lr=0.05, momentum=0.9), make_step)
    assert len(sc.programs) == 2  # no .grad at entry, then one: two variants of the step
    later = [p for p in sc.programs if p.grad_inputs]
    assert later and any(n.name.startswith("add") for n in later[0].graph.nodes)


def test_zero_grad_to_zeros_and_backward_with_a_gradient() -> None:
    def make_step(ps: list[G.Tensor], opt: Any) -> Callable[..., G.Tensor]:
        def step(x: G.Tensor, y: G.Tensor) -> G.Tensor:
            opt.zero_grad(set_to_none=False)
            out = F.linear(F.relu(F.linear(x, ps[0], ps[1])), ps[2], ps[3])
            out.backward(G.ones_like(out) * 0.01)
            opt.step()
            return out
        return step

    run_twins(lambda ps: G.optim.SGD(ps, lr=0.1), make_step)


def test_a_frozen_parameter_recompiles() -> None:
    x, y = G.from_numpy(X), G.from_numpy(Y)
    pe, pc = params(), params()
    oe, oc = G.optim.SGD(pe, lr=0.1, momentum=0.9), G.optim.SGD(pc, lr=0.1, momentum=0.9)
    se, sc = standard_step(pe, oe), G.compile(standard_step(pc, oc))
    for k in range(5):
        if k == 3:
            pe[0].requires_grad_(False)
            pc[0].requires_grad_(False)
        se(x, y)
        sc(x, y)
        assert_twins((pe, oe), (pc, oc), 1e-5)
    # no .grad at entry; .grads; frozen with its stale .grad; frozen without one (zero_grad cleared it)
    assert len(sc.programs) == 4


def test_dropout_draws_what_eager_draws() -> None:
    def make_step(ps: list[G.Tensor], opt: Any) -> Callable[..., G.Tensor]:
        def step(x: G.Tensor, y: G.Tensor) -> G.Tensor:
            opt.zero_grad()
            h = F.dropout(F.relu(F.linear(x, ps[0], ps[1])), 0.3, training=True)
            loss = F.cross_entropy(F.linear(h, ps[2], ps[3]), y)
            loss.backward()
            opt.step()
            return loss
        return step

    x, y = G.from_numpy(X), G.from_numpy(Y)
    pe, pc = params(), params()
    oe, oc = G.optim.SGD(pe, lr=0.1), G.optim.SGD(pc, lr=0.1)
    se, sc = make_step(pe, oe), G.compile(make_step(pc, oc))
    for k in range(3):
        G.manual_seed(k)
        le = se(x, y)
        G.manual_seed(k)
        lc = sc(x, y)
        np.testing.assert_allclose(lc.detach().numpy(), le.detach().numpy(), rtol=1e-5)
        assert_twins((pe, oe), (pc, oc), 1e-5)


def test_item_inside_falls_back_once_and_steps_once() -> None:
    x, y = G.from_numpy(X), G.from_numpy(Y)
    pe, pc = params(), params()
    oe, oc = G.optim.SGD(pe, lr=0.1, momentum=0.9), G.optim.SGD(pc, lr=0.1, momentum=0.9)

    def make_step(ps: list[G.Tensor], opt: Any) -> Callable[..., float]:
        def step(x: G.Tensor, y: G.Tensor) -> float:
            opt.zero_grad()
            loss = mlp_loss(ps, x, y)
            loss.backward()
            opt.step()
            return loss.item()
        return step

    se, sc = make_step(pe, oe), G.compile(make_step(pc, oc))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            assert sc(x, y) == pytest.approx(se(x, y), rel=1e-6)
            assert_twins((pe, oe), (pc, oc), 1e-6)  # the capture's partial step was undone: one step per call
    reasons = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(reasons) == 1 and "item" in reasons[0]
    with pytest.raises(GraphBreak):
        G.compile(make_step(pc, oc), fullgraph=True)(x, y)


def test_closure_optimizer_and_scheduler_inside_fall_back_with_reasons() -> None:
    x, y = G.from_numpy(X), G.from_numpy(Y)
    ps = params()
    opt = G.optim.LBFGS(ps, lr=0.5, max_iter=3)

    def lbfgs_step(x: G.Tensor, y: G.Tensor) -> G.Tensor:
        def closure() -> G.Tensor:
            opt.zero_grad()
            loss = mlp_loss(ps, x, y)
            loss.backward()
            return loss
        return opt.step(closure)

    with pytest.raises(GraphBreak, match="LBFGS"):
        G.compile(lbfgs_step, fullgraph=True)(x, y)
    before = [p.detach().numpy().copy() for p in ps]
    with pytest.warns(RuntimeWarning, match="LBFGS"):
        G.compile(lbfgs_step)(x, y)
    assert any(not np.array_equal(b, p.detach().numpy()) for b, p in zip(before, ps, strict=True))

    sgd = G.optim.SGD(ps, lr=0.1)
    sched = G.optim.lr_scheduler.StepLR(sgd, 1, gamma=0.5)

    def step_with_schedule(x: G.Tensor, y: G.Tensor) -> G.Tensor:
        sgd.zero_grad()
        loss = mlp_loss(ps, x, y)
        loss.backward()
        sgd.step()
        sched.step()
        return loss

    with pytest.warns(RuntimeWarning, match="scheduler"):
        G.compile(step_with_schedule)(x, y)
    assert sgd.param_groups[0]["lr"] == pytest.approx(0.05)  # stepped once, eagerly: the capture was undone


def test_a_break_after_in_place_writes_puts_them_back() -> None:
    x, y = G.from_numpy(X), G.from_numpy(Y)
    ps = params()
    opt = G.optim.SGD(ps, lr=0.1)
    for p in ps:
        p.grad = G.ones_like(p)
    counter = G.zeros(1)

    def step(x: G.Tensor, y: G.Tensor) -> float:
        for p in ps:
            p.grad.mul_(0.5)  # writes the .grads at entry in place
        counter.add_(1)  # writes a free value in place
        loss = mlp_loss(ps, x, y)
        loss.backward()
        opt.step()
        return float(loss)  # ends the capture: the call runs again, eagerly

    want = [p.detach().numpy().copy() for p in ps]
    with pytest.warns(RuntimeWarning, match="__float__"):
        G.compile(step)(x, y)
    assert counter.numpy()[0] == 1.0
    ref = params()
    ref_opt = G.optim.SGD(ref, lr=0.1)
    for p, w in zip(ref, want, strict=True):
        np.testing.assert_array_equal(p.detach().numpy(), w)
    for p in ref:
        p.grad = G.ones_like(p) * 0.5
    mlp_loss(ref, x, y).backward()
    ref_opt.step()
    for p, r in zip(ps, ref, strict=True):
        np.testing.assert_allclose(p.detach().numpy(), r.detach().numpy(), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(p.grad.numpy(), r.grad.numpy(), rtol=1e-6, atol=1e-7)
