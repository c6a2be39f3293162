"""Malformed YAML input: every case exits 2 with `file:line: message` and leaves generated/ untouched, in
`generate`, `check`, `list` and `show` (Note [Reading untrusted YAML], codegen/yaml_lines.py)."""

from __future__ import annotations

import ast
import re
import shutil
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from codegen.cli import main
from codegen.native import Variant
from codegen.runtime_ops import RUNTIME_OPS

ROOT = Path(__file__).resolve().parents[2]
NF, DV = "native_functions.yaml", "derivatives.yaml"
LOCATED = re.compile(r"(^|error: )(native_functions|derivatives)\.yaml:\d+(:\d+)?: ", re.M)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("project")
    ignore = shutil.ignore_patterns("__pycache__")
    for name in ("runtime", "templates", "generated"):
        shutil.copytree(ROOT / name, root / name, ignore=ignore)
    return root


def snapshot(root: Path) -> dict[str, bytes]:
    out = root / "generated"
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


def invoke(root: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, [*args, "--root", str(root)])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception  # a traceback: the test fails with it
    return result.exit_code, result.output


def real(name: str) -> bytes:
    return (ROOT / name).read_bytes()


def with_entry(text: str) -> dict[str, bytes]:
    return {NF: real(NF) + b"\n" + text.encode()}


def _drop_entry(func_prefix: bytes) -> dict[str, bytes]:
    """native_functions.yaml without the entries whose schema starts with `func_prefix`."""
    blocks = real(NF).split(b"\n- ")
    kept = [b for b in blocks if not b.startswith(b"func: " + func_prefix)]
    assert len(kept) < len(blocks)
    return {NF: b"\n- ".join(kept)}


BOMB = b"doc: &a [" + b"x, " * 9 + b"x]\n" + b"".join(
    f"  p{i}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n".encode() for i in range(9))

def appended_line(offset: int) -> int:
    """The line of the `offset`-th line (1: the first) of an entry appended by `with_entry`."""
    return real(NF).count(b"\n") + 1 + offset


def located(line: int, problem: str) -> re.Pattern[str]:
    """opgen's answer where a YAML library may answer first, in its own words that differ between versions:
    the file and line of the problem and what it is about (`problem`, a regex), not the library's wording."""
    return re.compile(rf"native_functions\.yaml:{line}(:\d+)?: (error: )?(invalid YAML: )?.*{problem}", re.I)


