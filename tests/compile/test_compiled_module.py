"""`G.compile(module)` returns a Module (PyTorch's OptimizedModule) and `module.compile()` compiles in
place: parameters, modes and state_dict stay the original's, and calls run compiled."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import generated as G

F = G.nn.functional


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def net() -> G.nn.Module:
    G.manual_seed(0)
    return G.nn.Sequential(G.nn.Linear(6, 8), G.nn.ReLU(), G.nn.Dropout(0.5), G.nn.Linear(8, 3))


def test_a_compiled_module_is_a_module_over_the_original() -> None:
    m = net()
    cm = G.compile(m)
    assert isinstance(cm, G.nn.Module) and cm._orig_mod is m
    assert [id(p) for p in cm.parameters()] == [id(p) for p in m.parameters()]
    assert list(cm.state_dict()) == [f"_orig_mod.{k}" for k in m.state_dict()]
    cm.eval()
    assert not m.training and not m[2].training
    x = G.randn(4, 6)
    np.testing.assert_allclose(cm(x).detach().numpy(), m(x).detach().numpy(), rtol=1e-6)
    assert len(cm.graphs) == 1  # it ran compiled
    cm.train()
    assert m.training
    assert G.compile(cm)._orig_mod is m  # compiling again wraps the original


def test_training_through_a_compiled_module_matches_eager() -> None:
    x, y = G.randn(16, 6), G.randint(0, 3, (16,))
    runs = []
    for compiled in (False, True):
        m = net()
        m.eval()  # no dropout: compare exactly
        model = G.compile(m) if compiled else m
        opt = G.optim.Adam(model.parameters(), lr=1e-2)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            for _ in range(3):
                opt.zero_grad()
                F.cross_entropy(model(x), y).backward()
                opt.step()
        runs.append([p.detach().numpy().copy() for p in m.parameters()])
    for a, b in zip(*runs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def test_module_compile_in_place_keeps_hooks_and_state_dict() -> None:
    m = net().eval()
    m.register_forward_hook(lambda mod, args, out: out * 2 + 1)  # a hook that changes the output: captured
    x = G.randn(5, 6)
    want = m(x)
    m.compile()
    for _ in range(2):
        np.testing.assert_allclose(m(x).detach().numpy(), want.detach().numpy(), rtol=1e-6)
    assert len(m._compiled_call_impl.graphs) == 1 and list(m.state_dict())[0] == "0.weight"
