"""Capture: run the function once with the Tracer dispatch key in this thread's include set, so that every
operator call reaches the Tracer fallback first; the fallback computes the call below Tracer (the real
kernels, autograd included) and records it as a node of the graph.

Note [Capture through the dispatcher]
The Tracer key sits above every other, and no kernel is registered for it: one boxed fallback, registered
for the duration of a capture, serves every operator. It records the call, then makes it again below
Tracer with Tracer excluded, so that the operators a composite kernel calls inside are not recorded (the
graph holds what the program called).
The layout of every value (shape, dtype, strides) comes from the same call made on meta tensors (Note [Shapes
from meta execution], meta_shapes.py), which also ends the capture at an operator whose output shape depends
on values; the values come from real execution on the first call's inputs; a tensor the function reads without having
made it (a parameter, a global) is a free value, held by the graph and read again at every run. Python
that needs a tensor's data (`.item()`, `.tolist()`, `.numpy()`, `bool(t)`, `float(t)`, `int(t)`) ends
the capture (`GraphBreak`): the value would become a constant of the graph. So does reseeding a random
generator (`G.manual_seed`, `Generator.manual_seed`/`seed`/`set_state`): a graph draws from each generator's
stream as it stands at the call.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from runtime.autograd.grad_mode import is_grad_enabled
from runtime.compile.graph import Graph, Node, Value, same_kind
from runtime.compile.meta_shapes import MetaTwins
from runtime.compile.passes import written
from runtime.compile.remat import merge_repeated
from runtime.compile.remat import recompute as recompute_saved
from runtime.compile.step_capture import StepEffects, patched
from runtime.compile.tracing import GraphBreak, state
from runtime.dispatcher import DispatchKey, dispatcher, exclude_keys, include_keys
from runtime.random import Generator
from runtime.tensor import Tensor

_state = state
# One capture at a time: breaking on data access patches Tensor's methods for its duration.
_capture_lock = threading.Lock()


class _Trace:
    def __init__(self) -> None:
        self.graph = Graph()
        self.values: dict[int, Value] = {}
        self.keep: list[Any] = []  # the tensors whose ids key `values` stay alive while tracing
        self.results: dict[int, Any] = {}  # node id -> its tensor, for nodes that read no input (folding)
        self._constant: set[int] = set()  # ids of values computed from no input of the function
        self.by_data: dict[int, Value] = {}  # id of a tensor's array -> its value (detached copies alias it)
        self.training = False  # decompose CompositeImplicitAutograd ops (Note [Capturing the backward])
        # which recorded operators fused kernels compute: a composite whose parts all are stays decomposed
        # (Note [Pointwise composites])
        self.pointwise: Callable[[str], bool] | None = None
        self.step = StepEffects(self)  # Note [Capturing a training step]
        self.meta = MetaTwins()  # Note [Shapes from meta execution]
        # id of an input or free tensor -> its value at entry (an in-place op gives the same tensor a new value)
        self.entry: dict[int, Value] = {}

    def value_of(self, t: Tensor) -> Value:
        v = self.values.get(id(t))
        if v is None:
            v = self._alias(t)
        if v is None:  # a tensor the function did not make: a free value
            v = self.graph.new_value(tuple(t.shape), tuple(t.stride()), t.dtype, t.device, external=t)
            self._remember(t, v)
            self.entry[id(t)] = v
        return v

    def _alias(self, t: Tensor) -> Value | None:
        """The value of a tensor on the same array as a known one (`detach()`, which autograd's saved outputs
        are): same array, shape and dtype, so the same value."""
        v = self.by_data.get(id(t._data))
        if v is not None and v.shape == tuple(t.shape) and v.dtype is t.dtype:
            self._remember(t, v)
            return v
        return None

    def _remember(self, t: Tensor, v: Value) -> None:
        self.values[id(t)] = v
        self.by_data.setdefault(id(t._data), v)
        self.keep.append(t)

    def add_input(self, t: Tensor) -> Value:
        v = self.graph.new_value(tuple(t.shape), tuple(t.stride()), t.dtype, t.device)
        self.graph.inputs.append(v)
        self._remember(t, v)
        self.entry.setdefault(id(t), v)
        return v

    def add_inputs(self, tensors: Iterator[Tensor]) -> None:
        """One graph input per tensor argument, in order; a tensor passed again gets an input of its own
        that the graph does not read (the program is called with every argument: its signature notes which
        arguments are one tensor)."""
        for t in tensors:
            if id(t) in self.values:
                self.graph.inputs.append(self.graph.new_value(tuple(t.shape), tuple(t.stride()), t.dtype, t.device))
            else:
                self.add_input(t)

    def symbolic(self, x: Any) -> Any:
        if isinstance(x, Tensor):
            return self.value_of(x)
        if isinstance(x, list | tuple):
            return same_kind(x, [self.symbolic(a) for a in x])
        if isinstance(x, dict):
            return {k: self.symbolic(v) for k, v in x.items()}
        return x

    def record(self, op: Any, args: list[Any], result: Any, meta: list[Tensor] | None = None) -> None:
        """Record a call and its result; `meta`: its results on meta (Note [Shapes from meta execution])."""
        sym = tuple(self.symbolic(a) for a in args)
        tensors = [result] if isinstance(result, Tensor) else [r for r in result] if isinstance(result, list | tuple) \
            else []
        if not all(isinstance(t, Tensor) for t in tensors):
            raise GraphBreak(f"operator {op.name} returned {type(result).__name__}, which a graph does not hold")
        kind = "tensor" if isinstance(result, Tensor) else "list" if isinstance(result, list) else "tuple"
        node = Node(op, sym, (), kind)
        outs = []
        for t, (shape, strides) in zip(tensors, self.meta.adopt(op, tensors, meta), strict=True):
            v = self.graph.new_value(shape, strides, t.dtype, t.device, producer=node)
            self._remember(t, v)
            outs.append(v)
        node.outputs = tuple(outs)
        self.graph.nodes.append(node)
        if len(outs) == 1 and "!" not in str(op.schema) and all(v.id in self._constant for v in node.inputs()):
            self.results[id(node)] = tensors[0]
            self._constant.add(outs[0].id)


    def decomposed(self, op: Any, kernel: Callable[..., Any], args: list[Any]) -> Any:
        """Run a CompositeImplicitAutograd op's decomposition with its parts recorded; unless every part is
        pointwise, the parts are taken back out and the op is recorded as one node (Note [Pointwise
        composites])."""
        mark = len(self.graph.nodes)
        result = kernel(*args)
        parts = self.graph.nodes[mark:]
        if parts and all(self.pointwise is not None and self.pointwise(n.name) for n in parts):
            return result
        gone = {v.id for n in parts for v in n.outputs}
        del self.graph.nodes[mark:]
        for n in parts:
            self.results.pop(id(n), None)
        self._constant -= gone
        self.values = {k: v for k, v in self.values.items() if v.id not in gone}
        self.by_data = {k: v for k, v in self.by_data.items() if v.id not in gone}
        self.record(op, args, result)
        return result


# Note [Pointwise composites]
# A CompositeImplicitAutograd op (gelu, for one) has no kernel of its own: its decomposition calls other
# operators. A training capture always records the parts (autograd saves their values). An inference
# capture records the op as one node unless every part of its decomposition is an op that a fused kernel
# computes elementwise (`pointwise`: an op of the pointwise kernel specs), in which case the parts stay in
# the graph and fuse with their neighbours; the tanh-GELU becomes part of one kernel instead of one
# operator call making a NumPy pass per part. A composite whose decomposition reaches a matmul, a view or
# a reduction stays one node (its parts would not fuse, and the node keeps lowerings that name it).


class PythonCall:
    """A factory of the public API (`G.ones`, `G.tensor`, `G.randn` ...) as a graph operator: factories make
    their tensors without the dispatcher's ops, so capture records the call itself (the ops inside it are
    not recorded). Its arguments are (positional, keyword)."""

    def __init__(self, name: str, fn: Callable[..., Any]) -> None:
        self.name, self.fn = name, fn
        self.schema = f"{name}(...) -> Tensor"

    def call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return self.fn(*args, **kwargs)


FACTORIES = ("empty", "zeros", "ones", "full", "tensor", "as_tensor", "arange", "linspace", "eye", "rand", "randn",
             "randint", "randperm", "scalar_tensor", "empty_like", "zeros_like", "ones_like", "full_like", "rand_like",
             "randn_like", "randint_like")


@contextmanager
def _recording_factories(package: Any) -> Iterator[None]:
    saved = {name: getattr(package, name) for name in FACTORIES if hasattr(package, name)}

    def recorder(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        op = PythonCall(name, fn)

        def factory(*args: Any, **kwargs: Any) -> Any:
            trace = _state.trace
            if trace is None:
                return fn(*args, **kwargs)
            gen = kwargs.get("generator")
            if gen is not None:  # its draws are put back with the default generator's (Undo)
                trace.step.undo.save_generator(gen)
            _state.trace = None
            try:
                with exclude_keys("Tracer"):
                    result = fn(*args, **kwargs)
            finally:
                _state.trace = trace
            trace.record(op, [tuple(args), dict(kwargs)], result)
            return result
        return factory

    for name, fn in saved.items():
        setattr(package, name, recorder(name, fn))
    try:
        yield
    finally:
        for name, fn in saved.items():
            setattr(package, name, fn)


def _tracer_fallback(op: Any, args: list[Any]) -> Any:
    trace = _state.trace
    if trace is not None and (trace.training or (is_grad_enabled() and any(t.requires_grad for t in _tensors(args)))):
        kernel, how = op.resolve(DispatchKey.Autograd)
        if how == "CompositeImplicitAutograd" and kernel is not None:
            return kernel(*args)  # its parts are recorded, and autograd saves their values
    elif trace is not None and trace.pointwise is not None and "!" not in str(op.schema):
        kernel, how = op.resolve(DispatchKey.Autograd)
        if how == "CompositeImplicitAutograd" and kernel is not None:
            return trace.decomposed(op, kernel, args)
    if trace is not None and "!" in str(op.schema):  # it writes a tensor: one from outside is logged to undo
        for t in _tensors(args):
            # a view made inside the function writes its base's memory: a base from outside is logged
            for x in (t, t._base) if t._base is not None else (t,):
                v = trace.values.get(id(x)) or trace._alias(x)  # (a detached gradient is its value's alias)
                if v is None or v.producer is None:  # an input, a .grad at entry or a free value
                    trace.step.undo.save_tensor(x)
    if trace is not None:
        for a in args:
            if isinstance(a, Generator):  # its draws are put back with the default generator's (Undo)
                trace.step.undo.save_generator(a)
    meta = trace.meta.call(op, args) if trace is not None else None
    with exclude_keys("Tracer"):
        result = op.redispatch_below(DispatchKey.Tracer, *args)
    if trace is not None:
        trace.record(op, args, result, meta)
    return result


@contextmanager
def _tracer_installed() -> Iterator[None]:
    """The Tracer fallback, registered for the capture only (other code sees the dispatcher as it was)."""
    remove = dispatcher.register_fallback("Tracer", _tracer_fallback)
    try:
        yield
    finally:
        remove()


_DATA_ACCESS = ("item", "tolist", "numpy", "__bool__", "__float__", "__int__", "__index__", "__array__")
_RESEEDING = ("manual_seed", "seed", "set_state")


@contextmanager
def _breaking_on(cls: type, names: tuple[str, ...], why: str) -> Iterator[None]:
    """While a capture is in progress, calling one of `cls`'s methods `names` ends it (`why`, formatted with
    the method's name); outside one they run as they are."""
    saved = {name: cls.__dict__.get(name) for name in names}

    def breaker(name: str) -> Callable[..., Any]:
        def method(self: Any, *args: Any, **kwargs: Any) -> Any:
            if _state.trace is not None:
                raise GraphBreak(why.format(name))
            original = saved[name]
            assert original is not None
            return original(self, *args, **kwargs)
        return method

    for name, original in saved.items():
        if original is not None:
            setattr(cls, name, breaker(name))
    try:
        yield
    finally:
        for name, original in saved.items():
            if original is not None:
                setattr(cls, name, original)


