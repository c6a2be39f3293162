"""How many of PyTorch's public names opgen has, per namespace (how far PyTorch programs can run unchanged).

A namespace's public names are its `__all__` where it has one, else the names of `dir()` that do not start
with "_", leaving out modules from elsewhere and objects of the typing and builtins modules (imports, not
API); for `Tensor`, the attributes of `torch.Tensor` that do not start with "_". opgen has a name when
`generated.<namespace>` (or `generated.Tensor`) has an attribute of that name. The test prints the table
(run with `-n 0 -s`) and holds every namespace to a floor measured when it was written, so a change that drops
names fails; raise the floors as names land.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

import pytest

torch = pytest.importorskip("torch")

NAMESPACES = ["torch.nn", "torch.nn.functional", "torch.nn.init", "torch.nn.utils", "torch.optim",
              "torch.optim.lr_scheduler", "torch.autograd", "torch.utils.data", "torch.distributions",
              "torch.backends", "torch.amp", "Tensor"]

# opgen's count per namespace, raised as names land: a change that drops a name fails
FLOORS = {"torch.nn": 178, "torch.nn.functional": 141, "torch.nn.init": 26, "torch.nn.utils": 22, "torch.optim": 18,
          "torch.optim.lr_scheduler": 16, "torch.autograd": 16, "torch.utils.data": 30, "torch.distributions": 67,
          "torch.backends": 14, "torch.amp": 5, "Tensor": 580}
NOT_API_MODULES = {"typing", "typing_extensions", "builtins", "collections.abc", "warnings", "types", "functools"}


def _is_api(namespace: Any, value: Any) -> bool:
    if inspect.ismodule(value):
        return value.__name__.startswith(namespace.__name__ + ".")
    return getattr(value, "__module__", None) not in NOT_API_MODULES


def public_names(name: str) -> list[str]:
    if name == "Tensor":
        return sorted(n for n in dir(torch.Tensor) if not n.startswith("_"))
    namespace = importlib.import_module(name)
    declared = getattr(namespace, "__all__", None)
    if declared is not None:
        return sorted(set(declared))
    return sorted(n for n in dir(namespace) if not n.startswith("_") and _is_api(namespace, getattr(namespace, n)))


def opgen_namespace(name: str) -> Any:
    import generated
    if name == "Tensor":
        return generated.Tensor
    try:
        return importlib.import_module("generated" + name[len("torch"):])
    except ImportError:
        return None


def coverage() -> dict[str, tuple[int, int, list[str]]]:
    """namespace -> (opgen's count, PyTorch's count, the names opgen lacks)."""
    out = {}
    for name in NAMESPACES:
        names = public_names(name)
        ours = opgen_namespace(name)
        missing = [n for n in names if ours is None or not hasattr(ours, n)]
        out[name] = (len(names) - len(missing), len(names), missing)
    return out


def test_public_names_per_namespace() -> None:
    table = coverage()
    total_have = sum(have for have, _, _ in table.values())
    total = sum(n for _, n, _ in table.values())
    print(f"\n{'namespace':28} {'opgen':>6} {'torch':>6} {'share':>6}")
    for name, (have, n, _) in table.items():
        print(f"{name:28} {have:6} {n:6} {have / n:6.0%}")
    print(f"{'all':28} {total_have:6} {total:6} {total_have / total:6.0%}")
    low = {name: (table[name][0], floor) for name, floor in FLOORS.items() if table[name][0] < floor}
    assert not low, f"namespaces below their floor (have, floor): {low}"


def test_the_count_sees_a_missing_name() -> None:
    names = public_names("torch.optim")
    assert "Adam" in names and "Literal" not in names
    assert "lr_scheduler" in names
