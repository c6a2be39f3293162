"""`opgen show` and the runtime agree on every operator's dispatch table, cell by cell
(Note [One vocabulary for codegen and runtime]). The generator's side is computed from the YAML model
(`codegen.cli.static_table`); the runtime's twice: from `Operator.resolve`, and independently of the shared
rule from the table that calls actually index (`Operator.table`, built by the plan of Note [Table plans])."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import generated  # noqa: F401  (registers every kernel)
from codegen.cli import main, shown_ops, static_table
from codegen.loading import load_model
from codegen.native import NativeFunction
from runtime.dispatcher import DispatchError, _kernel_name, dispatcher
from runtime.vocabulary import DispatchKey

ROOT = Path(__file__).resolve().parents[2]
MODEL = load_model(ROOT)
KEYS = list(reversed(DispatchKey))  # highest priority first, as `opgen show` prints them


def _shown(f: NativeFunction) -> list[tuple[str, str, str]]:
    return [(key, kernel, "kernel" if how.startswith(("records ", "no derivative", "not differentiable")) else how)
            for key, kernel, how in static_table(f, MODEL)]


def _resolved(name: str) -> list[tuple[str, str, str]]:
    op = dispatcher.find(name)
    rows = []
    for key in KEYS:
        kernel, how = op.resolve(key)
        rows.append((key.name, _kernel_name(kernel) if kernel is not None else "-", how))
    return rows


def _table_kernels(name: str) -> list[tuple[str, str]]:
    """(key, kernel name or the refusal) from the table a call of key set {key} indexes."""
    op = dispatcher.find(name)
    rows = []
    for key in KEYS:
        entry = op.table[1 << key]
        entry = getattr(entry, "__wrapped__", entry)  # a backend guard (Note [Backend guards on alias kernels])
        if getattr(entry, "__qualname__", "").endswith("_missing.<locals>.missing"):
            with pytest.raises(DispatchError) as info:
                entry()
            asked = re.search(r"dispatch key (\w+)", str(info.value))
            rows.append((key.name, "missing" if asked and asked.group(1) == key.name else "fallthrough"))
        else:
            rows.append((key.name, _kernel_name(entry)))
    return rows


@pytest.fixture(autouse=True)
def _no_fallbacks() -> None:
    if dispatcher.fallbacks:
        pytest.fail(f"a test left fallbacks registered: {dispatcher.fallbacks}")


@pytest.mark.parametrize("f", MODEL.functions, ids=lambda f: f.name)
def test_show_agrees_with_the_runtime_table(f: NativeFunction) -> None:
    shown = _shown(f)
    assert shown == _resolved(f.name)
    expected = [(key, kernel if kernel != "-" else how) for key, kernel, how in shown]
    assert expected == _table_kernels(f.name)


def test_show_of_an_op_name_is_that_op() -> None:
    """`opgen show NAME` prints NAME's own table first and alone when NAME is an operator (`std` is one,
    beside std.correction and std.dim)."""
    assert all(shown_ops(MODEL, f.name) == [f] for f in MODEL.functions)
    out = CliRunner().invoke(main, ["show", "--all", "--root", str(ROOT), "std"], catch_exceptions=False).output
    rows = [line.split() for line in out.splitlines() if line.startswith("    ") and "[" in line]
    assert [(r[0], r[1], r[2].strip("[]")) for r in rows] == _resolved("std")
    assert "other overloads: std.correction, std.dim" in out


def test_mixed_device_ops_come_from_the_yaml() -> None:
    mixed = {f.name for f in MODEL.functions if f.mixed_devices}
    assert {"copy_", "_to_copy"} <= mixed
    assert {name for name, op in dispatcher.ops.items() if op.mixed_devices} == mixed
