"""Capture: run the function once with the Tracer dispatch key in this thread's include set, so that every
operator call reaches the Tracer fallback first; the fallback computes the call below Tracer (the real
kernels, autograd included) and records it as a node of the graph.

Note [Capture through the dispatcher]
The Tracer key sits above every other, and no kernel is registered for it: one boxed fallback, registered
for the duration of a capture, serves every operator. It records the call, then makes it again below
Tracer with Tracer excluded, so that the operators a composite kernel calls inside are not recorded (the
graph holds what the program called).
Values come from real execution on the first call's inputs; a tensor the function reads without having
made it (a parameter, a global) is a free value, held by the graph and read again at every run. Python
that needs a tensor's data (`.item()`, `.tolist()`, `.numpy()`, `bool(t)`, `float(t)`, `int(t)`) ends
the capture (`GraphBreak`): the value would become a constant of the graph.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from runtime.compile.graph import Graph, Node, Value
from runtime.dispatcher import DispatchKey, dispatcher, exclude_keys, include_keys
from runtime.tensor import Tensor


class GraphBreak(Exception):
    """The function did something a graph cannot hold; the message says what."""


class _State(threading.local):
    trace: _Trace | None = None


_state = _State()
# One capture at a time: breaking on data access patches Tensor's methods for its duration.
_capture_lock = threading.Lock()


class _Trace:
    def __init__(self) -> None:
        self.graph = Graph()
        self.values: dict[int, Value] = {}
        self.keep: list[Any] = []  # the tensors whose ids key `values` stay alive while tracing
        self.results: dict[int, Any] = {}  # node id -> its tensor, for nodes that read no input (folding)
        self._constant: set[int] = set()  # ids of values computed from no input of the function

    def value_of(self, t: Tensor) -> Value:
        v = self.values.get(id(t))
        if v is None:  # a tensor the function did not make: a free value
            v = self.graph.new_value(tuple(t.shape), tuple(t.stride()), t.dtype, t.device, external=t)
            self._remember(t, v)
        return v

    def _remember(self, t: Tensor, v: Value) -> None:
        self.values[id(t)] = v
        self.keep.append(t)

    def add_input(self, t: Tensor) -> Value:
        v = self.graph.new_value(tuple(t.shape), tuple(t.stride()), t.dtype, t.device)
        self.graph.inputs.append(v)
        self._remember(t, v)
        return v

    def symbolic(self, x: Any) -> Any:
        if isinstance(x, Tensor):
            return self.value_of(x)
        if isinstance(x, list | tuple):
            return type(x)(self.symbolic(a) for a in x)
        if isinstance(x, dict):
            return {k: self.symbolic(v) for k, v in x.items()}
        return x

    def record(self, op: Any, args: list[Any], result: Any) -> None:
        sym = tuple(self.symbolic(a) for a in args)
        tensors = [result] if isinstance(result, Tensor) else [r for r in result] if isinstance(result, list | tuple) \
            else []
        if not all(isinstance(t, Tensor) for t in tensors):
            raise GraphBreak(f"operator {op.name} returned {type(result).__name__}, which a graph does not hold")
        kind = "tensor" if isinstance(result, Tensor) else "list" if isinstance(result, list) else "tuple"
        node = Node(op, sym, (), kind)
        outs = []
        for t in tensors:
            v = self.graph.new_value(tuple(t.shape), tuple(t.stride()), t.dtype, t.device, producer=node)
            self._remember(t, v)
            outs.append(v)
        node.outputs = tuple(outs)
        self.graph.nodes.append(node)
        if len(outs) == 1 and "!" not in str(op.schema) and all(v.id in self._constant for v in node.inputs()):
            self.results[id(node)] = tensors[0]
            self._constant.add(outs[0].id)


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
    with exclude_keys("Tracer"):
        result = op.redispatch_below(DispatchKey.Tracer, *args)
    if trace is not None:
        trace.record(op, args, result)
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


@contextmanager
def _breaking_on_data_access() -> Iterator[None]:
    saved = {name: Tensor.__dict__.get(name) for name in _DATA_ACCESS}

    def breaker(name: str) -> Callable[..., Any]:
        def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
            if _state.trace is not None:
                raise GraphBreak(f"Tensor.{name}() reads a tensor's data in Python")
            original = saved[name]
            assert original is not None
            return original(self, *args, **kwargs)
        return method

    for name, original in saved.items():
        if original is not None:
            setattr(Tensor, name, breaker(name))
    try:
        yield
    finally:
        for name, original in saved.items():
            if original is not None:
                setattr(Tensor, name, original)


def capture(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Graph, Any, dict[int, Any]]:
    """Run `fn(*args, **kwargs)` once, recording its operator calls: (the graph, the eager result, the values
    of the nodes that read no input of the function, by node id)."""
    trace = _Trace()
    for a in _tensors((args, kwargs)):
        if id(a) not in trace.values:
            trace.add_input(a)
    from runtime import opcall

    with _capture_lock, _tracer_installed(), _breaking_on_data_access(), _recording_factories(opcall.api):
        _state.trace = trace
        try:
            with include_keys("Tracer"):
                result = fn(*args, **kwargs)
        finally:
            _state.trace = None
    trace.graph.output = trace.symbolic(result) if _holds_only_tensors(result) else _unsupported(result)
    return trace.graph, result, trace.results


def _tensors(x: Any) -> Iterator[Tensor]:
    if isinstance(x, Tensor):
        yield x
    elif isinstance(x, list | tuple):
        for a in x:
            yield from _tensors(a)
    elif isinstance(x, dict):
        for a in x.values():
            yield from _tensors(a)


def _holds_only_tensors(x: Any) -> bool:
    if isinstance(x, Tensor) or x is None:
        return True
    if isinstance(x, list | tuple):
        return all(_holds_only_tensors(a) for a in x)
    return False


def _unsupported(result: Any) -> Any:
    raise GraphBreak(f"the function returns {type(result).__name__}: a compiled graph returns tensors, or lists and "
                     "tuples of them")
