"""Fusion: the graph's fusible nodes grouped into kernels over one iteration domain, pointwise ops with the
reductions between them (softmax, layer norm, cross entropy, sums and means over any dims) included.

Note [Fused pointwise kernels]
A node is fusible when kernel_terms.py can turn it into terms: a pointwise op with a kernel spec
(generated/_fusion_specs.py: the spec rendered to C++ by the generator's CUDA renderer) whose output is
float32 or float64 (bool for comparisons), whose tensors are on the CPU in any dtype and layout, and whose
scalars are numbers (on a CUDA device: Note [Fused kernels on a CUDA device] in cuda_render.py); or a
reduction or compound op (Note [Fused kernels with reductions]). Tensors read by
a group (its inputs) are read at their own strides, broadcast dims at stride 0, so views, transposes and
expanded tensors need no copy; each is cast to the dtype the op computes in (the output's, as eager
execution promotes; a comparison's is the widest float among its tensors, else int64). Each term's value
is rounded to its dtype, as eager execution rounds, with contraction into fused multiply-adds off. Scalars
are cast to the computing dtype, as the eager kernels treat a Python number.
Groups are graph fusion, not runs: in execution order, a fusible node joins the group that makes one of
its inputs (else one that reads one of its inputs, else one with its shape as domain whose row dims its
reductions share, or that has none yet when they reduce trailing dims, else a new one) when its terms fit
the group's domain and joining leaves the graph of groups acyclic: no path leads from the group through a
node outside it to the node's inputs (checked by a search downstream of the group). An in-place op is a barrier no group
spans. A group holding one pointwise node or one plain reduction is dissolved (NumPy's one pass is as
good). The groups and remaining nodes then run in a topological order of the graph of groups. Every
value a group stores is a new contiguous array.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field
from typing import Any

from runtime.compile.graph import Node, Value
from runtime.compile.kernel_terms import Term, lower
from runtime.compile.passes import mutates

# Note [Fused kernels with reductions]
# A group has a domain, the shape its element terms (`elem` values) have, and once it holds a reduction,
# row dims D, the dims its first reduction reduces. A reduction over D of an element value makes a `row`
# value (one per index of the other dims, K), which later element terms may read: the kernel loops over K
# outside and makes one pass over D inside per phase, a phase ending where a reduction's result is needed
# (softmax: the max, then the sum of exponentials, then the quotient; layer norm: the mean, the variance,
# then the normalised and affine output). Each pass recomputes the element terms it needs from the inputs
# rather than storing them. Terms on row values (rstd = rsqrt(var + eps)) run once per row between passes.
# A reduction over other dims than D (layer norm's weight gradient beside its input gradient) is a
# `scatter` value: accumulated into an array of its own size, never read inside the group. A sum over all
# rows of a row value (the batch mean of a cross entropy) is a `total`, finished after the loop. When no
# row value is read inside the group and D is not the domain's last dims, every reduction is accumulated
# as a scatter in the arrays' own order (a bias gradient's sum over the batch reads memory contiguously).
# Sums accumulate in double; a mean divides by the count at the end; max and min keep NaN. The order of
# summation is the loop's (vectorised), not NumPy's pairwise one: both round within the dtype's tolerance.


@dataclass(eq=False)
class FusedGroup:
    """One fused kernel. Fields read by other renderers: `nodes` (the graph nodes it computes), `shape`
    (its domain), `dtype` (the domain's dtype), `inputs` and `outputs` (the values it reads and stores, in
    the kernel's parameter order), `entry` and `source` (the C++ kernel), `terms` (kernel_terms.Term, in
    order), `row_dims` (D, or None), `space` (value id -> "elem", "row", "scatter" or "total"); `reduction`
    is its first reduction node and `inner` the elements of D (0 without one)."""

    nodes: list[Node]
    shape: tuple[int, ...]
    dtype: Any
    inputs: list[Value] = field(default_factory=list)
    outputs: list[Value] = field(default_factory=list)
    entry: str = ""
    source: str = ""
    reduction: Node | None = None
    inner: int = 0
    terms: list[Term] = field(default_factory=list)
    row_dims: tuple[int, ...] | None = None
    space: dict[int, str] = field(default_factory=dict)
    level: dict[int, int] = field(default_factory=dict)
    segment: int = 0
    parallel: bool = True  # its loop may be split over threads (no scatter accumulation across the split)
    work: int = 0  # elements the kernel reads per pass, times passes: what the thread threshold compares


def _broadcasts(shape: tuple[int, ...], to: tuple[int, ...]) -> bool:
    if len(shape) > len(to):
        return False
    return all(a in (1, b) for a, b in zip(shape[::-1], to[::-1], strict=False))


def contiguous(shape: tuple[int, ...]) -> tuple[int, ...]:
    out, acc = [], 1
    for s in reversed(shape):
        out.append(acc)
        acc *= s
    return tuple(out[::-1])


def keep_shape(shape: tuple[int, ...], dims: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(1 if d in dims else s for d, s in enumerate(shape))


def drop_shape(shape: tuple[int, ...], dims: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(s for d, s in enumerate(shape) if d not in dims)


def strides_on(domain: tuple[int, ...], dims: tuple[int, ...] | None, shape: tuple[int, ...],
               strides: tuple[int, ...], to: tuple[int, ...]) -> tuple[int, ...] | None:
    """The strides over `domain`'s dims of a tensor (`shape`, `strides`) broadcast to `to`, which is the
    domain or its row shape (with or without the reduced dims `dims`); 0 where it does not move. None if it
    does not broadcast."""
    if not _broadcasts(shape, to):
        return None
    pad = len(to) - len(shape)
    on_to = [0] * pad + [st if sz != 1 else 0 for sz, st in zip(shape, strides, strict=True)]
    if len(to) == len(domain):
        return tuple(on_to)
    if dims is None or len(to) != len(domain) - len(dims):
        return None
    it = iter(on_to)
    return tuple(0 if d in dims else next(it) for d in range(len(domain)))


class _Group:
    """A group being built: `admit` takes a node's terms if they fit (Note [Fused kernels with reductions])."""

    def __init__(self, segment: int, device: str = "cpu") -> None:
        self.g = FusedGroup([], (), None, segment=segment)
        self.device = device  # a CUDA group takes no max or min scatter (Note [Fused kernels on a CUDA device])

    def admit(self, node: Node, terms: list[Term]) -> bool:
        g = self.g
        saved = (g.shape, g.dtype, g.row_dims, dict(g.space), dict(g.level))
        for t in terms:
            if not self._place(t):
                g.shape, g.dtype, g.row_dims, g.space, g.level = saved[0], saved[1], saved[2], saved[3], saved[4]
                return False
        g.nodes.append(node)
        g.terms.extend(terms)
        return True

    def _row_shapes(self) -> tuple[tuple[int, ...], ...]:
        g = self.g
        if g.row_dims is None:
            return ()
        return keep_shape(g.shape, g.row_dims), drop_shape(g.shape, g.row_dims)

    def _fits(self, v: Value, to: tuple[int, ...]) -> bool:
        """`v` read by a term whose result has shape `to`: an input broadcast to it, or an element value (to is
        the domain) or a row value whose broadcast means its own row."""
        g = self.g
        space = g.space.get(v.id)
        if space is None:
            return strides_on(g.shape, g.row_dims, v.shape, v.strides, to) is not None
        if space == "elem":
            return to == g.shape
        if space == "row":
            if to in self._row_shapes():
                return True  # row to row: one value per row either way (eager shapes never mix the two)
            c = contiguous(v.shape)
            own = strides_on(g.shape, g.row_dims, v.shape, c, v.shape)
            read = strides_on(g.shape, g.row_dims, v.shape, c, to)
            return own is not None and own == read
        return False

    def _place(self, t: Term) -> bool:
        g = self.g
        if not g.space and not g.shape:
            shape = t.out.shape if t.kind in ("map", "window") else t.args[0].shape
            if math.prod(shape) == 0 or len(shape) == 0:
                return False
            g.shape = tuple(shape)
            g.dtype = t.out.dtype
        levels = [g.level.get(a.id, 0) for a in t.args]
        level = max(levels, default=0)
        if t.kind == "map":
            if t.out.shape == g.shape:
                space = "elem"
            elif t.out.shape in self._row_shapes():
                space = "row"
            elif math.prod(t.out.shape) == 1 and t.args and all(g.space.get(a.id) == "total" for a in t.args):
                g.space[t.out.id], g.level[t.out.id] = "total", 1 << 30
                return True
            else:
                return False
            if not all(self._fits(a, t.out.shape) for a in t.args):
                return False
            if space == "row" and any(g.space.get(a.id) == "elem" for a in t.args):
                return False
            g.space[t.out.id], g.level[t.out.id] = space, level
            return True
        if t.kind == "reduce":
            src = t.args[0]
            space = g.space.get(src.id)
            if space == "row" and t.how == "sum" and math.prod(t.out.shape) == 1 and g.row_dims is not None \
                    and set(t.dims) | {d for d, s in enumerate(src.shape) if s == 1} == set(range(len(src.shape))):
                g.space[t.out.id], g.level[t.out.id] = "total", 1 << 30
                return True
            if not (space == "elem" or (space is None and src.shape == g.shape)):
                return False
            if g.row_dims is None and "row" not in g.space.values():
                g.row_dims = t.dims
            if t.dims == g.row_dims:
                g.space[t.out.id], g.level[t.out.id] = "row", level + 1
            elif t.how != "sum" and self.device != "cpu":
                return False
            else:
                g.space[t.out.id], g.level[t.out.id] = "scatter", 1 << 30
            return True
        if t.kind == "window":
            if g.space.get(t.args[0].id) is not None or t.out.shape != g.shape:
                return False
            g.space[t.out.id], g.level[t.out.id] = "elem", 0
            return True
        if t.kind == "gather":
            src, index = t.args  # an element value of the group is recomputed at the index
            if g.space.get(src.id) not in (None, "elem") or src.shape != g.shape or g.row_dims is None \
                    or len(g.row_dims) != 1 or t.out.shape not in self._row_shapes() \
                    or index.dtype.name != "int64":
                return False
            if g.space.get(index.id) not in (None, "row") or not self._fits(index, t.out.shape):
                return False
            g.space[t.out.id], g.level[t.out.id] = "row", level
            return True
        return False


