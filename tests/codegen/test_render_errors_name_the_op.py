"""A fault while rendering one op (a template bug, a context builder's bug) is an OpgenError that names the op,
the file:line of its YAML entry and the template (Note [Render errors name their op]); `opgen generate` exits 2
with it and writes nothing."""

from __future__ import annotations

import dataclasses
import types
from pathlib import Path

import jinja2
import pytest
from click.testing import CliRunner

from codegen import gen, gen_autograd
from codegen.cli import main
from codegen.errors import OpgenError
from codegen.loading import load_model
from codegen.native import NativeFunction
from codegen.render import cpu_kernels, ops
from codegen.render.inputs import Renderer
from codegen.render_errors import RenderError

ROOT = Path(__file__).resolve().parents[2]


def _entry(name: str) -> NativeFunction:
    return next(f for f in load_model(ROOT).functions if str(f.func.name) == name)


def _assert_names(error: RenderError, op: str, template: str | None) -> None:
    f = _entry(op)
    assert f"op '{op}'" in str(error)
    assert str(error).startswith(f"{f.loc.file}:{f.loc.line}: ")
    assert error.owner == (op, f.loc)
    assert error.template == template


@pytest.mark.parametrize("op", ["mul.Tensor", "sum.dim_IntList"])
def test_a_context_fault_inside_a_template_names_the_op(monkeypatch: pytest.MonkeyPatch, op: str) -> None:
    original = ops.op_context

    def planted(f: NativeFunction) -> ops.OpContext:
        ctx = original(f)
        return dataclasses.replace(ctx, params=None) if str(f.func.name) == op else ctx  # join(None) fails

    monkeypatch.setattr(ops, "op_context", planted)
    with pytest.raises(RenderError) as info:
        gen.render_all(ROOT)
    _assert_names(info.value, op, "templates/ops.py.j2")
    assert isinstance(info.value.__cause__, TypeError)


def test_an_undefined_template_variable_names_the_op(monkeypatch: pytest.MonkeyPatch) -> None:
    original = cpu_kernels.cpu_kernel_context

    def planted(f: NativeFunction) -> object:
        ctx = original(f)
        if str(f.func.name) != "add.Tensor":
            return ctx
        fields = {k: v for k, v in dataclasses.asdict(ctx).items() if k != "expr"}
        return types.SimpleNamespace(**fields)  # the template reads k.expr: StrictUndefined raises

    monkeypatch.setattr(cpu_kernels, "cpu_kernel_context", planted)
    with pytest.raises(RenderError) as info:
        gen.render_all(ROOT)
    _assert_names(info.value, "add.Tensor", "templates/cpu_kernels.py.j2")
    assert isinstance(info.value.__cause__, jinja2.UndefinedError)


def test_a_context_builder_fault_names_the_op(monkeypatch: pytest.MonkeyPatch) -> None:
    original = gen_autograd._kernel_context

    def planted(f: NativeFunction, d: object, node: object) -> object:
        if str(f.func.name) == "exp":
            raise KeyError("planted")
        return original(f, d, node)

    monkeypatch.setattr(gen_autograd, "_kernel_context", planted)
    with pytest.raises(RenderError) as info:
        gen.render_all(ROOT)
    _assert_names(info.value, "exp", None)
    assert "KeyError" in str(info.value)


def test_a_fault_with_no_op_in_reach_names_the_template(monkeypatch: pytest.MonkeyPatch) -> None:
    # methods.py.j2 without its variables: no op context anywhere
    broken = Renderer("broken", lambda inputs: None, lambda env, ctx: {"x.py": env.get_template(
        "methods.py.j2").render()})
    with pytest.raises(RenderError) as info:
        gen.render_all(ROOT, renderers=(*gen.RENDERERS, broken))
    assert info.value.owner is None
    assert info.value.template == "templates/methods.py.j2"
    assert isinstance(info.value, OpgenError)


def test_opgen_generate_exits_2_naming_the_op(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("native_functions.yaml", "derivatives.yaml"):
        (tmp_path / name).write_bytes((ROOT / name).read_bytes())
    for name in ("templates", "runtime"):
        (tmp_path / name).symlink_to(ROOT / name)
    original = ops.op_context
    monkeypatch.setattr(ops, "op_context", lambda f: dataclasses.replace(original(f), params=None)
                        if str(f.func.name) == "mul.Tensor" else original(f))
    result = CliRunner().invoke(main, ["generate", "--root", str(tmp_path)], catch_exceptions=False)
    assert result.exit_code == 2
    loc = _entry("mul.Tensor").loc
    assert f"{Path(loc.file).name}:{loc.line}" in result.output
    assert "op 'mul.Tensor'" in result.output
    assert not (tmp_path / "generated").exists()
