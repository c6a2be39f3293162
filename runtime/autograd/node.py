"""The backward graph: nodes, edges, and the functions autograd kernels use to record history.

Note [Backward graph shape]
A `Node` is the backward of one op call. It receives one gradient per output of the forward op
(`num_inputs` of them, in output order) and returns one gradient per differentiable input of the
forward op (one per entry of `next_edges`, in schema order, Tensor[] inputs flattened). An `Edge`,
a plain tuple `(node, input_nr, shape, dtype, device)`, says where a returned gradient goes (input
`input_nr` of `node`) and what the forward input looked like, so that the engine can reduce a gradient
that was broadcast and cast one of another dtype (PyTorch keeps the same metadata per edge target).
One tuple per edge is the cheapest form to record. An edge is None when that input needs no gradient.
A leaf tensor that requires grad is represented in the graph by its `AccumulateGrad` node, whose job
is to add the arriving gradient into `leaf.grad` (Note [Leaves and their AccumulateGrad]).

Note [Leaves and their AccumulateGrad]
A leaf holds its edge (into its AccumulateGrad) strongly (`_leaf_edge`, made on first use) and the
AccumulateGrad holds the leaf weakly, so there is no reference cycle and recording an op on a leaf costs
one attribute read. (A leaf's shape, dtype and device never change, so its edge never goes stale.)
Hooks registered on a leaf live on its AccumulateGrad, so they run even when nothing else holds the
leaf. The one difference from PyTorch, whose graph keeps its leaves alive: a leaf that nobody holds
any more gets no `.grad` (no one could read it) and `AccumulateGrad.variable` is None.

Note [Lean node construction]
Generated Autograd kernels make a node with `object.__new__` and set the two slots every node
has (`sequence_nr`, `next_edges`) and its saved fields. The rarely set attributes
(`num_inputs`, `output_meta`, `_hooks`) are class-level defaults that an instance
overrides in its `__dict__`.

Note [Saved tensors and reference cycles]
A node owns its SavedVariables (saved.py); a tensor owns its grad_fn. A node that saved one of its own
outputs would form a cycle node -> output -> node, so outputs are saved without their grad_fn and get
it back (the node passed to `unpack`) when unpacked.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from collections.abc import Callable, Iterable
from typing import Any, ClassVar

from runtime.autograd.saved import SavedVariable
from runtime.dispatcher import AUTOGRAD_BIT, tls

Tensor = Any
Meta = tuple[tuple[int, ...], Any, Any]  # (shape, dtype, device) of a forward output

_sequence = itertools.count()
next_sequence_nr = _sequence.__next__
# AccumulateGrad nodes run as soon as they are ready (PyTorch gives them the largest sequence number).
ACCUMULATE_SEQUENCE_NR = 1 << 62
_leaf_edge_lock = threading.Lock()


Edge = tuple[Any, ...]  # (node, input_nr, shape, dtype, device): Note [Backward graph shape]


class _NodeHooks:
    """Hooks of one node, created only when a hook is registered (most nodes have none)."""

    __slots__ = ("pre", "post", "tensor_pre", "retains_grad", "post_accumulate")

    def __init__(self) -> None:
        self.post_accumulate: list[Callable[..., Any]] = []  # AccumulateGrad only: fn(leaf) after .grad is set
        self.pre: list[Callable[..., Any]] = []             # fn(grad_outputs) -> new grad_outputs | None
        self.post: list[Callable[..., Any]] = []            # fn(grad_inputs, grad_outputs) -> new | None
        self.tensor_pre: dict[int, list[Callable[..., Any]]] = {}   # input_nr -> [fn(grad) -> grad | None]
        self.retains_grad: dict[int, Callable[..., Any]] = {}       # input_nr -> fn(grad)


class RemovableHandle:
    """Returned by register_hook; `remove()` unregisters the hook."""

    __slots__ = ("_hooks", "_hook")

    def __init__(self, hooks: list[Callable[..., Any]], hook: Callable[..., Any]) -> None:
        self._hooks = hooks
        self._hook = hook

    def remove(self) -> None:
        for i, h in enumerate(self._hooks):
            if h is self._hook:
                del self._hooks[i]
                return

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


class Node:
    """A backward function (Note [Backward graph shape]). Subclasses implement `apply` and list the
    names of their SavedVariable slots in `_saved_fields` (freed by `release_variables`)."""

    __slots__ = ("next_edges", "sequence_nr", "__dict__", "__weakref__")

    next_edges: tuple[Edge | None, ...]
    sequence_nr: int
    # Class-level defaults (Note [Lean node construction]).
    num_inputs: int = 1
    output_meta: tuple[Meta | None, ...] | None = None  # set by set_history for several outputs
    _hooks: _NodeHooks | None = None

    _saved_fields: ClassVar[tuple[str, ...]] = ()
    # Replace missing gradients of a multi-output node's outputs by zeros before `apply`.
    materialize_grads: ClassVar[bool] = True
    # `apply` returns tensors that nothing else holds, unless it passes an incoming gradient through (the
    # generated nodes); the engine may then store one as a leaf's first `.grad` without a copy (Note
    # [Stealing the first gradient] in engine.py). False for nodes running user code.
    fresh_gradients: ClassVar[bool] = False

    def __init__(self, next_edges: tuple[Edge | None, ...] = ()) -> None:
        self.next_edges = next_edges
        self.sequence_nr = next_sequence_nr()

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        raise NotImplementedError(f"{self.name()}.apply")

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"

    def __call__(self, *grads: Tensor | None) -> tuple[Tensor | None, ...]:
        return tuple(self.apply(list(grads)))

    # -- graph -----------------------------------------------------------------------------------
    @property
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]:
        return tuple((None, 0) if e is None else (e[0], e[1]) for e in self.next_edges)

    @property
    def input_meta(self) -> tuple[Meta | None, ...]:
        """(shape, dtype, device) of each differentiable forward input (None where no grad is needed)."""
        return tuple(None if e is None else e[2:] for e in self.next_edges)

    def set_next_edges(self, *tensors: Any) -> None:
        """Set `next_edges` from the differentiable inputs (None for absent ones; lists are flattened).
        Generated kernels inline this for tensor arguments (Note [Inline recording])."""
        edges: list[Edge | None] = []
        for t in tensors:
            if t.__class__ is list or t.__class__ is tuple:
                edges.extend(collect_next_edges(*t))
            else:
                edges.append(edge_to(t))
        self.next_edges = tuple(edges)

    def needs_input_grad(self, i: int) -> bool:
        return input_needed(self.next_edges, i)

    def should_compute_output(self, i: int) -> bool:
        return self.needs_input_grad(i)

    # -- saved variables ---------------------------------------------------------------------------
    def release_variables(self) -> None:
        """Free the saved tensors (after a backward without retain_graph)."""
        for field in self._saved_fields:
            saved = getattr(self, field, None)
            if saved.__class__ is SavedVariable:
                saved._data = None
                saved._packed = None  # Note [Saved tensor hooks] (saved.py)
                saved._grad_fn = None
                saved._released = True
            elif isinstance(saved, list | tuple):
                for s in saved:
                    if isinstance(s, SavedVariable):
                        s.release()

    # -- hooks -------------------------------------------------------------------------------------
    def _node_hooks(self) -> _NodeHooks:
        if self._hooks is None:
            self._hooks = _NodeHooks()
        return self._hooks

    def register_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """`hook(grad_inputs, grad_outputs)` runs after `apply`; returning a tuple replaces grad_inputs."""
        hooks = self._node_hooks().post
        hooks.append(hook)
        return RemovableHandle(hooks, hook)

    def register_prehook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """`hook(grad_outputs)` runs before `apply`; returning a tuple replaces grad_outputs."""
        hooks = self._node_hooks().pre
        hooks.append(hook)
        return RemovableHandle(hooks, hook)

    def _register_tensor_prehook(self, input_nr: int, hook: Callable[..., Any]) -> RemovableHandle:
        hooks = self._node_hooks().tensor_pre.setdefault(input_nr, [])
        hooks.append(hook)
        return RemovableHandle(hooks, hook)

    def _tensor_prehooks(self, input_nr: int) -> list[Callable[..., Any]]:
        """Hooks registered on the tensor that is this node's output `input_nr` (run before capture)."""
        hooks = self._hooks
        return hooks.tensor_pre.get(input_nr, []) if hooks is not None else []


