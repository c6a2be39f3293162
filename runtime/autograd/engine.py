"""The autograd engine: runs the backward graph from the roots in topological order.

Note [Engine execution order]
As the lecture behind this project describes, execution is a topological sort by in-degree:
  1. walk the graph reachable from the roots and count, for every node, the edges that point at it
     (its dependencies: how many gradients it still waits for);
  2. a node whose count is zero is ready; ready nodes sit in a heap ordered by `sequence_nr`, newest
     first (the reverse of forward creation order, which keeps memory low and matches PyTorch);
  3. running a node routes each returned gradient along its edge into the input buffer of the next
     node, summing gradients that arrive at the same input (a tensor used several times), and
     decrements that node's count; at zero it becomes ready.
Every node runs exactly once, after all of its gradients are complete, so a diamond-shaped graph
sums both branches before going further.

Note [Partial execution for autograd.grad]
With `inputs`, only the part of the graph that leads to an input runs. The inputs become capture
points (node, input_nr): the gradient arriving there is taken (after tensor hooks) instead of being
accumulated. A node is *needed* if a path from it reaches a capture point or a leaf whose `.grad`
must be accumulated; dependencies are then counted over needed nodes only, and a node that is only a
capture point is captured and not run.

Note [One routing rule]
Every rule of the node loop is written once, in the loop, with no helper copy kept in sync by comments:
  - routing a gradient into its child's input buffer (create the buffer on the first gradient, sum a
    second one into a new tensor the engine owns) is the loop's own code. The roots go through it too:
    they are the outputs of a `GraphRoot`, a pass-through node whose input buffer holds the root
    gradients and which runs first (it is the newest node), as PyTorch's GraphRoot does;
  - calling a node: the loop calls `apply` itself in the common case (no hooks, one gradient, present)
    and `_call` runs every other case (pre-hooks, zeros for missing gradients, post-hooks); `_call` does
    not repeat the common case.
Measured on the backward of a 20-node chain of `y * 1.0001` (4 floats), timed in one process against the
engine with inlined twins: calling `_add_to_buffer`/`_call` helpers per edge and node cost 5-7% of the
backward; this layout is within 1% of the twins (the root node is one node step per backward).

Note [create_graph runs formulas through the dispatcher]
The formulas of generated nodes are calls to the generated op API. With create_graph=True the engine
runs them with grad mode on, so they record a graph of their own (a gradient of a gradient); with
create_graph=False grad mode is off for the whole backward, and they record nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from heapq import heappop, heappush
from typing import Any

import numpy as np

import runtime.autograd.anomaly_mode as anomaly_mode
from runtime import opcall
from runtime.autograd.formulas import sum_to
from runtime.autograd.node import (
    _GRAD_LOCKS,
    _LOCK_MASK,
    AccumulateGrad,
    Edge,
    Node,
    _accumulate,
    accumulate_into_grad,
    gradient_edge,
)
from runtime.dispatcher import AUTOGRAD_BIT, tls

Tensor = Any


class GraphRoot(Node):
    """The roots of a backward pass as one node whose outputs are the root gradients, so that the engine
    routes them as it routes any node's (Note [One routing rule])."""

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        return grads

    @property
    def num_inputs(self) -> int:  # type: ignore[override]
        return len(self.next_edges)


