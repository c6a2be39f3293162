"""Guards on what a compiled function reaches through names (Note [Guards on Python state]): attributes of
modules and of plain objects, and tensors held by closures, globals and modules, which a user may change or
rebind between calls. Each case compares the compiled call with the eager one after the change."""

from __future__ import annotations

import types
from dataclasses import dataclass

import numpy as np
import pytest

import generated as G

nn = G.nn
W = G.ones(4)


class Settings:
    scale = 2.0


@dataclass
class Config:
    scale: float = 1.0
    relu: bool = True


CFG = Config()


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def same(a: G.Tensor, b: G.Tensor) -> None:
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)


class Scaled(nn.Module):
    def __init__(self, cfg: Config | None = None) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.scale = 1.0
        self.cfg = cfg or Config()

    def forward(self, x: G.Tensor) -> G.Tensor:
        y = self.lin(x) * self.scale * self.cfg.scale
        return y.relu() if self.cfg.relu else y


def test_a_module_attribute_changed_between_calls() -> None:
    m = Scaled()
    c = G.compile(m)
    x = G.randn(3, 4)
    with G.no_grad():
        same(c(x), m(x))
        m.scale = 3.0
        same(c(x), m(x))
        m.cfg.scale = -1.0  # a plain object the module holds
        same(c(x), m(x))
        m.cfg.relu = False
        same(c(x), m(x))
        m.scale = 1.0
        m.cfg.scale, m.cfg.relu = 1.0, True
        same(c(x), m(x))
    assert len(c._compiled_forward.graphs) == 4  # the first state is found again


def test_dropout_probability_changed_between_calls() -> None:
    d = nn.Dropout(0.5)
    c = G.compile(d)
    x = G.randn(64)
    c(x)
    d.p = 0.0
    same(c(x), x)


def test_plain_objects_and_classes_named_by_the_function() -> None:
    x = G.randn(5)
    f = G.compile(lambda t: t * CFG.scale + Settings.scale)
    same(f(x), x * CFG.scale + Settings.scale)
    CFG.scale = 4.0
    Settings.scale = -3.0
    try:
        same(f(x), x * 4.0 - 3.0)
    finally:
        CFG.scale, Settings.scale = 1.0, 2.0
    ns = types.SimpleNamespace(k=2.0)
    g = G.compile(lambda t, opts: t * opts.k)
    same(g(x, ns), x * 2.0)
    ns.k = 5.0  # the same object, changed: an argument is read as well
    same(g(x, ns), x * 5.0)


def test_tensors_rebound_in_globals_and_cells() -> None:
    global W
    x = G.randn(4)
    f = G.compile(lambda t: t * W + 1)
    same(f(x), x * W + 1)
    W = G.full((4,), 3.0)
    try:
        same(f(x), x * 3.0 + 1)
        W.mul_(2.0)  # written in place: the graph reads the tensor it holds at run time
        same(f(x), x * 6.0 + 1)
        W.data = G.full((2, 4), 0.5)  # the same tensor over memory of another shape
        same(f(x), x * G.full((2, 4), 0.5) + 1)
    finally:
        W = G.ones(4)

    w = G.ones(4)
    g = G.compile(lambda t: t - w)
    same(g(x), x - 1)
    w = G.full((4,), 5.0)
    same(g(x), x - 5)


def test_a_replaced_parameter_and_a_rebound_buffer() -> None:
    lin = nn.Linear(4, 4)
    c = G.compile(lin)
    x = G.randn(2, 4)
    same(c(x), lin(x))
    lin.weight = nn.Parameter(G.zeros(4, 4))
    same(c(x), lin(x))
    with G.no_grad():
        lin.weight.fill_(1.0)
    same(c(x), lin(x))

    lin.weight.data = G.ones(4, 4) * 2  # the same Parameter over new memory
    same(c(x), lin(x))

    class Running(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("total", G.zeros(3))

        def forward(self, t: G.Tensor) -> G.Tensor:
            self.total = self.total + t  # rebinds the buffer at every call
            return self.total * 2

    eager, compiled = Running(), Running()
    f = G.compile(compiled)
    for _ in range(3):
        t = G.randn(3)
        same(f(t), eager(t))
        same(compiled.total, eager.total)


def test_a_training_step_with_an_optimizer_compiles_once() -> None:
    G.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    opt = G.optim.Adam(m.parameters(), lr=1e-2)
    sched = G.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)

    @G.compile
    def step(x: G.Tensor, y: G.Tensor) -> G.Tensor:
        opt.zero_grad()
        loss = nn.functional.cross_entropy(m(x), y)
        loss.backward()
        opt.step()
        return loss

    x, y = G.randn(16, 4), G.randint(0, 2, (16,))
    for _ in range(4):
        step(x, y)
        sched.step()
    # the optimizer's counters and the scheduler's epoch are not guarded: one signature, its variants only
    assert len(step.cache) == 1


def test_repeated_calls_of_a_module_keep_one_graph() -> None:
    m = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.ReLU(), nn.Flatten(), nn.Linear(2 * 4 * 4, 3))
    c = G.compile(m)
    x = G.randn(2, 1, 6, 6)
    with G.no_grad():
        for _ in range(3):
            c(x)
    assert len(c._compiled_forward.graphs) == 1
