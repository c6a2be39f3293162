"""Injection corpus: YAML text never becomes generated code (Note [Text into code only through one door] in
codegen/literals.py).

Every payload (line breaks of every kind, NUL, quotes, comment enders, preprocessor directives, line
continuations, Unicode line separators ...) goes through every place YAML text reaches the generator (op,
overload, argument and return names, types, defaults, `pointwise:`, `doc:`, dispatch keys and paths, other
keys' values, derivative formulas, names and keys). Each case is either refused with `file:line`, or it is
generated into a scratch copy of the project where it must be inert: the package imports, the payload's
side effect never happens, the payload's text is only ever inside a Python string or comment token, the
C++ sources hold it only in `//` comments that cannot end early, and a default means what it says.
"""

from __future__ import annotations

import dataclasses
import io
import json
import re
import shutil
import subprocess
import sys
import tokenize
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codegen import gen_cuda
from codegen.api_python import python_default
from codegen.cli import main
from codegen.derivatives import load_derivatives
from codegen.errors import LoadError
from codegen.jinja_env import environment
from codegen.kernel_spec import CUDA, NUMPY
from codegen.literals import comment_text
from codegen.native import load_native_functions
from codegen.render.ops import op_context as _op_context

ROOT = Path(__file__).resolve().parents[2]
NF, DY = "native_functions.yaml", "derivatives.yaml"
MARK = "opgen_pwned"
CODE = f"__import__('pathlib').Path('{MARK}').touch()"

PAYLOADS = {
    "newline": f"\n{CODE}\n#",
    "carriage return": f"\r{CODE}\r#",
    "crlf": f"\r\n{CODE}\r\n#",
    "line separator": f"\u2028{CODE}\u2028#",
    "paragraph separator": f"\u2029{CODE}",
    "next line": f"\x85{CODE}",
    "form feed": f"\x0c{CODE}",
    "vertical tab": f"\x0b{CODE}",
    "file separator": f"\x1c{CODE}",
    "NUL": f"\x00{CODE}",
    "triple double quotes": f'"""); {CODE}; ("""',
    "triple single quotes": f"'''); {CODE}; ('''",
    "double quote": f'"); {CODE}; ("',
    "end of C comment": f'*/ int {MARK} = system("touch {MARK}"); /*',
    "define": f"\n#define OPGEN_GRID_STRIDE(t, i, n) if ({MARK})",
    "include": f'\n#include "/etc/{MARK}"',
    "undef": f"\n#undef OPGEN_GRID_STRIDE // {MARK}",
    "trailing backslash": f"{MARK} \\",
    "backslash newline": f"{MARK} \\\n{CODE}",
    "trigraph": f"{MARK} ??/",
    "bidi override": f"\u202e{MARK}",
    "python comment": f" # {MARK}",
}


def y(text: str) -> str:
    """A YAML double-quoted scalar holding `text` exactly (JSON's escapes are YAML's)."""
    return json.dumps(text)


def raw(p: str) -> str:
    """`p` inside a schema's quoted default, only its quote and backslashes escaped."""
    return p.replace("\\", "\\\\").replace('"', '\\"')


def escaped(p: str) -> str:
    """`p` inside a schema's quoted default, with every escape the schema language has."""
    return raw(p).replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t").replace("\0", "\\0")


KERNEL = "runtime.kernels.views.clone"
DISPATCH = f"  dispatch:\n    CPU: {KERNEL}\n"
POINTWISE = "  pointwise: -self\n"
Q = '"'


def func(schema: str, rest: str = POINTWISE) -> str:
    return f"- func: {y(schema)}\n{rest}"


def plain(n: str, rest: str) -> str:
    return f"- func: {n}(Tensor self) -> Tensor\n{rest}"


