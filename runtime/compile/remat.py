"""Rematerialization: which forward values a compiled backward recomputes instead of having them saved
(Note [Recomputing saved values]).

Note [Recomputing saved values]
`capture_joint` splits the traced list into a forward and a backward graph; every value the backward reads
that the forward made is saved: the forward program writes it out and keeps it alive until the backward
runs. For a chain of pointwise ops that is most of the chain (the tanh-GELU's backward reads five of its
nine intermediates), so the fused forward kernel writes five arrays instead of one and the backward reads
them back: memory traffic, and on a machine where fresh pages fault, most of the time. A pointwise value is
cheaper to compute again from its operands inside the backward's fused kernel than to store and load.

`recompute` chooses the saved set. A node is recomputable when it is an op of the pointwise kernel specs
(generated/_fusion_specs.py, the same table fusion reads) that a fused kernel can compute here
(kernel_terms.lower gives it one `map` term: a CPU graph, a float or bool result), has one output, writes
nothing and draws no random numbers; reductions, matmuls, views, random ops and anything that writes are
never recomputed, so what stays saved is their outputs, the inputs, and what no fused kernel computes.
For a saved value `v` made by a recomputable node, its frontier is where recomputation stops walking back
through recomputable producers: values already saved, inputs of the function, free values (parameters,
which the backward reads from the program anyway), and outputs of other nodes. Replacing `v` by its
frontier is taken when it makes the saved bytes smaller, or equal bytes in fewer tensors. Two greedy passes
are compared (from the saved set as captured, and from everything recomputed back to the frontiers that
cannot be) and the smaller saved set is kept; a value is never recomputed through more than
`MAX_RECOMPUTED` nodes (the backward's kernel would do more arithmetic than the memory it saves).
The recomputed nodes are copied into the backward graph (new nodes and values, placed first in forward
order), and the backward's reads of the dropped values are renamed to the copies; the execution order
then puts each copy beside its first reader, and graph fusion merges it into the reader's kernel.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from runtime.compile.graph import Graph, Node, Value
from runtime.compile.kernel_terms import lower as kernel_terms
from runtime.compile.passes import common_subexpressions, is_random, mutates, substitute

MAX_RECOMPUTED = 48


def recomputable(specs: dict[str, Any]) -> Callable[[Node], bool]:
    """The rule of Note [Recomputing saved values] for one node."""
    known: dict[int, tuple[Node, bool]] = {}  # the walks ask about one node many times

    def check(node: Node) -> bool:
        hit = known.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1]
        ok = node.name in specs and len(node.outputs) == 1 and not mutates(node) and not is_random(node)
        if ok:
            terms = kernel_terms(node, specs)
            ok = terms is not None and len(terms) == 1 and terms[0].kind == "map"
        known[id(node)] = (node, ok)
        return ok
    return check


def _bytes(v: Value) -> int:
    return math.prod(v.shape) * np.dtype(v.dtype.np).itemsize


def _cost(saved: dict[int, Value]) -> tuple[int, int]:
    return sum(_bytes(v) for v in saved.values()), len(saved)


def _frontier(v: Value, saved: dict[int, Value], can: Callable[[Node], bool]) -> dict[int, Value] | None:
    """The values that computing `v` again from scratch reads, walking back through recomputable
    producers and stopping at saved values; None where `v` is not recomputable or the walk is too long."""
    producer = v.producer
    if producer is None or not can(producer):
        return None
    out: dict[int, Value] = {}
    walked: set[int] = set()
    stack = [producer]
    while stack:
        node = stack.pop()
        if id(node) in walked:
            continue
        walked.add(id(node))
        if len(walked) > MAX_RECOMPUTED:
            return None
        for w in node.inputs():
            if w.external is not None or w.id in saved or w.producer is None or not can(w.producer):
                out.setdefault(w.id, w)
            else:
                stack.append(w.producer)
    return out


def _greedy(saved: dict[int, Value], can: Callable[[Node], bool], order: dict[int, int]) -> dict[int, Value]:
    """Replace saved values by their frontiers while that lowers the cost; the latest-made first."""
    saved = dict(saved)
    changed = True
    while changed:
        changed = False
        for v in sorted(saved.values(), key=lambda w: -order.get(w.id, -1)):
            if v.id not in saved:
                continue
            rest = {k: w for k, w in saved.items() if k != v.id}
            front = _frontier(v, rest, can)
            if front is None:
                continue
            candidate = {**rest, **{k: w for k, w in front.items() if w.external is None}}
            if _cost(candidate) < _cost(saved):
                saved = candidate
                changed = True
    return saved


def _everything(saved: dict[int, Value], can: Callable[[Node], bool]) -> dict[int, Value]:
    """Every saved value recomputed back to the values that cannot be."""
    out: dict[int, Value] = {}
    for v in saved.values():
        front = _frontier(v, {}, can)
        if front is None:
            out.setdefault(v.id, v)
        else:
            out.update({k: w for k, w in front.items() if w.external is None})
    return out


def recompute(forward_nodes: list[Node], backward_nodes: list[Node], saved: dict[int, Value], grads: list[Any],
              graph: Graph, can: Callable[[Node], bool]) -> tuple[list[Node], dict[int, Value], list[Any]]:
    """The backward's nodes with the recomputed ones first, the saved values, and the gradients' values
    renamed to the copies (Note [Recomputing saved values])."""
    order = {v.id: k for k, n in enumerate(forward_nodes) for v in n.outputs}
    best = saved
    for start in (saved, _everything(saved, can)):
        candidate = _greedy(start, can, order)
        if _cost(candidate) < _cost(best):
            best = candidate
    if best is saved:
        return backward_nodes, saved, grads
    # the forward nodes that make a dropped value from the kept ones
    need: set[int] = set()
    stack = [v for v in saved.values() if v.id not in best]
    while stack:
        v = stack.pop()
        if v.id in best or v.external is not None or v.producer is None or id(v.producer) in need:
            continue
        need.add(id(v.producer))
        stack.extend(v.producer.inputs())
    rename: dict[int, Value] = {}
    copies: list[Node] = []
    for node in forward_nodes:
        if id(node) not in need:
            continue
        copy = Node(node.op, substitute(node.args, rename), (), node.result_kind)
        outs = []
        for v in node.outputs:
            w = graph.new_value(v.shape, v.strides, v.dtype, v.device, producer=copy)
            rename[v.id] = w
            outs.append(w)
        copy.outputs = tuple(outs)
        copies.append(copy)
    for node in backward_nodes:
        node.args = substitute(node.args, rename)
    return copies + backward_nodes, best, substitute(grads, rename)


def merge_repeated(forward_nodes: list[Node], backward_nodes: list[Node], output: Any,
                   grads: list[Any]) -> tuple[list[Node], list[Node], Any, list[Any]]:
    """Common-subexpression elimination over the forward and backward together (before the saved set is
    chosen: a forward value the backward computes again, or a call the forward made twice, is one value)."""
    whole = Graph(nodes=forward_nodes + backward_nodes, output=(output, grads))
    forward = {id(n) for n in forward_nodes}
    common_subexpressions(whole)
    output, grads = whole.output
    return ([n for n in whole.nodes if id(n) in forward], [n for n in whole.nodes if id(n) not in forward], output,
            list(grads))


