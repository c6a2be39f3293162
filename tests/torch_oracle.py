"""One helper for the nn.functional / linalg tests: run a function in opgen and in PyTorch on the same NumPy
inputs and compare values, shapes and the gradients of a random projection of the output (float64 inputs
require grad unless listed in `nograd`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np


def compare(gfn: Callable[..., Any], tfn: Callable[..., Any], *arrays: np.ndarray, grad: bool = True,
            nograd: Sequence[int] = (), atol: float = 1e-7, rtol: float = 1e-6) -> None:
    import torch

    import generated as G

    def wants(k: int, a: np.ndarray) -> bool:
        return grad and a.dtype == np.float64 and k not in nograd

    g_in = [G.tensor(a, requires_grad=wants(k, a)) for k, a in enumerate(arrays)]
    t_in = [torch.tensor(a, requires_grad=wants(k, a)) for k, a in enumerate(arrays)]
    g_out, t_out = gfn(*g_in), tfn(*t_in)
    if isinstance(t_out, tuple):
        assert len(g_out) == len(t_out)
        g_out, t_out = g_out[0], t_out[0]
    assert tuple(g_out.shape) == tuple(t_out.shape), (tuple(g_out.shape), tuple(t_out.shape))
    assert g_out.dtype.name == str(t_out.dtype).replace("torch.", ""), (g_out.dtype, t_out.dtype)
    np.testing.assert_allclose(g_out.detach().numpy(), t_out.detach().numpy(), atol=atol, rtol=rtol)
    if not (grad and t_out.requires_grad):
        return
    w = np.random.default_rng(0).standard_normal(tuple(t_out.shape))
    (g_out * G.tensor(w)).sum().backward()
    (t_out * torch.tensor(w)).sum().backward()
    for k, (g, t) in enumerate(zip(g_in, t_in, strict=True)):
        if t.grad is None:
            continue
        assert g.grad is not None, f"input {k} got no gradient"
        np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), atol=1e-6, rtol=1e-5,
                                   err_msg=f"gradient of input {k}")
