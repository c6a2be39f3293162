"""The per-output renderer layer (Note [One renderer per output] in codegen/render/__init__.py): the driver's
list names every renderer module once, each builds frozen contexts and returns {path: text}, no two write one
path, and a new output is one more entry."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from codegen import gen
from codegen.errors import OpgenError
from codegen.loading import load_model
from codegen.render import package
from codegen.render.inputs import Inputs, Renderer
from codegen.render.python_api import python_api

ROOT = Path(__file__).resolve().parents[2]
SHARED = {"__init__", "inputs", "python_api"}  # the layer's own modules, no output


def test_every_renderer_module_is_in_the_drivers_list_once() -> None:
    modules = {p.stem for p in (ROOT / "codegen" / "render").glob("*.py")} - SHARED
    listed = [r.name for r in gen.RENDERERS]
    assert len(listed) == len(set(listed))
    assert set(listed) == modules
    for r in gen.RENDERERS:
        assert r.contexts.__module__ == r.render.__module__ == f"codegen.render.{r.name}"


@pytest.fixture(scope="module")
def outputs() -> dict[str, dict[str, str]]:
    """Each renderer's files, rendered one by one (its contexts checked frozen on the way)."""
    from codegen.jinja_env import environment

    model = load_model(ROOT)
    inputs = Inputs(ROOT, model, python_api(model))
    env = environment(ROOT)
    out = {}
    for r in gen.RENDERERS:
        ctx = r.contexts(inputs)
        assert dataclasses.is_dataclass(ctx) and type(ctx).__dataclass_params__.frozen, r.name  # type: ignore[attr-defined]
        out[r.name] = r.render(env, ctx)
    return out


def test_renderers_write_disjoint_paths_whose_union_is_generated(outputs: dict[str, dict[str, str]]) -> None:
    union: dict[str, str] = {}
    for name, files in outputs.items():
        assert files, f"{name} renders nothing"
        assert not set(files) & set(union), f"{name} writes a path another renderer writes"
        union.update(files)
    on_disk = {p.relative_to(ROOT / gen.GENERATED).as_posix() for p in (ROOT / gen.GENERATED).rglob("*")
               if p.is_file() and "__pycache__" not in p.parts}
    assert set(union) == on_disk
    for path, text in union.items():
        assert (ROOT / gen.GENERATED / path).read_text() == text, path


def test_two_renderers_of_one_path_are_refused() -> None:
    twice = (Renderer("package", package.contexts, package.render), Renderer("again", package.contexts, package.render))
    with pytest.raises(OpgenError, match="'package' and 'again' both write generated/__init__.py"):
        gen.render_all(ROOT, renderers=twice)


def test_a_new_output_is_one_more_renderer() -> None:
    """A renderer of a new file (a stand-in for a new backend's kernels) joins the output by its entry alone."""
    def contexts(inputs: Inputs) -> tuple[str, ...]:
        return tuple(f.name for f in inputs.model.functions if f.pointwise is not None)

    def render(env: object, names: tuple[str, ...]) -> dict[str, str]:
        return {"_toy_kernels.py": "".join(f"# {n}\n" for n in names)}

    files = gen.render_all(ROOT, renderers=(Renderer("package", package.contexts, package.render),
                                            Renderer("toy", contexts, render)))
    assert set(files) == {"__init__.py", "py.typed", "_toy_kernels.py"}
    assert "# add.Tensor\n" in files["_toy_kernels.py"]
