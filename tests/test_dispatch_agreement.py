"""`opgen show` and the runtime compute every operator's dispatch table by one rule
(Note [One vocabulary for codegen and runtime]); for every op they must agree cell by cell."""

from __future__ import annotations

from pathlib import Path

import pytest

import generated  # noqa: F401  (registers every kernel)
from codegen import gen
from codegen.cli import static_table
from runtime.dispatcher import _kernel_name, dispatcher
from runtime.vocabulary import DispatchKey

ROOT = Path(__file__).resolve().parents[1]
MODEL = gen.load_model(ROOT)


def _runtime_rows(name: str) -> list[tuple[str, str, str]]:
    op = dispatcher.find(name)
    rows = []
    for key in reversed(DispatchKey):
        kernel, how = op.resolve(key)
        rows.append((key.name, _kernel_name(kernel) if kernel is not None else "-", how))
    return rows


@pytest.mark.parametrize("f", MODEL.functions, ids=lambda f: f.name)
def test_show_agrees_with_runtime_table(f: object) -> None:
    if dispatcher.fallbacks:
        pytest.fail(f"a test left fallbacks registered: {dispatcher.fallbacks}")
    shown = [(key, kernel, "kernel" if how.startswith(("records ", "no derivative")) else how)
             for key, kernel, how in static_table(f, MODEL)]
    assert shown == _runtime_rows(f.name)


def test_mixed_device_ops_come_from_the_yaml() -> None:
    mixed = {f.name for f in MODEL.functions if f.mixed_devices}
    assert {"copy_", "_to_copy"} <= mixed
    assert {name for name, op in dispatcher.ops.items() if op.mixed_devices} == mixed