def run_backward(tensors: Sequence[Tensor], grad_tensors: Sequence[Tensor | None], retain_graph: bool | None,
                 create_graph: bool, inputs: Sequence[Tensor] | None = None, allow_unused: bool = False,
                 accumulate: bool = True) -> tuple[Tensor | None, ...] | None:
    """Backpropagate `grad_tensors` from `tensors` (see Note [Engine execution order]).

    accumulate=True (Tensor.backward): gradients are added into the `.grad` of leaves (only of
    `inputs` when given). accumulate=False (autograd.grad): the gradients of `inputs` are returned.
    """
    keep_graph = create_graph if retain_graph is None else bool(retain_graph)
    roots: list[tuple[Edge, Tensor]] = []
    for i, (t, g) in enumerate(zip(tensors, grad_tensors, strict=True)):
        if not t._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if g is None:
            raise RuntimeError(f"grad_tensors[{i}] is None: give the gradient of output {i}")
        if g.shape != t.shape and tuple(g.shape) != tuple(t.shape):
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {list(g.shape)} and "
                               f"output[{i}] has a shape of {list(t.shape)}.")
        roots.append((gradient_edge(t), g))

    captures: dict[Node, list[tuple[int, int]]] | None = None
    exec_targets: set[Node] = set()
    input_edges: list[Edge] = []
    if inputs is not None:
        captures = {}
        for pos, t in enumerate(inputs):
            if not t._requires_grad:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            edge = gradient_edge(t)
            input_edges.append(edge)
            if accumulate and t._grad_fn is None:
                exec_targets.add(edge[0])  # a leaf: its AccumulateGrad runs
            else:
                captures.setdefault(edge[0], []).append((edge[1], pos))

    deps, needed = _dependencies(graph_root := GraphRoot(tuple(e for e, _ in roots)), captures, exec_targets)

    buffers: dict[Node, list[Tensor | None]] = {graph_root: [g for _, g in roots]}
    # AccumulateGrad nodes whose buffered gradient the engine owns (Note [Stealing the first gradient]).
    owned: set[Node] = set()
    results: list[Tensor | None] = [None] * len(input_edges)

    saved_mask = tls.mask
    tls.mask = saved_mask | AUTOGRAD_BIT if create_graph else saved_mask & ~AUTOGRAD_BIT
    try:
        ready: list[tuple[int, Node]] = []  # (-sequence_nr, node): sequence numbers are unique
        if needed is None or graph_root in needed:
            ready.append((-graph_root.sequence_nr, graph_root))
        while ready:
            fn = heappop(ready)[1]
            buf = buffers.pop(fn, None)
            if buf is None:
                buf = [None] * fn.num_inputs
            hooks = fn._hooks
            if hooks is not None:
                _run_tensor_hooks(fn, buf)
            if captures is not None:
                if fn in captures:
                    owned.discard(fn)  # the gradient is also a result
                for input_nr, pos in captures.get(fn, ()):
                    results[pos] = buf[input_nr] if input_nr < len(buf) else None
                if fn not in needed:
                    continue
            if fn.__class__ is AccumulateGrad:
                g = buf[0]
                if g is not None:
                    var = fn._variable()
                    if var is None:
                        continue  # a leaf nobody holds (Note [Leaves and their AccumulateGrad])
                    with _GRAD_LOCKS[(id(var) >> 4) & _LOCK_MASK]:  # Note [Concurrent accumulation]
                        if (var._grad is None and not create_graph and hooks is None and fn in owned
                                and _stealable(g)):
                            var._grad = g
                        else:
                            _accumulate(var, g, create_graph)
                    if hooks is not None and hooks.post_accumulate:
                        for h in list(hooks.post_accumulate):
                            h(var)
                continue
            edges = fn.next_edges
            if hooks is None and len(buf) == 1 and buf[0] is not None:
                outputs = fn.apply(buf)  # the common case; `_call` runs every other (Note [One routing rule])
            else:
                outputs = _call(fn, buf)
            if anomaly_mode.enabled:
                anomaly_mode.check_gradients(fn, outputs)  # Note [Anomaly mode]
            if len(outputs) != len(edges):
                raise RuntimeError(f"function {fn.name()} returned an incorrect number of gradients "
                                   f"(expected {len(edges)}, got {len(outputs)})")
            fresh = fn.fresh_gradients and hooks is None
            for i, e in enumerate(edges):
                if e is None:
                    continue
                child = e[0]
                g = outputs[i]
                if g is not None:
                    if g._data.shape != e[2] or g._dtype is not e[3]:
                        g = _validate(fn, i, g, e)
                    nr = e[1]
                    child_buf = buffers.get(child)
                    if child_buf is None:
                        child_buf = buffers[child] = [None] * child.num_inputs
                    summed = child_buf[nr] is not None
                    # a second gradient for the same input is summed into a tensor the engine owns
                    child_buf[nr] = child_buf[nr] + g if summed else g
                    if child.__class__ is AccumulateGrad:
                        if summed or (fresh and _unshared(g, i, outputs, buf)):
                            owned.add(child)
                        else:
                            owned.discard(child)
                if needed is None or child in needed or child in captures:
                    d = deps[child] - 1
                    deps[child] = d
                    if d == 0:
                        heappush(ready, (-child.sequence_nr, child))
            if not keep_graph and fn._saved_fields:
                fn.release_variables()
    finally:
        tls.mask = saved_mask

    if inputs is None:
        return None
    for pos, t in enumerate(inputs):
        if results[pos] is None and not allow_unused and not accumulate:
            raise RuntimeError("One of the differentiated Tensors appears to not have been used in the "
                               "graph. Set allow_unused=True if this is the desired behavior.")
        if accumulate and t._grad_fn is not None and results[pos] is not None:
            accumulate_into_grad(t, results[pos], create_graph)
    return tuple(results)


def _dependencies(root: Node, captures: dict[Node, Any] | None,
                  exec_targets: set[Node]) -> tuple[dict[Node, int], set[Node] | None]:
    """In-degree of every node reachable from `root` (over needed nodes, Note [Partial execution for
    autograd.grad])."""
    deps: dict[Node, int] = {}
    seen = {root}
    stack = list(seen)
    parents: dict[Node, list[Node]] | None = {} if captures is not None else None
    while stack:
        fn = stack.pop()
        for e in fn.next_edges:
            if e is None:
                continue
            child = e[0]
            deps[child] = deps.get(child, 0) + 1
            if parents is not None:
                parents.setdefault(child, []).append(fn)
            if child not in seen:
                seen.add(child)
                stack.append(child)
    if parents is None or captures is None:
        return deps, None
    needed = {n for n in exec_targets if n in seen}
    frontier = [n for n in seen if n in needed or n in captures]
    visited = set(frontier)
    while frontier:
        n = frontier.pop()
        for p in parents.get(n, ()):
            needed.add(p)
            if p not in visited:
                visited.add(p)
                frontier.append(p)
    deps = {}
    for fn in needed:
        for e in fn.next_edges:
            if e is not None:
                child = e[0]
                deps[child] = deps.get(child, 0) + 1
    return deps, needed


