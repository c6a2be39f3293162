"""Kernel compilation in three layers (as CuPy does): render -> compile -> cache.

  render   pure functions producing source text (codegen/gen_cuda.py, at generate time)
  compile  `compile_source`: NVRTC, for an explicit architecture; needs no device
           (Note [NVRTC without a device] in nvrtc_check.py); memoised in memory per (key)
  cache    a disk cache of the binaries keyed by `cache_key`: a hash of everything that changes the
           binary: source, options, architecture, output kind, NVRTC and CuPy versions and the contents
           of opgen's headers. Entries are verified before use and written atomically
           (runtime/verified_cache.py, Note [Caches that verify]): a damaged or foreign one is compiled again.
Loading a binary into a device (`load_function`) is the only step that needs CuPy's driver API.

A compile error raises `CudaCompileError` naming the kernel and file, the options, and each error with the
numbered source lines around it.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import runtime.cuda.nvrtc_check as nvrtc_check
from runtime import verified_cache
from runtime.cuda.nvrtc_check import CompileResult, NvrtcCompileError

CONTEXT_LINES = 3


class CudaCompileError(RuntimeError):
    """NVRTC rejected a generated or hand-written kernel source."""

    def __init__(self, message: str, *, name: str, kernel: str | None, options: tuple[str, ...],
                 log: str) -> None:
        super().__init__(message)
        self.name = name
        self.kernel = kernel
        self.options = options
        self.log = log


def default_cache_dir() -> Path | None:
    """`$OPGEN_CACHE_DIR` when it is an absolute path, else `<user cache root>/kernels` (`$XDG_CACHE_HOME/opgen`
    or `~/.cache/opgen`: runtime/verified_cache.py); None without a home directory. A relative
    OPGEN_CACHE_DIR is ignored with a warning, as XDG ignores a relative XDG_CACHE_HOME: a cache that moves
    with the current directory would be a new, unchecked one in every directory a program runs in.
    Read once, by `KernelCache()` and `HostLibraries()`, never deeper."""
    env = os.environ.get("OPGEN_CACHE_DIR", "")
    if os.path.isabs(env):
        return Path(env)
    if env:
        verified_cache.warn_once(f"OPGEN_CACHE_DIR={env!r} is not an absolute path: ignored")
    root = verified_cache.user_cache_root()
    return None if root is None else root / "kernels"


def headers_digest(include_dir: str = nvrtc_check.INCLUDE_DIR) -> str:
    """A hash of every header the kernels may include (a header change must miss the cache)."""
    h = hashlib.sha256()
    for path in sorted(Path(include_dir).glob("*.cuh")):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def toolchain_version() -> str:
    """NVRTC and CuPy versions: a new compiler must miss the cache."""
    try:
        import cupy

        cupy_version = cupy.__version__
    except ImportError:  # pragma: no cover - NVRTC always comes with CuPy
        cupy_version = "none"
    major, minor = nvrtc_check.nvrtc_version()
    return f"nvrtc-{major}.{minor}/cupy-{cupy_version}"


def cache_key(source: str, options: tuple[str, ...], arch: int, kind: str, toolchain: str,
              headers: str) -> str:
    """The disk-cache key: a SHA-256 over every input of the compiler."""
    h = hashlib.sha256()
    for part in (source, "\x1f".join(options), str(arch), kind, toolchain, headers):
        h.update(part.encode())
        h.update(b"\x1e")
    return h.hexdigest()


_LOG_LINE = re.compile(r"^(?P<file>.*?)\((?P<line>\d+)\): (?P<what>error|warning|catastrophic error)")


def format_compile_error(source: str, name: str, options: tuple[str, ...], log: str,
                         kernel: str | None = None, context: int = CONTEXT_LINES) -> str:
    """The message of a compile error: what failed, the options, NVRTC's log, numbered source excerpts."""
    lines = source.splitlines()
    what = f"kernel '{kernel}' in {name}" if kernel else name
    parts = [f"CUDA compilation of {what} failed", f"options: {' '.join(options)}", "", log.rstrip(), ""]
    shown: set[int] = set()
    for entry in log.splitlines():
        m = _LOG_LINE.match(entry)
        if not m or m.group("what") == "warning":
            continue
        line = int(m.group("line"))
        if line in shown:
            continue
        shown.add(line)
        lo, hi = max(1, line - context), min(len(lines), line + context)
        parts.append(f"{name}, lines {lo}-{hi}:")
        width = len(str(hi))
        for i in range(lo, hi + 1):
            mark = ">>" if i == line else "  "
            parts.append(f"{mark} {i:>{width}} | {lines[i - 1]}")
        parts.append("")
    return "\n".join(parts).rstrip() + "\n"


