"""The closed sets of opgen, defined once: dispatch keys and their order, alias keys and what they serve,
variants, dtype groups, promotion kinds, and the rule that fills a cell of an operator's dispatch table.

Note [One vocabulary for codegen and runtime]
The generator validates YAML against these sets, `opgen show` prints dispatch tables with `resolve`, and
the runtime's dispatcher builds its tables with the same `resolve`, so the three cannot drift apart. This
module is a leaf: it imports nothing from opgen, which is what lets `codegen/` import it while it imports
nothing else of `runtime/` (DESIGN.md, "Layers").
"""

from __future__ import annotations

from collections.abc import Collection
from enum import IntEnum


class DispatchKey(IntEnum):
    """Runtime dispatch keys; the value is the bit position, higher means higher priority."""

    Meta = 0
    CPU = 1
    CUDA = 2
    BackendSelect = 3
    Autograd = 4
    Tracer = 5


# Runtime keys from the highest priority down.
KEYS_BY_PRIORITY: tuple[DispatchKey, ...] = tuple(reversed(DispatchKey))
# Keys that name a device's kernels (a tensor's key set holds exactly one of CPU/CUDA, or Meta).
BACKEND_KEYS: tuple[DispatchKey, ...] = (DispatchKey.CUDA, DispatchKey.CPU, DispatchKey.Meta)
# Keys whose default behaviour, with no kernel and no fallback, is to pass the call to the next key down.
FALLTHROUGH_BY_DEFAULT = frozenset({DispatchKey.BackendSelect, DispatchKey.Autograd, DispatchKey.Tracer})

# Alias keys: one kernel registered under an alias serves several runtime keys. As in PyTorch, neither
# serves keys like Tracer, which only their own kernels or fallbacks handle.
ALIAS_SERVES: dict[str, frozenset[DispatchKey]] = {
    "CompositeImplicitAutograd": frozenset({DispatchKey.CPU, DispatchKey.CUDA, DispatchKey.Meta,
                                            DispatchKey.Autograd}),
    "CompositeExplicitAutograd": frozenset({DispatchKey.CPU, DispatchKey.CUDA, DispatchKey.Meta}),
}
# An explicit kernel is preferred to an implicit one where both serve a key (PyTorch's order).
ALIAS_ORDER: tuple[str, ...] = ("CompositeExplicitAutograd", "CompositeImplicitAutograd")
ALIAS_KEYS: tuple[str, ...] = tuple(ALIAS_SERVES)

# The keys a `dispatch:` entry of native_functions.yaml may name, in priority order.
YAML_DISPATCH_KEYS: tuple[str, ...] = ("Autograd", "BackendSelect", *(k.name for k in BACKEND_KEYS), *ALIAS_KEYS)
# Keys whose kernel the generator writes for a `pointwise:` op.
POINTWISE_KEYS: tuple[str, ...] = ("CPU", "CUDA")

# `variants:` of an entry.
VARIANTS: tuple[str, ...] = ("function", "method")
# `promote:` of a pointwise op: how its output dtype is found from its inputs (runtime.dtypes.result_type).
PROMOTE_KINDS: dict[str, str] = {
    "common": "the common dtype of the inputs (PyTorch's promotion)",
    "float": "the common dtype, integer and bool inputs promoted to the default float dtype",
    "bool": "bool output; computed in the common dtype",
}

# `dtypes:` groups of a pointwise op ("all" is the default), by dtype name.
_INTEGRAL = ("uint8", "int8", "int16", "int32", "int64")
_FLOATING = ("float16", "bfloat16", "float32", "float64")
DTYPE_GROUPS: dict[str, tuple[str, ...]] = {
    "floating": _FLOATING,
    "integral": _INTEGRAL,
    "numeric": _INTEGRAL + _FLOATING,
    "all": ("bool",) + _INTEGRAL + _FLOATING,
    "integral_and_bool": ("bool",) + _INTEGRAL,
}


def resolve(key: DispatchKey, registered: Collection[str], has_fallback: bool = False) -> tuple[str | None, str]:
    """Which registration serves runtime `key` of an operator whose kernels are registered under the key
    names `registered`: `(name, how)` with `how` one of 'kernel', an alias key, 'fallback' (name None),
    'fallthrough' (to the next key down) or 'missing' (a call raises)."""
    if key.name in registered:
        return key.name, "kernel"
    for alias in ALIAS_ORDER:
        if alias in registered and key in ALIAS_SERVES[alias]:
            return alias, alias
    if has_fallback:
        return None, "fallback"
    return None, "fallthrough" if key in FALLTHROUGH_BY_DEFAULT else "missing"