class AccumulateGrad(Node):
    """The graph node of a leaf that requires grad: adds the incoming gradient into `variable.grad`
    (Note [Leaves and their AccumulateGrad])."""

    __slots__ = ("_variable",)

    def __init__(self, variable: Tensor) -> None:
        super().__init__()
        self.sequence_nr = ACCUMULATE_SEQUENCE_NR + next_sequence_nr()  # unique, like every node's
        self._variable = weakref.ref(variable)

    @property
    def variable(self) -> Tensor | None:
        """The leaf, or None once nothing else holds it."""
        return self._variable()

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        grad = grads[0]
        variable = self._variable()
        if grad is not None and variable is not None:
            accumulate_into_grad(variable, grad)
        return []


class NotImplementedNode(Node):
    """The grad_fn of outputs of an op that has no derivative: fails when backward reaches it."""

    __slots__ = ("op_name",)

    def __init__(self, op_name: str) -> None:
        super().__init__()
        self.op_name = op_name

    def name(self) -> str:
        return f"NotImplemented[{self.op_name}]"

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        raise RuntimeError(f"derivative for {self.op_name} is not implemented")


# Note [Concurrent accumulation]
# Several threads may run backward() at once into the same leaves (PyTorch guards each leaf's `.grad`
# with a mutex). Reading `.grad`, then storing or adding into it, is a check-then-act, and NumPy's in-place
# add may release the GIL, so every write of a `.grad` (AccumulateGrad and the engine, retain_grad hooks,
# the outputs of autograd.grad with `inputs`) holds a lock picked by the tensor's id from a small fixed
# set: no per-tensor allocation, one uncontended acquire per accumulation, and two tensors rarely share
# a lock (sharing is still correct, only serialised). The engine's input buffers are local to one
# run_backward call, so nothing else it writes is shared between threads.
_LOCK_MASK = 63  # 64 locks, indexed by id >> 4 (objects are 16-byte aligned)
_GRAD_LOCKS = tuple(threading.Lock() for _ in range(_LOCK_MASK + 1))


