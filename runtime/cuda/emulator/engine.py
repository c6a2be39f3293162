"""The host execution engine: generated CUDA C++ compiled by g++/clang++ and run on the CPU.

  wrap     `host_source`: the `.cu` text unchanged (after `#line 1`, so messages keep its line numbers),
           preceded by opgen_emulate.h and followed by one C entry point per kernel,
           `opgen_emu__<kernel>(grid, block, shared_bytes, void** args)` (CUDA's launch convention)
  compile  the system compiler into one shared library per source; errors raise CudaCompileError with the
           numbered source, as NVRTC errors do (runtime/cuda/compile.py: format_compile_error)
  cache    libraries on disk under `<kernel cache>/host/`, keyed like the NVRTC cache (source, headers,
           compiler, flags: runtime/cuda/compile.py: cache_key), verified before they are loaded
           (Note [Loading a verified host library])
  launch   `HostFunction(grid, block, args, stream=..., shared_mem=...)`, called as a `cupy.cuda.Function`:
           device arrays become their addresses, NumPy scalars and packed structs their bytes

Sources are compiled when a kernel of them is first launched; `build_all` compiles many in parallel.

Note [Loading a verified host library]
A shared library runs code as soon as it is loaded (its constructors), and a mapped file cut short kills the
process with SIGBUS when a page past its end is touched. So a library is never loaded from the cache's file:
`build` returns the bytes of an entry that runtime/verified_cache.py checked (its key, which covers the
source, headers, compiler and flags, and the digest of those bytes; Note [Caches that verify]), or of a
fresh compile, and `load` writes exactly those bytes into a private, sealed memory file (`memfd_create`
with write, grow and shrink sealed) and loads it by `/proc/self/fd/N`. Nobody can change what was checked
between the check and the load, and nothing outside the process can truncate it. That descriptor stays
open for the life of the process: the dynamic loader knows a library by its path name, and a reused
descriptor number would hand back the library loaded before under the same name. Where memfd or /proc is
missing, the bytes go to a new file of a private temporary directory (mode 0700), loaded and then removed.
A compile writes its library into such a directory too, never into the cache directory.
"""

from __future__ import annotations

import ctypes
import fcntl
import functools
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

import runtime.cuda.compile as CC
import runtime.cuda.nvrtc_check as nvrtc_check
from runtime import verified_cache

HEADER = str(Path(__file__).with_name("opgen_emulate.h"))
OPT_LEVEL = os.environ.get("OPGEN_EMULATE_OPT", "-O1")
FLAGS = ("-std=c++17", "-shared", "-fPIC", "-fno-strict-aliasing", "-fwrapv", "-w", "-pipe")
KERNEL = re.compile(r'extern\s+"C"\s+__global__\s+void\s+(\w+)\s*\(')
NAMESPACE = re.compile(r"namespace\s+(\w+)\s*$")
_GCC_LINE = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?:\d+:)? (?P<what>error|fatal error|warning): ")


class EmulationError(RuntimeError):
    """A kernel failed on the host engine: a deadlock, a divergent barrier or an invalid launch."""


@functools.cache
def find_compiler() -> str:
    """`$CXX`, else g++, else clang++ (the first found on PATH)."""
    for candidate in (os.environ.get("CXX"), "g++", "clang++", "c++"):
        if candidate and shutil.which(candidate):
            return candidate
    raise RuntimeError("CUDA emulation needs a C++ compiler (g++ or clang++) on PATH, or $CXX")


@functools.cache
def compiler_version(compiler: str) -> str:
    out = subprocess.run([compiler, "--version"], capture_output=True, text=True, check=False).stdout
    return f"{compiler}/{out.splitlines()[0] if out else 'unknown'}"


def kernel_entries(source: str) -> list[tuple[str, str]]:
    """(qualified name, name) of every `extern "C" __global__` kernel, with its enclosing namespaces."""
    text = re.sub(r"//[^\n]*|/\*.*?\*/", lambda m: " " * len(m.group()), source, flags=re.S)
    starts = {m.start(): m.group(1) for m in KERNEL.finditer(text)}
    stack: list[str | None] = []
    found: list[tuple[str, str]] = []
    for i, ch in enumerate(text):
        if i in starts:
            scope = "::".join(s for s in stack if s)
            found.append((f"{scope}::{starts[i]}" if scope else starts[i], starts[i]))
        if ch == "{":
            m = NAMESPACE.search(text, max(0, i - 200), i)
            stack.append(m.group(1) if m else None)
        elif ch == "}" and stack:
            stack.pop()
    return found


