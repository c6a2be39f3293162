"""Caches of the generator kept across runs, outside the project: `$XDG_CACHE_HOME/opgen/<kind>/` (by
default `~/.cache/opgen/<kind>/`).

Note [Generator caches]
A no-op `opgen generate` must stay fast, and its output must never depend on what a cache holds. So
every cache maps a key that is a digest of *all* the inputs of one value to that value alone:
  - `jinja/`: compiled templates (Jinja's own bytecode cache, keyed by template name and source);
  - `names/`: the top-level names of a runtime module that `dispatch:` kernels are checked against
    (codegen/native.py) and the formula helpers of runtime/autograd/formulas.py (codegen/derivatives.py),
    keyed by the module's source;
  - `render/`: rendered CUDA sources (codegen/gen_cuda.py), keyed by `generator_digest` (the bytes of
    every codegen/*.py file, every file under the project's templates/ and the Jinja version) and the
    `repr` of the template's context (frozen dataclasses of strings, numbers and tuples, whose repr
    holds every field).
Editing a template, the generator or the YAML therefore changes the key, never a stored value. An
entry holds a digest of its own body and is used only when the two agree, so a truncated, corrupt or
foreign file is a miss (the value is computed again and the entry rewritten), not output. Entries are
written to a temporary name and renamed into place, so a killed run leaves no half-written entry
under a real key. Any OSError (no home directory, read-only disk) turns the cache off for that value.
"""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

_CODEGEN = Path(__file__).resolve().parent


def cache_dir(kind: str) -> Path:
    """Where the `kind` cache lives (it may not exist yet); the environment is read at each call."""
    return _base_dir(os.environ.get("XDG_CACHE_HOME"), os.environ.get("HOME")) / "opgen" / kind


@functools.cache
def _base_dir(xdg_cache_home: str | None, home: str | None) -> Path:
    return Path(xdg_cache_home or os.path.join(os.path.expanduser("~"), ".cache"))


def digest(*parts: str | bytes) -> str:
    """A hex digest of `parts`, each length-prefixed so that no two different part lists collide."""
    h = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def _file_bytes(paths: Iterable[Path], base: Path) -> list[bytes]:
    out = []
    for p in sorted(paths):
        out.append(p.relative_to(base).as_posix().encode())
        out.append(p.read_bytes())
    return out


def generator_digest(templates: Path) -> str:
    """A digest of everything besides a template's context that can change what the generator renders:
    the generator's own source files, the templates under `templates` and the Jinja version."""
    import jinja2

    return digest(jinja2.__version__,
                  *_file_bytes(_CODEGEN.glob("*.py"), _CODEGEN),
                  *_file_bytes((p for p in templates.rglob("*") if p.is_file()), templates))


class DiskCache:
    """Text values under hex-digest keys, each entry checked against its own digest when read."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def _path(self, key: str) -> Path:
        return cache_dir(self.kind) / key[:2] / key

    def get(self, key: str) -> str | None:
        """The value stored under `key`, or None when absent or not intact."""
        try:
            raw = self._path(key).read_bytes()
        except OSError:
            return None
        check, newline, body = raw.partition(b"\n")
        if not newline or check.decode("ascii", "replace") != digest(body):
            return None
        try:
            return body.decode()
        except UnicodeDecodeError:
            return None

    def put(self, key: str, value: str) -> None:
        """Store `value` under `key` (best effort: a failure leaves the cache without it)."""
        body = value.encode()
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(digest(body).encode() + b"\n" + body)
                os.replace(tmp, path)
            except BaseException:
                os.unlink(tmp)
                raise
        except OSError:
            return


def memo(kind: str, key: str, compute: Callable[[], str]) -> str:
    """The value of the `kind` cache under `key`, computed by `compute` and stored when missing."""
    cache = DiskCache(kind)
    value = cache.get(key)
    if value is None:
        value = compute()
        cache.put(key, value)
    return value