ROUTES = {
    "str default, raw": lambda n, p: func(n + "(Tensor self, str s=" + Q + raw(p) + Q + ") -> Tensor", DISPATCH),
    "str default, escaped": lambda n, p: func(n + "(Tensor self, str s=" + Q + escaped(p) + Q + ") -> Tensor",
                                              DISPATCH),
    "str list default": lambda n, p: func(n + "(Tensor self, str[] s=[" + Q + escaped(p) + Q + "]) -> Tensor",
                                          DISPATCH),
    "Scalar default": lambda n, p: func(n + "(Tensor self, Scalar s=" + Q + escaped(p) + Q + ") -> Tensor"),
    "op name": lambda n, p: func(n + p + "(Tensor self) -> Tensor"),
    "overload name": lambda n, p: func(n + ".x" + p + "(Tensor self) -> Tensor"),
    "argument name": lambda n, p: func(n + "(Tensor self, Scalar s" + p + ") -> Tensor"),
    "type": lambda n, p: func(n + "(Tensor" + p + " self) -> Tensor"),
    "return": lambda n, p: func(n + "(Tensor self) -> Tensor" + p),
    "pointwise": lambda n, p: plain(n, "  pointwise: " + y("-self" + p) + "\n"),
    "pointwise in parentheses": lambda n, p: plain(n, "  pointwise: " + y("(-self" + p + "\n)") + "\n"),
    "doc": lambda n, p: plain(n, POINTWISE + "  doc: " + y(p) + "\n"),
    "dispatch path": lambda n, p: plain(n, "  dispatch:\n    CPU: " + y(KERNEL + p) + "\n"),
    "dispatch key": lambda n, p: plain(n, "  dispatch:\n    " + y("CPU" + p) + ": " + KERNEL + "\n"),
    "variants": lambda n, p: plain(n, POINTWISE + "  variants: " + y("function" + p) + "\n"),
    "dtypes": lambda n, p: plain(n, POINTWISE + "  dtypes: " + y("all" + p) + "\n"),
    "promote": lambda n, p: plain(n, POINTWISE + "  promote: " + y("float" + p) + "\n"),
    "zero_dim": lambda n, p: plain(n, POINTWISE + "  zero_dim: [" + y(p) + "]\n"),
    "device_check": lambda n, p: plain(n, POINTWISE + "  device_check: " + y("NoCheck" + p) + "\n"),
    "unknown key": lambda n, p: plain(n, POINTWISE + "  " + y(p) + ": 1\n"),
}


def derivative(n: str, rest: str, name_tail: str = "") -> str:
    return "- name: " + y(n + "(Tensor self) -> Tensor" + name_tail) + "\n" + rest


# derivatives.yaml routes, on the op `n(Tensor self) -> Tensor` (declared in native_functions.yaml)
DERIVATIVE_ROUTES = {
    "formula": lambda n, p: derivative(n, "  self: " + y("-grad" + p) + "\n"),
    "formula in parentheses": lambda n, p: derivative(n, "  self: " + y("(-grad" + p + "\n)") + "\n"),
    "formula string": lambda n, p: derivative(n, "  self: " + y("grad * len(" + repr(p) + ")") + "\n"),
    "derivative name": lambda n, p: derivative(n, "  self: -grad\n", p),
    "derivative key": lambda n, p: derivative(n, "  " + y("self" + p) + ": -grad\n"),
}


@dataclass(frozen=True)
class Case:
    route: str
    payload: str
    native: str  # the native_functions.yaml entry (op named NAME)
    derivative: str = ""  # the derivatives.yaml entry, if the route is one of derivatives.yaml


NAME = "inj"
CASES = [Case(r, p, make(NAME, PAYLOADS[p])) for r, make in ROUTES.items() for p in PAYLOADS] + [
    Case(r, p, f"- func: {NAME}(Tensor self) -> Tensor\n  pointwise: -self\n", make(NAME, PAYLOADS[p]))
    for r, make in DERIVATIVE_ROUTES.items() for p in PAYLOADS]


