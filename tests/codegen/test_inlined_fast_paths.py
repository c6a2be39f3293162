"""codegen/inline.py: the generated fast paths carry the body of the one runtime definition (Note
[Generated, not copied, fast paths])."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from codegen.errors import OpgenError
from codegen.inline import inline, inline_expr

ROOT = Path(__file__).resolve().parents[2]


def _module(tmp_path: Path, text: str) -> str:
    (tmp_path / "m.py").write_text(text)
    return "m.py"


def test_parameters_are_substituted_and_locals_kept(tmp_path: Path) -> None:
    m = _module(tmp_path, 'def f(a, b):\n    """doc"""\n    t = make(a)\n    t.x = b + a\n    return t\n')
    assert inline(tmp_path, m, "f", "r", "dt.np") == ["t = make(r)", "t.x = dt.np + r", "return t"]


def test_an_edited_definition_is_read_again(tmp_path: Path) -> None:
    m = _module(tmp_path, "def f(a):\n    a.y = 1\n")
    assert inline(tmp_path, m, "f", "r") == ["r.y = 1"]
    _module(tmp_path, "def f(a):\n    a.y = 2\n")
    assert inline(tmp_path, m, "f", "r") == ["r.y = 2"]


@pytest.mark.parametrize(("text", "args", "message"), [
    ("def f(a):\n    a.y = 1\n", ("r", "s"), "takes 1 arguments"),
    ("def f(a):\n    return a\n    a.y = 1\n", ("r",), "return only at its end"),
    ("def f(a):\n    a = 1\n", ("r",), "assigned to"),
    ("def g(a):\n    pass\n", ("r",), "no top-level function 'f'"),
])
def test_errors(tmp_path: Path, text: str, args: tuple[str, ...], message: str) -> None:
    m = _module(tmp_path, text)
    with pytest.raises(OpgenError, match=message):
        inline(tmp_path, m, "f", *args)


def test_generated_kernels_carry_the_runtime_definitions() -> None:
    cpu = (ROOT / "generated" / "_cpu_kernels.py").read_text()
    body = "\n".join("    " + line for line in inline(ROOT, "runtime/tensor.py", "fresh_tensor",
                                                       "r", "dt", "_CPU", "_CPU_BIT"))
    functional = [n for n in re.findall(r"^def (\w+)\(", cpu, re.M) if not n.endswith(("_inplace", "_out"))]
    assert len(functional) > 50 and cpu.count(body + "\n") == len(functional)
    autograd = (ROOT / "generated" / "_autograd.py").read_text()
    lines = inline(ROOT, "runtime/autograd/node.py", "record_output", "result", "node", "0")
    at = [autograd.count("\n".join(indent + line for line in lines) + "\n") for indent in (" " * 8, " " * 12)]
    assert at[0] > 50 and at[1] > 50  # outputs that are always floating, and checked ones


def test_an_expression_definition_inlines_as_an_expression(tmp_path: Path) -> None:
    m = _module(tmp_path, 'def f(a, b):\n    """doc"""\n    return a[0] if len(a) == 1 else b\n')
    assert inline_expr(tmp_path, m, "f", "size", "x.y") == "(size[0] if len(size) == 1 else x.y)"
    bad = ("def f(a, b):\n    a.y = 1\n", "def f(a, b):\n    c = a\n    return c\n", "def f(a, b):\n    return\n")
    for text in bad:
        _module(tmp_path, text)
        with pytest.raises(OpgenError, match="one `return <expression>`"):
            inline_expr(tmp_path, m, "f", "size", "x")


def test_generated_varargs_methods_carry_the_runtime_rule() -> None:
    methods = (ROOT / "generated" / "_methods.py").read_text()
    names = re.findall(r"^def (\w+)\(self, \*(\w+), \*\*kwargs\):", methods, re.M)
    assert len(names) >= 8
    for name, arg in names:
        expr = inline_expr(ROOT, "runtime/opcall.py", "varargs", arg)
        assert f"    return _ops.{name}(self, {expr})\n" in methods