# the expected text of each case's error: opgen's own wording (a string), or `located(...)` where the YAML
# library reports the problem (PyYAML's messages and the checks it does first change between releases)
CASES: dict[str, tuple[dict[str, bytes], str | re.Pattern[str]]] = {
    "non-utf8 byte": ({NF: real(NF).replace(b"pointwise: self + alpha", b"pointwise: self \xff+ alpha", 1)},
                      "not UTF-8: byte 0xff"),
    "raw control character": (with_entry("- func: f(Tensor self) -> Tensor\n  doc: a\x01b\n  pointwise: self\n"),
                              located(appended_line(2), "character.*0001")),
    "escaped control character": (with_entry('- func: f(Tensor self) -> Tensor\n  doc: "a\\x1bb"\n'
                                             "  pointwise: self\n"), "control character U+001B in a string"),
    "list as key": (with_entry("- func: f(Tensor self) -> Tensor\n  ? [a, b]\n  : c\n"),
                    "a mapping key must be a plain string"),
    "int key": ({DV: real(DV) + b"\n- name: neg(Tensor self) -> Tensor\n  1: grad\n"},
                "a mapping key must be a string, not int"),
    "list where a string goes": (with_entry("- func: f(Tensor self) -> Tensor\n  pointwise: self\n"
                                            "  promote: [float]\n"), "'promote' must be one of common"),
    "dtypes null": (with_entry("- func: f(Tensor self) -> Tensor\n  pointwise: self\n  dtypes: null\n"),
                    "'dtypes' must be a dtype group or a list of dtypes, not empty (null)"),
    "dtypes list of lists": (with_entry("- func: f(Tensor self) -> Tensor\n  pointwise: self\n  dtypes: [[a]]\n"),
                             "not a list holding a list"),
    "variants a mapping": (with_entry("- func: f(Tensor self) -> Tensor\n  pointwise: self\n  variants: {a: 1}\n"),
                           "'variants' must be a string"),
    "deep nesting": (with_entry("- func: f(Tensor self) -> Tensor\n  doc: " + "[" * 1000 + "]" * 1000 + "\n"),
                     located(appended_line(2), "nesting")),
    "very deep nesting": (with_entry("- func: f(Tensor self) -> Tensor\n  doc: " + "[" * 200000 + "]" * 200000),
                          located(appended_line(2), "nesting")),
    "function as a value": (with_entry("- func: f(Tensor self) -> Tensor\n  pointwise: abs(self) + abs\n"),
                            "function 'abs' is used as a value"),
    "long op name": (with_entry(f"- func: {'x' * 300}(Tensor self) -> Tensor\n  pointwise: self\n"),
                     "the limit is 100"),
    "non-ascii op name": (with_entry("- func: f\u00e9(Tensor self) -> Tensor\n  pointwise: self\n"),
                          "unexpected character 'é' in operator name"),
    "doc not a string": (with_entry("- func: f(Tensor self) -> Tensor\n  pointwise: self\n  doc: [1, 2]\n"),
                         "'doc' must be a one-line string, not a list"),
    "doc a number": (with_entry("- func: f(Tensor self) -> Tensor\n  pointwise: self\n  doc: 5\n"),
                     "'doc' must be a one-line string, not a number"),
    "alias bomb in doc": ({NF: real(NF) + b"\n- func: f(Tensor self) -> Tensor\n  pointwise: self\n  " + BOMB},
                          "aliases ('*a') are not supported"),
    "tag": (with_entry("- func: f(Tensor self) -> Tensor\n  pointwise: !!python/name:os.system self\n"),
            "unsupported tag"),
    "two documents": ({NF: real(NF) + b"\n---\n- func: f(Tensor self) -> Tensor\n"}, "a single YAML document"),
    "top level a mapping": ({DV: b"name: neg(Tensor self) -> Tensor\n"}, "expected a list of entries"),
    "entry a scalar": ({DV: real(DV) + b"\n- just text\n"}, "expected a list of entries"),
    "formula a list": ({DV: real(DV) + b"\n- name: neg(Tensor self) -> Tensor\n  self: [grad]\n"},
                       "the formula of 'self' must be a string"),
    "too large": ({NF: real(NF) + b"\n#" + b"x" * (5 << 20) + b"\n"}, "the limit is"),
    "empty native_functions": ({NF: b""}, "the runtime needs"),
    "incomplete native_functions": (_drop_entry(b"copy_("), "does not declare: copy_"),
    "merge key": (with_entry("- func: f(Tensor self) -> Tensor\n  <<: {doc: x}\n"),
                  "unsupported tag 'tag:yaml.org,2002:merge'"),
}


# generate runs every case; the other commands the ones that read YAML differently or could hang
EVERY_COMMAND = ("alias bomb in doc", "non-utf8 byte", "very deep nesting", "doc not a string",
                 "empty native_functions")
RUNS = [(case, "generate") for case in CASES] + [(case, c) for case in EVERY_COMMAND for c in ("check", "list", "show")]


@pytest.mark.parametrize("case, command", RUNS)
def test_malformed_input_exits_2_with_location_and_writes_nothing(project: Path, case: str, command: str) -> None:
    files, expected = CASES[case]
    for name in (NF, DV):
        (project / name).write_bytes(files.get(name, real(name)))
    before = snapshot(project)
    start = time.perf_counter()
    args = ["show", "add"] if command == "show" else [command]
    code, out = invoke(project, *args)
    assert time.perf_counter() - start < 10
    assert code == 2, out
    assert LOCATED.search(out), out
    if isinstance(expected, str):
        assert expected in out, out
    else:
        assert expected.search(out), out
    assert "Traceback" not in out
    assert snapshot(project) == before
    assert [p.name for p in project.iterdir() if p.name.startswith("generated.")] == []


NOT_OPS_ON_TENSORS = {"split"}  # str.split in runtime/dtypes.py, library.py, opcall.py


