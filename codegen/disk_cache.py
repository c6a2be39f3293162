"""Caches of the generator kept across runs, outside the project: `<cache root>/<kind>/`, where the root is
`$XDG_CACHE_HOME/opgen` when that is an absolute path, else `~/.cache/opgen` (runtime/verified_cache.py).

Note [Generator caches]
A no-op `opgen generate` must stay fast, and its output must never depend on what a cache holds. So
every cache maps a key that is a digest of *all* the inputs of one value to that value alone:
  - `jinja/`: compiled templates (codegen/jinja_env.py: a bytecode cache of our own, keyed by the template's
    name, file and source, Jinja's version and Python's bytecode magic; no pickle, and the marshalled code
    is loaded only after its entry is verified);
  - `names/`: the top-level names of a runtime module that `dispatch:` kernels are checked against
    (codegen/native.py) and the formula helpers of runtime/autograd/formulas.py (codegen/derivatives.py),
    keyed by the module's source;
  - `render/`: rendered CUDA sources (codegen/render/cuda_kernels.py), keyed by `generator_digest` (the bytes of
    every .py file under codegen/, every file under the project's templates/ and the Jinja version) and the
    `repr` of the template's context (frozen dataclasses of strings, numbers and tuples, whose repr
    holds every field).
Editing a template, the generator or the YAML therefore changes the key, never a stored value. Entries
are read and written by runtime/verified_cache.py (Note [Caches that verify]): each records its name (the
key) and the digest of its body, both checked before use, so a truncated, corrupt, foreign or swapped
file is a miss (the value is computed again and the entry rewritten), never output; writes are fsynced
and renamed into place; an untrusted directory (a symbolic link, another user's, writable by others) is
not used. The generator imports that module, a leaf of runtime/ that imports nothing of opgen, rather
than keeping a second copy of the checks (pyproject.toml's `codegen-vocabulary-only` contract names it).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from pathlib import Path

from runtime import verified_cache

_CODEGEN = Path(__file__).resolve().parent


def cache_dir(kind: str) -> Path | None:
    """Where the `kind` cache lives (it may not exist yet; None without a home directory); the environment
    is read at each call."""
    root = verified_cache.user_cache_root()
    return None if root is None else root / kind


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
                  *_file_bytes(_CODEGEN.rglob("*.py"), _CODEGEN),
                  *_file_bytes((p for p in templates.rglob("*") if p.is_file()), templates))


class DiskCache:
    """Text values under hex-digest keys, each entry verified when read (Note [Caches that verify])."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def get(self, key: str) -> str | None:
        """The value stored under `key`, or None when absent or not intact."""
        body = verified_cache.read(cache_dir(self.kind), key, self.kind, root=verified_cache.user_cache_root())
        if body is None:
            return None
        try:
            return body.decode()
        except UnicodeDecodeError:
            return None

    def put(self, key: str, value: str) -> None:
        """Store `value` under `key` (best effort: a failure leaves the cache without it)."""
        verified_cache.write(cache_dir(self.kind), key, value.encode(), self.kind,
                             root=verified_cache.user_cache_root())


def memo(kind: str, key: str, compute: Callable[[], str]) -> str:
    """The value of the `kind` cache under `key`, computed by `compute` and stored when missing."""
    cache = DiskCache(kind)
    value = cache.get(key)
    if value is None:
        value = compute()
        cache.put(key, value)
    return value
