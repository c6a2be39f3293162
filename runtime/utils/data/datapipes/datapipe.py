"""DataPipes (torch.utils.data.datapipes.datapipe): composable datasets with functional forms.

Note [DataPipes]
An IterDataPipe is an IterableDataset built from other pipes: `IterableWrapper(range(10)).map(f).batch(4)`.
A class decorated with `@functional_datapipe("name")` becomes the method `name` of every pipe of its kind
(`IterDataPipe.functions`, looked up by `__getattr__`), the source pipe passed first. Every generator
`__iter__` of an IterDataPipe is wrapped (`__init_subclass__`): its first step calls `reset()` and makes the
new iterator the pipe's only valid one, so a second iterator over the same pipe invalidates the first
(RuntimeError on its next step; `fork()` is the way to read a pipe twice). MapDataPipes are indexed
datasets with `map`, `batch`, `concat`, `zip` and `shuffle` (an IterDataPipe over a random order).
`T` in `IterDataPipe[T]` is the element type the pipe's class declares (_typing.py `element_type`), used by
`argument_validation` and `runtime_validation` (_decorator.py); instances get no `type` attribute from it, so a
pipe may have an attribute of that name, as in PyTorch.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Generic, TypeVar

from runtime.utils.data.dataset import Dataset, IterableDataset

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)

# functional forms that give no DataFrame pipe (their results are DataChunks or unpacked frames)
UNTRACABLE_DATAFRAME_PIPES = ["batch", "groupby", "_dataframes_as_tuples", "trace_as_dataframe"]


class DataChunk(list[T]):
    """A batch made by `batch()`: a list that also keeps its items as `items`."""

    def __init__(self, items: Iterable[T]) -> None:
        items = list(items)
        super().__init__(items)
        self.items = items

    def as_str(self, indent: str = "") -> str:
        return indent + "[" + ", ".join(str(i) for i in iter(self)) + "]"

    def raw_iterator(self) -> Iterator[T]:
        yield from self.items


def _invalidated(datapipe: Any) -> RuntimeError:
    return RuntimeError(f"This iterator has been invalidated because another iterator has been created from the "
                        f"same IterDataPipe: {type(datapipe).__name__}. This may be caused by multiple references "
                        f"to the same IterDataPipe; use `.fork()` to read one pipe more than once.")


def _start_iterator(datapipe: Any) -> int:
    """Make a new iterator the pipe's valid one (and reset the pipe); its id."""
    datapipe._valid_iterator_id = 0 if datapipe._valid_iterator_id is None else datapipe._valid_iterator_id + 1
    datapipe._number_of_samples_yielded = 0
    datapipe.reset()
    return datapipe._valid_iterator_id


