"""CI check without a GPU: NVRTC compiles every generated CUDA kernel (every op x dtype x path x index width)
and every fixed kernel to a cubin for sm_90, with no error and no warning. A cubin, not only PTX: ptxas
applies what a GPU's loader would refuse (shared memory and registers past the architecture's limits, an
extern function no one defines), which PTX generation lets through. The PTX of the half and bfloat16
conversions is checked for round-to-nearest-even (emulation runs a software twin of them, so it cannot see
the inline PTX). Never skipped: a machine without NVRTC fails here with what to install (CI installs the
`cuda12` extra).

Note [Fast compile check]
The front end (parsing, template instantiation, every error and warning) and PTX generation are what the
check needs; NVVM's optimiser is most of NVRTC's time (about 15x on the pointwise files), and ptxas's
optimiser most of the rest. So every source is compiled with `-Xnvvm -opt=0 -Xptxas -O0` (CHECK_OPTIONS),
which still emits each kernel's entry and applies ptxas's limits (about 0.6 s a pointwise source to a
cubin, against 0.4 s to PTX), and the fixed kernels (reductions, copies, random, softmax: the hand-written
headers' code) are compiled once more with the runtime's full options, so their register and shared
memory use is what a GPU would load. Where an NVRTC rejects these options, every source gets the full ones.

Note [Compile check cache]
A source that compiled clean (no error, no warning) is recorded under `<kernel cache>/nvrtc-check/`, keyed by
`runtime.cuda.compile.cache_key` over the source, the options, the architecture, the NVRTC version and the
contents of opgen's headers: everything the compiler reads. The record holds the PTX entries that compile
found, and a later run takes them from it instead of compiling again, so only sources (or headers, or an
NVRTC) that changed since the last clean run are compiled. Nothing else is recorded: a source with an error
or a warning is compiled again every run. Records are read and written by runtime/verified_cache.py (Note
[Caches that verify]): a record that is not exactly the one written under its key (truncated, foreign,
swapped, a symbolic link) is a miss, and a directory that cannot be trusted is not used.
"""

from __future__ import annotations

import os
import re
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from codegen.jinja_env import environment
from codegen.native import load_native_functions
from codegen.render import cuda_kernels
from runtime import verified_cache
from runtime.cuda import nvrtc_check
from runtime.cuda.compile import cache_key, default_cache_dir, headers_digest

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).resolve().parents[1] / "cuda_corpus.yaml"
ENTRY = re.compile(r'extern "C" __global__ void (\w+)\(')
CUBIN_ENTRY = re.compile(rb"\.text\.(\w+)\x00")
CHECK_OPTIONS = ("-Xnvvm", "-opt=0", "-Xptxas", "-O0")


def _check_options() -> tuple[str, ...]:
    """CHECK_OPTIONS where this NVRTC accepts them (Note [Fast compile check]), else none."""
    try:
        nvrtc_check.nvrtc_compile('extern "C" __global__ void k() {}', "probe.cu", CHECK_OPTIONS)
    except nvrtc_check.NvrtcCompileError:
        return ()
    return CHECK_OPTIONS


def _sources() -> dict[str, str]:
    """Every .cu file generated from the repository's native_functions.yaml and from the test corpus."""
    env = environment(ROOT)
    files: dict[str, str] = dict(cuda_kernels.fixed_sources(env))
    yaml = ROOT / "native_functions.yaml"
    if yaml.exists():
        files.update(cuda_kernels.generate(load_native_functions(yaml, root=ROOT), env))
    corpus = cuda_kernels.generate(load_native_functions(CORPUS, root=ROOT), env)
    files.update({f"corpus/{p}": s for p, s in corpus.items() if p.startswith("cuda/pointwise/")})
    return {p: s for p, s in sorted(files.items()) if p.endswith(".cu")}


def _compile(item: tuple[str, str, tuple[str, ...]]) -> tuple[str, list[str], list[str], str | None]:
    """(path, kernels declared, entries in the PTX, error or warning text); runs in a worker process."""
    path, source, extra = item
    declared = ENTRY.findall(source)
    try:
        result = nvrtc_check.nvrtc_compile(source, path, nvrtc_check.default_options(extra), nvrtc_check.CI_ARCH,
                                           kind="cubin")
    except nvrtc_check.NvrtcCompileError as e:
        return path, declared, [], e.log
    entries = sorted({name.decode() for name in CUBIN_ENTRY.findall(result.binary)})
    warnings = nvrtc_check.warnings_in(result.log)
    return path, declared, entries, "\n".join(warnings) or None


