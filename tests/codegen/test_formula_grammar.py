"""Injection attempts against derivatives.yaml formulas and pointwise kernel specs: each is refused at load
time with `file:line: message` (Note [Formulas are a closed grammar], codegen/formula_grammar.py)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from codegen.derivatives import load_derivatives
from codegen.errors import LoadError
from codegen.gen import generate
from codegen.native import load_native_functions

ROOT = Path(__file__).resolve().parents[2]

FUNCS = """\
- func: twice(Tensor self) -> Tensor
  variants: function, method
  pointwise: 2 * self
- func: scale(Tensor self, Tensor other, int k) -> Tensor
  pointwise: self * other * k
"""


def functions() -> list:
    return load_native_functions(ROOT / "native_functions.yaml", root=ROOT, text=FUNCS,
                                 file="native_functions.yaml")


def formula_errors(formula: str) -> list[str]:
    text = f"- name: scale(Tensor self, Tensor other, int k) -> Tensor\n  self: {json.dumps(formula)}\n"
    with pytest.raises(LoadError) as info:
        load_derivatives(ROOT / "derivatives.yaml", functions(), root=ROOT, text=text, file="derivatives.yaml")
    return [str(d) for d in info.value.diagnostics]


INJECTIONS = [
    ('[eval][0]("print(1)") + grad * result', "'[eval][0]' is not a function name"),
    ("getattr(grad, 'data')", "formula calls unknown function 'getattr'"),
    ("grad.__class__", "attribute '__class__' is private"),
    ("grad.__class__.__mro__[1]", "attribute '__mro__' is private"),
    ("(lambda: 0)()", "'lambda: 0' is not a function name"),
    ("grad + (lambda: 0)", "a lambda is not allowed"),
    ("self._data", "attribute '_data' is private"),
    ("grad.device.type", "unknown tensor attribute or method 'type'"),
    ("grad.storage.untyped_storage", "unknown tensor attribute or method"),
    ("sum_to.__globals__", "attribute '__globals__' is private"),
    ("f'{grad}'", "an f-string is not allowed"),
    ("twice(*grad)", "a starred argument is not allowed"),
    ("twice(**grad)", "'**' arguments are not allowed"),
    ("abs(self) + abs", "function 'abs' is used as a value"),
    ("grad * twice", "function 'twice' is used as a value"),
    ("sum_to", "function 'sum_to' is used as a value"),
    ("grad(1)", "'grad' is a value, not a function"),
    ("twice(grad)(1)", "'twice(grad)' is not a function name"),
    ("[x for x in grad]", "a comprehension is not allowed"),
    ("(y := grad)", "':=' (walrus) is not allowed"),
    ("{grad: 1}", "'Dict' is not allowed"),
    ("eval", "formula uses undefined name 'eval'"),
    ("exec('1')", "formula calls unknown function 'exec'"),
    ("__import__('os')", "formula calls unknown function '__import__'"),
    ("grad.numpy()", "unknown tensor attribute or method 'numpy'"),
    ("grad.register_hook(print)", "unknown tensor attribute or method 'register_hook'"),
    ("grad[::1].__len__()", "attribute '__len__' is private"),
    ("b'x'", "constant b'x' is not allowed"),
    ("-" * 200 + "grad", "nested more than"),
    ("grad if True else len", "function 'len' is used as a value"),
]


@pytest.mark.parametrize("formula, expected", INJECTIONS)
def test_injection_is_refused_with_location(formula: str, expected: str) -> None:
    found = formula_errors(formula)
    assert len(found) == 1 and found[0].startswith("derivatives.yaml:2: "), found
    assert expected in found[0], found


def test_legitimate_formulas_still_load() -> None:
    text = ("- name: scale(Tensor self, Tensor other, int k) -> Tensor\n"
            "  self: sum_to(grad * other * k, self.shape).twice() if self.dim() > 0 else grad.new_zeros(())\n"
            "  other: twice(grad * self)[..., 0:1] * max(k, 1) * len(self.shape)\n")
    ds = load_derivatives(ROOT / "derivatives.yaml", functions(), root=ROOT, text=text, file="derivatives.yaml")
    assert ds[0].uses == frozenset({"grad", "self", "other", "k"})


def test_every_formula_of_the_project_is_in_the_grammar_and_rendered_without_eval() -> None:
    files = generate(ROOT)
    tree = ast.parse(files["_autograd.py"])
    called = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    assert not called & {"eval", "exec", "compile", "__import__", "getattr"}


def pointwise_errors(expr: str) -> list[str]:
    text = f"- func: f(Tensor self, Scalar other) -> Tensor\n  pointwise: {json.dumps(expr)}\n"
    with pytest.raises(LoadError) as info:
        load_native_functions(ROOT / "native_functions.yaml", root=ROOT, text=text, file="native_functions.yaml")
    return [str(d) for d in info.value.diagnostics]


@pytest.mark.parametrize("expr, expected", [
    ("abs(self) + abs", "function 'abs' is used as a value"),
    ("[abs][0](self)", "unknown function '[abs][0]'"),
    ("self.__class__", "'Attribute' is not allowed"),
    ("self._data", "'Attribute' is not allowed"),
    ("(lambda: self)()", "unknown function 'lambda: self'"),
    ("__import__('os')", "unknown function '__import__'"),
    ("abs(*self)", "'Starred' is not allowed"),
    ("self in other", "comparison 'in' is not allowed"),
    ("self is other", "comparison 'is' is not allowed"),
    ("self @ other", "operator 'MatMult' is not allowed"),
    ("self << other", "operator 'LShift' is not allowed"),
    ("self * 1e999", "constant inf is not finite"),
    ("f'{self}'", "'JoinedStr' is not allowed"),
    ("self + 'x'", "constant 'x' is not a number or bool"),
    ("-" * 200 + "self", "nested more than"),
    ("self\x00", "control character U+0000 in a string"),
])
def test_pointwise_injection_is_refused_with_location(expr: str, expected: str) -> None:
    found = pointwise_errors(expr)
    assert len(found) == 1 and found[0].startswith("native_functions.yaml:2: "), found
    assert expected in found[0], found


def test_schema_string_defaults_are_escaped_in_generated_code() -> None:
    from codegen.render.ops import op_context as _op_context
    schema = r"""f(Tensor self, str mode="a\"b'\\") -> Tensor"""
    text = f"- func: {json.dumps(schema)}\n  dispatch:\n    CPU: runtime.kernels.views.clone\n"
    f = load_native_functions(ROOT / "native_functions.yaml", root=ROOT, text=text, file="native_functions.yaml")[0]
    assert '"' in str(f.func) and "\\" in str(f.func)
    literal = _op_context(f).schema
    assert ast.literal_eval(literal) == str(f.func)
