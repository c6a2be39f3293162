"""Unit tests of the autograd engine with hand-built nodes over NumPy-backed stand-in tensors.

The stand-in (`FT`) has the autograd fields of runtime.Tensor and the few tensor methods the engine
uses (`+`, clone, add_, sum, reshape, detach); the `mul`/`exp`/`add`/`total` functions below record
history the way generated autograd kernels do (collect_next_edges, SavedVariable, set_history).
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

from runtime.autograd import engine, function, hooks
from runtime.autograd.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from runtime.autograd.kernels import not_implemented_autograd
from runtime.autograd.node import (
    AccumulateGrad,
    Node,
    NotImplementedNode,
    check_inplace,
    collect_next_edges,
    set_history,
)
from runtime.autograd.saved import ERR_BACKWARD_TWICE, SavedVariable
from runtime.dispatcher import AUTOGRAD_BIT, CPU_BIT


class FDType:
    def __init__(self, np_dtype: Any) -> None:
        self.np = np.dtype(np_dtype)
        self.is_floating_point = self.np.kind == "f"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FDType) and other.np == self.np

    def __hash__(self) -> int:
        return hash(self.np)

    def __repr__(self) -> str:
        return f"opgen.{self.np.name}"


class FT:
    """A NumPy-backed stand-in for runtime.Tensor (autograd fields + the methods the engine calls)."""

    def __init__(self, a: Any, requires_grad: bool = False, _version: list[int] | None = None) -> None:
        self.a = np.asarray(a, dtype=np.float64) if not isinstance(a, np.ndarray) else a
        self._dtype = FDType(self.a.dtype)
        self._device = "cpu"
        self._keys = CPU_BIT | (AUTOGRAD_BIT if requires_grad else 0)
        self._requires_grad = requires_grad
        self._grad = None
        self._grad_fn = None
        self._output_nr = 0
        self._leaf_edge = None
        self._retains_grad = False
        self._base = None
        self._ver = _version if _version is not None else [0]

    shape = property(lambda self: self.a.shape)
    _data = property(lambda self: self.a)
    _storage = None
    dtype = property(lambda self: self._dtype)
    grad = property(lambda self: self._grad)
    grad_fn = property(lambda self: self._grad_fn)

    def _storage_version(self) -> int:
        return self._ver[0]

    def bump(self) -> None:
        self._ver[0] += 1

    def numel(self) -> int:
        return int(self.a.size)

    def is_floating_point(self) -> bool:
        return self._dtype.is_floating_point

    def detach(self) -> FT:
        return FT(self.a, _version=self._ver)

    def clone(self) -> FT:
        return FT(self.a.copy())

    def __add__(self, other: FT) -> FT:
        return add(self, other)

    def add_(self, other: FT) -> FT:
        self.a += other.a
        self.bump()
        return self

    def sum(self, dims: list[int], keepdim: bool = False) -> FT:
        return FT(self.a.sum(axis=tuple(dims), keepdims=keepdim))

    def reshape(self, shape: tuple[int, ...]) -> FT:
        return FT(self.a.reshape(shape))

    def to(self, dtype: FDType) -> FT:
        return FT(self.a.astype(dtype.np))


LOG: list[str] = []


class MulBackward0(Node):
    __slots__ = ("self_", "other_")
    _saved_fields = ("self_", "other_")

    def apply(self, grads: list[Any]) -> list[Any]:
        LOG.append(self.name())
        g = grads[0]
        a, b = self.self_.unpack(self), self.other_.unpack(self)
        return [mul(g, b) if self.needs_input_grad(0) else None,
                mul(g, a) if self.needs_input_grad(1) else None]


class AddBackward0(Node):
    def apply(self, grads: list[Any]) -> list[Any]:
        LOG.append(self.name())
        return [grads[0], grads[0]]


class ExpBackward0(Node):
    __slots__ = ("result_",)
    _saved_fields = ("result_",)

    def apply(self, grads: list[Any]) -> list[Any]:
        LOG.append(self.name())
        return [mul(grads[0], self.result_.unpack(self))]


class SumBackward0(Node):
    __slots__ = ("shape",)

    def apply(self, grads: list[Any]) -> list[Any]:
        LOG.append(self.name())
        return [FT(np.broadcast_to(grads[0].a, self.shape).copy())]


class SplitBackward0(Node):
    """Two outputs (the halves of a 1-D tensor)."""

    def apply(self, grads: list[Any]) -> list[Any]:
        LOG.append(self.name())
        return [FT(np.concatenate([grads[0].a, grads[1].a]))]


def _record(node: Node, out: Any, *inputs: Any) -> Any:
    node.next_edges = collect_next_edges(*inputs)
    set_history(out, node)
    return out


def _wants_grad(*inputs: Any) -> bool:
    return is_grad_enabled() and any(getattr(t, "_requires_grad", False) for t in inputs)


def mul(a: FT, b: FT) -> FT:
    out = FT(a.a * b.a)
    if _wants_grad(a, b):
        node = MulBackward0()
        node.self_, node.other_ = SavedVariable(a), SavedVariable(b)
        _record(node, out, a, b)
    return out


def add(a: FT, b: FT) -> FT:
    out = FT(a.a + b.a)
    return _record(AddBackward0(), out, a, b) if _wants_grad(a, b) else out


def exp(a: FT) -> FT:
    out = FT(np.exp(a.a))
    if _wants_grad(a):
        node = ExpBackward0()
        _record(node, out, a)
        node.result_ = SavedVariable(out, is_output=True)
    return out


def total(a: FT) -> FT:
    out = FT(np.asarray(a.a.sum()))
    if _wants_grad(a):
        node = SumBackward0()
        node.shape = a.shape
        _record(node, out, a)
    return out


def split(a: FT) -> tuple[FT, FT]:
    h = a.shape[0] // 2
    outs = (FT(a.a[:h].copy()), FT(a.a[h:].copy()))
    return _record(SplitBackward0(), outs, a) if _wants_grad(a) else outs


def one() -> FT:
    return FT(np.asarray(1.0))


def leaf(values: Any) -> FT:
    return FT(np.asarray(values, dtype=np.float64), requires_grad=True)


def backward(t: FT, grad: FT | None = None, **kw: Any) -> None:
    function.backward(t, grad if grad is not None else one(), **kw)


@pytest.fixture(autouse=True)
def _clear_log():
    LOG.clear()
    yield
    assert is_grad_enabled(), "a test left grad mode off"


# -- graph recording -----------------------------------------------------------------------------
def test_history_and_next_functions():
    x, w = leaf([1.0, 2.0]), FT([3.0, 4.0])
    y = mul(x, w)
    assert isinstance(y.grad_fn, MulBackward0) and y._requires_grad and y._keys & AUTOGRAD_BIT
    (acc, nr), (none, nr2) = y.grad_fn.next_functions
    assert isinstance(acc, AccumulateGrad) and acc.variable is x and nr == 0
    assert none is None and nr2 == 0
    assert y.grad_fn.needs_input_grad(0) and not y.grad_fn.needs_input_grad(1)
    z = exp(y)
    assert z.grad_fn.next_functions == ((y.grad_fn, 0),)
    assert mul(x, x).grad_fn.next_functions[0][0] is acc  # one AccumulateGrad per leaf


def test_no_history_without_requires_grad_or_in_no_grad():
    x = FT([1.0])
    assert mul(x, x).grad_fn is None
    w = leaf([1.0])
    with no_grad():
        y = mul(w, w)
    assert y.grad_fn is None and not y._requires_grad


def test_sequence_numbers_increase():
    a, b = Node(), Node()
    assert b.sequence_nr > a.sequence_nr


# -- the engine ---------------------------------------------------------------------------------
def test_chain_rule():
    x = leaf([1.0, 2.0, 3.0])
    backward(total(exp(mul(x, x))))
    np.testing.assert_allclose(x.grad.a, 2 * x.a * np.exp(x.a * x.a))


def test_tensor_used_many_times():
    x = leaf([2.0])
    y = mul(mul(x, x), x)  # x^3
    backward(total(add(y, x)))  # d/dx (x^3 + x) = 3x^2 + 1
    np.testing.assert_allclose(x.grad.a, [13.0])


def test_diamond_graph_runs_each_node_once_after_both_branches():
    x = leaf([0.5, 1.0])
    a = exp(x)
    b, c = mul(a, FT([2.0, 2.0])), mul(a, FT([3.0, 3.0]))
    backward(total(add(b, c)))
    np.testing.assert_allclose(x.grad.a, 5 * np.exp(x.a))
    assert LOG.count("ExpBackward0") == 1
    assert LOG.index("ExpBackward0") > max(i for i, n in enumerate(LOG) if n == "MulBackward0")


def test_execution_is_topological():
    order: list[Node] = []
    x = leaf([1.0])
    ys = [exp(x)]
    for i in range(6):  # a graph with cross links: y_i uses y_{i-1} and y_{i-2}
        ys.append(add(ys[-1], ys[-2]) if i else exp(ys[-1]))
    out = total(ys[-1])
    nodes = [y.grad_fn for y in ys] + [out.grad_fn]
    for n in nodes:
        n.register_prehook(lambda grads, n=n: order.append(n))
    backward(out)
    assert len(order) == len(set(order)) == len(nodes)
    for n in nodes:  # every node runs after every node that feeds it a gradient
        for consumer in nodes:
            if any(e is not None and e[0] is n for e in consumer.next_edges):
                assert order.index(consumer) < order.index(n)


def test_ready_nodes_run_newest_first():
    """Note [Engine execution order]: of the ready nodes the newest (highest sequence_nr) runs first.
    Two interleaved chains meet in one add; newest-first runs b2, a2, b1, a1, and oldest-first (the
    reversal) runs a2, a1, b2, b1: the exact order tells them apart, topological order alone does not."""
    x = leaf([0.5, 1.0])
    a1 = exp(x)
    b1 = exp(x)
    a2 = exp(a1)
    b2 = exp(b1)
    out = add(a2, b2)
    order: list[Node] = []
    nodes = {"add": out.grad_fn, "a1": a1.grad_fn, "b1": b1.grad_fn, "a2": a2.grad_fn, "b2": b2.grad_fn}
    for n in nodes.values():
        n.register_prehook(lambda grads, n=n: order.append(n))
    backward(out, FT([1.0, 1.0]))
    names = {id(n): k for k, n in nodes.items()}
    assert [names[id(n)] for n in order] == ["add", "b2", "a2", "b1", "a1"]
    np.testing.assert_allclose(x.grad.a, 2 * np.exp(np.exp(x.a) + x.a))


def test_broadcast_gradient_is_reduced_to_input_shape():
    x = leaf([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    b = leaf([10.0, 20.0, 30.0])
    s = leaf([[2.0]])
    backward(total(mul(add(x, b), s)))
    assert b.grad.shape == (3,) and s.grad.shape == (1, 1)
    np.testing.assert_allclose(b.grad.a, [4.0, 4.0, 4.0])
    np.testing.assert_allclose(s.grad.a, [[x.a.sum() + 2 * b.a.sum()]])


def test_grad_accumulates_across_backward_calls():
    x = leaf([1.0, 2.0])
    backward(total(mul(x, x)))
    backward(total(mul(x, x)))
    np.testing.assert_allclose(x.grad.a, 4 * x.a)


def test_first_grad_is_a_copy_of_the_incoming_gradient():
    x, y = leaf([1.0]), leaf([2.0])
    s = add(x, y)  # AddBackward0 hands the same tensor to both leaves
    g = FT([1.0])
    backward(s, g)
    x.grad.add_(FT([5.0]))
    assert y.grad.a[0] == 1.0 and g.a[0] == 1.0


def test_several_roots_are_routed_like_a_nodes_outputs():
    """Note [One routing rule]: the roots' gradients pass through the engine's one routing rule; roots on
    the same node sum before it runs once, and a leaf given as a root gets its own copy of the gradient."""
    x = leaf([1.0, 2.0])
    y = exp(x)
    g1, g2 = FT([1.0, 10.0]), FT([100.0, 1000.0])
    function.backward([y, y, x], [g1, g2, g1])
    np.testing.assert_allclose(x.grad.a, np.exp(x.a) * (g1.a + g2.a) + g1.a)
    assert LOG.count("ExpBackward0") == 1
    z = leaf([3.0])
    function.backward([z, z], [FT([1.0]), FT([2.0])])
    np.testing.assert_allclose(z.grad.a, [3.0])
    w, gw = leaf([4.0]), FT([5.0])
    function.backward(w, gw)
    w.grad.add_(FT([1.0]))
    assert gw.a[0] == 5.0 and w.grad.a[0] == 6.0


def test_multi_output_node_materializes_missing_grads():
    import sys
    import types
    fake = types.ModuleType("generated")
    fake.zeros = lambda shape, dtype=None, device=None: FT(np.zeros(shape))
    sys.modules.setdefault("generated", fake)
    real_zeros = getattr(sys.modules["generated"], "zeros", None)
    sys.modules["generated"].zeros = fake.zeros
    try:
        x = leaf([1.0, 2.0, 3.0, 4.0])
        lo, hi = split(x)
        backward(total(exp(lo)))
        np.testing.assert_allclose(x.grad.a, [np.e, np.exp(2), 0, 0])
    finally:
        if real_zeros is not None:
            sys.modules["generated"].zeros = real_zeros


# -- retain_graph and saved variables --------------------------------------------------------------
def test_second_backward_without_retain_graph_fails():
    x = leaf([1.0])
    y = total(exp(x))
    backward(y)
    with pytest.raises(RuntimeError) as e:
        backward(y)
    assert str(e.value) == ERR_BACKWARD_TWICE
    assert "retain_graph=True" in str(e.value)


def test_retain_graph_allows_a_second_backward():
    x = leaf([1.0])
    y = total(exp(x))
    backward(y, retain_graph=True)
    backward(y)
    np.testing.assert_allclose(x.grad.a, 2 * np.exp(1.0))


def test_modified_input_raises_version_error():
    x, w = leaf([[1.0, 2.0], [3.0, 4.0]]), FT([[1.0, 1.0], [1.0, 1.0]])
    y = mul(x, w)
    w.bump()  # an in-place change of a saved tensor
    with pytest.raises(RuntimeError) as e:
        backward(total(y))
    assert str(e.value).startswith(
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        "[opgen.float64 [2, 2]] is at version 1; expected version 0 instead.")


def test_modified_output_names_the_node():
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    y = exp(x)
    y.bump()
    with pytest.raises(RuntimeError, match=r"\[opgen.float64 \[2, 2\]\], which is output 0 of ExpBackward0, "
                                           r"is at version 1; expected version 0 instead"):
        backward(total(y))


def test_saved_output_does_not_keep_its_node_alive():
    import gc
    import weakref
    x = leaf([1.0])
    y = exp(x)
    ref = weakref.ref(y.grad_fn)
    del y
    gc.disable()
    try:
        assert ref() is None  # freed by refcount alone: no cycle through the saved output
    finally:
        gc.enable()


# -- autograd.grad ------------------------------------------------------------------------------------
def test_grad_returns_without_accumulating():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    (gx,) = function.grad(total(mul(x, w)), x, one())
    np.testing.assert_allclose(gx.a, w.a)
    assert x.grad is None and w.grad is None


def test_grad_runs_only_the_needed_part_of_the_graph():
    x, w = leaf([1.0]), leaf([2.0])
    y = add(exp(w), mul(x, FT([3.0])))
    (gx,) = function.grad(total(y), [x], [one()])
    assert "ExpBackward0" not in LOG
    np.testing.assert_allclose(gx.a, [3.0])


def test_grad_of_non_leaf():
    x = leaf([1.0, 2.0])
    h = exp(x)
    (gh,) = function.grad(total(mul(h, h)), [h], [one()])
    np.testing.assert_allclose(gh.a, 2 * np.exp(x.a))
    assert "ExpBackward0" not in LOG


def test_grad_unused_input():
    x, z = leaf([1.0]), leaf([1.0])
    y = total(exp(x))
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        function.grad(y, [z], [one()], retain_graph=True)
    gx, gz = function.grad(y, [x, z], [one()], allow_unused=True)
    assert gz is None and gx is not None


def test_errors_on_tensors_that_do_not_require_grad():
    x = FT([1.0])
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and does not have a "
                                           "grad_fn"):
        function.backward(x, one())
    w = leaf([1.0])
    with pytest.raises(RuntimeError, match="One of the differentiated Tensors does not require grad"):
        function.grad(total(w), [x], [one()])


def test_implicit_gradient_only_for_scalars():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        function.backward(exp(x))


def test_gradient_shape_mismatch():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape of \[3\]"):
        function.backward(exp(x), FT([1.0, 1.0, 1.0]))


def test_backward_inputs_accumulates_only_into_those():
    x, w = leaf([1.0]), leaf([2.0])
    y = total(mul(x, w))
    function.backward(y, one(), inputs=[x])
    assert w.grad is None
    np.testing.assert_allclose(x.grad.a, [2.0])


# -- node contract errors -----------------------------------------------------------------------------
class BadCount(Node):
    def apply(self, grads):
        return [grads[0], grads[0]]


class BadShape(Node):
    def apply(self, grads):
        return [FT([1.0, 2.0, 3.0])]


def test_node_returning_wrong_number_of_grads():
    x = leaf([1.0, 2.0])
    y = _record(BadCount(), FT([0.0, 0.0]), x)
    with pytest.raises(RuntimeError, match="function BadCount returned an incorrect number of gradients "
                                           r"\(expected 1, got 2\)"):
        function.backward(y, FT([1.0, 1.0]))


def test_node_returning_wrong_shape():
    x = leaf([1.0, 2.0])
    y = _record(BadShape(), FT([0.0, 0.0]), x)
    with pytest.raises(RuntimeError, match=r"Function BadShape returned an invalid gradient at index 0 - "
                                           r"got \[3\] but expected shape compatible with \[2\]"):
        function.backward(y, FT([1.0, 1.0]))


def test_not_implemented_node():
    x = leaf([1.0])
    y = _record(NotImplementedNode("erfinv"), FT([0.5]), x)
    with pytest.raises(RuntimeError, match="derivative for erfinv is not implemented"):
        backward(total(y))


class FakeOp:
    name = "frobnicate"
    tensor_positions = (0, 1)

    def redispatch_below_autograd(self, a, b, k):
        assert is_grad_enabled()
        return FT(a.a * k), FT(np.asarray(b.a > 0, dtype=np.int64))


def test_not_implemented_autograd_kernel():
    kernel = not_implemented_autograd(FakeOp())
    x = leaf([1.0, -1.0])
    out, mask = kernel(x, x, 2)
    assert isinstance(out.grad_fn, NotImplementedNode) and out._requires_grad
    assert mask.grad_fn is None and not mask._requires_grad  # integer outputs never require grad
    with pytest.raises(RuntimeError, match="derivative for frobnicate is not implemented"):
        function.backward(out, FT([1.0, 1.0]))
    out2, _ = kernel(FT([1.0]), FT([1.0]), 2)
    assert out2.grad_fn is None


# -- in-place checks --------------------------------------------------------------------------------
def test_check_inplace_on_leaf():
    x = leaf([1.0])
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place "
                                           "operation."):
        check_inplace(x)
    with no_grad():
        check_inplace(x)  # allowed under no_grad (e.g. an optimizer step)
    check_inplace(exp(x))
    check_inplace(FT([1.0]))


def test_check_inplace_on_view_of_leaf():
    x = leaf([1.0, 2.0])
    v = exp(x)
    v._base = x
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        check_inplace(v)


# -- hooks --------------------------------------------------------------------------------------------
def test_hook_on_leaf_changes_its_gradient():
    x = leaf([1.0, 2.0])
    seen = []
    handle = hooks.register_hook(x, lambda g: seen.append(g.a.copy()) or mul(g, FT([10.0, 10.0])))
    backward(total(mul(x, x)))
    np.testing.assert_allclose(seen[0], 2 * x.a)
    np.testing.assert_allclose(x.grad.a, 20 * x.a)
    handle.remove()
    x._grad = None
    backward(total(mul(x, x)))
    np.testing.assert_allclose(x.grad.a, 2 * x.a)


def test_hook_on_non_leaf_changes_the_gradient_downstream():
    x = leaf([1.0, 2.0])
    h = exp(x)
    hooks.register_hook(h, lambda g: mul(g, FT([0.0, 1.0])))
    backward(total(mul(h, h)))  # h used twice: the hook sees the summed gradient
    np.testing.assert_allclose(x.grad.a, [0.0, 2 * np.exp(4.0)])


def test_hook_requires_grad():
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require "
                                           "gradient"):
        hooks.register_hook(FT([1.0]), lambda g: g)


def test_retain_grad():
    x = leaf([1.0, 2.0])
    h = exp(x)
    hooks.retain_grad(h)
    hooks.register_hook(h, lambda g: mul(g, FT([2.0, 2.0])))
    backward(total(h))
    np.testing.assert_allclose(h.grad.a, [2.0, 2.0])  # retain_grad sees the hooked gradient
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"):
        hooks.retain_grad(FT([1.0]))


def test_node_pre_and_post_hooks():
    x = leaf([3.0])
    y = exp(x)
    y.grad_fn.register_prehook(lambda grads: (mul(grads[0], FT([2.0])),))
    y.grad_fn.register_hook(lambda gi, go: (add(gi[0], FT([1.0])),))
    backward(total(y))
    np.testing.assert_allclose(x.grad.a, 2 * np.exp(3.0) + 1)


# -- create_graph and grad mode during backward -------------------------------------------------------
class ModeProbe(Node):
    def apply(self, grads):
        LOG.append(f"grad mode {is_grad_enabled()}")
        return [grads[0]]


def test_grad_mode_during_backward_follows_create_graph():
    for create_graph in (False, True):
        x = leaf([1.0])
        y = _record(ModeProbe(), FT([1.0]), x)
        function.backward(y, FT([1.0]), create_graph=create_graph)
    assert LOG == ["grad mode False", "grad mode True"]


def test_create_graph_keeps_the_graph_by_default():
    x = leaf([2.0])
    y = total(mul(x, x))
    (g,) = function.grad(y, [x], [one()], create_graph=True)
    assert g._requires_grad and g.grad_fn is not None  # the gradient has its own graph
    (gg,) = function.grad(total(g), [x], [one()])
    np.testing.assert_allclose(gg.a, [2.0])
    (g2,) = function.grad(y, [x], [one()])  # saved tensors were kept (retain_graph defaults to create_graph)
    np.testing.assert_allclose(g2.a, [4.0])


# -- grad mode ----------------------------------------------------------------------------------------
def test_no_grad_and_enable_grad_nest():
    x = leaf([1.0])
    with no_grad():
        assert not is_grad_enabled()
        with enable_grad():
            assert is_grad_enabled()
            assert mul(x, x).grad_fn is not None
        assert mul(x, x).grad_fn is None
    assert is_grad_enabled()


def test_grad_mode_decorators():
    @no_grad()
    def off():
        return is_grad_enabled()

    @set_grad_enabled(False)
    def also_off():
        return is_grad_enabled()

    assert is_grad_enabled()  # decorating does not switch the mode
    assert off() is False and also_off() is False
    with no_grad():
        assert enable_grad()(is_grad_enabled)() is True
    assert is_grad_enabled()


def test_set_grad_enabled_plain_call_and_context():
    set_grad_enabled(False)
    try:
        assert not is_grad_enabled()
    finally:
        set_grad_enabled(True)
    with set_grad_enabled(False):
        assert not is_grad_enabled()
    assert is_grad_enabled()


def test_grad_mode_is_per_thread():
    seen = []
    with no_grad():
        t = threading.Thread(target=lambda: seen.append(is_grad_enabled()))
        t.start()
        t.join()
        assert not is_grad_enabled()
    assert seen == [True]


def test_grad_mode_restored_after_exception_in_backward():
    x = leaf([1.0])
    y = _record(NotImplementedNode("op"), FT([1.0]), x)
    with pytest.raises(RuntimeError):
        function.backward(y, FT([1.0]))
    assert is_grad_enabled()


def test_accumulate_grad_node_is_held_by_its_leaf_which_it_holds_weakly():
    # Note [Leaves and their AccumulateGrad]: no cycle, so the leaf dies by reference counting.
    import gc
    import weakref
    x = leaf([1.0])
    y = add(x, x)  # saves nothing
    acc = y.grad_fn.next_functions[0][0]
    assert x._leaf_edge[:2] == (acc, 0) and acc.variable is x
    assert add(x, x).grad_fn.next_functions[0][0] is acc  # one per leaf
    gc.disable()
    try:
        alive = weakref.ref(x)
        del x
        assert alive() is None and acc.variable is None
    finally:
        gc.enable()
    backward(total(y))  # the graph still runs; the gradient of a leaf nobody holds goes nowhere


def test_engine_sum_to_helper():
    g = FT(np.ones((4, 2, 3)))
    assert engine.sum_to(g, (2, 1)).shape == (2, 1)
    np.testing.assert_allclose(engine.sum_to(g, (2, 1)).a, np.full((2, 1), 12.0))
    assert engine.sum_to(g, ()).shape == ()
