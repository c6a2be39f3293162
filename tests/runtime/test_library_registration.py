"""G.library: run-time kernel registration, boxed fallbacks for a key, new operators, undo."""

from __future__ import annotations

from typing import Any

import pytest

import generated as G
from runtime.dispatcher import DispatchKey, dispatcher


def test_impl_overrides_a_kernel_and_remove_restores_it() -> None:
    a, b = G.ones(2), G.ones(2)

    def my_add(self: Any, other: Any, alpha: Any) -> Any:
        return G.mul(self, 10)

    h = G.library.impl("add.Tensor", "CPU", my_add)
    assert G.add(a, b).tolist() == [10.0, 10.0] and (a + b).tolist() == [10.0, 10.0]
    h.remove()
    h.remove()  # idempotent
    assert G.add(a, b).tolist() == [2.0, 2.0]


def test_impl_as_decorator_for_several_keys_and_namespaced_names() -> None:
    @G.library.impl("aten::neg", ["CPU", "CUDA"])
    def my_neg(self: Any) -> Any:
        return G.add(self, 100)

    try:
        assert G.neg(G.zeros(1)).tolist() == [100.0]
        assert dispatcher.find("neg").kernels["CUDA"] is my_neg
    finally:
        my_neg.handle.remove()
    assert G.neg(G.ones(1)).tolist() == [-1.0]



def test_overriding_autograd_and_composite_keys() -> None:
    x = G.ones(2, requires_grad=True)
    with G.library.impl("mul.Tensor", "Autograd", lambda s, o: "autograd kernel"):
        assert G.mul(x, x) == "autograd kernel"
        assert G.mul(x.detach(), x.detach()).tolist() == [1.0, 1.0]  # no Autograd key: the backend runs
    assert G.mul(x, x).grad_fn is not None


def test_library_groups_registrations_and_defines_ops() -> None:
    with G.library.Library("myops", "DEF") as lib:
        op = lib.define("myops::scale(Tensor x, float s) -> Tensor")
        assert op.tensor_positions == (0,)
        lib.impl("scale", lambda x, s: G.mul(x, s), "CompositeImplicitAutograd")
        y = G.library.op("myops::scale")(G.ones(2, requires_grad=True), 3.0)
        assert y.tolist() == [3.0, 3.0] and y.grad_fn is not None  # implicit kernels get autograd for free
        lib.impl("scale", lambda x, s: "cpu", "CPU")
        assert op.call(G.ones(1), 2.0) == "cpu"
        with pytest.raises(RuntimeError, match="already defined"):
            G.library.define("scale(Tensor x) -> Tensor")
    assert "scale" not in dispatcher.ops


def test_fallback_for_a_key_wraps_every_op() -> None:
    log: list[str] = []

    def trace(op: Any, args: list[Any]) -> Any:
        log.append(op.name)
        return op.redispatch_below(DispatchKey.Tracer, *args)

    with G.library.fallback("Tracer", trace), G.library.include_keys("Tracer"):
        x = G.ones(2, 2)
        y = (x @ x).sum()
    assert "mm" in log or "matmul" in log
    assert "sum" in log and y.item() == 8.0
    log.clear()
    G.ones(1) + G.ones(1)
    assert log == []


def test_errors_name_what_is_wrong() -> None:
    with pytest.raises(ValueError, match="unknown dispatch key 'GPU'"):
        G.library.impl("add.Tensor", "GPU", lambda *a: None)
    with pytest.raises(KeyError, match="no operator named 'add.Tensr'; overloads of that name: add.Scalar"):
        G.library.impl("add.Tensr", "CPU", lambda *a: None)
    with pytest.raises(ValueError, match="a fallback is registered for a runtime key"):
        G.library.fallback("CompositeImplicitAutograd", lambda op, args: None)


def _tagged(tag: int) -> Any:
    def kernel(*args: Any) -> Any:
        return tag
    return kernel


def test_out_of_order_removal_keeps_the_newest_remaining_registration() -> None:
    base = dispatcher.find("neg").kernels["CPU"]
    h1 = G.library.impl("neg", "CPU", _tagged(1))
    h2 = G.library.impl("neg", "CPU", _tagged(2))
    h3 = G.library.impl("neg", "CPU", _tagged(3))
    h2.remove()
    assert G.neg(G.ones(1)) == 3
    h3.remove()
    assert G.neg(G.ones(1)) == 1  # not 2 (what was there when h3 registered)
    h1.remove()
    assert dispatcher.find("neg").kernels["CPU"] is base
    assert G.neg(G.ones(1)).tolist() == [-1.0]



def test_out_of_order_removal_of_fallbacks() -> None:
    key = "Tracer"
    h1 = G.library.fallback(key, lambda op, args: 1)
    h2 = G.library.fallback(key, lambda op, args: 2)
    x = G.ones(1)
    try:
        h1.remove()
        with G.library.include_keys(key):
            assert G.neg(x) == 2
    finally:
        h2.remove()
        h1.remove()
    assert DispatchKey[key] not in dispatcher.fallbacks


hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies


@hypothesis.settings(max_examples=60, deadline=None)
@hypothesis.given(st.lists(st.sampled_from(["CPU", "CompositeExplicitAutograd"]), min_size=1, max_size=8),
                  st.randoms(use_true_random=False))
def test_registration_stack_property(regs: list[str], rnd: Any) -> None:
    """Any registration order and any removal order: each key shows its newest remaining registration."""
    op = dispatcher.find("neg")
    before = dict(op.kernels)
    live: list[tuple[int, str, Any, Any]] = []  # (order, key, kernel, handle)
    try:  # hypothesis may stop the example at any draw (the shuffle): clean up in every case
        for order, key in enumerate(regs):
            k = _tagged(order)
            live.append((order, key, k, G.library.impl("neg", key, k)))
        removal = list(live)
        rnd.shuffle(removal)
        for item in removal:
            item[3].remove()
            live.remove(item)
            for key in ("CPU", "CompositeExplicitAutograd"):
                mine = [k for _, kk, k, _ in live if kk == key]
                assert op.kernels.get(key) is (mine[-1] if mine else before.get(key))
            cpu = [k for _, kk, k, _ in live if kk == "CPU"]
            if cpu:
                assert G.neg(G.ones(1)) == cpu[-1]()
    finally:
        for item in live:
            item[3].remove()
    assert op.kernels == before
    assert G.neg(G.ones(1)).tolist() == [-1.0]

