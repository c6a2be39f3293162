"""`G.backends.mha`: the fast-path flag of MultiheadAttention (kept; opgen has one attention path)."""

_fastpath = [True]


def get_fastpath_enabled() -> bool:
    return _fastpath[0]


def set_fastpath_enabled(value: bool) -> None:
    _fastpath[0] = bool(value)


__all__ = ["get_fastpath_enabled", "set_fastpath_enabled"]
