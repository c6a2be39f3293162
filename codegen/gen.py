"""The generator's driver: YAML -> model -> every renderer's contexts -> the files of `generated/`.

The renderers, one per output, are the modules of codegen/render/ (Note [One renderer per output]); this
module loads the model, builds what they share, runs each of them and writes the union of their files.
Everything is rendered in memory first; only then is the new tree written beside `generated/` and
swapped in whole (`write_files`, Note [Whole-tree swap]), so an error or a kill anywhere leaves
`generated/` entirely old or entirely new. Output depends only on the YAML, the templates and the
generator (sorted iteration everywhere, no timestamps), so `opgen check` can diff it byte for byte.
"""

from __future__ import annotations

import difflib
import warnings
from pathlib import Path
from typing import Any

import jinja2

from codegen import names, tree_swap
from codegen.api_python import kernel_name, op_id
from codegen.errors import Location, OpgenError
from codegen.jinja_env import environment
from codegen.loading import Model, load_model
from codegen.render import (
    autograd,
    compound_pointwise,
    cpu_kernels,
    cuda_kernels,
    fusion_specs,
    meta_kernels,
    methods,
    ops,
    package,
    registrations,
    stubs,
)
from codegen.render.inputs import Inputs, Renderer
from codegen.render.python_api import python_api
from codegen.render_errors import rendering

GENERATED = "generated"

# Every output of `generated/`, one renderer each (Note [One renderer per output]); a new output (a new
# backend's kernels) is one more module of codegen/render/ and one more entry here.
RENDERERS: tuple[Renderer[Any], ...] = (
    Renderer("ops", ops.contexts, ops.render),
    Renderer("cpu_kernels", cpu_kernels.contexts, cpu_kernels.render),
    Renderer("meta_kernels", meta_kernels.contexts, meta_kernels.render),
    Renderer("autograd", autograd.contexts, autograd.render),
    Renderer("registrations", registrations.contexts, registrations.render),
    Renderer("methods", methods.contexts, methods.render),
    Renderer("package", package.contexts, package.render),
    Renderer("stubs", stubs.contexts, stubs.render),
    Renderer("cuda_kernels", cuda_kernels.contexts, cuda_kernels.render),
    Renderer("fusion_specs", fusion_specs.contexts, fusion_specs.render),
    Renderer("compound_pointwise", compound_pointwise.contexts, compound_pointwise.render),
)


def render_all(root: Path, env: jinja2.Environment | None = None,
               renderers: tuple[Renderer[Any], ...] = RENDERERS) -> dict[str, str]:
    """Every file of `generated/`, as {relative path: content}, rendered in `env` (by default the project's
    `jinja_env.environment`); any failure of a template or a context builder is a RenderError naming the op
    (Note [Render errors name their op])."""
    with rendering():
        return _render_all(root, environment(root) if env is None else env, renderers)


def _render_all(root: Path, env: jinja2.Environment, renderers: tuple[Renderer[Any], ...]) -> dict[str, str]:
    model = load_model(root)
    inputs = Inputs(root, model, python_api(model))
    files: dict[str, str] = {}
    made_by: dict[str, str] = {}
    for renderer in renderers:
        for path, text in renderer(env, inputs).items():
            if path in made_by:
                raise OpgenError(f"renderers {made_by[path]!r} and {renderer.name!r} both write {GENERATED}/{path}")
            made_by[path] = renderer.name
            files[path] = text
    names.check_module_names(files, _owners(model))
    return dict(sorted(files.items()))


def _owners(model: Model) -> dict[str, list[Location]]:
    """Every top-level name an op gives rise to in a generated module -> the entries that declare it."""
    owners: dict[str, list[Location]] = {}
    for f in model.functions:
        i, k = op_id(f), kernel_name(f)
        for name in (f.func.name.name, i, f"_op_{i}", f"_tab_{i}", f"_call_{i}", f"_rt_{i}", k, f"{k}_inplace",
                     f"{k}_out", f"_{k}", f"_FAST_{k}"):
            owners.setdefault(name, []).append(f.loc)
    for d in model.derivatives:
        owners.setdefault(d.class_name, []).append(d.loc)
    return owners


# -- writing ----------------------------------------------------------------------------------------
def generate(root: Path) -> dict[str, str]:
    """Render everything and return it (nothing is written). Each Python file that differs from what
    generated/ holds is compiled once, a check against template bugs (what is already there passed it
    when it was written); `compile`, not `ast.parse`, which slows down more than linearly on big files."""
    files = render_all(root)
    out_dir = root / GENERATED
    for path, text in files.items():
        if path.endswith(".py") and not _on_disk(out_dir / path, text):
            _check_python(path, text)
    return files


def _on_disk(path: Path, text: str) -> bool:
    try:
        data = text.encode()
        return path.stat().st_size == len(data) and path.read_bytes() == data
    except OSError:
        return False


def _check_python(path: str, text: str) -> None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, f"{GENERATED}/{path}", "exec", dont_inherit=True)
    except SyntaxError as e:  # a template bug, never the user's: say where
        raise OpgenError(f"generated {GENERATED}/{path}:{e.lineno} is not valid Python: {e.msg}") from None


def write_files(root: Path, files: dict[str, str]) -> list[str]:
    """Make `generated/` hold exactly `files`, swapped in whole (Note [Whole-tree swap],
    codegen/tree_swap.py). Returns the paths that changed."""
    return tree_swap.write_tree(root / GENERATED, files)


def _existing(out_dir: Path) -> list[Path]:
    return [p for p in out_dir.rglob("*") if p.is_file() and "__pycache__" not in p.parts]


def diff(root: Path, files: dict[str, str]) -> str:
    """A unified diff from what `generated/` holds to what it should hold ('' when fresh)."""
    out_dir = root / GENERATED
    chunks: list[str] = []
    on_disk = {p.relative_to(out_dir).as_posix(): p for p in _existing(out_dir)} if out_dir.is_dir() else {}
    for rel in sorted(set(files) | set(on_disk)):
        old = on_disk[rel].read_text() if rel in on_disk else ""
        new = files.get(rel, "")
        if old != new:
            chunks.extend(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                               f"a/{GENERATED}/{rel}", f"b/{GENERATED}/{rel}"))
    return "".join(chunks)
