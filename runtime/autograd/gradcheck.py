"""gradcheck and gradgradcheck: analytical gradients against central finite differences, in float64.

The analytical Jacobian is built one output element at a time with autograd.grad (a one-hot
grad_output, retain_graph=True); the numerical one perturbs one input element at a time by +-eps.
A failure names the function, the input and output indices, and the worst element with both values.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from runtime import opcall
from runtime.autograd.function import grad as autograd_grad

Tensor = Any


class GradcheckError(RuntimeError):
    """The analytical and numerical gradients differ."""


def _fn_name(fn: Callable[..., Any]) -> str:
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


def _is_tensor(x: Any) -> bool:
    return hasattr(x, "_grad_fn") and hasattr(x, "_dtype")


def _outputs(value: Any) -> list[Tensor]:
    if isinstance(value, list | tuple):
        return [t for v in value for t in _outputs(v)]
    return [value] if _is_tensor(value) else []


def _array(t: Tensor) -> np.ndarray:
    return np.asarray(t.numpy(force=True))


def _numerical(fn: Callable[..., Any], inputs: Sequence[Any], i: int, n_out: list[int],
               eps: float) -> list[np.ndarray]:
    """d(out_k)/d(input_i) by central differences: one (numel(in), numel(out_k)) matrix per output."""
    t = inputs[i]
    # perturbed in place, where it lives: a CPU tensor's array, else the tensor itself (a device tensor's
    # host copy would not reach `fn`)
    x = _array(t) if t.device.type == "cpu" else t.detach()
    cols = [np.zeros((t.numel(), n)) for n in n_out]
    for j, idx in enumerate(np.ndindex(*t.shape)):
        orig = x[idx].item()
        x[idx] = orig + eps
        plus = [_array(o).astype(np.float64).ravel().copy() for o in _outputs(fn(*inputs))]
        x[idx] = orig - eps
        minus = [_array(o).astype(np.float64).ravel().copy() for o in _outputs(fn(*inputs))]
        x[idx] = orig
        for k in range(len(n_out)):
            cols[k][j] = (plus[k] - minus[k]) / (2 * eps)
    return cols


def _analytical(outputs: list[Tensor], diff_inputs: list[Tensor]) -> list[list[np.ndarray]]:
    """[k][i]: d(out_k)/d(input_i) as a (numel(in), numel(out_k)) matrix, from autograd.grad."""
    G = opcall.api
    jac = [[np.zeros((int(np.prod(x.shape)), int(np.prod(o.shape)))) for x in diff_inputs] for o in outputs]
    for k, o in enumerate(outputs):
        if not o._requires_grad:
            continue
        n = int(np.prod(o.shape))
        for m in range(n):
            onehot = np.zeros(n, dtype=_array(o).dtype)
            onehot[m] = 1.0
            go = G.tensor(onehot.reshape(o.shape), dtype=o.dtype, device=o.device)
            grads = autograd_grad([o], diff_inputs, [go], retain_graph=True, allow_unused=True)
            for i, g in enumerate(grads):
                if g is not None:
                    jac[k][i][:, m] = _array(g).astype(np.float64).ravel()
    return jac


def gradcheck(fn: Callable[..., Any], inputs: Any, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True) -> bool:
    """Check the gradients of `fn` at `inputs` (a tensor or a tuple; float64 tensors that require grad are
    checked) against finite differences. Returns True, or raises GradcheckError (False if
    raise_exception=False)."""
    inputs = tuple(inputs) if isinstance(inputs, list | tuple) else (inputs,)
    name = _fn_name(fn)
    diff_idx = [i for i, x in enumerate(inputs) if _is_tensor(x) and x._requires_grad]
    if not diff_idx:
        raise ValueError(f"gradcheck of {name}: no input requires grad")
    for i in diff_idx:
        if repr(inputs[i].dtype) != "opgen.float64":
            raise ValueError(f"gradcheck of {name}: input {i} is {inputs[i].dtype!r}; gradcheck needs "
                             "float64 inputs (finite differences in lower precision are not reliable)")
    outputs = _outputs(fn(*inputs))
    if not outputs:
        raise ValueError(f"gradcheck of {name}: the function returned no tensor")
    diff_inputs = [inputs[i] for i in diff_idx]
    analytical = _analytical(outputs, diff_inputs)
    n_out = [int(np.prod(o.shape)) for o in outputs]
    for pos, i in enumerate(diff_idx):
        numerical = _numerical(fn, inputs, i, n_out, eps)
        for k in range(len(outputs)):
            a, n = analytical[k][pos], numerical[k]
            bad = ~np.isclose(a, n, rtol=rtol, atol=atol)
            if bad.any():
                err = np.where(bad, np.abs(a - n), -1.0)
                j, m = np.unravel_index(int(np.argmax(err)), err.shape)
                in_idx = tuple(int(v) for v in np.unravel_index(int(j), inputs[i].shape))
                out_idx = tuple(int(v) for v in np.unravel_index(int(m), outputs[k].shape))
                message = (f"gradcheck failed for {name}: Jacobian mismatch for output {k} with respect to "
                           f"input {i} at input element {list(in_idx)}, output element {list(out_idx)}: "
                           f"numerical {n[j, m]!r}, analytical {a[j, m]!r} "
                           f"({int(bad.sum())} of {bad.size} entries differ; atol={atol}, rtol={rtol})")
                if raise_exception:
                    raise GradcheckError(message)
                return False
    return True


def gradgradcheck(fn: Callable[..., Any], inputs: Any, grad_outputs: Any = None, eps: float = 1e-6,
                  atol: float = 1e-5, rtol: float = 1e-3, raise_exception: bool = True,
                  seed: int = 0) -> bool:
    """Check second derivatives: gradcheck of (inputs, grad_outputs) -> autograd.grad(fn(inputs), inputs,
    grad_outputs, create_graph=True). Random grad_outputs are used when none are given."""
    G = opcall.api
    inputs = tuple(inputs) if isinstance(inputs, list | tuple) else (inputs,)
    diff_idx = [i for i, x in enumerate(inputs) if _is_tensor(x) and x._requires_grad]
    outputs = [o for o in _outputs(fn(*inputs)) if o._requires_grad]
    if grad_outputs is None:
        rng = np.random.default_rng(seed)
        grad_outputs = tuple(G.tensor(rng.standard_normal(o.shape), dtype=o.dtype, device=o.device,
                                      requires_grad=True) for o in outputs)
    else:
        grad_outputs = tuple(grad_outputs) if isinstance(grad_outputs, list | tuple) else (grad_outputs,)
    n_in = len(inputs)

    def first_derivatives(*args: Any) -> tuple[Tensor, ...]:
        xs, gos = args[:n_in], args[n_in:]
        outs = [o for o in _outputs(fn(*xs)) if o._requires_grad]
        wrt = [xs[i] for i in diff_idx]
        grads = autograd_grad(outs, wrt, list(gos), create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    first_derivatives.__qualname__ = f"gradgrad({_fn_name(fn)})"
    return gradcheck(first_derivatives, inputs + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