def groups(nodes: list[Node], specs: dict[str, Any], device: str = "cpu") -> list[Node | FusedGroup]:
    """The steps: groups of fusible nodes (Note [Fused pointwise kernels]) and the other nodes, in an order
    that respects every dependence. `device`: where the kernels run ("cuda:N": the nodes computing there,
    rendered by cuda_render.py)."""
    unit: dict[int, Any] = {}  # id(node) -> its _Group or the node itself
    readers: dict[int, list[Node]] = {}  # value id -> nodes (processed so far) that read it
    producer: dict[int, Node] = {}
    readers_of_group: dict[int, list[_Group]] = {}  # value id -> groups reading it as an input
    built: list[_Group] = []
    segment = 0
    for node in nodes:
        if mutates(node):
            segment += 1
        terms = None if mutates(node) else lower(node, specs, device)
        ins = node.inputs()
        chosen = None
        if terms:
            candidates: list[_Group] = []
            for v in ins:
                p = producer.get(v.id)
                u = unit.get(id(p)) if p is not None else None
                if isinstance(u, _Group) and u not in candidates:
                    candidates.append(u)
            for v in ins:
                for u in readers_of_group.get(v.id, []):
                    if u not in candidates:
                        candidates.append(u)
            shapes = {v.shape for v in (*node.outputs, *ins)}
            dims = {t.dims for t in terms if t.kind == "reduce"}
            rowwise = all(d == tuple(range(len(t.args[0].shape) - len(d), len(t.args[0].shape)))
                          for t in terms if t.kind == "reduce" for d in [t.dims])
            for u in reversed(built):  # horizontal fusion: independent work over the same domain
                if u not in candidates and u.g.shape in shapes \
                        and (dims <= {u.g.row_dims} or (u.g.row_dims is None and rowwise)):
                    candidates.append(u)
            for u in candidates:
                if u.g.segment == segment and _acyclic(u, ins, producer, unit, readers) and u.admit(node, terms):
                    chosen = u
                    break
            if chosen is None:
                fresh = _Group(segment, device)
                if fresh.admit(node, terms):
                    chosen = fresh
                    built.append(fresh)
        unit[id(node)] = chosen if chosen is not None else node
        for v in ins:
            readers.setdefault(v.id, []).append(node)
            p = producer.get(v.id)
            if chosen is not None and (p is None or unit.get(id(p)) is not chosen):
                lst = readers_of_group.setdefault(v.id, [])
                if chosen not in lst:
                    lst.append(chosen)
        for v in node.outputs:
            producer[v.id] = node
        if mutates(node):
            segment += 1
    for u in built:
        g = u.g
        lone = len(g.nodes) == 1 and len(g.terms) == 1
        if lone:
            unit[id(g.nodes[0])] = g.nodes[0]
            continue
        for t in g.terms:
            if t.kind == "reduce" and g.reduction is None and t.node is not None:
                g.reduction = t.node
        g.inner = math.prod(g.shape[d] for d in g.row_dims) if g.row_dims is not None else 0
        for n in g.nodes:
            for v in n.outputs:
                v.strides = contiguous(v.shape)
    return _schedule(nodes, unit)