def _lines(text: str) -> int:
    return text.count("\n")


def outcome(case: Case) -> str | None:
    """None when the loader accepts the case; else its first diagnostic, which must name file:line."""
    try:
        functions = load_native_functions(ROOT / NF, root=ROOT, text=case.native, file=NF)
    except LoadError as e:
        d = e.diagnostics[0]
        assert d.location.file == NF and 1 <= d.location.line <= _lines(case.native), str(e)
        return str(d)
    if case.derivative:
        try:
            load_derivatives(ROOT / DY, functions, root=ROOT, text=case.derivative, file=DY)
        except LoadError as e:
            d = e.diagnostics[0]
            assert d.location.file == DY and 1 <= d.location.line <= _lines(case.derivative), str(e)
            return str(d)
    return None


OUTCOMES = {case: outcome(case) for case in CASES}
ACCEPTED = [c for c, o in OUTCOMES.items() if o is None]
# Payloads with a raw line break, NUL or format character can never be accepted as written: only as a
# schema escape ("\\n") inside a str default, or inside a formula's string constant (read with ast).
UNSAYABLE = {p for p, text in PAYLOADS.items() if any(not c.isprintable() for c in text)}


@pytest.mark.parametrize("case", CASES, ids=[f"{c.route}-{c.payload}" for c in CASES])
def test_each_case_is_refused_with_file_line_or_kept_in_a_literal(case: Case) -> None:
    if OUTCOMES[case] is None:
        # the places text may stay text: a str default, a doc line, a formula's string constant; a formula's
        # comment, which its syntax tree drops
        assert case.route in ("str default, raw", "str default, escaped", "str list default", "doc",
                              "formula string", "formula", "formula in parentheses")
        if case.payload in UNSAYABLE:
            assert case.route in ("str default, escaped", "str list default", "formula string", "formula",
                                  "formula in parentheses")
    else:
        assert OUTCOMES[case].startswith((f"{NF}:", f"{DY}:"))


def test_the_issue_examples_are_refused() -> None:
    scalar = OUTCOMES[Case("Scalar default", "newline", ROUTES["Scalar default"](NAME, PAYLOADS["newline"]))]
    assert scalar is not None and "has a string default; only str arguments may" in scalar
    for payload in ("define", "undef", "include"):
        message = OUTCOMES[Case("pointwise", payload, ROUTES["pointwise"](NAME, PAYLOADS[payload]))]
        assert message is not None and message.startswith(f"{NF}:2: pointwise expression must be one line")


# -- the accepted cases, generated for real into a scratch copy of the project ---------------------------
def scratch_project(tmp: Path) -> Path:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("codegen", "runtime", "templates", "generated"):
        shutil.copytree(ROOT / name, tmp / name, ignore=ignore)
    for name in (NF, DY):
        shutil.copy(ROOT / name, tmp / name)
    return tmp


def generate(project: Path, native: str, derivatives: str = "") -> object:
    (project / NF).write_text((ROOT / NF).read_text() + native)
    (project / DY).write_text((ROOT / DY).read_text() + derivatives)
    return CliRunner().invoke(main, ["generate", "--root", str(project)], catch_exceptions=False)


def assert_python_inert(path: Path) -> None:
    """The payload's mark is only ever inside a string or comment token of the module."""
    for tok in tokenize.generate_tokens(io.StringIO(path.read_text()).readline):
        if MARK in tok.string:
            assert tok.type in (tokenize.STRING, tokenize.COMMENT), (path.name, tok)


