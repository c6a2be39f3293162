"""The runtime's import layers (DESIGN.md section 2): the import-linter contracts of pyproject.toml hold, the
import graph of runtime/ has no cycle (function-local imports included), and runtime reaches generated/
only through the hooks that `import generated` installs."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from runtime import opcall

ROOT = Path(__file__).resolve().parents[2]


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """Module -> the modules of `package` it imports, from every import statement (function bodies included).

    `from a import b` counts as importing `a` and, when it is a module, `a.b` (`a` runs first either way)."""
    modules: dict[str, Path] = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(name, is_package, node.module, node.level)
                targets.add(base)
                targets.update(f"{base}.{alias.name}" for alias in node.names)
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def _absolute(module: str, is_package: bool, target: str | None, level: int) -> str:
    if level == 0:
        return target or ""
    parts = module.split(".")
    anchor = parts if is_package else parts[:-1]
    anchor = anchor[: len(anchor) - (level - 1)]
    return ".".join([*anchor, target] if target else anchor)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            child = next(successors, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_runtime_import_graph_has_no_cycle() -> None:
    graph = import_graph(ROOT, "runtime")
    assert len(graph) > 50  # the walk found the package
    assert cycles(graph) == [], "import cycles in runtime/ (function-local imports count)"


def test_codegen_import_graph_has_no_cycle() -> None:
    """The generator's modules form no circle either: the model (codegen/model.py) is below its scanner
    (codegen/schema_parser.py), and the loaded model (codegen/loading.py) below every renderer."""
    graph = import_graph(ROOT, "codegen")
    assert len(graph) > 15  # the walk found the package
    assert cycles(graph) == [], "import cycles in codegen/ (function-local and TYPE_CHECKING imports count)"
    assert "codegen.schema_parser" not in graph["codegen.model"]
    assert "codegen.gen" not in graph["codegen.gen_autograd"]


def test_runtime_never_imports_generated() -> None:
    graph = import_graph(ROOT, "runtime")
    offenders = []
    for name in graph:
        path = ROOT / Path(*name.split("."))
        path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
            offenders += [f"{name}:{node.lineno}" for n in names if n == "generated" or n.startswith("generated.")]
    assert offenders == []


def test_cycle_check_sees_function_local_imports(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "low.py").write_text("def f():\n    from pkg.sub import high\n    return high\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "high.py").write_text("from .. import low\n")
    (pkg / "leaf.py").write_text("import pkg.low\n")
    graph = import_graph(tmp_path, "pkg")
    assert graph["pkg.sub.high"] == {"pkg", "pkg.low"}
    assert cycles(graph) == [["pkg.low", "pkg.sub.high"]]


def _contracts() -> list[dict]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]


def test_every_runtime_module_is_in_a_layer() -> None:
    """import-linter cannot check exhaustiveness of a layers contract without containers: this test does."""
    layers = next(c for c in _contracts() if c["type"] == "layers")["layers"]
    named = {m.strip() for layer in layers for m in layer.replace(":", "|").split("|")}
    children = {f"runtime.{p.stem if p.is_file() else p.name}" for p in (ROOT / "runtime").iterdir()
                if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()}
    assert children - named == set(), "runtime modules missing from the layers contract in pyproject.toml"
    assert named - children == set(), "layers that name no runtime module"


def test_import_linter_contracts_hold() -> None:
    """`lint-imports` (as CI runs it): the layers of runtime, codegen -> runtime.vocabulary only, runtime -/->
    generated."""
    code = ("import sys; from importlinter.cli import lint_imports; "
            "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True, no_logo=True))")
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"{len(_contracts())} kept, 0 broken" in run.stdout


def test_runtime_imports_without_generated_and_installs_tensor_methods() -> None:
    """`import runtime.api` loads nothing of generated/; the modules above the core install their Tensor methods
    (Note [Tensor methods from upper layers])."""
    code = ("import sys\n"
            "from runtime.tensor import Tensor\n"
            "names = ('__getitem__', 'to', 'backward', 'register_hook', '__dlpack__')\n"
            "bare = {n for n in names if hasattr(Tensor, n)}\n"
            "import runtime.api\n"
            "assert not [m for m in sys.modules if m == 'generated' or m.startswith('generated.')]\n"
            "full = all(hasattr(Tensor, n) for n in ('__getitem__', '__setitem__', 'to', '__dlpack__', "
            "'__dlpack_device__', 'backward', 'register_hook', 'retain_grad'))\n"
            "print(sorted(bare), full)\n")
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["[]", "True"]


def test_generated_installs_the_op_hooks() -> None:
    import generated
    from generated import _ops

    assert opcall.ops is _ops
    assert opcall.api is generated


def test_uninstalled_hook_says_what_to_do() -> None:
    hook = opcall._NotInstalled("ops")
    with pytest.raises(RuntimeError, match=r"runtime\.opcall\.ops\.view: .*import generated"):
        _ = hook.view