_LABEL = "nvrtc-check-2"  # the cache label of a record (Note [Compile check cache]); 2: cubin entries


def _record_path(job: tuple[str, str, tuple[str, ...]], toolchain: str, headers: str) -> Path | None:
    _, source, extra = job
    key = cache_key(source, nvrtc_check.default_options(extra), nvrtc_check.CI_ARCH, "cubin", toolchain, headers)
    root = default_cache_dir()
    return None if root is None else root / "nvrtc-check" / f"{key}.entries"


def _read_record(path: Path | None) -> list[str] | None:
    if path is None:
        return None
    body = verified_cache.read(path.parent, path.name, _LABEL, root=path.parent.parent)
    if body is None:
        return None
    try:
        return body.decode().splitlines()
    except UnicodeDecodeError:
        return None


def _write_record(path: Path | None, entries: list[str]) -> None:
    if path is not None:  # a cache that cannot be written only costs the next run its compiles
        verified_cache.write(path.parent, path.name, "".join(f"{e}\n" for e in entries).encode(), _LABEL,
                             root=path.parent.parent)


def test_compile_check_records_only_clean_compiles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPGEN_CACHE_DIR", str(tmp_path))
    job = ("a.cu", 'extern "C" __global__ void k() {}', ())
    path = _record_path(job, "nvrtc-12.0", "h")
    assert path is not None and path.parent == tmp_path / "nvrtc-check"
    assert _read_record(path) is None
    _write_record(path, ["k", "k2"])
    assert _read_record(path) == ["k", "k2"]
    # every input of the compiler is in the key
    assert path != _record_path(("a.cu", job[1] + " ", ()), "nvrtc-12.0", "h")
    assert path != _record_path(job, "nvrtc-12.1", "h")
    assert path != _record_path(job, "nvrtc-12.0", "h2")
    assert path != _record_path((*job[:2], CHECK_OPTIONS), "nvrtc-12.0", "h")
    path.write_text("garbage\nk\n")
    assert _read_record(path) is None
    assert list(path.parent.iterdir()) == [path]  # no temporary left behind


def test_nvrtc_loads() -> None:
    try:
        major, _ = nvrtc_check.nvrtc_version()
    except nvrtc_check.NvrtcUnavailableError as e:
        pytest.fail(f"NVRTC is required for the CUDA compile check: {e}")
    assert major >= 12
    assert nvrtc_check.CI_ARCH in nvrtc_check.supported_archs()


def test_every_generated_kernel_compiles(capsys: pytest.CaptureFixture[str]) -> None:
    try:
        nvrtc_check.load_nvrtc()
    except nvrtc_check.NvrtcUnavailableError as e:
        pytest.fail(f"NVRTC is required for the CUDA compile check: {e}")
    sources = _sources()
    assert sources, "no CUDA sources generated"
    start = time.perf_counter()
    fast = _check_options()
    jobs = [(path, text, fast) for path, text in sources.items()]
    if fast:  # the fixed kernels once more, optimised as at run time
        jobs += [(path, text, ()) for path, text in sources.items() if not path.startswith(("cuda/pointwise/",
                                                                                              "corpus/"))]
    jobs.sort(key=lambda job: -len(job[1]))  # longest first: the pool finishes together
    # Note [Compile check cache]: sources recorded as clean by an earlier run are not compiled again
    toolchain, headers = "nvrtc-{}.{}".format(*nvrtc_check.nvrtc_version()), headers_digest()
    records = [_record_path(job, toolchain, headers) for job in jobs]
    known = [_read_record(path) for path in records]
    todo = [job for job, entries in zip(jobs, known, strict=True) if entries is None]
    workers = min(len(todo), os.cpu_count() or 1)
    compiled = iter([])
    if todo:
        with ProcessPoolExecutor(workers) as pool:
            compiled = iter(list(pool.map(_compile, todo)))
    results = []
    for job, path, entries in zip(jobs, records, known, strict=True):
        if entries is None:
            result = next(compiled)
            if result[3] is None and sorted(result[1]) == sorted(result[2]):
                _write_record(path, result[2])
        else:
            result = (job[0], ENTRY.findall(job[1]), entries, None)
        results.append(result)
    elapsed = time.perf_counter() - start
    problems = [f"{path}:\n{text}" for path, _, _, text in results if text]
    assert not problems, "NVRTC errors or warnings:\n" + "\n".join(problems)
    kernels = 0
    for (path, declared, entries, _), job in zip(results, jobs, strict=True):
        assert sorted(declared) == sorted(entries), f"{path}: PTX entries differ from the declared kernels"
        kernels += len(entries) if job[2] == fast else 0
    with capsys.disabled():
        version = ".".join(map(str, nvrtc_check.nvrtc_version()))
        print(f"\nNVRTC {version}: compiled {kernels} kernels in {len(sources)} sources "
              f"to cubins for sm_{nvrtc_check.CI_ARCH} in {elapsed:.1f}s ({workers} workers, "
              f"{' '.join(fast) or 'full options'}; fixed kernels also fully optimised; {len(jobs) - len(todo)} of "
              f"{len(jobs)} compiles recorded clean by an earlier run)")
    assert kernels > 0