def assert_cxx_inert(path: Path, preprocess: bool) -> None:
    text = path.read_text()
    assert all(" " <= c <= "~" for line in text.splitlines() for c in line), path.name
    lines = text.splitlines()
    assert not [ln for ln in lines if ln.endswith("\\")]  # no line splices into the next line
    assert {ln for ln in lines if ln.lstrip().startswith("#")} <= {'#include "opgen_math.cuh"', "#pragma unroll"}
    assert all(ln.startswith("// ") for ln in lines if MARK in ln)
    # the preprocessor sees no directive of the payload: with our include left out, it runs clean and the
    # payload (in comments only) is gone from what it hands the compiler
    if preprocess and shutil.which("cpp"):
        body = "\n".join(ln for ln in lines if ln != '#include "opgen_math.cuh"')
        done = subprocess.run(["cpp", "-P", "-undef", "-nostdinc", "-x", "c++", "-"], input=body, text=True,
                              capture_output=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert MARK not in done.stdout and "OPGEN_GRID_STRIDE(" in done.stdout


IMPORT_CHECK = """
import inspect, json, math, sys
import generated as G
import generated._autograd, generated._cuda_kernels, generated._methods, generated._cpu_kernels
expected = json.loads(sys.argv[1])
got = {}
for name, arg in expected["defaults"]:
    got[name + "." + arg] = inspect.signature(getattr(G, name)).parameters[arg].default
numbers = {k: v for k, v in got.items() if isinstance(v, float)}
strings = {k: list(v) if isinstance(v, tuple) else v for k, v in got.items() if not isinstance(v, float)}
for name, factor in expected["grads"]:
    x = G.ones(2, requires_grad=True)
    getattr(G, name)(x).sum().backward()
    assert x.grad.tolist() == [float(factor)] * 2, (name, x.grad)
print(json.dumps({"strings": strings, "numbers": {k: repr(v) for k, v in numbers.items()}}))
"""


def run_import_check(project: Path, defaults: list[tuple[str, str]], grads: list[tuple[str, int]]) -> dict:
    env = {"PYTHONPATH": str(project), "PATH": "/usr/bin:/bin", "HOME": str(project)}
    done = subprocess.run([sys.executable, "-c", IMPORT_CHECK, json.dumps({"defaults": defaults, "grads": grads})],
                          cwd=project, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert not (project / MARK).exists()
    return json.loads(done.stdout)


def test_accepted_cases_generate_inert_code_that_imports(tmp_path: Path) -> None:
    project = scratch_project(tmp_path)
    native, derivatives = [], []
    defaults: list[tuple[str, str]] = []
    want: dict[str, object] = {}
    grads: list[tuple[str, int]] = []
    for i, case in enumerate(ACCEPTED):
        name = f"{NAME}{i}"
        native.append(case.native.replace(f"{NAME}(", f"{name}(", 1).replace(f"{NAME}.", f"{name}.", 1))
        if case.derivative:
            derivatives.append(case.derivative.replace(f"{NAME}(", f"{name}(", 1))
        else:  # a differentiable op needs an entry (Note [A differentiable op needs a derivative])
            (f,) = [f for f in load_native_functions(ROOT / NF, root=ROOT, text=native[-1], file=NF)
                    if f.derived_from is None]
            derivatives.append("- name: " + y(str(f.func)) + "\n  output_differentiability: [False]\n")
        if case.route.startswith("str"):
            defaults.append((name, "s"))
            value = PAYLOADS[case.payload]
            want[name] = (value,) if case.route == "str list default" else value
        if case.route == "formula string":
            grads.append((name, len(PAYLOADS[case.payload])))
    # numeric defaults that mean what they say (the parser accepts inf, nan and 1e400)
    native.append("- func: numeric_defaults(Tensor self, float a=inf, float b=-inf, float c=nan, float d=1e400, "
                  f"float e=-1e400, float f=1e-300, float g=2.5) -> Tensor\n  dispatch:\n    CPU: {KERNEL}\n")
    derivatives.append("- name: numeric_defaults(Tensor self, float a=inf, float b=-inf, float c=nan, float d=1e400, "
                       "float e=-1e400, float f=1e-300, float g=2.5) -> Tensor\n  output_differentiability: [False]\n")
    defaults += [("numeric_defaults", a) for a in "abcdefg"]
    native.append("- func: scaled(Tensor self, Scalar alpha=inf) -> Tensor\n  pointwise: self * alpha\n")
    derivatives.append("- name: scaled(Tensor self, Scalar alpha=inf) -> Tensor\n  self: grad * alpha\n")
    result = generate(project, "".join(native), "".join(derivatives))
    assert result.exit_code == 0, result.output
    out = project / "generated"
    for path in out.glob("*.py"):
        assert_python_inert(path)
    new = [p for p in (out / "cuda" / "pointwise").glob("*.cu")
           if not (ROOT / "generated" / "cuda" / "pointwise" / p.name).exists()]
    formulas = [d for d in derivatives if "output_differentiability" not in d]
    assert len(new) >= len(formulas)  # each formula case's op and `scaled`
    for path in (out / "cuda" / "pointwise").glob("*.cu"):
        assert_cxx_inert(path, preprocess=path in new)
    got = run_import_check(project, defaults, grads)
    assert got["strings"] == {f"{name}.s": list(v) if isinstance(v, tuple) else v for name, v in want.items()}
    assert got["numbers"] == {f"numeric_defaults.{a}": v for a, v in zip(
        "abcdefg", ["inf", "-inf", "nan", "inf", "-inf", "1e-300", "2.5"], strict=True)}
    ops = (out / "_ops.py").read_text()
    assert ("def numeric_defaults(input, a=float('inf'), b=float('-inf'), c=float('nan'), d=float('inf'), "
            "e=float('-inf'), f=1e-300, g=2.5") in ops  # (then out=, which every functional op takes)


# -- a handful through the whole CLI: refused with exit 2 and file:line, generated/ untouched ------------
@pytest.mark.parametrize("entry, line, words", [
    # the issue's examples: a Scalar with a string default holding code, a spec that is two C++ lines
    (func("x(Tensor self, Scalar s=" + Q + PAYLOADS["newline"] + Q + ") -> Tensor"), 1, "raw control character"),
    (plain("x", "  pointwise: " + y("(-self" + PAYLOADS["undef"] + "\n)") + "\n"), 2, "one line"),
    ("- func: x(Tensor self) -> Tensor\n  dispatch:\n    CPU: codegen.cli.main\n", 2, "not a plain top-level function"),
    ("- func: np(Tensor self) -> Tensor\n  pointwise: -self\n", 1, "'np' would be bound twice"),
    ("- func: PointwiseKernel(Tensor self) -> Tensor\n  pointwise: -self\n", 1,
     "'PointwiseKernel' would be bound twice"),
])
def test_cli_refuses_with_exit_2_and_file_line(tmp_path: Path, entry: str, line: int, words: str) -> None:
    project = scratch_project(tmp_path)
    before = (project / "generated" / "_ops.py").read_bytes()
    first = _lines((ROOT / NF).read_text()) + line
    schema = entry.split("\n", 1)[0].removeprefix("- func: ")
    result = generate(project, entry, f"- name: {schema}\n  self: -grad\n" if "pointwise" in entry else "")
    assert result.exit_code == 2
    assert f"{NF}:{first}:" in result.output and words in result.output, result.output
    assert (project / "generated" / "_ops.py").read_bytes() == before


# -- properties -----------------------------------------------------------------------------------------
TEXT = st.text(st.characters(codec="utf-8"), max_size=40)


@given(TEXT, st.sampled_from(["raw", "escaped"]))
def test_any_accepted_str_default_renders_as_its_value(text: str, how: str) -> None:
    body = raw(text) if how == "raw" else escaped(text)
    entry = func("f(Tensor self, str s=" + Q + body + Q + ") -> Tensor", DISPATCH)
    try:
        f = load_native_functions(ROOT / NF, root=ROOT, text=entry, file=NF)[0]
    except LoadError as e:
        assert all(re.match(rf"{NF}:1(:\d+)?: ", str(d)) for d in e.diagnostics)
        return
    default = python_default(f.func.arguments.flat_all[1])
    assert default is not None and all(" " <= c <= "~" for c in default)
    assert eval(default, {"__builtins__": {}}) == text
    schema = _op_context(f).schema
    assert eval(schema, {"__builtins__": {}}) == str(f.func)
    assert all(" " <= c <= "~" for c in comment_text(str(f.func)))


@given(TEXT)
def test_any_accepted_spec_renders_from_its_tree(text: str) -> None:
    entry = f"- func: f(Tensor self, Scalar other) -> Tensor\n  pointwise: {y('self' + text)}\n"
    try:
        f = load_native_functions(ROOT / NF, root=ROOT, text=entry, file=NF)[0]
    except LoadError as e:
        assert all(str(d).startswith(f"{NF}:") for d in e.diagnostics)
        return
    names = {"self": "x", "other": "y"}
    for rendered in (f.pointwise.render(NUMPY, names), f.pointwise.render(CUDA, names), f.pointwise.text):
        assert all(" " <= c <= "~" for c in rendered) and "#" not in rendered and "\\" not in rendered


@settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(TEXT, min_size=1, max_size=6))
def test_after_every_exit_0_the_package_imports(tmp_path_factory: pytest.TempPathFactory, texts: list[str]) -> None:
    """Strings as str defaults and docs, through the whole CLI: exit 2 with file:line, or exit 0 and the
    package imports with each default equal to its string."""
    project = scratch_project(tmp_path_factory.mktemp("hyp"))
    base = _lines((ROOT / NF).read_text())
    entries = []
    for i, text in enumerate(texts):
        schema = f"h{i}(Tensor self, str s=" + Q + escaped(text) + Q + ") -> Tensor"
        entries.append(func(schema, DISPATCH + "  doc: " + y(text) + "\n"))
    result = generate(project, "".join(entries))
    if result.exit_code != 0:
        assert result.exit_code == 2 and f"{NF}:" in result.output
        assert any(f"{NF}:{base + 1 + 4 * i}:" in result.output for i in range(len(texts))), result.output
        return
    for path in (project / "generated").glob("*.py"):
        assert_python_inert(path)
    got = run_import_check(project, [(f"h{i}", "s") for i in range(len(texts))], [])
    assert got["strings"] == {f"h{i}.s": text for i, text in enumerate(texts)}


# -- the comment door, through the real templates of both languages ------------------------------------
@pytest.mark.parametrize("payload", list(PAYLOADS), ids=list(PAYLOADS))
def test_comments_of_both_languages_hold_any_payload_inert(payload: str, tmp_path: Path) -> None:
    """What a schema or spec could carry into the `//` and `#` comments of the CUDA outputs (today only
    names and numbers reach them; the door must hold whatever comes)."""
    functions = load_native_functions(ROOT / NF, root=ROOT, text=plain("inj", POINTWISE), file=NF)
    text = f"inj(Tensor self, str s={PAYLOADS[payload]!r}) -> Tensor {PAYLOADS[payload]}"
    op = dataclasses.replace(gen_cuda.pointwise_op(functions[0]), schema=comment_text(text),
                             source=comment_text(PAYLOADS[payload]), yaml_comment=comment_text(PAYLOADS[payload]))
    env = environment(ROOT)
    cu = tmp_path / "inj.cu"
    cu.write_text(env.get_template("cuda/pointwise.cu.j2").render(op=op, paths=gen_cuda.KERNEL_PATHS,
                                                                   index_types=gen_cuda.INDEX_BITS))
    assert_cxx_inert(cu, preprocess=True)
    py = tmp_path / "kernels.py"
    py.write_text(env.get_template("cuda/cuda_kernels.py.j2").render(ops=[op]))
    assert_python_inert(py)
    compile(py.read_text(), str(py), "exec")
