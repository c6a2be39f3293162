"""Template contexts are frozen dataclasses, and stub hints come from the schema's Type
structure, not from its spelling."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from codegen import gen_autograd
from codegen.loading import Model, load_model
from codegen.render import cpu_kernels, ops, stubs
from codegen.schema_parser import parse_schema

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def model() -> Model:
    return load_model(ROOT)


def _frozen(ctx: object) -> None:
    assert dataclasses.is_dataclass(ctx) and not isinstance(ctx, type)
    field = dataclasses.fields(ctx)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(ctx, field, None)


def test_every_context_is_a_frozen_dataclass(model: Model) -> None:
    functions = model.functions
    add = next(f for f in functions if f.name == "add.Tensor")
    _frozen(ops.op_context(add))
    cpu = cpu_kernels.cpu_kernel_context(add)
    _frozen(cpu)
    assert cpu.inplace and cpu.fast_expr == "(a0 + a1)" and cpu.fast_condition == "alpha == 1"
    d = model.derivative_of(add)
    assert d is not None
    node = gen_autograd._node_context(d, frozenset({"mul"}), frozenset())
    _frozen(node)
    kernel = gen_autograd._kernel_context(add, d, node)
    _frozen(kernel)
    assert kernel.form == "functional" and kernel.node is node and kernel.diff == ("input", "other")
    assert all(dataclasses.is_dataclass(s) for s in node.saved)
    assert node.fields == tuple(s.field for s in node.saved)


@pytest.mark.parametrize(("schema_type", "hint"), [
    ("Tensor", "Tensor"),
    ("Tensor?", "Tensor | None"),
    # the stub spells the builtins _int/_float/_bool (G.int is a dtype) and a Scalar _Scalar (int | float | bool)
    ("Scalar", "_Scalar"),
    ("int[]", "Sequence[_int] | _int"),
    ("SymInt[2]", "Sequence[_int] | _int"),
    ("int[]?", "Sequence[_int] | _int | None"),
    ("int?[]", "Sequence[_int]"),
    ("Tensor?[]", "Sequence[Tensor]"),
    ("Tensor[]", "Sequence[Tensor]"),
    ("ScalarType?", "DType | None"),
    ("Device?", "Device | str | None"),
    ("Layout", "Any"),
])
def test_hint_reads_the_type_structure(schema_type: str, hint: str) -> None:
    arg = parse_schema(f"f({schema_type} x) -> Tensor").arguments.flat_all[0]
    assert stubs.hint(arg.type) == hint


def _kernel(model: Model, op: str) -> gen_autograd.KernelContext:
    f = next(f for f in model.functions if f.name == op)
    d = model.derivative_of(f)
    node = gen_autograd._node_context(d, frozenset({"mul", "sum_to_size", "expand"}), frozenset()) if d else None
    return gen_autograd._kernel_context(f, d, node)


def test_saving_is_decided_in_python(model: Model) -> None:
    """What an Autograd kernel stores on its node is data of its context (the template only writes it out):
    inputs as SavedVariables, `self` of an in-place form as a copy and the others saved before the write,
    outputs after the op ran, and apply's reads of them back."""
    mul = _kernel(model, "mul.Tensor")
    stores = {a.target: a.value for a in mul.saves_before}
    # (the schema's `self` is `input` in Python: api_python.py_name)
    assert stores == {"node._saved_input": "_Saved(input, False)", "node._saved_other": "_Saved(other, False)"}
    assert mul.saves_after == ()
    assert [a.target for a in mul.made] == ["node", "node.sequence_nr"]
    inplace = {a.target: a.value for a in _kernel(model, "mul_.Tensor").saves_before}
    assert inplace == {"node._saved_input": "_Saved(_clone(input), False)",
                       "node._saved_other": "_save_before_write(_Saved, other, input)"}
    exp = _kernel(model, "exp")
    assert exp.saves_before == () and [(a.target, a.value) for a in exp.saves_after] == \
        [("node._saved_result", "_Saved(result, True)")]
    assert exp.node is not None and [(a.target, a.value) for a in exp.node.unpacks] == \
        [("result", "self._saved_result.unpack(self)")]
    assert [(e.name, e.var, e.guard) for e in mul.edges or ()] == \
        [("input", "_e0", "input._requires_grad"), ("other", "_e1", "other._requires_grad")]
    assert [(e.name, e.guard) for e in exp.edges or ()] == [("input", None)]


def test_cpu_and_cuda_kernel_contexts_share_one_derivation(model: Model) -> None:
    """Both backends' pointwise contexts are PointwiseKernel subclasses, and for every pointwise op the facts
    they share are equal once the CPU's `input` is read as `self` (its kernels' parameter name)."""
    from codegen import gen_cuda
    from codegen.pointwise_kernel import PointwiseKernel

    shared = [f.name for f in dataclasses.fields(PointwiseKernel)]
    cuda = {op.kernel: op for op in gen_cuda.pointwise_ops(model.functions)}
    cpus = [cpu_kernels.cpu_kernel_context(f) for f in model.functions
            if f.pointwise is not None and f.derived_from is None]
    assert cpus and set(cuda) == {c.kernel for c in cpus}

    def as_schema(value: object) -> object:
        if isinstance(value, str):
            return "self" if value == "input" else value
        if isinstance(value, tuple):
            return tuple(as_schema(v) for v in value)
        return value

    for cpu in cpus:
        assert isinstance(cpu, PointwiseKernel) and isinstance(cuda[cpu.kernel], PointwiseKernel)
        for name in shared:
            assert as_schema(getattr(cpu, name)) == getattr(cuda[cpu.kernel], name), (cpu.kernel, name)
        assert cpu.promote_positions == cuda[cpu.kernel].promote_positions