def _breaking_on_data_access() -> AbstractContextManager[None]:
    return _breaking_on(Tensor, _DATA_ACCESS, "Tensor.{}() reads a tensor's data in Python")


def _breaking_on_reseeding() -> AbstractContextManager[None]:
    return _breaking_on(Generator, _RESEEDING, "Generator.{}() (or G.manual_seed) inside the function reseeds a "
                        "random generator: a graph draws from the stream as it stands at each call")


def capture(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Graph, Any, dict[int, Any]]:
    """Run `fn(*args, **kwargs)` once, recording its operator calls: (the graph, the eager result, the values
    of the nodes that read no input of the function, by node id)."""
    graph, result, results, _ = capture_with_effects(fn, args, kwargs)
    return graph, result, results


def capture_with_effects(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                         pointwise: Callable[[str], bool] | None = None) -> tuple[Graph, Any, dict[int, Any],
                                                                                 StepEffects]:
    """`capture`, with `loss.backward()`, `.grad` and `optimizer.step()` captured too (Note [Capturing a
    training step]); also returns the capture's StepEffects (`.used`: the function did any of them). When
    the capture raises, what the function changed is put back first. `pointwise` names the operators fused
    kernels compute, whose composites stay decomposed (Note [Pointwise composites])."""
    trace = _Trace()
    trace.pointwise = pointwise
    trace.add_inputs(_tensors((args, kwargs)))
    from runtime import opcall

    try:
        with _capture_lock, _tracer_installed(), _breaking_on_data_access(), _breaking_on_reseeding(), \
                _recording_factories(opcall.api), patched(_state):
            _state.trace = trace
            try:
                with include_keys("Tracer"):
                    result = fn(*args, **kwargs)
            finally:
                _state.trace = None
        trace.graph.output = trace.symbolic(result) if _holds_only_tensors(result) else _unsupported(result)
        if trace.step.used:
            trace.step.check_backward_reads()
            trace.step.outputs = trace.step.final_grads()
    except BaseException:
        trace.step.undo.restore()
        raise
    return trace.graph, result, trace.results, trace.step