class KernelCache:
    """Compiled binaries in memory and on disk. `compiler` is injectable for tests."""

    def __init__(self, directory: Path | None = None,
                 compiler: Callable[[str, str, tuple[str, ...], int, str], CompileResult] | None = None,
                 toolchain: str | None = None) -> None:
        self.directory = directory if directory is not None else default_cache_dir()  # None: no disk cache
        self._compiler = compiler or nvrtc_check.nvrtc_compile
        self._toolchain = toolchain
        self._headers: str | None = None
        self._memory: dict[str, bytes] = {}
        self._lock = threading.Lock()
        self.compiles = 0  # how many times the compiler ran (tests and statistics)

    def key(self, source: str, options: tuple[str, ...], arch: int, kind: str) -> str:
        if self._toolchain is None:
            self._toolchain = toolchain_version()
        if self._headers is None:
            self._headers = headers_digest()
        return cache_key(source, options, arch, kind, self._toolchain, self._headers)

    def compile(self, source: str, name: str, options: tuple[str, ...], arch: int, kind: str = "ptx",
                kernel: str | None = None) -> bytes:
        """The binary for `source`: from memory, from disk, or compiled now (then stored in both)."""
        key = self.key(source, options, arch, kind)
        with self._lock:
            binary = self._memory.get(key)
        if binary is not None:
            return binary
        entry = f"{key}.{kind}"
        binary = verified_cache.read(self.directory, entry, f"nvrtc-{kind}")
        if binary is None:
            binary = self._compile(source, name, options, arch, kind, kernel)
            verified_cache.write(self.directory, entry, binary, f"nvrtc-{kind}")
        with self._lock:
            self._memory[key] = binary
        return binary

    def _compile(self, source: str, name: str, options: tuple[str, ...], arch: int, kind: str,
                 kernel: str | None) -> bytes:
        self.compiles += 1
        try:
            result = self._compiler(source, name, options, arch, kind)
        except NvrtcCompileError as e:
            full = (*options, nvrtc_check.arch_option(arch, kind))
            message = format_compile_error(source, name, full, e.log, kernel)
            raise CudaCompileError(message, name=name, kernel=kernel, options=full, log=e.log) from None
        return result.binary


_DEFAULT_CACHE: KernelCache | None = None


def default_cache() -> KernelCache:
    global _DEFAULT_CACHE
    if _DEFAULT_CACHE is None:
        _DEFAULT_CACHE = KernelCache()
    return _DEFAULT_CACHE


def target_for(compute_capability: int, supported: tuple[int, ...]) -> tuple[int, str]:
    """(arch, kind) for a device: a cubin when NVRTC knows it, else PTX for the newest arch below it."""
    if compute_capability in supported:
        return compute_capability, "cubin"
    older = [a for a in supported if a <= compute_capability]
    if not older:
        raise RuntimeError(f"NVRTC {nvrtc_check.nvrtc_version()} cannot target compute capability "
                           f"{compute_capability} (supported: {supported})")
    return max(older), "ptx"


_SOURCES: dict[str, str] = {}
_MODULES: dict[tuple[int, str], Any] = {}
_MODULE_LOCK = threading.Lock()


def read_source(path: str) -> str:
    """A generated source file, read once."""
    text = _SOURCES.get(path)
    if text is None:
        text = _SOURCES[path] = Path(path).read_text()
    return text


def register_source(name: str, text: str) -> str:
    """A source made at run time (G.compile's fused kernels: runtime/compile/cuda_fusion.py), under a key that
    `load_function` takes as it takes a generated file's path. The key holds a digest of the text, so one text
    is one module whatever registers it; the binary is cached by its content as a generated source's is."""
    key = f"<runtime>/{name}-{hashlib.sha256(text.encode()).hexdigest()[:24]}.cu"
    _SOURCES.setdefault(key, text)
    return key


# Under OPGEN_EMULATE_CUDA=1, runtime/cuda/device.py installs the host engine's loader here (Note [The emulator
# reaches the caching allocator through hooks]): the engine builds on this module, not the other way round.
host_loader: Callable[[str, str, int], Any] | None = None


def load_function(source_path: str, kernel: str, device_index: int) -> Any:
    """The `cupy.cuda.Function` named `kernel` of the module compiled from `source_path` on a device
    (under OPGEN_EMULATE_CUDA=1, the same kernel compiled for the host engine: runtime/cuda/emulator)."""
    if host_loader is not None:
        return host_loader(source_path, kernel, device_index)
    with _MODULE_LOCK:
        module = _MODULES.get((device_index, source_path))
    if module is None:
        module = _load_module(source_path, device_index, kernel)
        with _MODULE_LOCK:
            _MODULES[(device_index, source_path)] = module
    return module.get_function(kernel)


def _load_module(source_path: str, device_index: int, kernel: str) -> Any:
    import cupy

    device = cupy.cuda.Device(device_index)
    arch, kind = target_for(int(device.compute_capability), nvrtc_check.supported_archs())
    source = read_source(source_path)
    binary = default_cache().compile(source, os.path.basename(source_path), nvrtc_check.default_options(),
                                     arch, kind, kernel)
    with device:
        module = cupy.cuda.function.Module()
        module.load(binary)
    return module
