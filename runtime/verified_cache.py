"""On-disk cache entries that are checked before use: the one implementation under every cache of opgen
(the generator's caches in codegen/disk_cache.py and codegen/jinja_env.py, the NVRTC binaries of
runtime/cuda/compile.py, the emulator's host libraries, the NVRTC compile check of
tests/cuda/test_nvrtc_compiles_every_kernel.py).

Note [Caches that verify]
A cache directory is shared by every process of one user and outlives them: anything may be found there, a
file cut short by a killed machine, an entry of another key, a file planted by someone else. So no byte is
used before it is proven to be what its key names:
  - Where: `user_cache_root()` is `$XDG_CACHE_HOME/opgen` when that variable is an absolute path (the XDG
    rule: a relative one is ignored), else `~/.cache/opgen`; a cache never lands in the current directory.
  - A directory is created with mode 0700 (missing parents too). One that exists is used only when it is a
    real directory (not a symbolic link) owned by the current user and not writable by group or others,
    and so is every directory between it and the root of its cache tree (`<root>/<kind>`: the root is
    checked too); otherwise the process runs without that cache and says why once (`CacheWarning`). The
    tree is opened from the root down, each directory through its parent's descriptor (`dir_fd`, no link
    followed), once per operation, and every entry is reached through the last descriptor, so renaming or
    replacing a directory after the check changes nothing. Directories above the root (`~/.cache`, or
    where OPGEN_CACHE_DIR points) are the user's own layout and are resolved as the system does.
  - An entry is one file: a header line `opgen-cache-entry 1 <label> <name> <sha256 of body> <size>`, then
    the body. `read` opens it with O_NOFOLLOW (a symbolic link is never followed) and O_NONBLOCK (a FIFO
    does not hang), requires a regular file of this user not writable by others, reads its header, and
    reads the body only when the header names this label and entry and the file's size (so a foreign or
    cut file of any size costs one small read); it returns the body only when the header is exactly the
    one the body, the label and the name give. So a missing, empty, truncated, corrupted or foreign entry,
    or one swapped with another entry's file, is a miss (None): the caller computes the value again and
    `write` replaces the file.
  - `write` puts the entry in a new file of the same directory (O_EXCL, mode 0600), fsyncs it and renames
    it over the name (`os.replace`: readers see the old file or the new one, never a part; after a crash
    the name holds the old entry, the new one, or nothing). The directory is not fsynced: that would only
    make the entry's presence durable, which a cache does not need, and it doubled the time of a cold
    `opgen generate`. Concurrent writers of one name each rename a complete entry; the last one stays.
  - A caller uses only the bytes `read` returned: nothing is reopened by name after the check (a host
    library is loaded from a private copy of the verified bytes: runtime/cuda/emulator/engine.py).
Any OSError turns the cache off for that value only (a full or read-only disk costs time, not a result).
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import stat
import warnings
from pathlib import Path

MAX_ENTRY_BYTES = 1 << 28  # larger files under a cache name are not read (a planted file may be huge)
_MAGIC = b"opgen-cache-entry 1"
_MAX_HEADER = 512  # magic, label and name (200 characters at most each), digest, size
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_CLOEXEC
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


class CacheWarning(UserWarning):
    """A cache directory cannot be trusted or used; opgen runs without it."""


_warned: set[str] = set()


def warn_once(message: str, about: str | None = None) -> None:
    """Say `message` once per process and per `about` (default: the message), e.g. once per directory
    however many entries it misses (a run without a cache is slower, never wrong)."""
    about = message if about is None else about
    if about not in _warned:
        _warned.add(about)
        warnings.warn(message, CacheWarning, stacklevel=2)


def user_cache_root() -> Path | None:
    """`$XDG_CACHE_HOME/opgen` when that is absolute, else `~/.cache/opgen`; None without a home directory.
    The environment is read at each call."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(xdg):
        return Path(xdg) / "opgen"
    home = os.path.expanduser("~")
    if not os.path.isabs(home):
        warn_once("opgen runs without its caches: no home directory (set XDG_CACHE_HOME to an absolute path)")
        return None
    return Path(home) / ".cache" / "opgen"


def _check_name(name: str, what: str) -> bytes:
    if not _NAME.fullmatch(name):
        raise ValueError(f"cache {what} {name!r} is not a plain file name ([A-Za-z0-9._-], not starting with '.')")
    return name.encode()


def header(label: str, name: str, body: bytes) -> bytes:
    """The first line of the entry `name` of the cache `label` holding `body` (newline included)."""
    return b" ".join((_MAGIC, _check_name(label, "label"), _check_name(name, "entry name"),
                      hashlib.sha256(body).hexdigest().encode(), str(len(body)).encode())) + b"\n"


def _make_parents(path: Path) -> None:
    """Create the missing ancestors of `path` with mode 0700 (a fresh ~/.cache is private, as XDG asks)."""
    missing = []
    for parent in path.parents:
        if os.path.isdir(parent):
            break
        missing.append(parent)
    for parent in reversed(missing):
        try:
            os.mkdir(parent, 0o700)
        except FileExistsError:
            pass


