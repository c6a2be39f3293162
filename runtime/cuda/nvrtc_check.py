"""Finding NVRTC and compiling CUDA C++ with it, with or without a GPU.

Note [NVRTC without a device]
NVRTC is a library (libnvrtc.so) that turns CUDA C++ into PTX or cubin; it needs no driver and
no GPU. CuPy binds it as `cupy_backends.cuda.libs.nvrtc`, but CuPy's own `compile_using_nvrtc`
asks the driver for the device's architecture, which fails on a machine without a GPU. So opgen
calls the binding directly with an explicit `-arch=compute_XY` (PTX) or `-arch=sm_XY` (cubin).
Our kernels include only opgen's headers (runtime/cuda/include): half and bfloat16 are opgen's own
16-bit types, so no toolkit header (cuda_fp16.h) is needed and the same source compiles with the
NVRTC of CUDA 12 and of CUDA 13.
Where the library comes from: cupy-cuda12x depends on no NVRTC wheel, the `cuda12` extra adds
`nvidia-cuda-nvrtc-cu12`; recent CuPy finds that wheel's library itself. Older CuPy only searches
the system's library path, so `load_nvrtc` preloads the wheel's libnvrtc with ctypes (once, here,
and nowhere else) and asks again.
"""

from __future__ import annotations

import ctypes
import glob
import importlib.util
import os
from dataclasses import dataclass
from types import ModuleType

# Options every opgen kernel is compiled with. `-default-device` makes every function __device__
# unless marked otherwise; `-Xptxas`-style warnings are not produced for PTX output.
BASE_OPTIONS: tuple[str, ...] = ("-std=c++17", "-default-device")
INCLUDE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "include")
# The architecture CI compiles for (Hopper); the runtime compiles for the device in use.
CI_ARCH = 90


class NvrtcUnavailableError(RuntimeError):
    """NVRTC cannot be loaded: CuPy or the NVRTC library is missing."""


class NvrtcCompileError(RuntimeError):
    """NVRTC rejected a source. `log` is NVRTC's own message."""

    def __init__(self, message: str, log: str) -> None:
        super().__init__(message)
        self.log = log


@dataclass(frozen=True)
class CompileResult:
    """What NVRTC produced: `binary` is PTX text (as bytes) or a cubin; `log` holds its warnings."""

    binary: bytes
    kind: str  # "ptx" or "cubin"
    log: str


_NVRTC: ModuleType | None = None


def _wheel_libraries() -> list[str]:
    """libnvrtc shared objects installed by NVIDIA's pip wheels (CUDA 12 and 13 layouts)."""
    spec = importlib.util.find_spec("nvidia")
    if spec is None or not spec.submodule_search_locations:
        return []
    found: list[str] = []
    for root in spec.submodule_search_locations:
        for pattern in ("cuda_nvrtc/lib/libnvrtc.so.*", "cu13/lib/libnvrtc.so.*", "cu12/lib/libnvrtc.so.*"):
            found.extend(p for p in sorted(glob.glob(os.path.join(root, pattern))) if "alt" not in p)
    return found


def load_nvrtc() -> ModuleType:
    """CuPy's NVRTC binding, with the library loaded; raises NvrtcUnavailableError with what to install."""
    global _NVRTC
    if _NVRTC is not None:
        return _NVRTC
    try:
        from cupy_backends.cuda.libs import nvrtc
    except ImportError as e:
        raise NvrtcUnavailableError(
            f"NVRTC needs CuPy: pip install 'opgen[cuda12]' (or 'opgen[cuda13]') ({e})") from e
    try:
        nvrtc.getVersion()
    except Exception as first:  # CuPy raises various errors when the library is not found
        libraries = _wheel_libraries()
        for path in libraries:
            try:
                ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            except OSError:
                continue
        try:
            nvrtc.getVersion()
        except Exception as e:
            raise NvrtcUnavailableError(
                "CuPy cannot load the NVRTC library (libnvrtc.so); install the NVRTC wheel "
                "(pip install nvidia-cuda-nvrtc-cu12, part of 'opgen[cuda12]') or a CUDA toolkit. "
                f"Tried: {libraries or 'no NVIDIA wheel found'}. First error: {first}") from e
    _NVRTC = nvrtc
    return nvrtc


def nvrtc_version() -> tuple[int, int]:
    major, minor = load_nvrtc().getVersion()
    return int(major), int(minor)


def supported_archs() -> tuple[int, ...]:
    """The `sm_XY` numbers this NVRTC can produce cubins for."""
    return tuple(int(a) for a in load_nvrtc().getSupportedArchs())


def arch_option(arch: int, kind: str) -> str:
    return f"-arch={'sm' if kind == 'cubin' else 'compute'}_{arch}"


def nvrtc_compile(source: str, name: str, options: tuple[str, ...], arch: int = CI_ARCH,
                  kind: str = "ptx") -> CompileResult:
    """Compile `source` (file name `name` in messages) for `arch`; PTX or cubin. Needs no device."""
    nvrtc = load_nvrtc()
    full = (*options, arch_option(arch, kind))
    program = nvrtc.createProgram(source, name, (), ())
    try:
        try:
            nvrtc.compileProgram(program, full)
        except nvrtc.NVRTCError as e:
            log = nvrtc.getProgramLog(program)
            raise NvrtcCompileError(f"NVRTC failed to compile {name}: {e}", log) from None
        log = nvrtc.getProgramLog(program)
        binary = nvrtc.getCUBIN(program) if kind == "cubin" else nvrtc.getPTX(program)
    finally:
        nvrtc.destroyProgram(program)
    if isinstance(binary, str):
        binary = binary.encode()
    return CompileResult(bytes(binary), kind, log)


def default_options(extra: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The options of every opgen kernel: BASE_OPTIONS, opgen's include directory, then `extra`."""
    return (*BASE_OPTIONS, f"-I{INCLUDE_DIR}", *extra)


def warnings_in(log: str) -> list[str]:
    """The warning lines of an NVRTC log (every warning matters for generated code)."""
    return [line for line in log.splitlines() if "): warning" in line]
