"""`G.cuda.amp`: the older spelling of `G.amp` for CUDA (autocast defaults to device_type "cuda")."""

from __future__ import annotations

from typing import Any

from runtime import amp as _amp
from runtime.amp import GradScaler as _GradScaler
from runtime.amp import custom_bwd, custom_fwd


class autocast(_amp.autocast):
    """`G.amp.autocast("cuda", ...)` (Note [Autocast in opgen], runtime/amp/autocast_mode.py)."""

    def __init__(self, enabled: bool = True, dtype: Any = None, cache_enabled: bool = True) -> None:
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_GradScaler):
    """`G.amp.GradScaler("cuda", ...)`."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd"]
