"""The dispatcher: key sets from every tensor argument, precedence, TLS include/exclude, fallbacks, errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import generated as G
from runtime import dispatcher as D
from runtime.device import Device
from runtime.dispatcher import (
    AUTOGRAD_BIT,
    CPU_BIT,
    CUDA_BIT,
    META_BIT,
    Dispatcher,
    DispatchError,
    DispatchKey,
    dispatcher,
)


def fresh_op(name: str = "f", positions: tuple[int, ...] = (0,)) -> tuple[Dispatcher, D.Operator]:
    d = Dispatcher()
    return d, d.declare(name, f"{name}(Tensor self) -> Tensor", positions)


def test_precedence_kernel_then_alias_then_fallback() -> None:
    d, op = fresh_op()
    d.register_fallback("CPU", lambda o, args: "fallback")
    assert op.table[CPU_BIT]() == "fallback"
    d.register("f", "CompositeImplicitAutograd", lambda *a: "implicit")
    assert op.table[CPU_BIT]() == "implicit"
    d.register("f", "CompositeExplicitAutograd", lambda *a: "explicit")
    assert op.table[CPU_BIT]() == "explicit"
    # Autograd falls through to the backend unless the implicit alias serves it
    assert op.resolve(DispatchKey.Autograd)[1] == "CompositeImplicitAutograd"
    undo = d.register("f", "CPU", lambda *a: "cpu")
    assert op.table[CPU_BIT]() == "cpu" and op.table[CPU_BIT | AUTOGRAD_BIT]() == "implicit"
    undo()
    assert op.table[CPU_BIT]() == "explicit"


def test_highest_key_wins_and_fallthrough() -> None:
    d, op = fresh_op()
    d.register("f", "CPU", lambda *a: "cpu")
    d.register("f", "Autograd", lambda *a: "autograd")
    assert op.table[CPU_BIT | AUTOGRAD_BIT]() == "autograd"
    assert op.table[CPU_BIT | (1 << DispatchKey.BackendSelect)]() == "cpu"  # BackendSelect falls through
    with pytest.raises(DispatchError, match="no kernel for operator 'f' and dispatch key CUDA; keys with a "
                                            "kernel: CPU, Autograd"):
        op.table[CUDA_BIT]()


def test_key_set_from_lists_and_optionals() -> None:
    _, op = fresh_op("g", (0, 1, 2))
    cpu = G.zeros(1)
    grad = G.zeros(1, requires_grad=True)
    assert op.key_set([cpu, None, [cpu, grad]]) & AUTOGRAD_BIT
    assert op.key_set([cpu, None, []]) & AUTOGRAD_BIT == 0
    assert D.keys_of([None, (cpu,)]) == CPU_BIT


def test_tls_include_exclude() -> None:
    calls: list[str] = []
    with G.library.Library() as lib:
        lib.fallback(lambda op, args: calls.append(op.name) or op.redispatch_below(DispatchKey.Tracer, *args),
                     "Tracer")
        x = G.ones(2)
        G.neg(x)
        assert calls == []
        with D.include_keys("Tracer"):
            y = G.neg(x)
            G.add(x, y)
        assert calls == ["neg", "add.Tensor"] and y.tolist() == [-1.0, -1.0]
    x = G.ones(2, requires_grad=True)
    with D.exclude_keys("Autograd"):
        assert G.mul(x, 2).grad_fn is None
    assert G.mul(x, 2).grad_fn is not None
    assert D.tls.include == (1 << DispatchKey.BackendSelect) and D.tls.mask == D.ALL_KEYS


def test_tls_is_per_thread() -> None:
    import threading
    seen: list[int] = []
    with D.exclude_keys("Autograd"):
        t = threading.Thread(target=lambda: seen.append(D.tls.mask))
        t.start()
        t.join()
    assert seen == [D.ALL_KEYS]


def test_threads_in_other_grad_modes_record_independently() -> None:
    """Note [Skipping the thread-local lookup]: the shared default table is used only while every thread
    is in the default state; a thread in no_grad neither records nor stops another thread recording."""
    import threading
    x = G.ones(2, requires_grad=True)
    in_no_grad, main_done = threading.Event(), threading.Event()
    seen: dict[str, object] = {}

    def worker() -> None:
        with G.no_grad():
            in_no_grad.set()
            main_done.wait(5)
            seen["worker_grad_fn"] = G.mul(x, 2).grad_fn
            seen["shared_remap_inside"] = D.shared.remap
        seen["shared_remap_after"] = D.shared.remap

    assert D.shared.remap is D.DEFAULT_REMAP and D.shared.custom_threads == 0
    t = threading.Thread(target=worker)
    t.start()
    assert in_no_grad.wait(5)
    assert D.shared.remap is None and D.shared.custom_threads == 1
    assert G.mul(x, 2).grad_fn is not None  # this thread still records
    with G.no_grad():  # two threads off the default state
        assert D.shared.custom_threads == 2 and G.mul(x, 2).grad_fn is None
    main_done.set()
    t.join()
    assert seen["worker_grad_fn"] is None and seen["shared_remap_inside"] is None
    assert seen["shared_remap_after"] is D.DEFAULT_REMAP
    assert D.shared.remap is D.DEFAULT_REMAP and D.shared.custom_threads == 0
    assert D.current_remap() is D.DEFAULT_REMAP


def test_boxed_fallback_sees_schema_and_arguments_for_every_op() -> None:
    seen: list[tuple[str, str, int]] = []

    def fallback(op: D.Operator, args: list[Any]) -> Any:
        seen.append((op.name, op.schema, len(args)))
        return "boxed"

    with G.library.Library() as lib:
        lib.fallback(fallback, "Tracer")
        tracer_cpu = (1 << DispatchKey.Tracer) | CPU_BIT
        for op in dispatcher.ops.values():
            if "Tracer" not in op.kernels:
                assert op.table[tracer_cpu]("a", "b") == "boxed"
        assert len(seen) == len([o for o in dispatcher.ops.values() if "Tracer" not in o.kernels])
        assert ("add.Tensor", str(dispatcher.find("add.Tensor").schema), 2) in seen
    assert dispatcher.find("add.Tensor").table[(1 << DispatchKey.Tracer) | CPU_BIT] is \
        dispatcher.find("add.Tensor").table[CPU_BIT]


def test_redispatch_below_a_key() -> None:
    op = dispatcher.find("mul.Tensor")
    x = G.ones(2, requires_grad=True)
    out = op.redispatch_below(DispatchKey.Autograd, x, x)
    assert out.grad_fn is None and out.tolist() == [1.0, 1.0]
    assert op.call(x, x).grad_fn is not None


def test_mixed_devices_error_names_both() -> None:
    cpu = G.zeros(2)
    fake = G.zeros(2)
    fake._keys = CUDA_BIT
    fake._device = Device("cuda", 0)
    with pytest.raises(RuntimeError, match="expected all tensors to be on the same device, but found at least "
                                           "two devices, cpu and cuda:0"):
        G.add(cpu, fake)
    assert dispatcher.find("copy_").mixed_devices and not dispatcher.find("add.Tensor").mixed_devices


def test_missing_kernel_and_dump() -> None:
    d, op = fresh_op()
    with pytest.raises(DispatchError, match="no kernel for operator 'f' and dispatch key CPU; keys with a kernel: "
                                            "none"):
        op.call(G.zeros(1))
    text = D.dump("add.Tensor")
    assert "add.Tensor(Tensor self, Tensor other" in text and "Autograd" in text and "CPU" in text
    assert "[kernel]" in text


def test_bad_argument_type_names_the_argument() -> None:
    from generated import _ops
    with pytest.raises(TypeError, match="argument 'mat2' \\(position 2\\) must be Tensor, not str"):
        _ops._call_mm(G.zeros(2, 2), "x")
    np.testing.assert_array_equal(G.add(G.ones(1), 1).numpy(), [2.0])


def _reference_cell(op: D.Operator, keys: int) -> tuple[str, Any]:
    """One table cell by the rule of Note [Dispatch key sets as bitmasks], evaluated directly (no plan)."""
    backends = keys & (CPU_BIT | CUDA_BIT | META_BIT)
    if op.scalar_positions and backends & (backends - 1):
        return ("scalars", None)  # before any key (Note [CPU scalars beside device tensors])
    for key in reversed(DispatchKey):
        if not keys & (1 << key):
            continue
        if key in (DispatchKey.Meta, DispatchKey.CPU, DispatchKey.CUDA) and backends & (backends - 1) \
                and not op.mixed_devices:
            return ("mismatch", None)
        if key in (DispatchKey.Meta, DispatchKey.CPU, DispatchKey.CUDA) and keys & META_BIT:
            key = DispatchKey.Meta  # an op taking several devices, one of them meta (Note [Meta tensors])
        kernel, how = op.resolve(key)
        if how == "fallback":
            return ("fallback", key)
        if kernel is not None:
            return ("kernel", kernel)
        if how == "missing":
            return ("missing", key)
    return ("missing", None)


def _closure(kernel: Any, name: str) -> Any:
    return kernel.__closure__[kernel.__code__.co_freevars.index(name)].cell_contents


def _cell(op: D.Operator, kernel: Any) -> tuple[str, Any]:
    if getattr(kernel, "__func__", None) is D.Operator._device_mismatch:
        return ("mismatch", None)
    if getattr(kernel, "__func__", None) is D.Operator._moving_cpu_scalars:
        return ("scalars", None)
    if kernel.__qualname__.startswith("boxed_fallback["):
        return ("fallback", _closure(kernel, "fn").__name__)
    if kernel.__qualname__.endswith("_missing.<locals>.missing"):
        return ("missing", _closure(kernel, "key"))
    if hasattr(kernel, "__wrapped__"):
        return ("kernel", kernel.__wrapped__)  # a guarded alias kernel: Note [Backend guards on alias kernels]
    return ("kernel", kernel)


def test_every_table_cell_follows_the_rule() -> None:
    """Note [Table plans]: tables built from shared plans equal the rule evaluated cell by cell, for every
    operator of the project, and again with fallbacks registered (which change every table's shape)."""
    def check() -> None:
        for op in dispatcher.ops.values():
            for keys, kernel in enumerate(op.table):
                got, want = _cell(op, kernel), _reference_cell(op, keys)
                if want[0] == "fallback":
                    want = ("fallback", dispatcher.fallbacks[want[1]].fn.__name__)
                assert got == want, (op.name, keys)
            stubs = [k for k in op.table if _cell(op, k)[0] == "missing"]
            assert len({id(k) for k in stubs}) == len({_cell(op, k)[1] for k in stubs})  # one stub per key

    check()

    def tracer_fallback(op: D.Operator, args: list[Any]) -> Any:
        return "tracer"

    def meta_fallback(op: D.Operator, args: list[Any]) -> Any:
        return "meta"

    with G.library.Library() as lib:
        lib.fallback(tracer_fallback, "Tracer")
        lib.fallback(meta_fallback, "Meta")
        check()
    check()


def test_a_backend_guards_the_alias_kernels_it_shares() -> None:
    """Note [Backend guards on alias kernels]: the guard wraps the alias kernel at its key only, one guard per
    (key, alias), and removing it restores every table."""
    op = dispatcher.find("stack")  # CompositeImplicitAutograd (every CompositeExplicitAutograd op has a Meta kernel)
    G.stack([G.ones(2), G.ones(2)])  # its module loaded (Note [Kernels loaded on first call])
    plain_cpu, plain_meta = op.table[CPU_BIT], op.table[1 << DispatchKey.Meta]
    seen = []

    def guard(o: D.Operator, kernel: Any) -> Any:
        def guarded(*args: Any) -> Any:
            seen.append(o.name)
            return kernel(*args)
        guarded.__wrapped__ = kernel  # type: ignore[attr-defined]
        return guarded

    undo = dispatcher.guard_alias_kernels("Meta", "CompositeImplicitAutograd", guard)
    try:
        assert op.table[1 << DispatchKey.Meta].__wrapped__ is plain_meta
        assert op.table[CPU_BIT] is plain_cpu  # other keys keep the plain kernel
        with pytest.raises(ValueError, match="already installed"):
            dispatcher.guard_alias_kernels("Meta", "CompositeImplicitAutograd", guard)
        G.stack([G.ones(2), G.ones(2)])
        assert seen == []  # a CPU call never meets the Meta guard
    finally:
        undo()
    assert op.table[1 << DispatchKey.Meta] is plain_meta
    undo()  # twice is a no-op
    with pytest.raises(ValueError, match="unknown alias key"):
        dispatcher.guard_alias_kernels("CPU", "Composite", guard)
