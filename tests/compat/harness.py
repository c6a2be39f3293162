"""Run the PyTorch programs of tests/compat/programs/ in one interpreter and print their results as JSON.

    python3 -m tests.compat.harness opgen|torch PROGRAM.py ...

`opgen`: before any program runs, `torch` names `generated` in sys.modules (only in this process), and
the package's submodule finder answers every `torch.<sub>` path, so `import torch.nn as nn` and
`from torch.utils.data import DataLoader` resolve to opgen's modules. `torch`: the real PyTorch.
Each program leaves a dict `results` of named values in its globals; tensors are turned into nested
lists (`.tolist()`), and an exception is reported as the program's `error` instead of its results.
"""

from __future__ import annotations

import json
import runpy
import sys
import traceback
from typing import Any


def install_torch_alias() -> None:
    """`torch` names `generated`, and every `torch.<sub>` path resolves to opgen's submodule, as
    `python3 -m generated.as_torch` arranges it (Note [Running PyTorch programs as they are])."""
    import generated  # noqa: F401  (installs the package's submodule finder)
    from runtime import as_torch

    as_torch.install()


def to_plain(value: Any) -> Any:
    """JSON-ready form: tensors and arrays as nested lists, tuples as lists, dict keys as strings."""
    if hasattr(value, "tolist") and callable(value.tolist):
        if hasattr(value, "detach"):
            value = value.detach()
        return to_plain(value.tolist())
    if isinstance(value, dict):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    if isinstance(value, float) and value != value:
        return "nan"
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    return value


def main(argv: list[str]) -> int:
    backend, paths = argv[0], argv[1:]
    if backend == "opgen":
        install_torch_alias()
    elif backend != "torch":
        raise SystemExit(f"backend must be opgen or torch, got {backend!r}")
    import torch
    out: dict[str, Any] = {}
    for path in paths:
        torch.set_default_dtype(torch.float32)
        torch.manual_seed(0)
        try:
            ns = runpy.run_path(path, run_name="__main__")
            out[path] = {"results": to_plain(ns["results"])}
        except BaseException:
            out[path] = {"error": traceback.format_exc(limit=-6)}
    sys.stdout.write("\n@@RESULTS@@" + json.dumps(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
