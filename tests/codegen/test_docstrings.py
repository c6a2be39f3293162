"""Docstrings and signatures of the public API: generated for ops and methods from the schemas
(codegen/docstrings.py), hand-written for everything else; YAML text reaches them only as literals."""

from __future__ import annotations

import inspect
import pydoc
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import generated as G
from codegen.docstrings import literal

ROOT = Path(__file__).resolve().parents[2]


def _public_callables() -> list[tuple[str, object]]:
    """Every public callable of opgen's API: the package, nn, nn.functional, optim, and the Tensor methods
    (with those of the public classes found on the way)."""
    found: list[tuple[str, object]] = []
    seen: set[int] = set()

    def visit(prefix: str, owner: object) -> None:
        for name in sorted(dir(owner)):
            if name.startswith("_"):
                continue
            value = inspect.getattr_static(owner, name) if inspect.isclass(owner) else getattr(owner, name)
            if isinstance(value, staticmethod | classmethod):
                value = value.__func__
            if isinstance(value, property):
                continue
            if not callable(value) or inspect.ismodule(value) or id(value) in seen:
                continue
            module = getattr(value, "__module__", None) or ""
            if not (module.startswith(("generated", "runtime")) or value in vars(type(owner)).values()):
                continue  # numpy, typing, builtins ... re-exported by chance
            seen.add(id(value))
            found.append((f"{prefix}.{name}", value))
            if inspect.isclass(value) and value.__module__.startswith(("generated", "runtime")):
                visit(f"{prefix}.{name}", value)

    for prefix, module in (("G", G), ("G.nn", G.nn), ("G.nn.functional", G.nn.functional),
                           ("G.optim", G.optim)):
        visit(prefix, module)
    visit("G.Tensor", G.Tensor)
    return found


def test_every_public_callable_has_a_docstring() -> None:
    found = _public_callables()
    assert len(found) > 400  # the walk reaches the ops, the methods and the classes
    # a class needs its own docstring (inspect.getdoc would lend it its base class's); a method may
    # inherit the one of the method it overrides, as help() shows it
    missing = [name for name, value in found
               if not ((vars(value).get("__doc__") if inspect.isclass(value) else inspect.getdoc(value)) or "").strip()]
    assert not missing, f"{len(missing)} public callables without a docstring: {', '.join(missing)}"


def test_help_of_an_op_shows_its_signature_arguments_forms_and_autograd() -> None:
    text = pydoc.render_doc(G.add, renderer=pydoc.plaintext)
    assert "add(input, other, *, alpha=1, out=None) -> Tensor" in text
    assert "alpha (number, default 1)" in text
    assert "in-place" in text and "out=" in text and "Tensor.add" in text
    assert "Differentiable: " in text and "yes" in text
    assert "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor" in text
    # not differentiable, and said so
    assert "Differentiable: no" in G.argmax.__doc__
    # composite ops are differentiable through the ops they call
    assert any("composite" in (getattr(G, n).__doc__ or "") for n in G._ops.__all__)


def test_doc_key_reaches_the_docstring() -> None:
    from codegen.native import load_native_functions

    documented = {f.func.name.name: f.doc for f in load_native_functions(ROOT / "native_functions.yaml")
                  if f.doc and f.derived_from is None}
    assert documented
    for name, doc in documented.items():
        fn = getattr(G._ops, name)
        assert doc.strip() in fn.__doc__, name


def test_method_docs_and_signatures_name_the_tensor_self() -> None:
    sig = inspect.signature(G.Tensor.add)
    assert list(sig.parameters)[:2] == ["self", "other"]
    assert G.Tensor.add.__doc__.startswith("Tensor.add(self, other")
    assert "input" not in G.Tensor.add.__doc__.split("\n")[0]
    assert "Tensor.add(self, other" in pydoc.render_doc(G.Tensor.add, renderer=pydoc.plaintext)
    # the method is the op function's code: same behaviour, and calls bind like the function's
    x = G.tensor([1.0, 2.0])
    assert x.add(x, alpha=2).tolist() == G.add(x, x, alpha=2).tolist() == [3.0, 6.0]
    assert G.Tensor.add.__code__ is G.add.__code__
    # varargs methods keep their real signature and get the op's documentation
    assert "Tensor.view(self" in G.Tensor.view.__doc__ and "t.view(2, 3)" in G.Tensor.view.__doc__


