"""DESIGN.md section 2 lists runtime's layers as pyproject.toml's import-linter contract has them: every module
of the contract is named in the list, and a module of a lower layer is named before any module above it."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
START = "Inside `runtime/`, from the bottom up"
END = "A lower layer reaches an upper one"


def contract_layers(pyproject: str) -> list[list[str]]:
    """The layers contract's modules, bottom layer first, without the `runtime.` prefix."""
    contracts = tomllib.loads(pyproject)["tool"]["importlinter"]["contracts"]
    layers = next(c for c in contracts if c["type"] == "layers")["layers"]
    return [[m.strip().removeprefix("runtime.") for m in re.split(r"[|:]", layer)] for layer in reversed(layers)]


def layer_list_problems(design: str, layers: list[list[str]]) -> list[str]:
    """What DESIGN.md's layer list gets wrong: modules it does not name, and modules named after a module
    of a higher layer."""
    text = design[design.index(START):design.index(END)]
    positions: dict[str, int] = {}
    problems = []
    for layer in layers:
        for module in layer:
            found = [i for i in (text.find(f"`{module}`"), text.find(f"`{module}/`")) if i >= 0]
            if found:
                positions[module] = min(found)
            else:
                problems.append(f"{module}: not named")
    for lower, layer in enumerate(layers):
        for above in layers[lower + 1:]:
            for a in layer:
                for b in above:
                    if a in positions and b in positions and positions[a] > positions[b]:
                        problems.append(f"{a}: named after {b}, a module of a higher layer")
    return problems


def test_design_names_every_layer_in_order() -> None:
    layers = contract_layers((ROOT / "pyproject.toml").read_text())
    assert sum(map(len, layers)) > 30
    assert layer_list_problems((ROOT / "DESIGN.md").read_text(), layers) == []


def test_problems_are_found() -> None:
    design = f"{START}:\n1. leaves: `a`, `b/`;\n2. `d`, `c`.\n{END}"
    assert layer_list_problems(design, [["a", "b"], ["c"], ["d"]]) == ["c: named after d, a module of a higher layer"]
    assert layer_list_problems(design, [["a", "e"], ["b"]]) == ["e: not named"]