def _tensors(x: Any) -> Iterator[Tensor]:
    if isinstance(x, Tensor):
        yield x
    elif isinstance(x, list | tuple):
        for a in x:
            yield from _tensors(a)
    elif isinstance(x, dict):
        for a in x.values():
            yield from _tensors(a)


_CONSTANTS = (type(None), bool, int, float, complex, str)


def _holds_only_tensors(x: Any) -> bool:
    """A result a graph returns: tensors and Python constants (None, numbers, strings; what they are is
    guarded by the call's signature and Python state) in lists, tuples, named tuples and dicts."""
    if isinstance(x, (Tensor, *_CONSTANTS)):
        return True
    if isinstance(x, list | tuple):
        return all(_holds_only_tensors(a) for a in x)
    if type(x) is dict:
        return all(isinstance(k, _CONSTANTS) and _holds_only_tensors(a) for k, a in x.items())
    return False


def _unsupported(result: Any) -> Any:
    raise GraphBreak(f"the function returns {type(result).__name__}: a compiled graph returns tensors and Python "
                     "numbers, strings and None, in lists, tuples and dicts")


class Joint:
    """What `capture_joint` returns: the forward and backward graphs of one function (Note [Capturing the
    backward]) and what joins them."""

    def __init__(self, forward: Graph, backward: Graph, result: Any, results: dict[int, Any], diff_outputs: list[int],
                 targets: list[Value], grad_outputs: list[Tensor], grads: list[Any]) -> None:
        self.forward, self.backward = forward, backward
        self.result, self.results = result, results
        self.diff_outputs = diff_outputs  # positions, among the flat tensor outputs, of those that require grad
        self.targets = targets  # the inputs and free values that require grad, in the backward's output order
        self.grad_outputs = grad_outputs  # the gradients of the outputs the backward was captured with
        self.grads = grads  # the eager gradients of the targets (None: unused)
        # the tensors from outside that the function wrote in place, as at entry (to check the program from
        # the same state: Note [Capturing a training step])
        self.undo: Any = None


