"""`nn.utils.stateless.functional_call`: call a module with some of its parameters and buffers replaced by
given tensors, for that call only (torch's). Replacement is by dotted name; the module's own tensors are put
back afterwards, even when the call raises."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from runtime.nn.module import Module
from runtime.tensor import Tensor


def _owner(module: Module, name: str) -> tuple[Module, str]:
    path, _, leaf = name.rpartition(".")
    return module.get_submodule(path), leaf


def functional_call(module: Module, parameter_and_buffer_dicts: Mapping[str, Tensor] | Sequence[Mapping[str, Tensor]],
                    args: Any = None, kwargs: dict[str, Any] | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    dicts = [parameter_and_buffer_dicts] if isinstance(parameter_and_buffer_dicts, Mapping) \
        else list(parameter_and_buffer_dicts)
    replacements: dict[str, Tensor] = {}
    for d in dicts:
        for k, v in d.items():
            if k in replacements:
                raise ValueError(f"{k} appeared in multiple dictionaries; behavior of functional call is ambiguous")
            replacements[k] = v
    own = dict(module.named_parameters(remove_duplicate=False))
    own.update(dict(module.named_buffers(remove_duplicate=False)))
    if strict:
        missing = sorted(set(own) - set(replacements))
        unexpected = sorted(set(replacements) - set(own))
        if missing or unexpected:
            raise RuntimeError(f"Error(s) in reparametrizing for {module._get_name()}: missing keys {missing}, "
                               f"unexpected keys {unexpected}")
    if tie_weights:  # a tensor shared under several names is replaced under all of them
        by_id: dict[int, list[str]] = {}
        for name, t in own.items():
            by_id.setdefault(id(t), []).append(name)
        for names in by_id.values():
            given = [n for n in names if n in replacements]
            for n in names:
                if given and n not in replacements:
                    replacements[n] = replacements[given[0]]
    saved: list[tuple[dict[str, Any], str, Any]] = []
    try:
        for name, value in replacements.items():
            owner, leaf = _owner(module, name)
            table = owner._parameters if leaf in owner._parameters else owner._buffers if leaf in owner._buffers \
                else None
            if table is None:
                raise AttributeError(f"{module._get_name()} has no parameter or buffer named '{name}'")
            saved.append((table, leaf, table[leaf]))
            table[leaf] = value
        args = () if args is None else args if isinstance(args, tuple) else (args,)
        return module(*args, **(kwargs or {}))
    finally:
        for table, leaf, old in reversed(saved):
            table[leaf] = old


__all__ = ["functional_call"]
