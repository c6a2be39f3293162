"""Template contexts are frozen dataclasses, and stub hints come from the schema's Type
structure, not from its spelling."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from codegen import gen, gen_autograd
from codegen.schema_parser import parse_schema

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def model() -> gen.Model:
    return gen.load_model(ROOT)


def _frozen(ctx: object) -> None:
    assert dataclasses.is_dataclass(ctx) and not isinstance(ctx, type)
    field = dataclasses.fields(ctx)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(ctx, field, None)


def test_every_context_is_a_frozen_dataclass(model: gen.Model) -> None:
    functions = model.functions
    add = next(f for f in functions if f.name == "add.Tensor")
    _frozen(gen._op_context(add))
    cpu = gen._cpu_kernel_context(add)
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
    assert gen._hint(arg.type) == hint