def accumulate_into_grad(variable: Tensor, grad: Tensor, create_graph: bool | None = None) -> None:
    """Add `grad` into `variable.grad` (PyTorch's AccumulateGrad rules), safe under concurrent backward
    calls (Note [Concurrent accumulation]).

    The first gradient is cloned (the engine may hand the same tensor to several leaves, or it may be
    the caller's tensor); later ones are added in place, or out of place under create_graph so that
    the sum stays differentiable.
    """
    if create_graph is None:
        create_graph = bool(tls.mask & AUTOGRAD_BIT)
    with _GRAD_LOCKS[(id(variable) >> 4) & _LOCK_MASK]:
        _accumulate(variable, grad, create_graph)


def _accumulate(variable: Tensor, grad: Tensor, create_graph: bool) -> None:
    """accumulate_into_grad with the variable's lock held."""
    old = variable._grad
    if old is None:
        variable._grad = grad.clone() if create_graph else grad.detach().clone()
    elif create_graph or old._requires_grad:
        variable._grad = old + grad
    else:
        old.add_(grad)


# -- recording history (called by the generated autograd kernels) ----------------------------------
def grad_accumulator(t: Tensor) -> AccumulateGrad:
    """The AccumulateGrad node of a leaf (one per leaf, held by the leaf: Note [Leaves and their
    AccumulateGrad])."""
    return leaf_edge(t)[0]


def leaf_edge(t: Tensor) -> Edge:
    """The edge into a leaf's AccumulateGrad, made once per leaf and held by it."""
    edge = t._leaf_edge
    if edge is None:
        with _leaf_edge_lock:  # two threads recording on a new leaf at once make one AccumulateGrad
            edge = t._leaf_edge
            if edge is None:
                edge = t._leaf_edge = (AccumulateGrad(t), 0, tuple(t.shape), t._dtype, t._device)
    return edge


def input_needed(edges: tuple[Edge | None, ...], i: int) -> bool:
    """Whether input `i` of a node with `edges` needs a gradient (`Node.needs_input_grad`); the generated
    nodes carry this body (Note [Generated, not copied, fast paths] in codegen/inline.py)."""
    return i < len(edges) and edges[i] is not None


