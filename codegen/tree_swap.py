"""Replacing `generated/` as a whole: write the new tree beside it, then swap the two directories.

Note [Whole-tree swap]
`generate` must never leave `generated/` half old and half new (a mix can import and then fail in the
dispatcher), whatever instant it is killed at. So the new tree is written in full to a sibling
`generated.new-<pid>`, and then swapped in:
  - on Linux with one `renameat2(RENAME_EXCHANGE)`: the two directory entries trade places atomically,
    so at every instant `generated/` is entirely the old or entirely the new tree. The old tree, now named
    `generated.new-<pid>`, is deleted afterwards;
  - elsewhere with two renames (`generated` -> `generated.old-<pid>`, then the new tree -> `generated`).
    Between them `generated/` does not exist; `recover()` puts the old tree back.
A kill at any point leaves at most leftovers named `generated.new-<pid>` / `generated.old-<pid>` whose
process is gone; `recover()`, run first by every write, deletes them (restoring `generated/` from an
`.old` tree when it is missing). Files whose content did not change are hard-linked from the old tree
(with their `__pycache__` entries), so their mtimes stay and imports need not recompile them.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import shutil
import sys
from pathlib import Path

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
NEW, OLD = "new", "old"


def _exchange_function() -> object | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


_renameat2 = _exchange_function()


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two directory entries; False if this system cannot (then nothing happened)."""
    if _renameat2 is None:
        return False
    rc = _renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)  # type: ignore[operator]
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EPERM, errno.ENOTSUP):
        return False  # the filesystem or kernel has no exchange: fall back to two renames
    raise OSError(err, os.strerror(err), str(a))


def sibling(out_dir: Path, kind: str, pid: int | None = None) -> Path:
    return out_dir.with_name(f"{out_dir.name}.{kind}-{os.getpid() if pid is None else pid}")


def _leftovers(out_dir: Path) -> list[tuple[Path, str, int]]:
    found = []
    prefix = out_dir.name + "."
    for p in out_dir.parent.iterdir() if out_dir.parent.is_dir() else ():
        if not p.name.startswith(prefix):
            continue
        kind, _, pid = p.name[len(prefix):].partition("-")
        if kind in (NEW, OLD) and pid.isdigit():
            found.append((p, kind, int(pid)))
    return sorted(found)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def recover(out_dir: Path) -> list[str]:
    """Finish or undo what an interrupted write left (Note [Whole-tree swap]); returns what was done."""
    done = []
    stale = [(p, kind) for p, kind, pid in _leftovers(out_dir) if not _alive(pid)]
    if not out_dir.exists():
        olds = [p for p, kind in stale if kind == OLD]
        if olds:  # killed between the two renames: the old tree is whole, put it back
            os.rename(olds[-1], out_dir)
            done.append(f"restored {out_dir.name}/ from {olds[-1].name}")
            stale = [(p, k) for p, k in stale if p != olds[-1]]
    for p, _ in stale:
        shutil.rmtree(p, ignore_errors=True)
        if p.exists():
            p.unlink(missing_ok=True)
        done.append(f"removed {p.name}")
    return done


def _existing(out_dir: Path) -> dict[str, Path]:
    if not out_dir.is_dir():
        return {}
    return {p.relative_to(out_dir).as_posix(): p for p in out_dir.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts}


def _link_or_write(old: Path | None, path: Path, data: bytes) -> None:
    if old is not None:
        try:
            os.link(old, path)
            return
        except OSError:
            pass
    with open(path, "wb") as fh:
        fh.write(data)


def _link_caches(old: Path, new: Path) -> None:
    """Hard-link the bytecode of an unchanged `old` source next to `new` (its mtime is kept too)."""
    cache = old.parent / "__pycache__"
    if not cache.is_dir():
        return
    for pyc in cache.glob(f"{old.stem}.*.pyc"):
        target = new.parent / "__pycache__" / pyc.name
        target.parent.mkdir(exist_ok=True)
        try:
            os.link(pyc, target)
        except OSError:
            return


def write_tree(out_dir: Path, files: dict[str, str]) -> list[str]:
    """Make `out_dir` hold exactly `files` by a whole-tree swap; returns the paths that changed. When
    nothing changed, nothing is written (the comparison reads the old tree only)."""
    recover(out_dir)
    old_files = _existing(out_dir)
    data = {rel: text.encode() for rel, text in files.items()}
    same = {rel for rel, b in data.items() if rel in old_files and _holds(old_files[rel], b)}
    changed = sorted((set(old_files) - set(files)) | (set(files) - same))
    if not changed and out_dir.is_dir():
        return []
    new_dir = sibling(out_dir, NEW)
    if new_dir.exists():
        shutil.rmtree(new_dir)
    try:
        new_dir.mkdir()
        for rel, b in data.items():
            path = new_dir / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            old = old_files[rel] if rel in same else None
            _link_or_write(old, path, b)
            if old is not None and rel.endswith(".py"):
                _link_caches(old, path)
        _swap(out_dir, new_dir)
    except BaseException:
        shutil.rmtree(new_dir, ignore_errors=True)
        raise
    return changed


def _holds(path: Path, data: bytes) -> bool:
    try:
        return path.stat().st_size == len(data) and path.read_bytes() == data
    except OSError:
        return False


def _swap(out_dir: Path, new_dir: Path) -> None:
    if not out_dir.exists():
        os.rename(new_dir, out_dir)
        return
    if _exchange(new_dir, out_dir):
        shutil.rmtree(new_dir)  # now the old tree
        return
    old_dir = sibling(out_dir, OLD)
    os.rename(out_dir, old_dir)
    os.rename(new_dir, out_dir)
    shutil.rmtree(old_dir)
