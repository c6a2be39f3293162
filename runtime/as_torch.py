"""Run a PyTorch program as it is, with `torch` naming opgen's package.

    python3 -m generated.as_torch program.py [args ...]
    python3 -m generated.as_torch -m package.module [args ...]

Note [Running PyTorch programs as they are]
A PyTorch program imports `torch`, `torch.nn`, `torch.nn.functional`, `torch.utils.data.dataloader`, ...
`install()` puts opgen's package into sys.modules under the name `torch`; every submodule path then
resolves through the package's SubmoduleFinder (runtime/api.py), which answers "torch.<row>" for every
row of SUBMODULES with the same module object as "generated.<row>", so `import torch.nn as nn` and
`from torch.utils.data import DataLoader` give opgen's modules and `isinstance` checks agree across both
names. A program may also do this itself: `import generated, sys; sys.modules["torch"] = generated`.
`install()` refuses to replace a real PyTorch that is already imported (the two cannot share a process).
"""

from __future__ import annotations

import runpy
import sys
from types import ModuleType

__all__ = ["install", "main"]


def install(name: str = "torch") -> ModuleType:
    """Make `import <name>` and `import <name>.<submodule>` give opgen's package and its submodules;
    returns the package. Refused (RuntimeError) when another module already holds that name."""
    from runtime import opcall
    generated = opcall.api  # the package `import generated` gave (it installs itself there)
    if not isinstance(generated, ModuleType):
        raise RuntimeError("import generated first (python3 -m generated.as_torch does)")
    present = sys.modules.get(name)
    if present is not None and present is not generated:
        raise RuntimeError(f"'{name}' is already imported as {getattr(present, '__file__', present)!r}; "
                           f"install opgen as '{name}' before anything imports it")
    sys.modules[name] = generated
    return generated


def main(argv: list[str] | None = None) -> None:
    """`python3 -m generated.as_torch program.py args...` (or `-m module args...`): run it as __main__
    with `torch` naming opgen."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help") or (args[0] == "-m" and len(args) < 2):
        print(__doc__.split("\n\n")[1].rstrip() if __doc__ else "", file=sys.stderr)
        raise SystemExit(0 if args and args[0] in ("-h", "--help") else 2)
    install()
    if args[0] == "-m":
        sys.argv = args[1:]
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = args
        runpy.run_path(args[0], run_name="__main__")


if __name__ == "__main__":
    main()
