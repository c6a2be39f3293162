"""torch.utils.checkpoint (Note [Activation checkpointing], runtime/utils/checkpoint.py): the same outputs
and gradients as without checkpointing, the saved tensors recomputed in backward (not kept), random state
and autocast replayed, both forms, checkpoint_sequential, and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import generated as G
from runtime.utils.checkpoint import checkpoint, checkpoint_sequential


def _net() -> Any:
    G.manual_seed(3)
    return G.nn.Sequential(G.nn.Linear(3, 4), G.nn.Tanh(), G.nn.Dropout(0.5), G.nn.Linear(4, 2), G.nn.Sigmoid())


def _grads(model: Any) -> list[np.ndarray]:
    return [p.grad.numpy().copy() for p in model.parameters()]


@pytest.mark.parametrize("reentrant", [False, True])
def test_same_outputs_and_gradients_with_dropout(reentrant: bool) -> None:
    model = _net()
    x = G.from_numpy(np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)).requires_grad_()
    G.manual_seed(7)
    ref = model(x)
    ref.sum().backward()
    want, want_x = _grads(model), x.grad.numpy().copy()
    model.zero_grad()
    x.grad = None
    G.manual_seed(7)
    out = checkpoint(model, x, use_reentrant=reentrant)
    after = G.rand(1).item()
    out.sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-6)
    for g, w in zip(_grads(model), want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6)  # the recomputation drew the same dropout mask
    np.testing.assert_allclose(x.grad.numpy(), want_x, rtol=1e-6)
    G.manual_seed(7)
    model(x)
    assert G.rand(1).item() == after  # the recomputation left the program's random stream alone


def test_non_reentrant_keeps_no_saved_tensor_and_recomputes_once() -> None:
    calls = []
    lin = G.nn.Linear(3, 3)

    def fn(t: Any) -> Any:
        calls.append(1)
        return G.tanh(lin(t)).exp()

    x = G.ones(2, 3)  # no input requires grad: the parameters still get their gradients
    out = checkpoint(fn, x, use_reentrant=False)
    assert len(calls) == 1
    out.sum().backward()
    assert len(calls) == 2 and lin.weight.grad is not None
    ref = G.nn.Linear(3, 3)
    ref.load_state_dict(lin.state_dict())
    G.tanh(ref(x)).exp().sum().backward()
    np.testing.assert_allclose(lin.weight.grad.numpy(), ref.weight.grad.numpy(), rtol=1e-6)


def test_autocast_state_is_replayed_in_the_recomputation() -> None:
    lin = G.nn.Linear(4, 4)
    x = G.ones(2, 4, requires_grad=True)
    with G.autocast("cpu", dtype=G.float16):
        out = checkpoint(lambda t: lin(t).float().exp(), x, use_reentrant=False)
    out.sum().backward()  # the recomputed saved tensors are float16 as in the first run
    assert lin.weight.grad.dtype == G.float32 and x.grad.dtype == G.float32


def test_checkpoint_sequential_and_errors() -> None:
    model = _net().eval()
    x = G.ones(2, 3, requires_grad=True)
    out = checkpoint_sequential(model, 2, x, use_reentrant=False)
    np.testing.assert_allclose(out.detach().numpy(), model(x).detach().numpy(), rtol=1e-6)
    out.sum().backward()
    assert x.grad is not None
    with pytest.warns(UserWarning, match="use_reentrant"):
        checkpoint(model, x)
    with pytest.raises(ValueError):
        checkpoint(model, x, use_reentrant=True, extra=1)
    with pytest.raises(ValueError):
        checkpoint(model, x, use_reentrant=False, determinism_check="strict")
