"""Helpers shared by the distributions: parameter broadcasting, probs <-> logits, lazily computed
parameters, sums over the rightmost dimensions."""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from runtime import opcall
from runtime.random import default_generator

Tensor = Any


def _G() -> Any:
    return opcall.api


def broadcast_all(*values: Any) -> tuple[Tensor, ...]:
    """The arguments as tensors of one shape: numbers become tensors of the tensors' dtype and device (the
    default dtype when none is a tensor)."""
    G = _G()
    tensors = [v for v in values if isinstance(v, G.Tensor)]
    if not all(isinstance(v, G.Tensor) or isinstance(v, numbers.Number) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, Tensor or objects "
                         "implementing __torch_function__.")
    if tensors:
        dtype, device = tensors[0].dtype, tensors[0].device
        if not dtype.is_floating_point:
            dtype = G.get_default_dtype()
    else:
        dtype, device = G.get_default_dtype(), None
    out = [v if isinstance(v, G.Tensor) else G.tensor(float(v), dtype=dtype, device=device) for v in values]
    return tuple(G.broadcast_tensors(*out))


def as_float_tensor(v: Any) -> Tensor:
    G = _G()
    if isinstance(v, G.Tensor):
        return v
    return G.tensor(v, dtype=G.get_default_dtype())


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    G = _G()
    return G.sigmoid(logits) if is_binary else G.softmax(logits, -1)


def clamp_probs(probs: Tensor) -> Tensor:
    eps = _G().finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    ps = clamp_probs(probs)
    return ps.log() - (-ps).log1p() if is_binary else ps.log()


def sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """`value` summed over its `dim` rightmost dimensions."""
    if dim == 0:
        return value
    return value.reshape(*value.shape[:value.dim() - dim], -1).sum(-1)


class lazy_property:
    """A parameter computed from another on first read and kept (`probs` of a distribution given `logits`)."""

    def __init__(self, wrapped: Callable[[Any], Any]) -> None:
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance: Any, obj_type: Any = None) -> Any:
        if instance is None:
            return self
        value = self.wrapped(instance)
        instance.__dict__[self.wrapped.__name__] = value
        return value


__all__ = ["broadcast_all", "clamp_probs", "draw_numpy", "lazy_property", "logits_to_probs", "probs_to_logits",
           "sum_rightmost"]


def draw_numpy(draw: Callable[..., Any], shape: Any, like: Tensor, *params: Tensor) -> Tensor:
    """A sample of `shape` from NumPy's `draw(engine, *params, size=shape)` on the default CPU generator (so
    G.manual_seed fixes it), as a tensor of `like`'s dtype and device, with no gradient. Used by the
    families opgen has no sampling op for (Gamma, Poisson, Binomial, Multinomial)."""
    G = _G()
    engine = default_generator().engine()
    arrays = [np.broadcast_to(p.detach().cpu().numpy().astype(np.float64), tuple(shape)) for p in params]
    out = np.ascontiguousarray(draw(engine, *arrays, size=tuple(shape)))
    t = G.from_numpy(out.astype(like.dtype.np if like.dtype.np is not None else np.float32))
    return t.to(like.device) if like.device.type != "cpu" else t
