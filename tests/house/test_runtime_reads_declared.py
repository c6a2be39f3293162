"""codegen/runtime_reads.py: the declared list of runtime definitions the generator reads (Note [What the
generator reads from the runtime]) is complete, each entry exists and is used, and the generated package
carries exactly what each definition renders to."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

from codegen import gen, inline, runtime_reads
from codegen.errors import OpgenError
from codegen.jinja_env import environment
from codegen.runtime_reads import INLINED, SOURCE_READS

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "templates"
_USE = re.compile(r"\b(inline|inline_expr)\(\s*\"([^\"]+)\"")


def _template_uses() -> list[tuple[str, str, str]]:
    """(template, inline | inline_expr, name) of every use in templates/."""
    uses = []
    for path in sorted(TEMPLATES.rglob("*.j2")):
        for kind, name in _USE.findall(path.read_text()):
            uses.append((path.relative_to(TEMPLATES).as_posix(), kind, name))
    return uses


def test_every_template_use_names_a_declared_entry_of_its_form() -> None:
    uses = _template_uses()
    assert len(uses) >= len(INLINED)
    for template, kind, name in uses:
        assert name in INLINED, f"{template}: {kind}({name!r}) is not declared in codegen/runtime_reads.py"
        assert INLINED[name].expression == (kind == "inline_expr"), f"{template}: {name} used as {kind}"
        assert template in INLINED[name].templates, f"{template} renders {name}; add it to its `templates`"


def test_every_declared_entry_is_used_where_it_says() -> None:
    used = {(template, name) for template, _, name in _template_uses()}
    for name, entry in INLINED.items():
        for template in entry.templates:
            assert (template, name) in used, f"{name} is declared for {template}, which does not render it"


def _body(entry: runtime_reads.InlinedDefinition) -> tuple[list[str], list[str]]:
    """The definition's statements (docstring dropped) as `ast.unparse` writes them, and its parameters."""
    tree = ast.parse((ROOT / entry.module).read_text())
    owner, _, name = entry.function.rpartition(".")
    scope = tree.body
    if owner:
        scope = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == owner).body
    fn = next(n for n in scope if isinstance(n, ast.FunctionDef) and n.name == name)
    body = fn.body[1:] if isinstance(fn.body[0], ast.Expr) else fn.body
    return [ast.unparse(s) for s in body], [a.arg for a in fn.args.args]


@pytest.mark.parametrize("name", sorted(INLINED))
def test_each_entry_renders_its_runtime_definition(name: str) -> None:
    """Rendered with its own parameter names and no renaming, an entry is its definition's text."""
    entry = INLINED[name]
    assert (ROOT / entry.module).is_file()
    body, params = _body(entry)
    if entry.expression:
        text = inline.inline_expr(ROOT, entry.module, entry.function, *params)
        assert len(body) == 1 and body[0].startswith("return ")
        expr = body[0].removeprefix("return ")
        assert text in (expr, f"({expr})")
    elif not entry.expand:
        assert inline.inline(ROOT, entry.module, entry.function, *params) == body
    # the names it binds are module-level names of its module, read (not assigned) by the definition
    tree = ast.parse((ROOT / entry.module).read_text())
    top = {a.asname or a.name.split(".")[0] for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)
           for a in n.names}
    top |= {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    top |= {t.id for n in tree.body if isinstance(n, ast.Assign | ast.AnnAssign)
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) if isinstance(t, ast.Name)}
    for runtime_name, _ in entry.binds:
        assert runtime_name in top, f"{name} binds {runtime_name}, not a module-level name of {entry.module}"
        assert any(runtime_name in line for line in body)


def test_binds_rename_only_module_names(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("def f(keys):\n    return (shared.remap or tls.remap)[keys]\n")
    binds = {"shared": "_shared", "tls": "_tls"}
    assert inline.inline_expr(tmp_path, "m.py", "f", "a._keys | b._keys", binds=binds) == \
        "(_shared.remap or _tls.remap)[a._keys | b._keys]"
    (tmp_path / "m.py").write_text("def f(keys):\n    tls = keys\n    return tls\n")
    with pytest.raises(OpgenError, match="bound as module names"):
        inline.inline(tmp_path, "m.py", "f", "k", binds=binds)


def test_an_undeclared_or_misused_name_fails_to_render() -> None:
    env = environment(ROOT)
    with pytest.raises(OpgenError, match="not declared"):
        env.from_string('{{ inline_expr("no_such_rule", "x") }}').render()
    with pytest.raises(OpgenError, match="declared for inline_expr"):
        env.from_string('{{ inline("dispatch_key", "x") }}').render()


def test_the_generated_package_carries_every_rendering() -> None:
    """Render the package with a recording environment: every declared entry is rendered, and each rendering
    is in the generated file of the template that asked for it (`generated/` is current: `codegen check`)."""
    seen: list[tuple[str, tuple[str, ...], Any]] = []
    env = environment(ROOT)
    env.globals.update(runtime_reads.jinja_globals(ROOT, lambda *r: seen.append(r)))
    files = gen.render_all(ROOT, env)
    assert {name for name, _, _ in seen} == set(INLINED)
    for path, body in files.items():  # what was rendered is what generated/ holds
        assert (ROOT / gen.GENERATED / path).read_text() == body, f"generated/{path} is stale: codegen generate"
    text = "\n".join(files.values())
    for name, args, rendered in seen:
        lines = [rendered] if isinstance(rendered, str) else rendered
        for line in (physical for statement in lines for physical in statement.splitlines()):
            assert line in text, f"{name}{args}: {line!r} is not in the generated package"
    # the key-set step is never written out by hand in a template any more
    for path in TEMPLATES.rglob("*.j2"):
        assert ".remap" not in path.read_text(), path


def test_codegen_reads_no_undeclared_runtime_file() -> None:
    """A string naming a runtime source file in codegen/ (outside docstrings and comments) is a declared read."""
    declared = {e.module for e in INLINED.values()} | set(SOURCE_READS)
    found = []
    for path in sorted((ROOT / "codegen").rglob("*.py")):
        tree = ast.parse(path.read_text())
        docstrings = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
                    and (re.fullmatch(r"runtime/[\w/]+\.py", node.value) or node.value == "runtime")):
                found.append((path.name, node.value))
    undeclared = [(p, v) for p, v in found if v not in declared or p != "runtime_reads.py"]
    assert not undeclared, f"codegen names runtime files outside codegen/runtime_reads.py: {undeclared}"
    assert {v for _, v in found} == declared
