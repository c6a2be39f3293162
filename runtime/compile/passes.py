"""Graph passes of G.compile: dead-code elimination, common-subexpression elimination, constant folding,
view simplification, and the execution order (a topological sort that keeps program order among
independent nodes)."""

from __future__ import annotations

import heapq
from typing import Any

from runtime.compile.graph import Graph, Node, Value, same_kind

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
    """Merge calls of one operator on the same arguments (not random, not writing, with no write into the
    arguments' memory between the calls, and as Note [Values that keep their memory] allows); returns how
    many."""
    changed = written(graph.nodes)
    returned = _viewed(graph.nodes, {v.id for v in graph.output_values()})
    memory = _memory(graph.nodes)
    version: dict[int, int] = {}  # a memory's writes so far: a call after a write reads other values
    seen: dict[Any, Node] = {}
    rename: dict[int, Value] = {}
    kept: list[Node] = []
    merged = 0
    for node in graph.nodes:
        node.args = substitute(node.args, rename)
        if is_random(node) or mutates(node) or any(v.id in changed for v in node.outputs):
            if mutates(node):
                for v in node.inputs():
                    root = memory(v.id)
                    version[root] = version.get(root, 0) + 1
            kept.append(node)
            continue
        key = (node.name, _key(node.args), tuple(version.get(memory(v.id), 0) for v in node.inputs()))
        first = seen.get(key)
        if first is not None and any(v.id in returned for v in node.outputs) and \
                any(v.id in returned for v in first.outputs):  # two results the caller gets stay two tensors
            first = None
        if first is None or len(first.outputs) != len(node.outputs):
            seen[key] = node
            kept.append(node)
            continue
        for mine, theirs in zip(node.outputs, first.outputs, strict=True):
            rename[mine.id] = theirs
        merged += 1
    graph.nodes = kept
    graph.output = substitute(graph.output, rename)
    return merged


def substitute(x: Any, rename: dict[int, Value]) -> Any:
    if isinstance(x, Value):
        return rename.get(x.id, x)
    if isinstance(x, list | tuple):
        return same_kind(x, [substitute(a, rename) for a in x])
    if isinstance(x, dict):
        return {k: substitute(v, rename) for k, v in x.items()}
    return x


def fold_constants(graph: Graph, results: dict[int, Any]) -> int:
    """Nodes that read no input of the function (factories, arithmetic on them), are not random and write
    nothing become constants: their values at capture (`results`, by node id) are held by the graph, unless
    they must keep their memory (Note [Values that keep their memory])."""
    constant: set[int] = set()  # free values never count: the program may change them between calls
    written = shared(graph)
    folded = 0
    kept: list[Node] = []
    for node in graph.nodes:
        inputs = node.inputs()
        if (not is_random(node) and not mutates(node) and id(node) in results
                and all(v.id in constant for v in inputs) and len(node.outputs) == 1
                and node.outputs[0].id not in written):
            out = node.outputs[0]
            out.producer, out.external = None, results[id(node)]
            constant.add(out.id)
            folded += 1
            continue
        kept.append(node)
    graph.nodes = kept
    return folded


def returns_alias(node: Node) -> bool:
    """The op's result may share memory with an argument (a view, an in-place op): its schema's return
    carries an alias set, `-> Tensor(a)`."""
    return "Tensor(" in str(node.op.schema).partition("->")[2]


def shared(graph: Graph) -> set[int]:
    """Values whose memory must stay their own (Note [Values that keep their memory]): those an in-place op
    writes and those the graph returns, with every value they may view."""
    return _viewed(graph.nodes, {v.id for n in graph.nodes if mutates(n) for v in n.inputs()} |
                   {v.id for v in graph.output_values()})


def written(nodes: list[Node]) -> set[int]:
    """The values an in-place op among `nodes` writes, with every value they may view."""
    return _viewed(nodes, {v.id for n in nodes if mutates(n) for v in n.inputs()})


def _memory(nodes: list[Node]) -> Any:
    """value id -> one id for every value that may share its memory (joined through ops whose result
    aliases an argument)."""
    parent: dict[int, int] = {}

    def find(i: int) -> int:
        while parent.get(i, i) != i:
            i = parent[i] = parent.get(parent[i], parent[i])
        return i
    for node in nodes:
        if returns_alias(node):
            for out in node.outputs:
                for v in node.inputs():
                    parent[find(out.id)] = find(v.id)
    return find


