"""The element types of DataPipes (`IterDataPipe[int]`): what a pipe declares it yields, and the two checks
`argument_validation` and `runtime_validation` make with it (a type is a subtype of another; a value is an
instance of a type, looking inside tuples, lists, sets and dicts)."""

from __future__ import annotations

import collections.abc
import types
import typing
from typing import Any, Union, get_args, get_origin

_ABC = {list: collections.abc.MutableSequence, tuple: collections.abc.Sequence, dict: collections.abc.MutableMapping,
        set: collections.abc.MutableSet}


def element_type(cls: type) -> Any:
    """The T of the nearest `IterDataPipe[T]`/`MapDataPipe[T]` base of `cls`; Any where none names one."""
    for klass in cls.__mro__:
        for base in getattr(klass, "__orig_bases__", ()):
            args = get_args(base)
            origin = get_origin(base)
            if args and isinstance(origin, type) and getattr(origin, "_is_datapipe_root", False):
                return args[0]
    return Any


def _alternatives(t: Any) -> tuple[Any, ...]:
    if get_origin(t) in (Union, types.UnionType):
        return get_args(t)
    if isinstance(t, typing.TypeVar):
        if t.__constraints__:
            return t.__constraints__
        return (t.__bound__,) if t.__bound__ is not None else (Any,)
    return (t,)


def issubtype(left: Any, right: Any) -> bool:
    """Whether every value of type `left` is a value of type `right` (Any, unions, TypeVars, generics)."""
    if right is Any or left == right:
        return True
    rights = _alternatives(right)
    if Any in rights:
        return True
    if left is Any:
        return False
    return all(any(_issubtype_one(lt, rt) for rt in rights) for lt in _alternatives(left))


def _issubtype_one(left: Any, right: Any) -> bool:
    if right is Any or left == right:
        return True
    l_origin, r_origin = get_origin(left) or left, get_origin(right) or right
    if not (isinstance(l_origin, type) and isinstance(r_origin, type)):
        return False
    if not issubclass(_ABC.get(l_origin, l_origin), _ABC.get(r_origin, r_origin)) and \
            not issubclass(l_origin, r_origin):
        return False
    r_args = get_args(right)
    if not r_args:
        return True
    l_args = get_args(left)
    if not l_args or len(l_args) != len(r_args):
        return False
    return all(issubtype(a, b) for a, b in zip(l_args, r_args, strict=True))


def issubinstance(value: Any, t: Any) -> bool:
    """Whether `value` is a value of type `t`, elements of tuples, lists, sets and dicts included."""
    alternatives = _alternatives(t)
    if Any in alternatives:
        return True
    return any(_issubinstance_one(value, alt) for alt in alternatives)


def _issubinstance_one(value: Any, t: Any) -> bool:
    origin = get_origin(t) or t
    if not isinstance(origin, type) or not isinstance(value, origin):
        return False
    args = get_args(t)
    if not args:
        return True
    if isinstance(value, tuple):
        if len(args) == 2 and args[1] is Ellipsis:
            return all(issubinstance(v, args[0]) for v in value)
        return len(args) == len(value) and all(issubinstance(v, a) for v, a in zip(value, args, strict=True))
    if isinstance(value, (list, set, frozenset)):
        return all(issubinstance(v, args[0]) for v in value)
    if isinstance(value, dict) and len(args) == 2:
        return all(issubinstance(k, args[0]) and issubinstance(v, args[1]) for k, v in value.items())
    return True
