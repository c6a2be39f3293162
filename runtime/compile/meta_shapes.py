"""The shapes, dtypes and strides of a captured graph's values, from meta execution.

Note [Shapes from meta execution]
Every operator call that capture records is also made on meta tensors: each tensor the function touches has
a meta twin (same shape, strides and dtype, no data), the call runs on the twins with the Tracer key
excluded, and the node's outputs take their shape, dtype and strides from the meta results, whose twins
the later calls read. An operator whose output shape depends on its input's values (nonzero, unique,
boolean-mask indexing, bincount ...) raises DataDependentOutputError on meta, which ends the capture
(`GraphBreak`): a graph that held one call's shape would be wrong for the next. The call is also made for
real (capture runs the function once, and that run's values are the first call's result); where the two
disagree on a shape or dtype, that is a Meta kernel's bug and the capture ends, naming the operator, rather
than compile a graph from either. Strides that differ on a dim of size > 1 are taken from the real call
(a CPU kernel may return a contiguous result where meta keeps the input's layout, as PyTorch's meta does),
for the kernels that run are the real ones. A call the Meta kernels cannot make (an op whose meta path reads values,
a device argument) keeps the real call's layout; `misses` lists them, and the tests hold it empty for the
operators they compile.
"""

from __future__ import annotations

from typing import Any

from runtime.autograd.grad_mode import no_grad
from runtime.compile.tracing import GraphBreak
from runtime.dispatcher import exclude_keys
from runtime.kernels.meta_shape import DataDependentOutputError
from runtime.tensor import Tensor

Shape = tuple[int, ...]
misses: list[str] = []  # the operators whose calls the Meta kernels could not make (Note above)


class MetaTwins:
    """The meta twin of every tensor a capture has seen, by the tensor's id (the trace keeps them alive)."""

    def __init__(self) -> None:
        self._twins: dict[int, Tensor] = {}

    def twin(self, t: Tensor) -> Tensor:
        m = self._twins.get(id(t))
        if m is None:
            from runtime import opcall

            with exclude_keys("Tracer"):
                m = opcall.ops.empty_strided(tuple(t.shape), tuple(t.stride()), dtype=t.dtype, device="meta")
            self._twins[id(t)] = m
        return m

    def _on_meta(self, x: Any) -> Any:
        if isinstance(x, Tensor):
            return self.twin(x)
        if isinstance(x, list | tuple):
            return type(x)(self._on_meta(a) for a in x)
        return x

    def call(self, op: Any, args: list[Any]) -> list[Tensor] | None:
        """The call's tensor results on meta, or None where the Meta kernels cannot make it (Note above)."""
        if not any(isinstance(a, Tensor) or isinstance(a, list | tuple) and any(isinstance(b, Tensor) for b in a)
                   for a in args):
            return None  # a factory: its device argument names where it runs
        try:
            with exclude_keys("Tracer"), no_grad():
                result = op.call(*[self._on_meta(a) for a in args])
        except DataDependentOutputError as e:
            raise GraphBreak(str(e)) from e
        except Exception:  # the real call's layout is kept, the miss listed (Note above)
            misses.append(op.name)
            return None
        outs = [result] if isinstance(result, Tensor) else list(result) if isinstance(result, list | tuple) else []
        return outs if all(isinstance(t, Tensor) for t in outs) else None

    def adopt(self, op: Any, real: list[Tensor], meta: list[Tensor] | None) -> list[tuple[Shape, Shape]]:
        """The (shape, strides) of each result, from meta where the call was made there; each real result's
        twin becomes its meta result."""
        if meta is None or len(meta) != len(real):
            return [(tuple(t.shape), tuple(t.stride())) for t in real]
        layouts = []
        for t, m in zip(real, meta, strict=True):
            if tuple(m.shape) != tuple(t.shape) or m.dtype is not t.dtype:
                raise GraphBreak(f"{op.name}: its Meta kernel gives {m.dtype.name}{list(m.shape)} where the "
                                 f"{t.device.type} kernel gives {t.dtype.name}{list(t.shape)} (a bug of opgen's)")
            self._twins[id(t)] = m
            layouts.append((tuple(m.shape), _strides(m, t)))
        return layouts


def _strides(m: Tensor, t: Tensor) -> tuple[int, ...]:
    """The meta result's strides where they step the dims as the real result's do; else the real ones (a
    pointwise op on a transposed input keeps its layout on meta, as PyTorch's do, where a CPU kernel may
    return a contiguous result), for the kernels that run are the real ones."""
    strides = tuple(m.stride())
    if any(a != b for a, b, n in zip(strides, t.stride(), t.shape, strict=True) if n > 1):
        return tuple(t.stride())
    return strides