def gradient_edge(t: Tensor) -> Edge:
    """Where the gradient of `t` goes: its grad_fn's output `output_nr`, or the leaf's AccumulateGrad."""
    return edge_through(t._grad_fn, t)


def edge_through(fn: Node | None, t: Tensor) -> Edge:
    """The edge of `t`, whose grad_fn (read by the caller) is `fn`: the one definition of an edge (Note
    [Backward graph shape]). The generated Autograd kernels carry this expression, `fn` read once per
    input (codegen/runtime_reads.py)."""
    return (fn, t._output_nr, t._data.shape, t._dtype, t._device) if fn is not None else (t._leaf_edge or leaf_edge(t))


def edge_to(t: Tensor | None) -> Edge | None:
    """The edge of one differentiable input: None unless it requires grad."""
    if t is None or not getattr(t, "_requires_grad", False):
        return None
    return gradient_edge(t)


def _flatten(values: Iterable[Any]) -> list[Any]:
    out: list[Any] = []
    for v in values:
        if isinstance(v, list | tuple):
            out.extend(v)
        else:
            out.append(v)
    return out


def collect_next_edges(*tensors: Any) -> tuple[Edge | None, ...]:
    """One edge per argument (lists and tuples of tensors are flattened); None where no grad is needed."""
    return tuple(edge_to(t) for t in _flatten(tensors))


def any_requires_grad(*tensors: Any) -> bool:
    """True if any argument (tensors, None, or lists/tuples of them) requires grad."""
    for t in tensors:
        if isinstance(t, list | tuple):
            if any_requires_grad(*t):
                return True
        elif t is not None and getattr(t, "_requires_grad", False):
            return True
    return False


def record_output(t: Tensor, node: Node, nr: int) -> None:
    """Make `t` output `nr` of `node`'s forward op: the one definition of recording history on a tensor.
    Generated Autograd kernels inline this body (Note [Generated, not copied, fast paths] in
    codegen/inline.py): keep it plain stores naming only its parameters and `AUTOGRAD_BIT`."""
    t._grad_fn = node
    t._output_nr = nr
    t._requires_grad = True
    t._keys |= AUTOGRAD_BIT


def set_history(outputs: Any, node: Node, differentiable: tuple[bool, ...] | None = None) -> None:
    """Make `node` the grad_fn of the (floating-point, differentiable) outputs of its forward op.

    `outputs` is a tensor or a tuple of them (a list inside the tuple is a Tensor[] return, flattened).
    Non-floating outputs and outputs marked False in `differentiable` never require grad.
    """
    if differentiable is None and outputs.__class__ is not tuple and outputs.__class__ is not list:
        # One tensor: the common case, kept short.
        if outputs._dtype.is_floating_point:
            record_output(outputs, node, 0)
        return
    outs = _flatten(outputs) if isinstance(outputs, list | tuple) else [outputs]
    node.num_inputs = len(outs)
    for i, t in enumerate(outs):
        if t is None or (differentiable is not None and not differentiable[i]):
            continue
        if not t._dtype.is_floating_point:
            continue
        record_output(t, node, i)
    if len(outs) > 1:
        # Only outputs that got history can receive a gradient; the engine zero-fills the others' missing
        # gradients from this metadata, so a non-differentiable output must have none (it would cost a zeros).
        node.output_meta = tuple(
            (t.shape, t._dtype, t._device)
            if t is not None and t._dtype.is_floating_point and (differentiable is None or differentiable[i])
            else None
            for i, t in enumerate(outs))


def check_inplace(t: Tensor) -> None:
    """PyTorch's errors for an in-place op that records history (some input requires grad) on a leaf that
    requires grad, on a view of one, or on a view made in no_grad mode of a tensor that requires grad."""
    if not tls.mask & AUTOGRAD_BIT:
        return
    base = t._base
    if t._requires_grad:
        if base is not None and base._requires_grad and base._grad_fn is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
        if t._grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    elif base is not None and base._requires_grad:
        raise RuntimeError("A view was created in no_grad mode (or of a tensor that did not require grad "
                           "then) and is being modified inplace with grad mode enabled. This use case is "
                           "ambiguous and error-prone, so it is forbidden; clone() the view first.")