def test_the_cubin_check_applies_the_limits_ptx_lets_through() -> None:
    """64 KiB of static shared memory and an undefined extern function compile to PTX, not to a cubin."""
    too_much_shared = ('extern "C" __global__ void k(int* o) {\n  __shared__ int s[16384];\n'
                       '  s[threadIdx.x] = 1;\n  __syncthreads();\n  o[threadIdx.x] = s[threadIdx.x + 1];\n}\n')
    unresolved = ('extern __device__ int helper(int);\n'
                  'extern "C" __global__ void k(int* o) { o[threadIdx.x] = helper(threadIdx.x); }\n')
    for source, problem in ((too_much_shared, "too much shared data"), (unresolved, "Unresolved extern function")):
        nvrtc_check.nvrtc_compile(source, "probe.cu", nvrtc_check.default_options(), nvrtc_check.CI_ARCH)
        with pytest.raises(nvrtc_check.NvrtcCompileError) as info:
            nvrtc_check.nvrtc_compile(source, "probe.cu", nvrtc_check.default_options(CHECK_OPTIONS),
                                      nvrtc_check.CI_ARCH, kind="cubin")
        assert problem in info.value.log


ROUNDING_PROBE = r"""
#include "opgen_types.cuh"
extern "C" __global__ void narrow(const float* f, const double* d, const int* i, const long long* l,
                                  opgen::half* h, opgen::bfloat16* b) {
  const int t = threadIdx.x;
  h[4 * t] = opgen::cast<opgen::half>(f[t]);
  h[4 * t + 1] = opgen::cast<opgen::half>(d[t]);
  h[4 * t + 2] = opgen::cast<opgen::half>(i[t]);
  h[4 * t + 3] = opgen::cast<opgen::half>(l[t]);
  b[4 * t] = opgen::cast<opgen::bfloat16>(f[t]);
  b[4 * t + 1] = opgen::cast<opgen::bfloat16>(d[t]);
  b[4 * t + 2] = opgen::cast<opgen::bfloat16>(i[t]);
  b[4 * t + 3] = opgen::cast<opgen::bfloat16>(l[t]);
}
"""
CVT = re.compile(r"\bcvt((?:\.\w+)+)\s")
FLOATS = {"f16", "bf16", "f32", "f64"}


def _narrowing_conversions(ptx: str) -> list[tuple[str, set[str]]]:
    """(instruction, modifiers) of every cvt to a 16-bit float, or between float types narrowing."""
    found = []
    for m in CVT.finditer(ptx):
        parts = m.group(1).strip(".").split(".")
        types = [p for p in parts if p in FLOATS or p[:1] in "su" and p[1:].isdigit()]
        if len(types) < 2 or types[0] not in FLOATS:
            continue
        width = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}
        source_bits = width.get(types[1], int(types[1][1:]) if types[1][1:].isdigit() else 0)
        if types[0] in ("f16", "bf16") or source_bits > width[types[0]]:
            found.append((m.group(0).strip(), set(parts)))
    return found


def test_half_and_bfloat16_conversions_round_to_nearest_even_in_ptx() -> None:
    """Every conversion to half or bfloat16 (and every narrowing float conversion) that the headers or the
    copy kernels emit as a cvt instruction rounds to nearest even (`.rn`); truncating (`.rz`) or directed
    (`.rm`, `.rp`) rounding would go unseen by the emulated suite."""
    sources = {"probe.cu": ROUNDING_PROBE}
    sources.update({path: text for path, text in _sources().items() if path.startswith("cuda/copy/")})
    seen = 0
    for name, source in sources.items():
        ptx = nvrtc_check.nvrtc_compile(source, name, nvrtc_check.default_options(), nvrtc_check.CI_ARCH).binary
        for instruction, modifiers in _narrowing_conversions(ptx.decode()):
            seen += 1
            assert "rn" in modifiers, f"{name}: {instruction} does not round to nearest even"
    assert seen > 0, "no narrowing conversion found: the probe no longer reaches the cvt instructions"
