"""Every failure while rendering names its op: Note [Render errors name their op].

Note [Render errors name their op]
A bug in a template or a context builder (a KeyError, a Jinja UndefinedError, a TypeError in a filter)
would otherwise surface as a bare traceback into Jinja's machinery that names no op. `rendering()` wraps
a whole render: any exception that is not already an `OpgenError` is re-raised as a `RenderError` that
names the op being rendered, the `file:line` of its YAML entry and the template. The op is found from
the traceback, innermost frame first: a function of the generator was called with the `NativeFunction`
or `Derivative` it is building a context for; a frame of a template (Jinja rewrites template frames so that their locals
are the template's variables) holds the context object it is looping over, which its builder recorded
with `owned(context, f)`. An exception with no op in reach still becomes a `RenderError` naming the
template, so `opgen generate` exits 2 with a message rather than a traceback.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import PurePath
from types import TracebackType
from typing import TypeVar

from codegen.derivatives import Derivative
from codegen.errors import Location, OpgenError
from codegen.native import NativeFunction

C = TypeVar("C")
Owner = tuple[str, Location]  # the op's name (with its overload) and its YAML entry

# id(context) -> (context, its owner) for the render in progress; the context is kept so its id stays unique.
_OWNERS: contextvars.ContextVar[dict[int, tuple[object, Owner]] | None] = contextvars.ContextVar(
    "opgen_render_owners", default=None)


class RenderError(OpgenError):
    """An exception while rendering generated code, with the op (when one is in reach) and the template."""

    def __init__(self, cause: BaseException, owner: Owner | None, template: str | None) -> None:
        self.owner = owner
        self.template = template
        where = f" in template {template}" if template else ""
        if owner is None:
            text = f"error while rendering{where}: {type(cause).__name__}: {cause}"
        else:
            name, loc = owner
            text = f"{loc}: error while rendering op '{name}'{where}: {type(cause).__name__}: {cause}"
        super().__init__(text)


def owner_of(f: NativeFunction | Derivative) -> Owner:
    if isinstance(f, Derivative):
        return str(f.function.func.name), f.loc
    return str(f.func.name), f.loc


def owned(context: C, f: NativeFunction | Derivative) -> C:
    """`context`, recorded as rendering `f` (a template's frame holding it names `f`); outside `rendering()`
    nothing is recorded."""
    owners = _OWNERS.get()
    if owners is not None:
        owners[id(context)] = (context, owner_of(f))
    return context


@contextmanager
def rendering() -> Iterator[None]:
    """Re-raise any non-OpgenError exception of the body as a RenderError naming its op."""
    owners: dict[int, tuple[object, Owner]] = {}
    token = _OWNERS.set(owners)
    try:
        yield
    except OpgenError:
        raise
    except Exception as e:
        owner, template = _culprit(e.__traceback__, owners)
        raise RenderError(e, owner, template) from e
    finally:
        _OWNERS.reset(token)


def _culprit(tb: TracebackType | None, owners: dict[int, tuple[object, Owner]]) -> tuple[Owner | None, str | None]:
    frames = []
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    owner: Owner | None = None
    template: str | None = None
    for frame in reversed(frames):  # innermost first
        filename = frame.f_code.co_filename
        if template is None and filename.endswith(".j2"):
            path = PurePath(filename)
            template = "/".join(path.parts[path.parts.index("templates"):]) if "templates" in path.parts \
                else path.name
        if owner is None:
            names = frame.f_locals
            if not filename.endswith(".j2"):  # a generator function: only what it was called with counts
                code = frame.f_code  # (a loop variable left over in a caller names no op being rendered)
                names = {n: names[n] for n in code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
                         if n in names}
            owner = _owner_in(names, owners)
        if owner is not None and template is not None:
            break
    return owner, template


def _owner_in(names: dict[str, object], owners: dict[int, tuple[object, Owner]]) -> Owner | None:
    for value in names.values():
        if isinstance(value, (NativeFunction, Derivative)):
            return owner_of(value)
        held = owners.get(id(value))
        if held is not None and held[0] is value:
            return held[1]
    return None
