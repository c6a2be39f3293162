"""optim.Muon against PyTorch 2.13's: a few steps on matrices wide and tall, with each option, give the same
parameters (PyTorch's bfloat16 Newton-Schulz iteration reproduced by rounding, Note [Muon's bfloat16
iteration]); the options' checks."""

from __future__ import annotations

import numpy as np
import pytest

import generated as G
from runtime.optim.muon import _round_bfloat16

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("kw", [{}, {"nesterov": False, "momentum": 0.9}, {"adjust_lr_fn": "match_rms_adamw"},
                                {"weight_decay": 0.0, "ns_steps": 3, "lr": 0.1},
                                {"ns_coefficients": (2.0, -1.5, 0.5), "adjust_lr_fn": "original"}])
def test_muon_steps_agree_with_torch(kw: dict) -> None:
    rng = np.random.default_rng(3)
    shapes = [(6, 4), (3, 7), (5, 5)]
    inits = [rng.standard_normal(s).astype("f4") for s in shapes]
    results = []
    for lib in (G, torch):
        ps = [lib.nn.Parameter(lib.tensor(w)) for w in inits]
        opt = lib.optim.Muon(ps, **{"lr": 0.02, **kw})
        for step in range(5):
            opt.zero_grad()
            loss = (ps[0].sin().sum() + (ps[1] ** 2).sum() + (ps[2] @ ps[2]).sum()) * (step + 1)
            loss.backward()
            opt.step()
        results.append([p.detach().numpy().copy() for p in ps])
    for ours, theirs, w0 in zip(*results, inits, strict=True):
        assert np.abs(theirs - w0).max() > 1e-3  # the parameters moved
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def test_muon_state_and_checks() -> None:
    p = G.nn.Parameter(G.ones(3, 2))
    opt = G.optim.Muon([p])
    p.grad = G.ones(3, 2)
    opt.step()
    assert tuple(opt.state[p]["momentum_buffer"].shape) == (3, 2)
    assert opt.state_dict()["param_groups"][0]["ns_steps"] == 5
    with pytest.raises(ValueError):
        G.optim.Muon([G.nn.Parameter(G.ones(3))])
    with pytest.raises(ValueError):
        G.optim.Muon([p], lr=-1.0)
    with pytest.raises(ValueError):
        G.optim.Muon([p], adjust_lr_fn="sideways")


def test_bfloat16_rounding() -> None:
    x = G.tensor(np.array([1.0, 1.00390625, 1.005859375, 3.14159, -2.71828, 1e-30], dtype="f4"))
    expected = torch.tensor(x.numpy()).to(torch.bfloat16).to(torch.float32).numpy()
    np.testing.assert_array_equal(_round_bfloat16(x).numpy(), expected)
