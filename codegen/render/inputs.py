"""What every renderer is given (Note [One renderer per output] in codegen/render/__init__.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

import jinja2

from codegen.loading import Model
from codegen.render.python_api import PythonApi

C = TypeVar("C")


@dataclass(frozen=True)
class Inputs:
    """The project, its loaded model and the Python API spelled for it."""

    root: Path
    model: Model
    api: PythonApi


@dataclass(frozen=True)
class Renderer(Generic[C]):
    """One output: `contexts` builds its typed contexts, `render` returns {path: text} from them."""

    name: str
    contexts: Callable[[Inputs], C]
    render: Callable[[jinja2.Environment, C], dict[str, str]]

    def __call__(self, env: jinja2.Environment, inputs: Inputs) -> dict[str, Any]:
        return self.render(env, self.contexts(inputs))