def capture_joint(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                  recompute: Callable[[Node], bool] | None = None) -> Joint:
    """Run `fn` once recording its operator calls, then run autograd's backward from its outputs that require
    grad, recording the operators the derivative formulas call (Note [Capturing the backward]). `recompute`
    says which forward nodes the backward may compute again rather than have their values saved (Note
    [Recomputing saved values] in remat.py); None saves every value the backward reads."""
    trace = _Trace()
    try:
        return _capture_joint(trace, fn, args, kwargs, recompute)
    except BaseException:  # what the function changed (a batch norm's running statistics) is put back
        trace.step.undo.restore()
        raise


def _capture_joint(trace: _Trace, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                   recompute: Callable[[Node], bool] | None) -> Joint:
    from runtime import opcall
    from runtime.autograd.function import grad as autograd_grad
    from runtime.autograd.grad_mode import no_grad

    trace.training = True
    trace.add_inputs(_tensors((args, kwargs)))
    n_inputs = len(trace.graph.inputs)
    with _capture_lock, _tracer_installed(), _breaking_on_data_access(), _breaking_on_reseeding(), \
            _recording_factories(opcall.api):
        _state.trace = trace
        try:
            with include_keys("Tracer"):
                result = fn(*args, **kwargs)
                if not _holds_only_tensors(result):
                    _unsupported(result)
                output = trace.symbolic(result)
                flat = list(_tensors(result))
                diff = [i for i, t in enumerate(flat) if t.requires_grad]
                targets = [t for t in _tensors((args, kwargs)) if t.requires_grad]
                seen = {id(t) for t in targets}
                for v in trace.graph.externals():
                    t = v.external
                    if t.requires_grad and id(t) not in seen:
                        seen.add(id(t))
                        targets.append(t)
                boundary = len(trace.graph.nodes)
                free_before = {v.id for v in trace.graph.externals()}
                _state.trace = None
                with exclude_keys("Tracer"), no_grad():
                    grad_outputs = [opcall.api.ones_like(flat[i]) for i in diff]
                _state.trace = trace
                grad_values = [trace.add_input(g) for g in grad_outputs]
                # create_graph: the formulas take their paths made of operators (a formula may compute on the
                # arrays when its result needs no history, which no graph could see)
                try:
                    grads = list(autograd_grad([flat[i] for i in diff], targets, grad_outputs, retain_graph=True,
                                               create_graph=True, allow_unused=True)) if diff else \
                        [None] * len(targets)
                except RuntimeError as e:
                    raise GraphBreak(f"the backward could not be captured: {e}") from e
                grads = [None if g is None else g.detach() for g in grads]
                grad_syms = [None if g is None else trace.symbolic(g) for g in grads]
        finally:
            _state.trace = None
    graph = trace.graph
    forward_nodes, backward_nodes = graph.nodes[:boundary], graph.nodes[boundary:]
    if recompute is not None:  # calls repeated across the halves merge first, so both read one value
        forward_nodes, backward_nodes, output, grad_syms = merge_repeated(forward_nodes, backward_nodes, output,
                                                                          grad_syms)
    new_free = [(n.name, v) for n in backward_nodes for v in n.inputs()
                if v.external is not None and v.id not in free_before and not v.external._wrapped]
    new_free += [("a gradient", v) for v in grad_syms if v is not None and v.external is not None
                 and v.id not in free_before]
    if new_free:
        where, v = new_free[0]
        raise GraphBreak(f"the backward ({where}) read a {v.describe()} tensor that no recorded operator made (a "
                         "derivative formula outside the dispatcher?)")
    made_in_forward = {v.id for v in graph.inputs[:n_inputs]} | {v.id for n in forward_nodes for v in n.outputs}
    saved: dict[int, Value] = {}
    for v in [w for n in backward_nodes for w in n.inputs()] + [v for v in grad_syms if v is not None]:
        if v.id in made_in_forward:
            saved.setdefault(v.id, v)
    if recompute is not None:
        # a value the forward writes in place, or one computed from such a value, is not what its producer
        # would give again in the backward: it stays saved (the tensor autograd saved is the written one)
        changed, can = written(forward_nodes), recompute
        recompute = lambda n: can(n) and not any(v.id in changed for v in (*n.inputs(), *n.outputs))  # noqa: E731
        backward_nodes, saved, grad_syms = recompute_saved(forward_nodes, backward_nodes, saved, grad_syms, graph,
                                                           recompute)
    forward = Graph(inputs=graph.inputs[:n_inputs], nodes=forward_nodes, output=(output, list(saved.values())),
                    _ids=graph._ids)
    backward = Graph(inputs=list(saved.values()) + grad_values, nodes=backward_nodes, output=grad_syms,
                     _ids=graph._ids)
    # the targets' values at entry (an in-place op under no_grad gives an input a new value)
    target_values = [trace.entry.get(id(t)) or trace.value_of(t) for t in targets]
    joint = Joint(forward, backward, result, trace.results, diff, target_values, grad_outputs, grads)
    joint.undo = trace.step.undo
    return joint
