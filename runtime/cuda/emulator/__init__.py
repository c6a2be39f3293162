"""Running opgen's CUDA kernels without a GPU (Note [Host execution of CUDA kernels] in opgen_emulate.h).

`engine`: compiles the generated `.cu` text with the system C++ compiler into host libraries and launches
their kernels. `device`: the emulated CUDA device (`OPGEN_EMULATE_CUDA=1`) that the runtime's CUDA backend
runs on: memory, streams, events and the CuPy-shaped array module the launch code uses.
"""

from __future__ import annotations

import functools
import os

ENV_VAR = "OPGEN_EMULATE_CUDA"


def enabled() -> bool:
    """Whether `OPGEN_EMULATE_CUDA` asks for the emulated device (any value but '', '0', 'false', 'no')."""
    return os.environ.get(ENV_VAR, "").strip().lower() not in ("", "0", "false", "no", "off")


@functools.cache
def active() -> bool:
    """`enabled()` as read once per process: the emulated device replaces CUDA for the whole run."""
    return enabled()
