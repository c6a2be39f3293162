"""In-place ops on views: the base's history is rewritten (PyTorch's CopySlices).

Note [In-place ops on views]
`v = base[...]` shares base's memory, so `v.mul_(2)` changes base too, and the gradient of anything
computed from base afterwards must go through the mul. After the op (rebase_history below):
  1. base's grad_fn becomes a CopySlices node. Its backward takes the gradient of base, runs the
     in-place op's own node (`fn`) on the part that v covers, writes the result back into that part,
     and sends the whole to base's previous history (edge 0). The gradients `fn` computes for the op's
     other inputs go to their own edges (edges 1...), as they would without the view.
  2. Every view of base that requires grad (v included) gets a new grad_fn (AsStridedBackward0), whose
     one edge goes to base's new history: later uses of a view see the in-place op. A view is found
     through `base._views`, where the Autograd kernel of a view op registers the view it recorded
     (weakly). Uses of a view before the in-place op keep the history they recorded.
The same happens after an in-place op on base itself (step 2 only). What opgen does not follow: a view
of a base that did not require grad when the view was made is not registered, so if a later in-place
op on another view makes base require grad, that view keeps requiring no grad (PyTorch regenerates
it).

The view geometry is kept relative to base (sizes, strides, offset in elements), so CopySlices works in
base's own layout: an empty tensor with base's strides receives the gradient, and the view's part of it
is an as_strided view of that tensor, exactly as the forward view was one of base.
"""

from __future__ import annotations

import weakref
from typing import Any

from runtime import opcall
from runtime.autograd.node import Node, gradient_edge, record_output, set_history

Tensor = Any
_PRUNE_AT = 64  # registered views: drop the dead ones whenever the list reaches this length



class _Geometry:
    """A view's place in its base: sizes, strides and offset, in elements, relative to base."""

    __slots__ = ("base_size", "base_stride", "size", "stride", "offset")

    def __init__(self, base: Tensor, view: Tensor) -> None:
        self.base_size = tuple(base.shape)
        self.base_stride = base.stride()
        self.size = tuple(view.shape)
        self.stride = view.stride()
        self.offset = view.storage_offset() - base.storage_offset()


class CopySlices(Node):
    """base's grad_fn after an in-place op on one of its views (Note [In-place ops on views])."""

    __slots__ = ("fn", "geometry")

    def __init__(self, base: Tensor, geometry: _Geometry, fn: Node) -> None:
        base_edge = gradient_edge(base) if base._requires_grad else None
        super().__init__((base_edge, *fn.next_edges[1:]))
        self.fn = fn
        self.geometry = geometry
        self._saved_fields = fn._saved_fields  # so that the engine releases fn's saved tensors with ours

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        grad = grads[0]
        out: list[Tensor | None] = [None] * len(self.next_edges)
        if grad is None:
            return out
        g = self.geometry
        ops = opcall.ops
        result = ops.empty_strided(g.base_size, g.base_stride, dtype=grad.dtype, device=grad.device)
        result.copy_(grad)
        grad_slice = result.as_strided(g.size, g.stride, g.offset)
        res = self.fn.apply([grad_slice.clone()])
        if res[0] is not None:
            grad_slice.copy_(res[0])
        else:
            grad_slice.zero_()
        out[0] = result
        out[1:] = res[1:]
        return out

    def release_variables(self) -> None:
        self.fn.release_variables()


class RegeneratedViewBackward(Node):
    """The grad_fn a view gets when its base's history changes: the view as an as_strided view of base
    (PyTorch's name for it is AsStridedBackward0, which `name()` returns)."""

    __slots__ = ("geometry",)

    def __init__(self, base: Tensor, geometry: _Geometry) -> None:
        super().__init__((gradient_edge(base),))
        self.geometry = geometry

    def name(self) -> str:
        return "AsStridedBackward0"

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        grad = grads[0]
        if grad is None:
            return [None]
        g = self.geometry
        return [opcall.ops.as_strided_backward(grad, g.base_size, g.base_stride, 0, g.size, g.stride, g.offset)]


def register_views(source: Tensor, result: Any) -> None:
    """Remember the views a view op made of `source` that record history (weakly, on their base), so
    that an in-place op can give them the base's new history. Called by the Autograd kernels of view ops."""
    base = source._base
    if base is None:
        base = source
    views = base.__dict__.get("_views")
    if views is None:
        views = base._views = []
    elif len(views) >= _PRUNE_AT:
        views[:] = [r for r in views if r() is not None]
    for view in result if isinstance(result, list | tuple) else (result,):
        if view._base is base:
            views.append(weakref.ref(view))


def _set_view_history(base: Tensor, view: Tensor) -> None:
    record_output(view, RegeneratedViewBackward(base, _Geometry(base, view)), 0)


def regenerate_views(base: Tensor, also: Tensor | None = None) -> None:
    """Give every registered view of `base` that requires grad (and `also`) base's current history."""
    views = base.__dict__.get("_views", ())
    for ref in views:
        view = ref()
        if view is not None and view is not also and view._requires_grad and view._grad_fn is not None:
            _set_view_history(base, view)
    if also is not None:
        _set_view_history(base, also)


def rebase_view(view: Tensor, node: Node) -> None:
    """After an in-place op recorded as `node` on `view`: base gets a CopySlices, views a new grad_fn."""
    base = view._base
    record_output(base, CopySlices(base, _Geometry(base, view), node), 0)
    regenerate_views(base, also=view)


def rebase_history(t: Tensor, node: Node) -> None:
    """After an in-place op on `t`: `node` (whose edges point at t's old history) becomes t's history.

    On a view, the view's base gets the new history (Note [In-place ops on views]); either
    way, the views of the tensor whose history changed are brought up to date.
    """
    if t._base is not None:
        rebase_view(t, node)
        return
    set_history(t, node)
    if "_views" in t.__dict__:
        regenerate_views(t)