def host_source(source: str, name: str) -> str:
    """The translation unit compiled for the host: header, the unchanged source, the entry points."""
    entries = "\n".join(f"OPGEN_EMU_ENTRY({q}, {n})" for q, n in kernel_entries(source))
    return (f'#include "{HEADER}"\n#line 1 "{name}"\n{source}\n'
            f'#line 1 "<opgen emulation entry points>"\n{entries}\n')


def compile_options() -> tuple[str, ...]:
    return (OPT_LEVEL, *FLAGS, f"-I{nvrtc_check.INCLUDE_DIR}")


def library_key(source: str, options: tuple[str, ...], compiler: str) -> str:
    headers = CC.headers_digest() + hashlib.sha256(Path(HEADER).read_bytes()).hexdigest()
    return CC.cache_key(source, options, 0, "host-so", compiler_version(compiler), headers)


def _gcc_log_as_nvrtc(log: str, name: str) -> str:
    """g++'s `file:line:col: error:` lines in NVRTC's `file(line): error` form, for format_compile_error."""
    out = []
    for entry in log.splitlines():
        m = _GCC_LINE.match(entry)
        if m and m.group("file").endswith(name):
            what = "error" if "error" in m.group("what") else "warning"
            entry = f"{name}({m.group('line')}): {what}: {entry[m.end():]}"
        out.append(entry)
    return "\n".join(out)


_LABEL = "host-library"
_SEALS = ("F_SEAL_SEAL", "F_SEAL_SHRINK", "F_SEAL_GROW", "F_SEAL_WRITE")
_open_images: list[int] = []  # memfds of loaded libraries, kept open (Note [Loading a verified host library])


def _load_from_memfd(image: bytes, name: str) -> ctypes.CDLL | None:
    if not hasattr(os, "memfd_create") or not all(hasattr(fcntl, seal) for seal in _SEALS):
        return None
    fd = os.memfd_create(f"opgen-{name}", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        view = memoryview(image)
        while view:
            view = view[os.write(fd, view):]
        seals = 0
        for seal in _SEALS:
            seals |= getattr(fcntl, seal)
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, seals)
        lib = ctypes.CDLL(f"/proc/self/fd/{fd}")
    except OSError:
        os.close(fd)
        return None
    _open_images.append(fd)
    return lib


def _load_from_private_file(image: bytes, name: str) -> ctypes.CDLL:
    with tempfile.TemporaryDirectory(prefix="opgen-host-") as private:  # mode 0700
        path = os.path.join(private, f"{name}.so")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o500)
        with os.fdopen(fd, "wb") as fh:
            fh.write(image)
        return ctypes.CDLL(path)


def load_image(image: bytes, name: str) -> ctypes.CDLL:
    """The shared library whose bytes are `image`, loaded from a private copy of them (Note [Loading a
    verified host library]); `name` only names the copy."""
    return _load_from_memfd(image, name) or _load_from_private_file(image, name)


class HostLibraries:
    """Compiled host libraries in memory and on disk (one per source file). `directory` None: the default
    (`<kernel cache>/host`, or no disk cache when there is no cache root)."""

    def __init__(self, directory: Path | None = None) -> None:
        root = directory
        if directory is None:
            root = CC.default_cache_dir()
            directory = None if root is None else root / "host"
        self.directory = directory
        self._root = root  # the top of the cache tree, checked too (Note [Caches that verify])
        self._loaded: dict[str, ctypes.CDLL] = {}
        self._lock = threading.Lock()
        self._building: dict[str, threading.Lock] = {}
        self.compiles = 0

    def entry_name(self, source_path: str) -> str:
        """The cache entry of the library of `source_path`: its key and a suffix."""
        source = CC.read_source(source_path)
        compiler = find_compiler()
        return f"{library_key(source, compile_options(), compiler)}.so"

    def build(self, source_path: str) -> bytes:
        """The bytes of the library of one source: a verified disk-cache entry, else compiled now and stored."""
        entry = self.entry_name(source_path)
        with self._lock:
            lock = self._building.setdefault(entry, threading.Lock())
        with lock:
            image = verified_cache.read(self.directory, entry, _LABEL, root=self._root)
            if image is None:
                image = self._compile(source_path)
                verified_cache.write(self.directory, entry, image, _LABEL, root=self._root)
        return image

    def _compile(self, source_path: str) -> bytes:
        name = os.path.basename(source_path)
        source = CC.read_source(source_path)
        compiler, options = find_compiler(), compile_options()
        with tempfile.TemporaryDirectory(prefix="opgen-build-") as private:
            out = os.path.join(private, "lib.so")
            proc = subprocess.run([compiler, *options, "-x", "c++", "-", "-o", out],
                                  input=host_source(source, name), capture_output=True, text=True,
                                  check=False)
            self.compiles += 1
            if proc.returncode != 0:
                log = _gcc_log_as_nvrtc(proc.stderr, name)
                full = (compiler, *options)
                message = CC.format_compile_error(source, name, full, log).replace(
                    "CUDA compilation", "Host (emulated CUDA) compilation", 1)
                raise CC.CudaCompileError(message, name=name, kernel=None, options=full, log=proc.stderr)
            return Path(out).read_bytes()

    def load(self, source_path: str) -> ctypes.CDLL:
        with self._lock:
            lib = self._loaded.get(source_path)
        if lib is None:
            stem = re.sub(r"[^A-Za-z0-9_.-]", "_", os.path.basename(source_path))
            lib = load_image(self.build(source_path), stem)
            lib.opgen_emu_last_error.restype = ctypes.c_char_p
            lib.opgen_emu_set_seed.argtypes = [ctypes.c_ulonglong]
            with self._lock:
                lib = self._loaded.setdefault(source_path, lib)
        return lib

    def build_all(self, source_paths: Iterable[str], jobs: int | None = None) -> int:
        """Compile many sources in parallel (`jobs` compilers at once; default: one per CPU) into the disk
        cache; how many libraries are ready."""
        paths = list(source_paths)
        with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as pool:
            return sum(1 for _ in pool.map(self.build, paths))