def test_signatures_show_real_defaults() -> None:
    for fn, first in ((G.sum, "input"), (G.Tensor.sum, "self")):
        params = inspect.signature(fn).parameters
        assert list(params)[0] == first
        assert params["dim"].default is None
        assert params["keepdim"].default is False
        assert params["dtype"].default is None and params["dtype"].kind is inspect.Parameter.KEYWORD_ONLY
        assert "not given" not in str(inspect.signature(fn))
    bound = inspect.signature(G.ones(2).sum)
    assert list(bound.parameters) == ["dim", "keepdim", "dtype", "out"]  # out=: every functional op takes it
    assert inspect.signature(G.std).parameters["correction"].default is None
    # the shown defaults are what a call without the argument does
    x = G.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert G.sum(x).item() == G.sum(x, None).item() == 10.0
    assert G.sum(x, 1).tolist() == G.sum(x, 1, False).tolist()


def test_signatures_keep_every_parameter_of_the_def_line() -> None:
    for name in G._ops.__all__:
        fn = getattr(G._ops, name)
        shown = inspect.signature(fn)
        code = fn.__code__
        # a `*input` (Note [Tensors as varargs]) follows the positional and keyword-only names in co_varnames
        varargs = code.co_varnames[code.co_argcount + code.co_kwonlyargcount:][:1] \
            if code.co_flags & inspect.CO_VARARGS else ()
        real = code.co_varnames[:code.co_argcount] + varargs + \
            code.co_varnames[code.co_argcount:code.co_argcount + code.co_kwonlyargcount]
        assert tuple(shown.parameters) == real, name


@pytest.fixture
def project(tmp_path: Path) -> Path:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("codegen", "runtime", "templates", "generated"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=ignore)
    for name in ("native_functions.yaml", "derivatives.yaml"):
        shutil.copy(ROOT / name, tmp_path / name)
    return tmp_path


# YAML text that would end or change a docstring pasted into triple quotes.
# One printable line (a doc: with a line break is refused at generate time:
# tests/codegen/test_yaml_text_never_becomes_code.py),
# holding everything that could end a Python string or docstring.
HOSTILE_DOC = 'ends """ here, a \\ backslash \\n not a newline, \'\'\' and "quotes" done'


def test_yaml_doc_text_reaches_generated_code_only_as_a_literal(project: Path) -> None:
    # the text as a YAML double-quoted scalar (YAML's escapes, not Python's)
    doc = HOSTILE_DOC.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\u2028", "\\u2028")
    (project / "native_functions.yaml").write_text(
        (project / "native_functions.yaml").read_text()
        + f'\n- func: hostile_doc(Tensor self) -> Tensor\n  variants: function, method\n'
          f'  pointwise: self + self\n  doc: "{doc}"\n')
    (project / "derivatives.yaml").write_text(
        (project / "derivatives.yaml").read_text()
        + "\n- name: hostile_doc(Tensor self) -> Tensor\n  self: grad * 2\n")
    subprocess.run([sys.executable, "-m", "codegen", "generate", "--root", str(project)], check=True, cwd=project,
                   capture_output=True)
    check = (
        "import generated as G\n"
        f"text = {HOSTILE_DOC!r}\n"
        "for fn, line in ((G.hostile_doc, 'hostile_doc('), (G.Tensor.hostile_doc, 'Tensor.hostile_doc(')):\n"
        "    doc = fn.__doc__\n"
        "    assert doc.startswith(line), doc\n"
        "    shown = doc.split('\\n\\n', 1)[1].split('\\n\\nArguments:', 1)[0]\n"
        "    assert shown == text, (shown, text)\n"
        "assert G.hostile_doc(G.tensor([1.0])).tolist() == [2.0]\n"
        "print('ok')\n")
    env = {"PYTHONPATH": str(project), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", check], cwd=project, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_literal_round_trips_any_text() -> None:
    import ast

    for text in (HOSTILE_DOC, "", "'", '"', "\\", "\x00\r\t", "\u2029\u0085", "é ü 中"):
        assert ast.literal_eval(literal(text)) == text
        assert "\n" not in literal(text) and "\u2028" not in literal(text)
