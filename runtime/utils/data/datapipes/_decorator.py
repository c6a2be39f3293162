"""Decorators of DataPipes (torch.utils.data.datapipes._decorator): registering a functional form,
determinism, and checks of element types (Note [DataPipes])."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator
from typing import Any, get_origin, get_type_hints

from runtime.utils.data.datapipes._typing import element_type, issubinstance, issubtype
from runtime.utils.data.datapipes.datapipe import IterDataPipe, MapDataPipe


class functional_datapipe:
    """`@functional_datapipe("name")` on a DataPipe class makes `pipe.name(*args)` construct
    `cls(pipe, *args)` for every pipe of its kind (IterDataPipe or MapDataPipe)."""

    def __init__(self, name: str, enable_df_api_tracing: bool = False) -> None:
        self.name = name
        self.enable_df_api_tracing = enable_df_api_tracing

    def __call__(self, cls: Any) -> Any:
        target = cls.cls if isinstance(cls, non_deterministic) else cls
        if isinstance(target, type) and issubclass(target, IterDataPipe):
            IterDataPipe.register_datapipe_as_function(self.name, cls,
                                                       enable_df_api_tracing=self.enable_df_api_tracing)
        elif isinstance(target, type) and issubclass(target, MapDataPipe):
            MapDataPipe.register_datapipe_as_function(self.name, cls)
        else:
            raise TypeError(f"`functional_datapipe` can only decorate IterDataPipe or MapDataPipe classes, "
                            f"not {cls!r}")
        return cls


_determinism = False


class guaranteed_datapipes_determinism:
    """While active (from construction to the end of its `with`), constructing a DataPipe marked
    `non_deterministic` raises TypeError."""

    def __init__(self) -> None:
        global _determinism
        self.prev = _determinism
        _determinism = True

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        global _determinism
        _determinism = self.prev


class non_deterministic:
    """Marks an IterDataPipe class as non-deterministic (`@non_deterministic`), or as non-deterministic for
    the arguments a function says (`@non_deterministic(fn)`, fn returning a bool), so that it cannot be
    constructed under `guaranteed_datapipes_determinism`."""

    cls: type | None = None

    def __init__(self, arg: type | Callable[..., bool]) -> None:
        if isinstance(arg, type):
            if not issubclass(arg, IterDataPipe):
                raise TypeError(f"Only `IterDataPipe` can be decorated with `non_deterministic`, but "
                                f"{arg.__name__} is found")
            self.cls = arg
        elif callable(arg):
            self.deterministic_fn = arg
        else:
            raise TypeError(f"{arg} can not be decorated by non_deterministic")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.cls is not None:
            if _determinism:
                raise TypeError(f"{self.cls.__name__} is non-deterministic, but you set "
                                "'guaranteed_datapipes_determinism'")
            return self.cls(*args, **kwargs)
        if not (args and isinstance(args[0], type) and issubclass(args[0], IterDataPipe)):
            raise TypeError(f"Only `IterDataPipe` can be decorated, but {args[0]!r} is found")
        self.cls = args[0]
        return self.deterministic_wrapper_fn

    def deterministic_wrapper_fn(self, *args: Any, **kwargs: Any) -> Any:
        res = self.deterministic_fn(*args, **kwargs)
        if not isinstance(res, bool):
            raise TypeError(f"deterministic_fn of `non_deterministic` decorator is required to return a boolean "
                            f"value, but {type(res)} is found")
        if _determinism and res:
            raise TypeError(f"{self.cls.__name__} is non-deterministic with the inputs, but you set "  # type: ignore[union-attr]
                            "'guaranteed_datapipes_determinism'")
        return self.cls(*args, **kwargs)  # type: ignore[misc]


def _datapipe_hint(hint: Any) -> tuple[type, Any] | None:
    """(IterDataPipe or MapDataPipe, element type) for a hint naming a DataPipe class, else None."""
    origin = get_origin(hint) or hint
    if isinstance(origin, type) and issubclass(origin, (IterDataPipe, MapDataPipe)):
        args = getattr(hint, "__args__", None)
        return origin, (args[0] if args else element_type(origin))
    return None


def argument_validation(f: Callable[..., Any]) -> Callable[..., Any]:
    """Check, on each call of `f`, that every argument hinted as a DataPipe (`dp: IterDataPipe[int]`) is one,
    of an element type that is a subtype of the hint's (TypeError otherwise)."""
    signature = inspect.signature(f)
    hints = get_type_hints(f)

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        for name, value in bound.arguments.items():
            expected = _datapipe_hint(hints.get(name))
            if expected is None:
                continue
            kind, t = expected
            if not isinstance(value, kind):
                raise TypeError(f"Expected argument '{name}' as a {kind.__name__}, but found {type(value)}")
            declared = element_type(type(value))
            if not issubtype(declared, t):
                raise TypeError(f"Expected type of argument '{name}' as a subtype of hint {t}, but found "
                                f"{declared}")
        return f(*args, **kwargs)

    return wrapper


_runtime_validation_enabled = True


class runtime_validation_disabled:
    """While active (from construction to the end of its `with`), `runtime_validation` checks nothing."""

    def __init__(self) -> None:
        global _runtime_validation_enabled
        self.prev = _runtime_validation_enabled
        _runtime_validation_enabled = False

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        global _runtime_validation_enabled
        _runtime_validation_enabled = self.prev


def runtime_validation(f: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
    """Decorate an `__iter__`: every item it yields must be an instance of the pipe's element type
    (RuntimeError otherwise), unless `runtime_validation_disabled` is active."""
    if f.__name__ != "__iter__":
        raise TypeError(f"Can not decorate function {f.__name__} with 'runtime_validation'")

    @functools.wraps(f)
    def wrapper(self: Any) -> Iterator[Any]:
        if not _runtime_validation_enabled:
            yield from f(self)
            return
        t = element_type(type(self))
        for item in f(self):
            if not issubinstance(item, t):
                raise RuntimeError(f"Expected an instance as subtype of {t}, but found {item!r}({type(item)})")
            yield item

    return wrapper


__all__ = ["argument_validation", "functional_datapipe", "guaranteed_datapipes_determinism", "non_deterministic",
           "runtime_validation", "runtime_validation_disabled"]