_DEFAULT: HostLibraries | None = None
_LAUNCH_LOCK = threading.Lock()  # one kernel at a time (the engine's state is per library, not per thread)
_seed = [int(os.environ.get("OPGEN_EMULATE_SEED", "0"))]


def default_libraries() -> HostLibraries:
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = HostLibraries()
    return _DEFAULT


def set_block_order_seed(seed: int) -> None:
    """The seed of the shuffled block order of the following launches."""
    _seed[0] = int(seed)


_DIM = ctypes.c_uint * 3


def _dims(v: Any) -> Any:
    t = (v,) if isinstance(v, int) else tuple(v)
    t = tuple(int(x) for x in t) + (1,) * (3 - len(t))
    return _DIM(*t)


def _arg_bytes(arg: Any) -> bytes:
    """One kernel argument as CUDA passes it: arrays by address, scalars and structs by value."""
    if isinstance(arg, np.ndarray) and arg.dtype.names is None and arg.ndim > 0 or hasattr(arg, "data") and \
            hasattr(getattr(arg, "data", None), "ptr"):
        return int(arg.data.ptr).to_bytes(8, "little")
    if isinstance(arg, np.generic | np.ndarray):
        return np.asarray(arg).tobytes()
    if isinstance(arg, bool):
        return bytes([arg])
    raise TypeError(f"unsupported kernel argument {type(arg).__name__} (pass NumPy scalars or device arrays)")


class HostFunction:
    """A kernel of a host library, called with `cupy.cuda.Function`'s signature."""

    def __init__(self, lib: ctypes.CDLL, kernel: str, source_path: str) -> None:
        try:
            self._fn = getattr(lib, f"opgen_emu__{kernel}")
        except AttributeError:
            raise RuntimeError(f"no kernel '{kernel}' in {os.path.basename(source_path)}") from None
        self._fn.restype = ctypes.c_int
        self._fn.argtypes = [_DIM, _DIM, ctypes.c_uint, ctypes.c_void_p]
        self._lib = lib
        self.kernel = kernel
        self.source_path = source_path
        self.launches = 0

    def __call__(self, grid: Sequence[int] | int, block: Sequence[int] | int, args: Sequence[Any],
                 stream: Any = None, shared_mem: int = 0) -> None:
        buffers = [ctypes.create_string_buffer(_arg_bytes(a) + bytes(8), 8 * (len(_arg_bytes(a)) // 8 + 2))
                   for a in args]
        argv = (ctypes.c_void_p * max(1, len(buffers)))(*[ctypes.addressof(b) for b in buffers])
        with _LAUNCH_LOCK:
            self._lib.opgen_emu_set_seed(_seed[0] + self.launches)
            self.launches += 1
            rc = self._fn(_dims(grid), _dims(block), int(shared_mem), argv)
            error = self._lib.opgen_emu_last_error().decode() if rc else ""
        if rc:
            raise EmulationError(f"kernel '{self.kernel}' ({os.path.basename(self.source_path)}): {error}")


_FUNCTIONS: dict[tuple[str, str], HostFunction] = {}


def load_function(source_path: str, kernel: str, device_index: int = 0) -> HostFunction:
    """The kernel `kernel` of `source_path` on the host engine (compiled on first use)."""
    fn = _FUNCTIONS.get((source_path, kernel))
    if fn is None:
        lib = default_libraries().load(source_path)
        fn = _FUNCTIONS[(source_path, kernel)] = HostFunction(lib, kernel, source_path)
    return fn
