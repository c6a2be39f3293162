"""Small helpers of the generated call path: the not-given sentinel, argument errors, and the hook through
which the runtime reaches the generated ops.

Note [The runtime reaches generated/ through opcall]
`generated/` is built on `runtime/`, so the runtime may not import it (the layers and the import-linter
contract of DESIGN.md section 2). Yet hand-written kernels, composites, nn and the autograd engine call
ops (`G.zeros`, `ops.view`). `generated/__init__.py` therefore calls `install(ops=..., api=...)` while it
is imported, before anything can run an op, and the runtime reads `opcall.ops` (the `generated._ops`
module) or `opcall.api` (the `generated` package, what `import generated as G` gives) at call time: one
attribute read of a module, no import statement.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

_F = TypeVar("_F", bound=Callable[..., Any])


class _NotGiven:
    """Marks a parameter the caller did not pass (when overloads give it different defaults)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<not given>"


NOT_GIVEN: Any = _NotGiven()


class _NotInstalled:
    """Stands for `ops`/`api` until `generated` is imported; any use says what to do."""

    __slots__ = ("_what",)

    def __init__(self, what: str) -> None:
        self._what = what

    def __getattr__(self, name: str) -> NoReturn:
        raise RuntimeError(f"runtime.opcall.{self._what}.{name}: the generated ops are not installed; "
                           "`import generated` first (its __init__ installs them)")

    def __repr__(self) -> str:
        return f"<runtime.opcall.{self._what}: not installed>"


ops: Any = _NotInstalled("ops")
api: Any = _NotInstalled("api")


def install(*, ops: Any, api: Any) -> None:
    """Called by `generated/__init__.py`: the generated op module and the public package, for the runtime's
    calls (Note [The runtime reaches generated/ through opcall])."""
    module = globals()
    module["ops"] = ops
    module["api"] = api


def bad_arguments(op: Any, args: tuple[Any, ...]) -> NoReturn:
    """Raise a TypeError naming the argument that should have been a tensor."""
    names = _arg_names(op.schema)
    for i in op.tensor_positions:
        value = args[i]
        ok = value is None or hasattr(value, "_keys") or (
            isinstance(value, list | tuple) and all(v is None or hasattr(v, "_keys") for v in value))
        if not ok:
            name = names[i] if i < len(names) else f"#{i}"
            raise TypeError(f"{op.name}(): argument '{name}' (position {i + 1}) must be Tensor, "
                            f"not {type(value).__name__}")
    raise TypeError(f"{op.name}(): invalid arguments")


def _arg_names(schema: str) -> list[str]:
    inner = schema[schema.index("(") + 1: schema.rindex(") ->")]
    names = []
    depth = 0
    current = ""
    for ch in inner + ",":
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            words = current.split("=")[0].split()
            if words and words[0] != "*":
                names.append(words[-1])
            current = ""
        else:
            current += ch
    return names


def no_overload(name: str, given: dict[str, Any], overloads: tuple[str, ...]) -> NoReturn:
    shown = ", ".join(f"{k}={type(v).__name__}" for k, v in given.items() if v is not NOT_GIVEN)
    raise TypeError(f"{name}() received an invalid combination of arguments - got ({shown}), but expected "
                    "one of:\n" + "\n".join(f" * {o}" for o in overloads))


def call_into_out(name: str, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any) -> Any:
    """The out= form of an op with no out overload: call its functional binding `ops.<name>` and write the
    result into `out` (generated bindings call this rather than name themselves: Note [out= for ops without
    an out overload] in codegen/api_python.py)."""
    return store_out(name, getattr(ops, name)(*args, **kwargs), out)


def inplace_source(t: Any) -> Any:
    """What an in-place form written as `t.copy_(op(...t...))` computes from: `t` itself, or a copy of it
    when autograd records the call. The op may save its input for backward (selu, logit, div), and the
    write-back changes `t`; computing from the copy keeps what the op saved intact, and the gradient reaches
    `t`'s earlier value through the copy."""
    return t.clone() if getattr(t, "requires_grad", False) and api.is_grad_enabled() else t


