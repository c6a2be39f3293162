"""The model of a project: both YAML files loaded, validated and cross-checked, as one `Model`.

Every renderer (codegen/render/), the driver (codegen/gen.py) and the CLI read this; it imports no renderer,
so the generator's import graph has no circle (tests/house/test_import_layers.py checks it).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from codegen.derivatives import Derivative, load_derivatives
from codegen.native import NativeFunction, load_native_functions
from codegen.runtime_ops import check_runtime_ops

NATIVE_YAML = "native_functions.yaml"
DERIVATIVES_YAML = "derivatives.yaml"


@dataclass(frozen=True)
class Model:
    functions: list[NativeFunction]
    derivatives: list[Derivative]

    @functools.cached_property
    def _derivative_by_function(self) -> dict[int, Derivative]:
        return {id(d.function): d for d in self.derivatives}

    def derivative_of(self, f: NativeFunction) -> Derivative | None:
        """The derivatives.yaml entry of `f` (derived in-place/out forms share their root's)."""
        return self._derivative_by_function.get(id(f.root))


def load_model(root: Path) -> Model:
    """Load and validate both YAML files of the project at `root`."""
    functions = load_native_functions(root / NATIVE_YAML, root=root)
    check_runtime_ops((f.func.name.name for f in functions), NATIVE_YAML)
    derivatives = load_derivatives(root / DERIVATIVES_YAML, functions, root=root)
    return Model(functions, derivatives)