def runtime_op_references(op_names: set[str], method_names: set[str]) -> dict[str, str]:
    """Ops the runtime calls: `G.x`, `ops.x`, `generated_ops().x`, `find("x")`, and `.x(...)` of a method op
    outside the array kernels (where `.sum(` is NumPy's). Name -> first file that calls it."""
    tensor_members = {n.name for n in ast.walk(ast.parse((ROOT / "runtime/tensor.py").read_text()))
                      if isinstance(n, ast.FunctionDef)}
    found: dict[str, str] = {}
    for path in sorted((ROOT / "runtime").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        array_code = "/kernels/" in rel or "/cuda/" in rel
        for n in ast.walk(ast.parse(path.read_text())):
            name = None
            if isinstance(n, ast.Attribute):
                v = n.value
                if isinstance(v, ast.Name) and v.id in ("G", "ops", "_ops", "generated"):
                    name = n.attr
                elif isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "generated_ops":
                    name = n.attr
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
                if n.func.attr == "find" and n.args and isinstance(n.args[0], ast.Constant):
                    name = str(n.args[0].value)
                elif not array_code and n.func.attr in method_names and n.func.attr not in tensor_members:
                    name = n.func.attr
            if name in op_names and name not in NOT_OPS_ON_TENSORS:
                found.setdefault(name, rel)
    return found


def test_runtime_ops_lists_every_op_the_runtime_calls() -> None:
    from codegen.loading import load_model
    functions = load_model(ROOT).functions
    ops = {f.func.name.name for f in functions}
    methods = {f.func.name.name for f in functions if Variant.method in f.variants}
    used = runtime_op_references(ops, methods)
    missing = {name: where for name, where in used.items() if name not in RUNTIME_OPS}
    assert not missing, f"add these to codegen/runtime_ops.py RUNTIME_OPS: {missing}"
    assert RUNTIME_OPS <= ops


def test_refused_characters_are_exactly_the_control_and_surrogate_categories() -> None:
    """yaml_lines refuses a string holding a character of Unicode category Cc or Cs but newline and tab
    (Note [Reading untrusted YAML]) with one regex: the two agree on every code point."""
    import unicodedata

    from codegen.yaml_lines import _CONTROL

    refused = {c for c in range(0x110000) if _CONTROL.fullmatch(chr(c))}
    by_category = {c for c in range(0x110000)
                   if chr(c) not in "\n\t" and unicodedata.category(chr(c)) in ("Cc", "Cs")}
    assert refused == by_category


@pytest.mark.parametrize(("text", "column", "hint"), [
    ("- func: f(Tensor self) -> Tensor\n  variants: function\n   pointwise: self\n", 13, "indented"),
    ("- func: f(Tensor self) -> Tensor\n  variants: function\n - func: g(Tensor self) -> Tensor\n", 2, "'- '"),
])
def test_yaml_syntax_errors_point_at_the_line_with_a_caret_and_a_hint(text: str, column: int, hint: str) -> None:
    from codegen.errors import LoadError
    from codegen.yaml_lines import load_entries

    with pytest.raises(LoadError) as info:
        load_entries(text, "native_functions.yaml")
    first, source, caret, note = str(info.value).splitlines()
    assert first.startswith(f"native_functions.yaml:3:{column}: error: ")
    line = text.splitlines()[2]
    assert source[source.index("|") + 2:] == line  # the offending line, as written
    assert caret.index("^") - (caret.index("|") + 2) == column - 1  # the caret under its column
    assert note.lstrip().startswith("note:") and hint in note


@pytest.mark.parametrize(("entry", "wanted"), [
    ("- func: f(Tensr self) -> Tensor\n  pointwise: self\n", "did you mean 'Tensor'?"),
    ("- func: f(Tensor self) -> Tensor\n  promte: float\n  pointwise: self\n", "did you mean 'promote'?"),
])
def test_misspellings_get_a_suggestion(tmp_path: Path, entry: str, wanted: str) -> None:
    from codegen.errors import LoadError
    from codegen.native import load_native_functions

    path = tmp_path / "native_functions.yaml"
    path.write_text(entry)
    with pytest.raises(LoadError) as info:
        load_native_functions(path)
    assert wanted in str(info.value)


@pytest.mark.parametrize(("target", "wanted"), [
    ("runtime.kernels.linalg.mmm", "did you mean 'mm'"),
    ("runtime.kernels.linalgg.mm", "did you mean 'linalg'"),
])
def test_misspelt_dispatch_targets_get_a_suggestion(tmp_path: Path, target: str, wanted: str) -> None:
    from codegen.errors import LoadError
    from codegen.native import load_native_functions

    path = tmp_path / "native_functions.yaml"
    path.write_text(f"- func: f(Tensor self) -> Tensor\n  dispatch:\n    CPU: {target}\n")
    root = Path(__file__).resolve().parents[2]
    with pytest.raises(LoadError) as info:
        load_native_functions(path, root=root)
    assert wanted in str(info.value)