def _untrusted(st: os.stat_result) -> str | None:
    """Why a directory or entry with status `st` may not be used, or None."""
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return f"is owned by uid {st.st_uid}, not by the current user (uid {os.getuid()})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"is writable by group or others (mode {stat.S_IMODE(st.st_mode):04o})"
    return None


class _Untrusted(Exception):
    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(reason)
        self.path = path


def _open_child(parent: int, name: str, path: Path, create: bool) -> int:
    """The checked descriptor of the directory `name` in the directory `parent` (closed here); `path`
    names it in messages. FileNotFoundError when missing and not created."""
    try:
        created = False
        if create:
            try:
                os.mkdir(name, 0o700, dir_fd=parent)
                created = True
            except FileExistsError:
                pass
        st = os.stat(name, dir_fd=parent, follow_symlinks=False)
        if stat.S_ISLNK(st.st_mode):
            raise _Untrusted(path, "is a symbolic link")
        if not stat.S_ISDIR(st.st_mode):
            raise _Untrusted(path, "is not a directory")
        fd = os.open(name, _DIR_FLAGS | _NOFOLLOW, dir_fd=parent)
    finally:
        os.close(parent)
    try:
        if created:
            os.fchmod(fd, 0o700)  # whatever the umask
        reason = _untrusted(os.fstat(fd))
    except OSError:
        os.close(fd)
        raise
    if reason is not None:
        os.close(fd)
        raise _Untrusted(path, reason)
    return fd


def open_dir(directory: Path, create: bool, root: Path | None = None) -> int | None:
    """A descriptor of the cache directory `directory` when it may be used (created when `create`); None
    when it is missing and not created, or cannot be trusted (then warned once). Every directory from
    `root` (the top of this cache's tree, default `directory` itself) down to `directory` is checked and
    opened through its parent's descriptor, so no link inside the tree is followed."""
    path = Path(os.path.abspath(directory))
    top = path if root is None else Path(os.path.abspath(root))
    if top != path and top not in path.parents:
        raise ValueError(f"cache directory {path} is not inside its root {top}")
    try:
        if create:
            _make_parents(top)
        fd = os.open(top.parent, _DIR_FLAGS)
        fd = _open_child(fd, top.name, top, create)
        below = top
        for part in path.relative_to(top).parts:
            below = below / part
            fd = _open_child(fd, part, below, create)
        return fd
    except FileNotFoundError:
        if not create:
            return None
        culprit, reason = path, "cannot be created (a parent is missing)"
    except _Untrusted as e:
        culprit, reason = e.path, str(e)
    except OSError as e:
        culprit, reason = path, f"cannot be {'created or ' if create else ''}opened ({e.strerror or e})"
    warn_once(f"opgen runs without the cache {path}: {culprit} {reason}", about=str(culprit))
    return None


def _read_all(fd: int, limit: int) -> bytes:
    """At most limit + 1 bytes (one more than expected shows a file that grew)."""
    chunks = []
    size = 0
    while size <= limit:
        chunk = os.read(fd, min(1 << 20, limit + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def read(directory: Path | None, name: str, label: str, root: Path | None = None) -> bytes | None:
    """The body of the entry `name` of the cache `label` in `directory` (under `root`: `open_dir`), or None
    (a miss) when it is missing or is not exactly an entry of that name and label whose body matches its
    digest."""
    _check_name(name, "entry name")
    if directory is None:
        return None
    dfd = open_dir(directory, create=False, root=root)
    if dfd is None:
        return None
    try:
        fd = os.open(name, os.O_RDONLY | os.O_CLOEXEC | _NOFOLLOW | _NONBLOCK, dir_fd=dfd)
    except OSError:
        return None
    finally:
        os.close(dfd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or _untrusted(st) or st.st_size > MAX_ENTRY_BYTES:
            return None
        first = os.read(fd, _MAX_HEADER)
        head, newline, start = first.partition(b"\n")
        fields = head.split(b" ")
        prefix = b" ".join((_MAGIC, label.encode(), name.encode()))
        if not newline or len(fields) != 6 or not head.startswith(prefix + b" ") or not fields[5].isdigit() \
                or len(head) + 1 + int(fields[5]) != st.st_size:
            return None  # not this entry, or not whole: the body is not even read
        body = start + _read_all(fd, st.st_size - len(first))
    except OSError:
        return None
    finally:
        os.close(fd)
    if head + newline != header(label, name, body):
        return None
    return body


def write(directory: Path | None, name: str, body: bytes, label: str, root: Path | None = None) -> bool:
    """Store `body` as the entry `name` of the cache `label` in `directory` (created if missing, under
    `root`: `open_dir`); False when the cache cannot be used or the write failed (the caller keeps its
    value either way)."""
    entry = header(label, name, body) + body
    if directory is None:
        return False
    dfd = open_dir(directory, create=True, root=root)
    if dfd is None:
        return False
    tmp = f".tmp-{os.getpid()}-{secrets.token_hex(8)}"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | _NOFOLLOW, 0o600, dir_fd=dfd)
        try:
            view = memoryview(entry)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        tmp = ""
        return True
    except OSError:
        return False
    finally:
        if tmp:
            try:
                os.unlink(tmp, dir_fd=dfd)
            except OSError:
                pass
        os.close(dfd)
