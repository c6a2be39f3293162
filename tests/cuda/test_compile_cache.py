"""runtime/cuda/compile.py without a GPU: cache keys, the disk cache and compile-error messages."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from runtime.cuda import compile as C
from runtime.cuda import nvrtc_check
from runtime.cuda.nvrtc_check import CompileResult

BASE = dict(source="src", options=("-std=c++17",), arch=90, kind="ptx", toolchain="nvrtc-12.9", headers="h")


@pytest.mark.parametrize("change", [
    {"source": "src2"}, {"options": ("-std=c++20",)}, {"arch": 80}, {"kind": "cubin"},
    {"toolchain": "nvrtc-13.0"}, {"headers": "h2"},
])
def test_every_compiler_input_changes_the_key(change: dict) -> None:
    assert C.cache_key(**BASE) == C.cache_key(**BASE)
    assert C.cache_key(**{**BASE, **change}) != C.cache_key(**BASE)


def test_headers_digest_follows_header_contents(tmp_path: Path) -> None:
    (tmp_path / "a.cuh").write_text("int x;")
    first = C.headers_digest(str(tmp_path))
    (tmp_path / "a.cuh").write_text("int y;")
    assert C.headers_digest(str(tmp_path)) != first


def test_disk_cache_compiles_once_across_instances(tmp_path: Path) -> None:
    calls = []

    def fake(source: str, name: str, options: tuple[str, ...], arch: int, kind: str) -> CompileResult:
        calls.append(source)
        return CompileResult(b"PTX:" + source.encode(), kind, "")

    cache = C.KernelCache(tmp_path, compiler=fake, toolchain="t")
    assert cache.compile("a", "a.cu", (), 90) == b"PTX:a"
    assert cache.compile("a", "a.cu", (), 90) == b"PTX:a"  # memory
    other = C.KernelCache(tmp_path, compiler=fake, toolchain="t")
    assert other.compile("a", "a.cu", (), 90) == b"PTX:a"  # disk
    assert calls == ["a"]
    assert other.compile("b", "b.cu", (), 90) == b"PTX:b"
    assert calls == ["a", "b"]
    assert len(list(tmp_path.glob("*.ptx"))) == 2


BROKEN = """#include "opgen_types.cuh"
extern "C" __global__ void broken(float* out) {
  const int i = threadIdx.x;
  out[i] = undefined_name * 2.0f;
}
"""


def test_compile_error_shows_numbered_source(tmp_path: Path) -> None:
    cache = C.KernelCache(tmp_path)
    with pytest.raises(C.CudaCompileError) as info:
        cache.compile(BROKEN, "broken.cu", nvrtc_check.default_options(), 90, kernel="broken")
    message = str(info.value)
    assert message.startswith("CUDA compilation of kernel 'broken' in broken.cu failed\noptions: -std=c++17")
    assert "-arch=compute_90" in message
    log = message.split("broken.cu, lines")[0]  # the compiler's log (its wording is NVRTC's, not pinned)
    assert "broken.cu(4)" in log and "undefined_name" in log
    assert ">> 4 |   out[i] = undefined_name * 2.0f;" in message
    assert "   3 |   const int i = threadIdx.x;" in message
    assert info.value.kernel == "broken"
    assert not list(tmp_path.glob("*.ptx"))


def test_format_compile_error_context() -> None:
    source = "\n".join(f"line{i}" for i in range(1, 11))
    log = "k.cu(5): error: bad thing\n"
    text = C.format_compile_error(source, "k.cu", ("-O3",), log, context=1)
    assert "k.cu, lines 4-6:\n   4 | line4\n>> 5 | line5\n   6 | line6" in text


def test_target_for_device() -> None:
    assert C.target_for(90, (80, 86, 90)) == (90, "cubin")
    assert C.target_for(120, (80, 90)) == (90, "ptx")
    with pytest.raises(RuntimeError):
        C.target_for(50, (80, 90))


def test_default_cache_dir_honours_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPGEN_CACHE_DIR", str(tmp_path))
    assert C.default_cache_dir() == tmp_path
    monkeypatch.delenv("OPGEN_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert C.default_cache_dir() == tmp_path / "xdg" / "opgen" / "kernels"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert C.default_cache_dir() == Path(os.path.expanduser("~")) / ".cache" / "opgen" / "kernels"