def _viewed(nodes: list[Node], seen: set[int]) -> set[int]:
    """`seen` with the values its values may view (through ops whose result aliases an argument)."""
    for node in reversed(nodes):
        if returns_alias(node) and any(v.id in seen for v in node.outputs):
            seen.update(v.id for v in node.inputs())
    return seen


# Note [Values that keep their memory]
# A value an in-place op writes (`G.zeros(5).index_add_(...)`, a view of a buffer filled in place), or one
# the graph returns (the caller may write it, and gets a new tensor at every call), or a value either of
# those views, is never a folded constant (the capture's tensor holds what the writes left, each run would
# write it again, and every call would return the one tensor). A written value is never merged with another
# call's value (two buffers would become one), nor are two values the graph returns (`G.ones(2), G.ones(2)`
# are two tensors); a returned value and a repeat that is only read merge.


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


# Views that keep their base's storage offset (no slicing): a chain of them from a base is the base itself
# when it ends at the base's shape and strides (Note [Simplifying views]).
_RESHAPES = frozenset({"view", "reshape", "_reshape_alias", "flatten.using_ints", "squeeze", "squeeze.dim",
                       "squeeze.dims", "unsqueeze", "_unsafe_view"})
_SAME_OFFSET = _RESHAPES | {"t", "transpose.int", "permute", "expand", "alias", "movedim.int", "movedim.intlist",
                            "swapaxes", "swapdims"}


def _contiguous(v: Value) -> bool:
    expected = 1
    for n, s in zip(reversed(v.shape), reversed(v.strides), strict=True):
        if n != 1 and s != expected:
            return False
        expected *= n
    return True


def _same_layout(a: Value, b: Value) -> bool:
    return a.shape == b.shape and a.dtype is b.dtype and all(
        x == y for x, y, n in zip(a.strides, b.strides, a.shape, strict=True) if n != 1)


def simplify_views(graph: Graph) -> int:
    """Note [Simplifying views]: a chain of offset-keeping views (reshapes, transposes, permutes, expands)
    that ends at its base's layout is the base (the nodes go); a chain of reshapes of a contiguous base that
    ends contiguous is one `view` of the base. Values an in-place op writes or reads, and the graph's
    outputs (the caller gets a new tensor object), are left alone. Returns how many nodes changed."""
    from runtime.dispatcher import dispatcher

    kept_apart = {v.id for n in graph.nodes if mutates(n) for v in [*n.inputs(), *n.outputs]}
    kept_apart |= {v.id for v in graph.output_values()}
    base: dict[int, Value] = {}  # a view's base through offset-keeping views (reshapes of contiguous values)
    flat: dict[int, Value] = {}  # a reshape's contiguous base through reshapes of contiguous values only
    rename: dict[int, Value] = {}
    kept: list[Node] = []
    changed = 0
    for node in graph.nodes:
        node.args = substitute(node.args, rename)
        src = node.args[0] if node.args else None
        if node.name not in _SAME_OFFSET or len(node.outputs) != 1 or not isinstance(src, Value) or \
                node.name in _RESHAPES and not _contiguous(src):  # (a reshape of the rest may copy)
            kept.append(node)
            continue
        out = node.outputs[0]
        root = base.get(src.id, src)
        if out.id in kept_apart or src.id in kept_apart or root.id in kept_apart:
            kept.append(node)
            continue
        same = src if _same_layout(out, src) else root if _same_layout(out, root) else None
        if same is not None:
            rename[out.id] = same
            changed += 1
            continue
        base[out.id] = root
        if node.name in _RESHAPES:
            first = flat.get(src.id)
            if first is not None and out.dtype is first.dtype:
                node = Node(dispatcher.find("view"), (first, list(out.shape)), node.outputs, "tensor")
                out.producer = node
                changed += 1
            flat[out.id] = first if first is not None else src
        kept.append(node)
    graph.nodes = kept
    graph.output = substitute(graph.output, rename)
    return changed
