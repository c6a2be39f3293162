"""Guards on the Python state a graph holds as constants (Note [Guards on Python state]): a module's
training flag, numbers and flags in closures and globals; a change compiles the new state once."""

from __future__ import annotations

import numpy as np
import pytest

import generated as G
from runtime.compile.guards import python_state

SCALE = 2.0


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def model() -> G.nn.Module:
    G.manual_seed(0)
    return G.nn.Sequential(G.nn.Linear(6, 6), G.nn.Dropout(0.5), G.nn.BatchNorm1d(6))


@pytest.mark.parametrize("how", ["module", "closure", "argument"])
def test_train_and_eval_each_run_their_own_graph(how: str) -> None:
    m = model()
    if how == "module":
        c = G.compile(m)
        call = c
    elif how == "closure":
        c = G.compile(lambda t: m(t) * 1.0)
        call = c
    else:
        c = G.compile(lambda mod, t: mod(t) * 1.0)
        call = lambda t: c(m, t)  # noqa: E731
    x = G.randn(8, 6)
    with G.no_grad():
        m.train()
        call(x)
        m.eval()
        np.testing.assert_allclose(call(x).numpy(), m(x).numpy(), rtol=1e-6)  # no dropout, running stats
        np.testing.assert_allclose(call(x).numpy(), m(x).numpy(), rtol=1e-6)
        m.train()
        call(x)
        assert len(c.graphs) == 2  # each state compiled once


def test_numbers_in_closures_and_globals_are_guarded() -> None:
    global SCALE
    k = 3
    f = G.compile(lambda t: t * k + SCALE)
    x = G.randn(5)
    np.testing.assert_allclose(f(x).numpy(), (x * 3 + 2.0).numpy(), rtol=1e-6)
    k = 5
    np.testing.assert_allclose(f(x).numpy(), (x * 5 + 2.0).numpy(), rtol=1e-6)
    SCALE = -1.0
    try:
        np.testing.assert_allclose(f(x).numpy(), (x * 5 - 1.0).numpy(), rtol=1e-6)
    finally:
        SCALE = 2.0
    flags = [True]
    g = G.compile(lambda t: t.exp() if flags[0] else t.neg())
    np.testing.assert_allclose(g(x).numpy(), x.exp().numpy(), rtol=1e-6)
    flags[0] = False
    np.testing.assert_allclose(g(x).numpy(), (-x).numpy())


def test_functions_called_by_the_function_are_followed_one_level() -> None:
    mode = ["double"]

    def helper(t: G.Tensor) -> G.Tensor:
        return t * 2 if mode[0] == "double" else t * 3

    f = G.compile(lambda t: helper(t) + 1)
    x = G.randn(4)
    np.testing.assert_allclose(f(x).numpy(), (x * 2 + 1).numpy(), rtol=1e-6)
    mode[0] = "triple"
    np.testing.assert_allclose(f(x).numpy(), (x * 3 + 1).numpy(), rtol=1e-6)


def test_the_state_holds_every_submodule_training_flag() -> None:
    m = model()
    state = python_state(G.compile(m)._compiled_forward.fn, (), {})
    flags = [x for x in state[0] if isinstance(x, bool)]
    assert flags[:1] == [True] and state[0].count(True) >= 4  # one per module, beside its other state
    m.eval()
    evaluated = python_state(m, (), {})
    assert evaluated != state and evaluated[0].count(False) >= 4
    m.train()
    assert python_state(m, (), {}) == state


def test_new_signatures_past_the_cache_limit_run_eagerly(monkeypatch: pytest.MonkeyPatch) -> None:
    import runtime.compile as rc

    monkeypatch.setattr(rc, "CACHE_SIZE_LIMIT", 3)
    f = G.compile(lambda t: t * 2 + 1)
    for n in (1, 2, 3):
        np.testing.assert_allclose(f(G.ones(n)).numpy(), np.full(n, 3.0))
    with pytest.warns(RuntimeWarning, match="signatures"):
        np.testing.assert_allclose(f(G.ones(4)).numpy(), np.full(4, 3.0))
    assert len(f.graphs) == 3
    np.testing.assert_allclose(f(G.ones(2)).numpy(), np.full(2, 3.0))  # a compiled one still runs
