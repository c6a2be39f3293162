"""The helpers torch.nn.functional exports beside its ops: the `__torch_function__` protocol
(`has_torch_function*`, `handle_torch_function`), `boolean_dispatch`, `assert_int_or_pair` and the
`BroadcastingList` annotations.

opgen's own Tensor has no `__torch_function__`, so these see only the overrides users define: an argument
whose type has `__torch_function__` is overloaded, and `handle_torch_function` calls the overloads as PyTorch
does (subclasses before their bases, otherwise left to right; the first result that is not NotImplemented).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any


def _overloaded(relevant_args: Iterable[Any]) -> list[Any]:
    """The arguments that carry a `__torch_function__`, one per type, subclasses before their bases."""
    types: list[type] = []
    args: list[Any] = []
    for arg in relevant_args:
        t = type(arg)
        if t in types or not hasattr(t, "__torch_function__"):
            continue
        index = len(args)
        for i, seen in enumerate(types):
            if issubclass(t, seen):
                index = i
                break
        types.insert(index, t)
        args.insert(index, arg)
    return args


def has_torch_function(relevant_args: Iterable[Any]) -> bool:
    """Whether any of `relevant_args` overrides functions through `__torch_function__`."""
    return bool(_overloaded(relevant_args))


def has_torch_function_unary(arg: Any) -> bool:
    """`has_torch_function((arg,))`."""
    return has_torch_function((arg,))


def has_torch_function_variadic(*args: Any) -> bool:
    """`has_torch_function(args)`."""
    return has_torch_function(args)


def handle_torch_function(public_api: Callable[..., Any], relevant_args: Iterable[Any], *args: Any,
                          **kwargs: Any) -> Any:
    """Call `__torch_function__(public_api, types, args, kwargs)` of the overloaded arguments in order and
    return the first result that is not NotImplemented; TypeError when every one declines."""
    overloaded = _overloaded(relevant_args)
    types = tuple(type(a) for a in overloaded)
    for arg in overloaded:
        result = type(arg).__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    name = getattr(public_api, "__name__", repr(public_api))
    raise TypeError(f"no implementation found for '{name}' on types that implement __torch_function__: "
                    f"{[type(a) for a in overloaded]}")


def boolean_dispatch(arg_name: str, arg_index: int, default: bool, if_true: Callable[..., Any],
                     if_false: Callable[..., Any], module_name: str | None,
                     func_name: str | None) -> Callable[..., Any]:
    """A function that calls `if_true` or `if_false` by the boolean argument `arg_name` (keyword) or
    position `arg_index`, `default` when absent (how F.max_pool2d chooses return_indices). It takes the
    docstring of whichever of the two has one (both having one is a RuntimeError)."""

    def fn(*args: Any, **kwargs: Any) -> Any:
        flag = default
        if arg_name in kwargs:
            flag = kwargs[arg_name]
        elif arg_index < len(args):
            flag = args[arg_index]
        return if_true(*args, **kwargs) if flag else if_false(*args, **kwargs)

    if if_true.__doc__ is not None and if_false.__doc__ is not None:
        raise RuntimeError("only one function can have a docstring")
    fn.__doc__ = if_true.__doc__ if if_true.__doc__ is not None else if_false.__doc__
    if module_name is not None:
        fn.__module__ = module_name
    if func_name is not None:
        fn.__name__ = fn.__qualname__ = func_name
    return fn


def assert_int_or_pair(arg: Any, arg_name: str, message: str) -> None:
    """AssertionError with `message.format(arg_name)` unless `arg` is an int or has two elements."""
    if not (isinstance(arg, int) or len(arg) == 2):
        raise AssertionError(message.format(arg_name))


class BroadcastingListCls:
    """`BroadcastingListN[T]`: TorchScript's annotation for "a T, or N of them"; in Python, as in PyTorch,
    subscripting it gives None (an annotation with no runtime meaning)."""

    def __getitem__(self, types: Any) -> None:
        return None


BroadcastingList1 = BroadcastingList2 = BroadcastingList3 = BroadcastingListCls()