def _single_iterator(func: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
    """Wrap a generator `__iter__`: reset on the first step, refuse to step once another iterator started."""
    if getattr(func, "_datapipe_hooked", False):
        return func

    @functools.wraps(func)
    def wrapped(self: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
        gen = func(self, *args, **kwargs)
        my_id = _start_iterator(self)
        try:
            response = gen.send(None)
            while True:
                self._number_of_samples_yielded += 1
                request = yield response
                if self._valid_iterator_id != my_id:
                    gen.close()
                    raise _invalidated(self)
                response = gen.send(request)
        except StopIteration:
            return

    wrapped._datapipe_hooked = True  # type: ignore[attr-defined]
    return wrapped


def _resetting(func: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a plain (non-generator) `__iter__`: a new iterator resets the pipe."""
    if getattr(func, "_datapipe_hooked", False):
        return func

    @functools.wraps(func)
    def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
        _start_iterator(self)
        return func(self, *args, **kwargs)

    wrapped._datapipe_hooked = True  # type: ignore[attr-defined]
    return wrapped


class _FunctionalForms:
    """What IterDataPipe and MapDataPipe share: the registry of functional forms, hooks for pickling and
    printing, and the element type."""

    functions: dict[str, Callable[..., Any]]
    reduce_ex_hook: Callable[..., Any] | None = None
    getstate_hook: Callable[..., Any] | None = None
    str_hook: Callable[..., Any] | None = None
    repr_hook: Callable[..., Any] | None = None

    def __getattr__(self, attribute_name: str) -> Any:
        functions = type(self)._registry().functions
        if attribute_name in functions:
            f = functions[attribute_name]
            function = functools.partial(f, self)
            functools.update_wrapper(wrapper=function, wrapped=f, assigned=("__doc__",))
            return function
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{attribute_name}'")

    @classmethod
    def _registry(cls) -> type:
        for klass in cls.__mro__:
            if klass.__dict__.get("_is_datapipe_root"):
                return klass
        raise TypeError(f"{cls.__name__} is no DataPipe")

    @classmethod
    def register_function(cls, function_name: str, function: Callable[..., Any]) -> None:
        cls._registry().functions[function_name] = function

    @classmethod
    def register_datapipe_as_function(cls, function_name: str, cls_to_register: type,
                                      enable_df_api_tracing: bool = False) -> None:
        registry = cls._registry()
        if function_name in registry.functions:
            raise Exception(f"Unable to add DataPipe function name {function_name} as it is already taken")

        def class_function(source_dp: Any, *args: Any, **kwargs: Any) -> Any:
            result = cls_to_register(source_dp, *args, **kwargs)
            if (isinstance(result, IterDataPipe) and (enable_df_api_tracing or isinstance(source_dp, DFIterDataPipe))
                    and function_name not in UNTRACABLE_DATAFRAME_PIPES and "trace_as_dataframe" in registry.functions):
                result = result.trace_as_dataframe()
            return result

        functools.update_wrapper(wrapper=class_function, wrapped=cls_to_register, assigned=("__doc__",))
        registry.functions[function_name] = class_function

    def __getstate__(self) -> Any:
        state = self.__dict__
        hook = type(self)._registry().getstate_hook
        return hook(state) if hook is not None else state

    def __setstate__(self, state: Any) -> None:
        self.__dict__.update(state)

    def __reduce_ex__(self, protocol: Any) -> Any:
        hook = type(self)._registry().reduce_ex_hook
        if hook is not None:
            try:
                return hook(self)
            except NotImplementedError:
                pass
        return super().__reduce_ex__(protocol)

    @classmethod
    def set_getstate_hook(cls, hook_fn: Callable[..., Any] | None) -> None:
        registry = cls._registry()
        if registry.getstate_hook is not None and hook_fn is not None:
            raise RuntimeError("Attempt to override existing getstate_hook")
        registry.getstate_hook = hook_fn

    @classmethod
    def set_reduce_ex_hook(cls, hook_fn: Callable[..., Any] | None) -> None:
        registry = cls._registry()
        if registry.reduce_ex_hook is not None and hook_fn is not None:
            raise RuntimeError("Attempt to override existing reduce_ex_hook")
        registry.reduce_ex_hook = hook_fn

    def __repr__(self) -> str:
        if self.repr_hook is not None:
            return self.repr_hook(self)
        return type(self).__qualname__

    def __str__(self) -> str:
        if self.str_hook is not None:
            return self.str_hook(self)
        return type(self).__qualname__

    def __dir__(self) -> list[str]:
        return list(super().__dir__()) + list(type(self)._registry().functions)


class IterDataPipe(_FunctionalForms, IterableDataset, Generic[T_co]):
    """An iterable DataPipe (Note [DataPipes]): subclasses define `__iter__` and may define `reset()`,
    which every new iterator calls first."""

    _is_datapipe_root = True
    functions: dict[str, Callable[..., Any]] = {}
    _valid_iterator_id: int | None = None
    _number_of_samples_yielded: int = 0

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        func = cls.__dict__.get("__iter__")
        if func is not None and inspect.isfunction(func):
            cls.__iter__ = _single_iterator(func) if inspect.isgeneratorfunction(func) else _resetting(func)

    def __iter__(self) -> Iterator[T_co]:
        return self  # type: ignore[return-value]

    def reset(self) -> None:
        """Bring the pipe back to its state before iteration (buffers, pointers); called by every new
        iterator. Nothing by default."""


class DFIterDataPipe(IterDataPipe):
    """An IterDataPipe of DataFrames: the functional forms applied to it trace their results as DataFrame
    pipes where such tracing is registered."""

    def _is_dfpipe(self) -> bool:
        return True


class MapDataPipe(_FunctionalForms, Dataset, Generic[T_co]):
    """A map-style DataPipe (Note [DataPipes]): subclasses define `__getitem__` and usually `__len__`."""

    _is_datapipe_root = True
    functions: dict[str, Callable[..., Any]] = {}


__all__ = ["DFIterDataPipe", "DataChunk", "IterDataPipe", "MapDataPipe"]
