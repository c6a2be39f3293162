"""`nn.utils.convert_parameters`: parameters flattened into one vector and back (torch.nn.utils's)."""

from __future__ import annotations

from collections.abc import Iterable

from runtime import opcall
from runtime.autograd.grad_mode import no_grad
from runtime.tensor import Tensor


def _tensors(parameters: Tensor | Iterable[Tensor]) -> list[Tensor]:
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """The parameters flattened and concatenated into one 1-D tensor (on the first one's device)."""
    G = opcall.api
    params = _tensors(parameters)
    if not params:
        raise RuntimeError("parameters_to_vector: expected a non-empty iterable of Tensors")
    device = params[0].device
    for p in params:
        if p.device != device:
            raise TypeError("Found two parameters on different devices, this is currently not supported.")
    return G.cat([G.reshape(p, (-1,)) for p in params])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of the 1-D `vec` into the parameters (in place, untracked)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    params = _tensors(parameters)
    total = sum(p.numel() for p in params)
    if vec.dim() != 1 or vec.numel() != total:
        raise RuntimeError(f"vector_to_parameters: expected a 1-D vector of {total} elements, got shape "
                           f"{list(vec.shape)}")
    offset = 0
    with no_grad():
        for p in params:
            n = p.numel()
            p.copy_(vec[offset:offset + n].view(p.shape))
            offset += n