def call_into_self(name: str, kwargs: dict[str, Any]) -> Any:
    """The in-place form of an overload declared without one (`t.div_(o, rounding_mode='floor')`: Note
    [In-place forms of overloads declared without one] in codegen/api_python.py): the functional binding
    `ops.<name>` computes the result, which `write_back` puts into `self` (`kwargs['input']`)."""
    self = kwargs["input"]
    return write_back(f"{name}_", self, getattr(ops, name)(**{**kwargs, "input": inplace_source(self)}))


def write_back(name: str, self: Any, result: Any, *, resize: bool = False) -> Any:
    """`result` written into `self` with `copy_` (autograd records a CopyBackwards), for the in-place form
    `name` of a functional op. A result `self` cannot hold (a dtype it can't be cast to; another shape, unless
    `resize`: PyTorch writes some in-place forms through their out= form) is refused before anything is
    written."""
    if not api.can_cast(result.dtype, self.dtype):
        raise RuntimeError(f"{name}(): result type {result.dtype.name} can't be cast to the desired output type "
                           f"{self.dtype.name}")
    if tuple(result.shape) != tuple(self.shape):
        if not resize or self.requires_grad:
            raise RuntimeError(f"{name}(): output with shape {list(self.shape)} doesn't match the broadcast shape "
                               f"{list(result.shape)}")
        resize_to(self, tuple(result.shape))
    return self.copy_(result)


def store_out(name: str, result: Any, out: Any, *, same_dtype: bool = False) -> Any:
    """`result` written into `out` for an op that has no out overload (Note [out= for ops without an out
    overload] in codegen/api_python.py): PyTorch's rules (an `out` of another shape is resized, with a
    warning when it had elements; `same_dtype`: out must have the result's dtype, else one it can be cast
    to). Every tensor of a tuple `out` is checked before any is written."""
    if isinstance(result, tuple):  # max.dim's (values, indices): out is a tuple of as many tensors
        if not isinstance(out, tuple | list) or len(out) != len(result):
            raise TypeError(f"{name}(): argument 'out' must be a tuple of {len(result)} Tensors")
        for r, o in zip(result, out, strict=True):
            _check_out(name, r, o, same_dtype)
        for r, o in zip(result, out, strict=True):
            _write_out(name, r, o)
        return type(result)(*out) if hasattr(result, "_fields") else tuple(out)
    _check_out(name, result, out, same_dtype)
    return _write_out(name, result, out)


def _check_out(name: str, result: Any, out: Any, same_dtype: bool) -> None:
    if not isinstance(out, type(result)):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if result.requires_grad and api.is_grad_enabled():
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    if same_dtype and result.dtype != out.dtype:
        raise RuntimeError(f"{name}(): expected out tensor to have dtype {result.dtype.name}, but got "
                           f"{out.dtype.name} instead")
    if not api.can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"{name}(): result type {result.dtype.name} can't be cast to the desired output type "
                           f"{out.dtype.name}")


def _write_out(name: str, result: Any, out: Any) -> Any:
    if tuple(out.shape) != tuple(result.shape):
        if out.numel() != 0:
            import warnings
            warnings.warn(f"{name}: an output with one or more elements was resized since it had shape "
                          f"{list(out.shape)}, which does not match the required output shape "
                          f"{list(result.shape)}.", UserWarning, stacklevel=4)
        resize_to(out, tuple(result.shape))
    with api.no_grad():
        out.copy_(result)
    return out


