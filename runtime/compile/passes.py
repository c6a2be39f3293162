"""Graph passes of G.compile: dead-code elimination, common-subexpression elimination, constant folding,
and the execution order (a topological sort that keeps program order among independent nodes)."""

from __future__ import annotations

import heapq
from typing import Any

from runtime.compile.graph import Graph, Node, Value

# Operators whose every call draws new random numbers: never merged, never folded.
RANDOM_WORDS = ("rand", "normal", "uniform", "bernoulli", "dropout", "multinomial", "random", "exponential",
                "poisson", "cauchy", "geometric", "log_normal")


def is_random(node: Node) -> bool:
    return any(word in node.name for word in RANDOM_WORDS)


def mutates(node: Node) -> bool:
    """The op writes into an argument (an in-place op, an out= form): its schema marks it `(a!)`."""
    return "!" in str(node.op.schema)


def dead_code_elimination(graph: Graph) -> int:
    """Remove nodes whose outputs nothing uses (nodes that write into a tensor stay); returns how many."""
    live = {v.id for v in graph.output_values()}
    kept: list[Node] = []
    for node in reversed(graph.nodes):
        if mutates(node) or any(v.id in live for v in node.outputs):
            kept.append(node)
            live.update(v.id for v in node.inputs())
    removed = len(graph.nodes) - len(kept)
    graph.nodes = kept[::-1]
    return removed


def _key(x: Any) -> Any:
    if isinstance(x, Value):
        return ("value", x.id)
    if isinstance(x, list | tuple):
        return (type(x).__name__, tuple(_key(a) for a in x))
    if isinstance(x, dict):
        return ("dict", tuple(sorted((k, _key(v)) for k, v in x.items())))
    try:
        hash(x)
    except TypeError:
        return ("unhashable", id(x))
    return (type(x).__name__, x)


def common_subexpressions(graph: Graph) -> int:
    """Merge calls of one operator on the same arguments (not random, not writing); returns how many."""
    seen: dict[Any, Node] = {}
    rename: dict[int, Value] = {}
    kept: list[Node] = []
    merged = 0
    for node in graph.nodes:
        node.args = _substitute(node.args, rename)
        if is_random(node) or mutates(node):
            kept.append(node)
            continue
        key = (node.name, _key(node.args))
        first = seen.get(key)
        if first is None or len(first.outputs) != len(node.outputs):
            seen[key] = node
            kept.append(node)
            continue
        for mine, theirs in zip(node.outputs, first.outputs, strict=True):
            rename[mine.id] = theirs
        merged += 1
    graph.nodes = kept
    graph.output = _substitute(graph.output, rename)
    return merged


def _substitute(x: Any, rename: dict[int, Value]) -> Any:
    if isinstance(x, Value):
        return rename.get(x.id, x)
    if isinstance(x, list | tuple):
        return type(x)(_substitute(a, rename) for a in x)
    if isinstance(x, dict):
        return {k: _substitute(v, rename) for k, v in x.items()}
    return x


def fold_constants(graph: Graph, results: dict[int, Any]) -> int:
    """Nodes that read no input of the function (factories, arithmetic on them), are not random and write
    nothing become constants: their values at capture (`results`, by node id) are held by the graph."""
    constant: set[int] = set()  # free values never count: the program may change them between calls
    folded = 0
    kept: list[Node] = []
    for node in graph.nodes:
        inputs = node.inputs()
        if (not is_random(node) and not mutates(node) and id(node) in results
                and all(v.id in constant for v in inputs) and len(node.outputs) == 1):
            out = node.outputs[0]
            out.producer, out.external = None, results[id(node)]
            constant.add(out.id)
            folded += 1
            continue
        kept.append(node)
    graph.nodes = kept
    return folded


def execution_order(graph: Graph) -> None:
    """Order the nodes topologically (Kahn's algorithm), program order among the ready ones; a node that
    writes into a tensor keeps its place after the earlier readers and writers of that tensor."""
    position = {id(n): i for i, n in enumerate(graph.nodes)}
    producer = {v.id: n for n in graph.nodes for v in n.outputs}
    deps: dict[int, set[int]] = {id(n): set() for n in graph.nodes}
    last_touch: dict[int, Node] = {}
    for n in graph.nodes:
        for v in n.inputs():
            p = producer.get(v.id)
            if p is not None:
                deps[id(n)].add(id(p))
            if v.id in last_touch:  # keep reads and writes of one tensor in program order
                deps[id(n)].add(id(last_touch[v.id]))
            if mutates(n):
                last_touch[v.id] = n
    users: dict[int, list[Node]] = {id(n): [] for n in graph.nodes}
    for n in graph.nodes:
        for d in deps[id(n)]:
            users[d].append(n)
    waiting = {k: len(v) for k, v in deps.items()}
    ready = [(position[id(n)], n) for n in graph.nodes if waiting[id(n)] == 0]
    heapq.heapify(ready)
    order: list[Node] = []
    while ready:
        _, n = heapq.heappop(ready)
        order.append(n)
        for u in users[id(n)]:
            waiting[id(u)] -= 1
            if waiting[id(u)] == 0:
                heapq.heappush(ready, (position[id(u)], u))
    if len(order) != len(graph.nodes):
        raise RuntimeError("the captured graph has a cycle")
    graph.nodes = order
