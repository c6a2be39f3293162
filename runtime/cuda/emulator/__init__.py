"""Running opgen's CUDA kernels without a GPU (Note [Host execution of CUDA kernels] in opgen_emulate.h).

`engine`: compiles the generated `.cu` text with the system C++ compiler into host libraries and launches
their kernels. `device`: the emulated CUDA device (`OPGEN_EMULATE_CUDA=1`) that the runtime's CUDA backend
runs on: memory, streams, events and the CuPy-shaped array module the launch code uses.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any

ENV_VAR = "OPGEN_EMULATE_CUDA"

# Note [The emulator reaches the caching allocator through hooks]
# The emulated device's CuPy-shaped module (xp.py) sits below runtime/cuda/memory.py, which owns the caching
# allocator; memory.py fills these hooks when it is imported (runtime/cuda/device.py imports it first), so
# xp.py gets its memory from the allocator without importing the layer above it. Likewise compile.py loads
# kernels through the host engine once device.py has installed `engine.load_function` as its host loader.
get_allocator: Callable[[int], Any] | None = None
cuda_malloc: Callable[[int, int], Any] | None = None


def enabled() -> bool:
    """Whether `OPGEN_EMULATE_CUDA` asks for the emulated device (any value but '', '0', 'false', 'no')."""
    return os.environ.get(ENV_VAR, "").strip().lower() not in ("", "0", "false", "no", "off")


@functools.cache
def active() -> bool:
    """`enabled()` as read once per process: the emulated device replaces CUDA for the whole run."""
    return enabled()