def takes_out(name: str, *, castable: bool = False) -> Callable[[_F], _F]:
    """Note [out= for functions written in Python]: a function of torch.linalg or torch.nn.functional
    that opgen writes in Python (`G.linalg.inv`, `F.avg_pool2d`: compositions of ops, runtime/linalg.py and
    runtime/nn/functional_*.py) takes the keyword-only `out=` that PyTorch's takes: decorated with
    `@takes_out("linalg.inv")`, it computes its result as without `out` and `store_out` writes it there
    under the rules the ops' out= forms follow (a tuple of tensors for a tuple result, resized when its
    shape differs, refused when an input requires grad). As PyTorch's, `out` must have the result's dtype,
    except for the functions marked `castable` (pinv, cond, matrix_rank ...: any dtype the result can be cast
    to). The shown signature gains `out=None`, keyword-only."""
    def wrap(fn: _F) -> _F:
        @functools.wraps(fn)
        def with_out(*args: Any, out: Any = None, **kwargs: Any) -> Any:
            result = fn(*args, **kwargs)
            return result if out is None else store_out(name, result, out, same_dtype=not castable)
        sig = inspect.signature(fn)
        params = list(sig.parameters.values())
        if any(p.name == "out" for p in params):
            raise TypeError(f"takes_out: {name} already has a parameter 'out'")
        keyword = inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None)
        at = next((i for i, p in enumerate(params) if p.kind == inspect.Parameter.VAR_KEYWORD), len(params))
        with_out.__signature__ = sig.replace(parameters=[*params[:at], keyword, *params[at:]])  # type: ignore[attr-defined]
        return with_out  # type: ignore[return-value]
    return wrap


def resize_to(t: Any, shape: tuple[int, ...]) -> None:
    """Give `t` fresh (uninitialised) storage of `shape`, as PyTorch resizes an out= tensor."""
    fresh = t.new_empty(shape)
    t._data, t._storage = fresh._data, getattr(fresh, "_storage", None)


def with_requires_grad(t: Any, requires_grad: bool) -> Any:
    """A factory op's result with `requires_grad=` applied (Note [requires_grad= of factory ops] in
    codegen/api_python.py)."""
    return t.requires_grad_() if requires_grad else t


def clone_data(t: Any) -> Any:
    """A copy of a tensor's data as a new tensor outside autograd (saved `self` of in-place ops)."""
    return type(t)._wrap(t._data.copy(), t._dtype)


def list_sizes(*inputs: Any) -> tuple[int, ...]:
    """How many graph edges each differentiable input has (a Tensor[] has one per element)."""
    return tuple(len(x) if isinstance(x, list | tuple) else 1 for x in inputs)


def flatten_grads(grads: list[Any], sizes: tuple[int, ...]) -> list[Any]:
    """Per-input gradients (a list for a Tensor[] input) -> one gradient per graph edge."""
    flat: list[Any] = []
    for g, n in zip(grads, sizes, strict=True):
        if isinstance(g, list | tuple):
            flat.extend(g)
        else:
            flat.extend([g] * n if n == 1 else [None] * n)
    return flat


def not_implemented_input(op: str, arg: str) -> NoReturn:
    raise NotImplementedError(f"the derivative for '{arg}' of {op} is not implemented")


def save_before_write(saved_cls: Any, t: Any, written: Any) -> Any:
    """Save an input of an in-place op that writes `written`.

    The call path bumps the written tensor's version before any kernel runs; an input sharing its
    storage (`y.mul_(y)`) must record the version it had before this op, so that using it in
    backward reports the in-place change, as PyTorch does.
    """
    saved = saved_cls(t, False)
    if t is not None and t.storage is written.storage:
        saved._version -= 1
    return saved


def tensor_varargs(values: tuple[Any, ...]) -> Any:
    """Note [Tensors as varargs] (codegen/api_python.py): `f(a, b)` is `f((a, b))`; one argument, a tensor or
    a sequence of them, is itself."""
    return values[0] if len(values) == 1 else values


def varargs(values: tuple[Any, ...]) -> Any:
    """PyTorch's varargs sizes: `t.view(2, 3)` and `t.view((2, 3))` both mean (2, 3). The generated Tensor
    methods carry this expression (codegen/inline.py `inline_expr`): keep it one `return`."""
    return values[0] if len(values) == 1 and not isinstance(values[0], int) else values