def _acyclic(u: _Group, ins: list[Value], producer: dict[int, Node], unit: dict[int, Any],
             readers: dict[int, list[Node]]) -> bool:
    """No path leads from group `u` through another unit to the producers of `ins` (so the node may join)."""
    targets = set()
    for v in ins:
        p = producer.get(v.id)
        if p is not None and unit.get(id(p)) is not u:
            targets.add(id(unit[id(p)]))
    if not targets:
        return True
    seen = {id(u)}
    stack: list[Any] = [u]
    while stack:
        cur = stack.pop()
        members = cur.g.nodes if isinstance(cur, _Group) else [cur]
        for m in members:
            for v in m.outputs:
                for r in readers.get(v.id, []):
                    nxt = unit[id(r)]
                    if id(nxt) in seen:
                        continue
                    if id(nxt) in targets:
                        return False
                    seen.add(id(nxt))
                    stack.append(nxt)
    return True


def _schedule(nodes: list[Node], unit: dict[int, Any]) -> list[Node | FusedGroup]:
    """Kahn's algorithm over the units (groups and lone nodes), program order among the ready ones; an
    in-place node is a barrier between what comes before it and after it."""
    position = {id(n): i for i, n in enumerate(nodes)}
    units: dict[int, Any] = {}
    first: dict[int, int] = {}
    for n in nodes:
        u = unit[id(n)]
        units.setdefault(id(u), u)
        first.setdefault(id(u), position[id(n)])
    producer_unit = {v.id: id(unit[id(n)]) for n in nodes for v in n.outputs}
    deps: dict[int, set[int]] = {k: set() for k in units}
    barrier: int | None = None
    for n in nodes:
        k = id(unit[id(n)])
        for v in n.inputs():
            p = producer_unit.get(v.id)
            if p is not None and p != k:
                deps[k].add(p)
        if mutates(n):
            for other, f in first.items():
                if f < position[id(n)] and other != k:
                    deps[k].add(other)
            barrier = k
        elif barrier is not None and barrier != k:
            deps[k].add(barrier)
    users: dict[int, list[int]] = {k: [] for k in units}
    for k, ds in deps.items():
        for d in ds:
            users[d].append(k)
    waiting = {k: len(ds) for k, ds in deps.items()}
    ready = [(first[k], k) for k in units if waiting[k] == 0]
    heapq.heapify(ready)
    order: list[Node | FusedGroup] = []
    while ready:
        _, k = heapq.heappop(ready)
        u = units[k]
        order.append(u.g if isinstance(u, _Group) else u)
        for s in users[k]:
            waiting[s] -= 1
            if waiting[s] == 0:
                heapq.heappush(ready, (first[s], s))
    if len(order) != len(units):
        raise RuntimeError("fusion made the graph of kernels cyclic")
    return order