def _run_tensor_hooks(fn: Node, buf: list[Tensor | None]) -> None:
    """Hooks registered on tensors (run on the tensor's complete gradient), then retain_grad."""
    node_hooks = fn._hooks
    if node_hooks is None:
        return
    for nr, hooks in node_hooks.tensor_pre.items():
        if nr < len(buf) and buf[nr] is not None:
            for h in list(hooks):
                r = h(buf[nr])
                if r is not None:
                    buf[nr] = r
    for nr, retain in list(node_hooks.retains_grad.items()):
        if nr < len(buf) and buf[nr] is not None:
            retain(buf[nr])


def _call(fn: Node, buf: list[Tensor | None]) -> list[Tensor | None]:
    """Run `fn` on `buf` in every case but the one run_backward's loop calls `apply` for directly (no
    hooks, one gradient, present): node pre-hooks, zeros for missing gradients, post-hooks."""
    node_hooks = fn._hooks
    if node_hooks is not None:
        for h in list(node_hooks.pre):
            r = h(tuple(buf))
            if r is not None:
                buf = list(r)
    if len(buf) > 1 and fn.materialize_grads and fn.output_meta is not None and any(g is None for g in buf):
        buf = _materialize(fn, buf)
    if all(g is None for g in buf):
        outputs: list[Tensor | None] = [None] * len(fn.next_edges)
    else:
        outputs = fn.apply(buf)
    if node_hooks is not None and node_hooks.post:
        for h in list(node_hooks.post):
            r = h(tuple(outputs), tuple(buf))
            if r is not None:
                outputs = list(r)
    return outputs


def _materialize(fn: Node, buf: list[Tensor | None]) -> list[Tensor | None]:
    G = opcall.api
    out = list(buf)
    for i, g in enumerate(out):
        meta = fn.output_meta[i] if fn.output_meta is not None else None
        if g is None and meta is not None and meta[1].is_floating_point:
            out[i] = G.zeros(meta[0], dtype=meta[1], device=meta[2])
    return out


def _validate(fn: Node, i: int, g: Tensor, edge: Edge) -> Tensor:
    """A gradient as the forward input its edge describes: broadcast dims summed, dtype cast."""
    shape, dtype = edge[2], edge[3]
    if g.shape != shape:
        try:
            g = sum_to(g, shape)
        except RuntimeError:
            pass
        if tuple(g.shape) != tuple(shape):
            raise RuntimeError(f"Function {fn.name()} returned an invalid gradient at index {i} - got "
                               f"{list(g.shape)} but expected shape compatible with {list(shape)}")
    if g.dtype != dtype:
        g = g.to(dtype)
    return g


def _unshared(g: Tensor, i: int, outputs: Sequence[Tensor | None], grads: Sequence[Tensor | None]) -> bool:
    """`g`, output `i` of a formula, is not one of the formula's input gradients and no other output of
    the call is `g` or a view of its memory (Note [Stealing the first gradient])."""
    for x in grads:
        if x is g:
            return False
    data = g._data
    for j, o in enumerate(outputs):
        if j != i and o is not None and (o is g or o._base is g or o._data is data or o._data.base is data):
            return False
    return True


def _stealable(g: Tensor) -> bool:
    """Note [Stealing the first gradient]
    Like PyTorch's AccumulateGrad, the first gradient of a leaf is stored without a copy when nothing
    else can see it; otherwise it is cloned. The engine tracks that ownership explicitly (`owned` in
    run_backward): a leaf's buffered gradient is owned when the engine made it by summing two gradients,
    or when a node whose formulas build new tensors (`Node.fresh_gradients`: the generated nodes, whose
    formulas are op calls) returned it and `_unshared` finds it is not an incoming gradient passed through
    (add's `grad` to both inputs, a root gradient the caller holds) nor shared with another output. No hook
    may have seen it: a node with hooks (which could keep its inputs or outputs), a leaf with hooks, a
    capture of autograd.grad and create_graph all disown it. What remains is checked here: a CPU array
    that owns its memory, with no Storage (no saved-variable version counter, no alias) and no view."""
    data = g._data
    return (data.__class__ is np.ndarray and g._base is None and g._storage is None and not g._requires_grad
            and data.base is None and data.flags.c_contiguous)

