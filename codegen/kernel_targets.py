"""Dispatch targets: a kernel named in `dispatch:` must be a plain top-level function of its module.

`pkg.module.fn` is looked up in `root/pkg/module.py`, read with `ast` and never imported: `fn` must be bound
once, by a `def` at the top level with no decorator (a decorator may make it anything: a click command, a
cached object), and by nothing else (a class, an `async def`, a `def` inside an `if` or `try`, an
assignment, an import, a loop variable, a `global` statement in a function; a star import may rebind any
name). Each refusal names the line
of the module that binds it otherwise. The bindings are kept across runs by the file's content (Note
[Generator caches] in codegen/disk_cache.py).
"""

from __future__ import annotations

import ast
import functools
import keyword
import sys
from pathlib import Path

from codegen import disk_cache
from codegen.errors import OpgenError, did_you_mean


def check_kernel(kernel: str, root: Path) -> None:
    """A kernel named `pkg.module.fn` must be a top-level function of `root/pkg/module.py`: a plain `def`
    (no decorator, not async) that nothing else at the top level of the module binds again (an assignment,
    an import, a class, a loop variable, a `global` statement). Read with ast, never imported."""
    module, _, fn = kernel.rpartition(".")
    parts = kernel.split(".")
    if not module or not all(p.isidentifier() and p.isascii() and not keyword.iskeyword(p) for p in parts):
        raise OpgenError(f"kernel '{kernel}' must be a dotted path 'package.module.function' of ASCII identifiers")
    if parts[0].startswith("_") or parts[0] == "generated":
        raise OpgenError(f"kernel '{kernel}' must start with a package of the project (not "
                         "'generated' or a name starting with '_')")
    path = root.joinpath(*module.split(".")).with_suffix(".py")
    if not path.is_file():
        siblings = [p.stem for p in path.parent.glob("*.py")] if path.parent.is_dir() else []
        raise OpgenError(f"kernel '{kernel}': no module file {path.relative_to(root)}"
                         f"{did_you_mean(path.stem, siblings)}")
    stat = path.stat()
    where = {name: line for name, _, line in
             (w.partition(":") for w in _module_functions(path, stat.st_mtime_ns, stat.st_size).split())}
    found = where.get(fn)
    if found is not None and "*" in where:  # `from m import *` may rebind any name
        found = where["*"]
    if found is None:
        plain = [name for name, line in where.items() if line.isdigit()]
        raise OpgenError(f"kernel '{kernel}': {path.relative_to(root)} defines no '{fn}'{did_you_mean(fn, plain)}")
    if not found.isdigit():
        raise OpgenError(f"kernel '{kernel}' is not a plain top-level function: "
                         f"{path.relative_to(root)}:{found.split('@')[1]} "
                         f"{found.split('@')[0].replace('-', ' ')}")


@functools.lru_cache(maxsize=256)
def _module_functions(path: Path, mtime_ns: int, size: int) -> str:
    """`name:line` for every plain top-level function of a Python file, `name:what@line` for a name bound
    otherwise (read with ast; kept across runs by the file's content, Note [Generator caches] in
    codegen/disk_cache.py)."""
    text = path.read_text()
    return disk_cache.memo("names", disk_cache.digest("kernel functions 4", sys.version, text),
                           lambda: _top_level_bindings(text, str(path)))


def _top_level_bindings(text: str, filename: str) -> str:
    tree = ast.parse(text, filename=filename)
    plain: dict[str, int] = {}
    other: dict[str, str] = {}

    def bind(name: str, what: str, line: int) -> None:
        other.setdefault(name, f"{what}@{line}")

    def scope(node: ast.AST, nested: bool) -> None:
        """The bindings `node` makes in the module's namespace (not inside functions, classes, lambdas or
        comprehensions, which have their own)."""
        if isinstance(node, ast.FunctionDef) and not node.decorator_list and not nested:
            if node.name in plain:
                bind(node.name, "defines-it-twice", node.lineno)
            plain.setdefault(node.name, node.lineno)
            return
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            what = ("decorates-it" if node.decorator_list else "defines-it-inside-a-block" if nested
                    else "makes-it-a-class" if isinstance(node, ast.ClassDef) else "makes-it-an-async-def")
            bind(node.name, what, node.lineno)
            return
        if isinstance(node, ast.Lambda | ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
            return
        if isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                what = "may-rebind-it-with-a-star-import" if alias.name == "*" else "binds-it-with-an-import"
                bind((alias.asname or alias.name).split(".")[0], what, node.lineno)
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            bind(node.id, "assigns-it", node.lineno)
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            bind(node.name, "assigns-it", node.lineno)
        for child in ast.iter_child_nodes(node):
            scope(child, nested or isinstance(node, ast.stmt))

    for statement in tree.body:
        scope(statement, False)
    for n in ast.walk(tree):  # `global name` in a function may rebind a top-level name
        if isinstance(n, ast.Global):
            for name in n.names:
                bind(name, "rebinds-it-through-global", n.lineno)
    out = [f"{name}:{line}" for name, line in plain.items() if name not in other]
    out += [f"{name}:{what}" for name, what in other.items()]
    return " ".join(sorted(out))
