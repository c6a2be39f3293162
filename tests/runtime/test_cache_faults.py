"""Every on-disk cache of opgen against what may be found on disk (Note [Caches that verify] in
runtime/verified_cache.py): a planted, truncated, empty, corrupted, foreign or swapped entry, a symbolic
link, a FIFO or a directory under an entry's name, a cache directory that is a link, of another user or
writable by others, concurrent writers, relative cache variables. Each is a miss that is rebuilt or a run
without the cache (said once), never a crash and never a wrong result.

The caches, each driven through its own code: the generator's render and names caches
(codegen/disk_cache.py), the compiled-template cache (codegen/jinja_env.py), the NVRTC binaries
(runtime/cuda/compile.py: KernelCache, with a fake compiler), the emulator's host libraries (real libraries
compiled once per module, then loaded and run), the NVRTC compile check's records
(tests/cuda/test_nvrtc_compiles_every_kernel.py) and G.compile's fused-kernel libraries
(runtime/compile/cpp_build.py, real libraries compiled once per module, then loaded and called).
"""

from __future__ import annotations

import copy
import multiprocessing
import os
import pickle
import shutil
import stat
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import jinja2
import numpy as np
import pytest

from codegen import disk_cache, jinja_env, kernel_targets
from runtime import verified_cache as VC
from runtime.compile import cpp_build
from runtime.cuda import compile as CC
from runtime.cuda.emulator import engine as E
from tests.cuda import test_nvrtc_compiles_every_kernel as test_nvrtc

_HAS_CXX = any(shutil.which(c) for c in (os.environ.get("CXX") or "g++", "g++", "clang++", "c++"))


class Case:
    """One cache driven through its own code: `produce(i)` gives variant i's value (i in 0, 1), through
    the cache; `computed` counts the values computed because the cache missed."""

    name = ""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.computed = 0

    def directory(self) -> Path:
        raise NotImplementedError

    def root(self) -> Path:
        """The top of the cache's tree (checked as the directory is)."""
        return self.tmp / "xdg" / "opgen"

    def produce(self, i: int) -> object:
        raise NotImplementedError

    def expected(self, i: int) -> object:
        raise NotImplementedError

    def foreign(self) -> bytes:
        """Bytes someone else might put under an entry's name."""
        return b"not an entry of this cache\n" * 3


class RenderCase(Case):
    """codegen/disk_cache.py's memo, as gen_cuda's renderer calls it."""

    name = "render"

    def directory(self) -> Path:
        path = disk_cache.cache_dir("render")
        assert path is not None
        return path

    def produce(self, i: int) -> object:
        def compute() -> str:
            self.computed += 1
            return self.expected(i)  # type: ignore[return-value]

        return disk_cache.memo("render", disk_cache.digest("fault test", str(i)), compute)

    def expected(self, i: int) -> object:
        return f"// source of op {i}\n" * (i + 2)


class NamesCase(Case):
    """codegen/kernel_targets.py: the top-level functions of a runtime module (the `dispatch:` check)."""

    name = "names"

    def __init__(self, tmp: Path) -> None:
        super().__init__(tmp)
        for i in (0, 1):
            (tmp / f"kernels{i}.py").write_text(f"def kernel_{i}(x):\n    return x\n")

    def directory(self) -> Path:
        path = disk_cache.cache_dir("names")
        assert path is not None
        return path

    def produce(self, i: int) -> object:
        module = self.tmp / f"kernels{i}.py"
        kernel_targets._module_functions.cache_clear()
        before = disk_cache.DiskCache.get

        def counting_get(cache: disk_cache.DiskCache, key: str) -> str | None:
            value = before(cache, key)
            self.computed += value is None
            return value

        disk_cache.DiskCache.get = counting_get  # type: ignore[method-assign]
        try:
            stat = module.stat()
            return kernel_targets._module_functions(module, stat.st_mtime_ns, stat.st_size)
        finally:
            disk_cache.DiskCache.get = before  # type: ignore[method-assign]

    def expected(self, i: int) -> object:
        return f"kernel_{i}:1"


class JinjaCase(Case):
    """codegen/jinja_env.py's compiled-template cache."""

    name = "jinja"

    def directory(self) -> Path:
        path = disk_cache.cache_dir("jinja")
        assert path is not None
        return path

    def produce(self, i: int) -> object:
        case = self
        cache = jinja_env._template_cache()
        assert cache is not None

        class Counting(type(cache)):  # type: ignore[misc]
            def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
                case.computed += 1
                super().dump_bytecode(bucket)

        counting = copy.copy(cache)
        counting.__class__ = Counting
        env = jinja2.Environment(loader=jinja2.DictLoader({f"t{i}": f"template {i}: {{{{ x * {i + 2} }}}}"}),
                                 bytecode_cache=counting)
        return env.get_template(f"t{i}").render(x=3)

    def expected(self, i: int) -> object:
        return f"template {i}: {3 * (i + 2)}"

    def foreign(self) -> bytes:
        # what Jinja's FileSystemBytecodeCache would read: its magic, then a pickle that runs a command
        marker = self.tmp / "jinja-planted-ran"

        class Payload:
            def __reduce__(self) -> tuple[Callable[..., object], tuple[str]]:
                return (os.system, (f"touch {marker}",))

        return jinja2.bccache.bc_magic + pickle.dumps(Payload())

    def check_not_run(self) -> None:
        assert not (self.tmp / "jinja-planted-ran").exists(), "a planted jinja cache file ran a command"


class NvrtcCase(Case):
    """runtime/cuda/compile.py's KernelCache, with a fake compiler (NVRTC's output is not the point)."""

    name = "nvrtc"

    def directory(self) -> Path:
        return self.tmp / "kernels"

    def root(self) -> Path:
        return self.directory()

    def produce(self, i: int) -> object:
        def fake(source: str, name: str, options: tuple[str, ...], arch: int, kind: str) -> CC.CompileResult:
            self.computed += 1
            return CC.CompileResult(self.expected(i), kind, "")  # type: ignore[arg-type]

        cache = CC.KernelCache(self.directory(), compiler=fake, toolchain="t")
        return cache.compile(f"source {i}", f"k{i}.cu", (), 90)

    def expected(self, i: int) -> object:
        return f"// PTX of kernel {i}\n".encode() * (i + 2)


class CheckRecordCase(Case):
    """The NVRTC compile check's records of sources that compiled clean (Note [Compile check cache])."""

    name = "nvrtc-check"

    def directory(self) -> Path:
        path = test_nvrtc._record_path(("a.cu", "x", ()), "t", "h")
        assert path is not None
        return path.parent

    def root(self) -> Path:
        return self.tmp / "kernels"

    def produce(self, i: int) -> object:
        path = test_nvrtc._record_path((f"k{i}.cu", f"source {i}", ()), "t", "h")
        record = test_nvrtc._read_record(path)
        if record is None:
            self.computed += 1
            record = self.expected(i)  # type: ignore[assignment]
            test_nvrtc._write_record(path, record)  # type: ignore[arg-type]
        return record

    def expected(self, i: int) -> object:
        return [f"kernel_{i}_{j}" for j in range(i + 1)]


HOST_SOURCE = 'extern "C" __global__ void k(int* out) {{ out[threadIdx.x] = {value} + threadIdx.x; }}\n'
# (the emulation header refuses host-only calls such as fopen in kernel code: the plant undoes that for itself)
EVIL_SOURCE = ('#include <cstdio>\n#undef fopen\n#undef fclose\n'
               '__attribute__((constructor)) static void planted() {{\n'
               '  FILE* f = fopen("{marker}", "w"); if (f) fclose(f);\n}}\n' + HOST_SOURCE)


@pytest.fixture(scope="module")
def host_images(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes | str]:
    """Real host libraries, compiled once: variants 0 and 1 and a planted one with a constructor."""
    if not _HAS_CXX:
        pytest.skip("no C++ compiler: the emulator's host libraries cannot be built")
    root = tmp_path_factory.mktemp("host-images")
    marker = root / "planted-constructor-ran"
    libs = E.HostLibraries(None)
    libs.directory = None  # compile only
    images: dict[str, bytes | str] = {"marker": str(marker)}
    for name, text in (("0", HOST_SOURCE.format(value=100)), ("1", HOST_SOURCE.format(value=200)),
                       ("evil", EVIL_SOURCE.format(marker=marker, value=666))):
        source = root / f"k{name}.cu"
        source.write_text(text)
        images[name] = libs.build(str(source))
    return images


class HostCase(Case):
    """The emulator's host libraries: loaded and run. A miss "compiles" by returning the library compiled
    once by the fixture (the cache, the checks and the loading are the real ones)."""

    name = "host"
    images: dict[str, bytes | str] = {}

    def directory(self) -> Path:
        return self.tmp / "kernels" / "host"

    def root(self) -> Path:
        return self.tmp / "kernels"

    def source(self, i: int) -> str:
        path = self.tmp / f"k{i}.cu"
        if not path.exists():
            path.write_text(HOST_SOURCE.format(value=100 * (i + 1)))
        return str(path)

    def produce(self, i: int) -> object:
        libs = E.HostLibraries()  # $OPGEN_CACHE_DIR/host
        assert libs.directory == self.directory()
        by_source = {self.source(j): self.images[str(j)] for j in (0, 1)}

        def compile_once(source_path: str) -> bytes:
            self.computed += 1
            return by_source[source_path]  # type: ignore[return-value]

        libs._compile = compile_once  # type: ignore[method-assign]
        out = np.zeros(4, np.int32)
        arg = type("Arr", (), {"data": type("Ptr", (), {"ptr": out.ctypes.data})()})()
        E.HostFunction(libs.load(self.source(i)), "k", self.source(i))((1,), (4,), (arg,))
        return out.tolist()

    def expected(self, i: int) -> object:
        return [100 * (i + 1) + t for t in range(4)]

    def foreign(self) -> bytes:
        return self.images["evil"]  # type: ignore[return-value]

    def check_not_run(self) -> None:
        assert not os.path.exists(str(self.images["marker"])), "a planted host library was loaded"


FUSED_SOURCE = 'extern "C" int value() {{ return {value}; }}\n'
EVIL_FUSED = ('#include <cstdio>\n__attribute__((constructor)) static void planted() {{\n'
              '  FILE* f = fopen("{marker}", "w"); if (f) fclose(f);\n}}\n' + FUSED_SOURCE)


@pytest.fixture(scope="module")
def fused_images(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes | str]:
    """Real shared libraries for G.compile's cache, compiled once: variants 0 and 1 and a planted one."""
    compiler = cpp_build.find_compiler()
    if compiler is None:
        pytest.skip("no C++ compiler: G.compile's libraries cannot be built")
    marker = tmp_path_factory.mktemp("fused-images") / "planted-constructor-ran"
    images: dict[str, bytes | str] = {"marker": str(marker)}
    for name, text in (("0", FUSED_SOURCE.format(value=100)), ("1", FUSED_SOURCE.format(value=200)),
                       ("evil", EVIL_FUSED.format(marker=marker, value=666))):
        images[name] = cpp_build._compile(compiler, text, ("-shared", "-fPIC", "-w"), ())
    return images


class FusedCase(Case):
    """G.compile's libraries (runtime/compile/cpp_build.py): a miss "compiles" by returning a library
    compiled once by the fixture (the cache, its checks and the loading are the real ones)."""

    name = "fused"
    images: dict[str, bytes | str] = {}

    def directory(self) -> Path:
        return self.root() / "compile"

    def produce(self, i: int) -> object:
        def compile_once(compiler: str, text: str, flags: tuple[str, ...], libs: tuple[str, ...]) -> bytes:
            self.computed += 1
            return self.images[str(i)]  # type: ignore[return-value]

        real, cpp_build._compile = cpp_build._compile, compile_once  # type: ignore[assignment]
        try:
            assert cpp_build.cache_dir() == self.directory()
            return cpp_build.build(f"// variant {i}\n").value()
        finally:
            cpp_build._compile = real  # type: ignore[assignment]

    def expected(self, i: int) -> object:
        return 100 * (i + 1)

    def foreign(self) -> bytes:
        return self.images["evil"]  # type: ignore[return-value]

    def check_not_run(self) -> None:
        assert not os.path.exists(str(self.images["marker"])), "a planted library was loaded"


CASES = [RenderCase, NamesCase, JinjaCase, NvrtcCase, CheckRecordCase, HostCase, FusedCase]


@pytest.fixture(autouse=True)
def cache_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("OPGEN_CACHE_DIR", str(tmp_path / "kernels"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


@pytest.fixture(params=CASES, ids=[c.name for c in CASES])
def case(request: pytest.FixtureRequest, tmp_path: Path) -> Case:
    cls = request.param
    if cls is HostCase:
        HostCase.images = request.getfixturevalue("host_images")
    if cls is FusedCase:
        FusedCase.images = request.getfixturevalue("fused_images")
    return cls(tmp_path)


def _entry_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*") if p.is_file() and not p.is_symlink())


def _filled(case: Case) -> tuple[Path, Path]:
    """Both variants produced (and cached): the entry files of variants 0 and 1."""
    assert case.produce(0) == case.expected(0)
    first = _entry_files(case.directory())
    assert case.produce(1) == case.expected(1)
    second = [p for p in _entry_files(case.directory()) if p not in first]
    assert len(first) == 1 and len(second) == 1, (first, second)
    assert case.computed == 2
    assert case.produce(0) == case.expected(0) and case.computed == 2  # a hit
    return first[0], second[0]


def _check_rebuilt(case: Case, i: int = 0) -> None:
    """Variant i is computed again (a miss), is right, and is a hit afterwards."""
    before = case.computed
    assert case.produce(i) == case.expected(i)
    assert case.computed == before + 1, "a damaged entry was used"
    assert case.produce(i) == case.expected(i)
    assert case.computed == before + 1, "the entry was not rebuilt"
    getattr(case, "check_not_run", lambda: None)()


def _planted(case: Case, path: Path, other: Path) -> None:
    path.write_bytes(case.foreign())


def _truncated(case: Case, path: Path, other: Path) -> None:
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) - max(1, len(raw) // 3)])


def _empty(case: Case, path: Path, other: Path) -> None:
    path.write_bytes(b"")


def _corrupted(case: Case, path: Path, other: Path) -> None:
    raw = bytearray(path.read_bytes())
    raw[-2] ^= 0x5A
    path.write_bytes(bytes(raw))


def _header_only(case: Case, path: Path, other: Path) -> None:
    path.write_bytes(path.read_bytes().partition(b"\n")[0] + b"\n")


def _fifo(case: Case, path: Path, other: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _directory(case: Case, path: Path, other: Path) -> None:
    path.unlink()
    path.mkdir()


def _huge(case: Case, path: Path, other: Path) -> None:
    os.truncate(path, 8 << 30)  # sparse: 8 GiB that must not be read


def _writable_by_others(case: Case, path: Path, other: Path) -> None:
    path.chmod(0o666)


FAULTS = [_planted, _truncated, _empty, _corrupted, _header_only, _fifo, _directory, _huge, _writable_by_others]


@pytest.mark.parametrize("fault", FAULTS, ids=[f.__name__.strip("_") for f in FAULTS])
def test_damaged_entry_is_a_miss(case: Case, fault: Callable[[Case, Path, Path], None]) -> None:
    entry, other = _filled(case)
    fault(case, entry, other)
    if fault is _directory:  # the name cannot be written while a directory holds it: computed every time
        for _ in range(2):
            before = case.computed
            assert case.produce(0) == case.expected(0) and case.computed == before + 1
        return
    _check_rebuilt(case)
    assert case.produce(1) == case.expected(1)


def test_swapped_entries_are_misses(case: Case) -> None:
    first, second = _filled(case)
    a, b = first.read_bytes(), second.read_bytes()
    first.write_bytes(b)
    second.write_bytes(a)
    _check_rebuilt(case, 0)
    _check_rebuilt(case, 1)


def test_symlinked_entry_is_not_followed(case: Case, tmp_path: Path) -> None:
    entry, _ = _filled(case)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(entry.read_bytes())  # a copy of the right entry: only the link is wrong
    os.utime(elsewhere, ns=(1, 1))
    entry.unlink()
    entry.symlink_to(elsewhere)
    _check_rebuilt(case)
    assert not entry.is_symlink(), "the rebuilt entry should replace the link"
    assert elsewhere.stat().st_mtime_ns == 1, "the entry was written through the link"


def _untrusted_dir(case: Case, monkeypatch: pytest.MonkeyPatch, how: str, level: str) -> Path:
    directory = case.directory() if level == "directory" else case.root()
    if how == "mode 0777":
        directory.chmod(0o777)
    elif how == "group-writable":
        directory.chmod(0o770)
    elif how == "other owner":
        uid = os.getuid()
        monkeypatch.setattr(os, "getuid", lambda: uid + 1)
    elif how == "symlink":
        real = directory.with_name(directory.name + "-real")
        directory.rename(real)
        directory.symlink_to(real, target_is_directory=True)
    return directory


@pytest.mark.parametrize("level", ["directory", "root"])
@pytest.mark.parametrize("how", ["mode 0777", "group-writable", "other owner", "symlink"])
def test_untrusted_directory_is_not_used_and_said_once(case: Case, monkeypatch: pytest.MonkeyPatch,
                                                        how: str, level: str) -> None:
    # "root": the top of the cache's tree (the NVRTC cache's directory is its own root: the same check twice)
    entry, _ = _filled(case)
    listing = sorted(os.listdir(entry.parent))
    culprit = _untrusted_dir(case, monkeypatch, how, level)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            before = case.computed
            assert case.produce(0) == case.expected(0)
            assert case.computed == before + 1, "an untrusted cache directory was read"
    said = [w for w in caught if issubclass(w.category, VC.CacheWarning)]
    assert len(said) == 1, [str(w.message) for w in caught]
    assert str(culprit) in str(said[0].message)
    assert sorted(os.listdir(entry.parent)) == listing, "an untrusted cache directory was written"


def _in_processes(n: int, target: Callable[..., object], *args: object) -> list[object]:
    """`target(k, barrier, *args)` in n forked processes started together (they keep this test's
    environment and monkeypatches); their results, or the first failure raised here."""
    ctx = multiprocessing.get_context("fork")
    barrier, results = ctx.Barrier(n), ctx.Queue()

    def run(k: int) -> None:
        try:
            results.put((k, target(k, barrier, *args), None))
        except BaseException as e:  # noqa: B036 - reported to the parent
            results.put((k, None, f"{type(e).__name__}: {e}"))

    procs = [ctx.Process(target=run, args=(k,)) for k in range(n)]
    for p in procs:
        p.start()
    out = sorted(results.get(timeout=120) for _ in procs)
    for p in procs:
        p.join(timeout=30)
        assert p.exitcode == 0, f"a writer process died with exit code {p.exitcode}"
    failures = [error for _, _, error in out if error]
    assert not failures, failures
    return [value for _, value, _ in out]


def _produce_thrice(k: int, barrier: object, case: Case) -> object:
    barrier.wait()  # type: ignore[attr-defined]
    return [case.produce(k % 2) for _ in range(3)]


def test_concurrent_writers(case: Case) -> None:
    """Processes filling the same entries at once all get the right values; the entries are whole."""
    results = _in_processes(4, _produce_thrice, case)
    for k, values in enumerate(results):
        assert values == [case.expected(k % 2)] * 3
    assert not [p for p in case.directory().iterdir() if p.name.startswith(".tmp")]
    before = case.computed
    assert case.produce(0) == case.expected(0) and case.produce(1) == case.expected(1)
    assert case.computed == before, "a concurrently written entry is not intact"


def _write_and_read(k: int, barrier: object, directory: Path, bodies: list[bytes]) -> bool:
    barrier.wait()  # type: ignore[attr-defined]
    for _ in range(30):
        assert VC.write(directory, "one", bodies[k], "test")
        assert VC.read(directory, "one", "test") in bodies, "a partly written entry was read"
    return True


def test_concurrent_writes_of_one_entry_are_never_seen_in_part(tmp_path: Path) -> None:
    bodies = [bytes([k]) * (1 << 16) * (k + 1) for k in range(4)]
    assert all(_in_processes(4, _write_and_read, tmp_path / "c", bodies))
    assert VC.read(tmp_path / "c", "one", "test") in bodies


def test_created_directories_are_private(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        assert VC.write(tmp_path / "a" / "b" / "c", "e", b"x", "test")
    finally:
        os.umask(old)
    for d in ("a", "a/b", "a/b/c"):
        assert stat.S_IMODE((tmp_path / d).stat().st_mode) == 0o700, d
    assert stat.S_IMODE((tmp_path / "a/b/c/e").stat().st_mode) == 0o600


def _default_dirs() -> Iterator[Path | None]:
    yield disk_cache.cache_dir("render")
    template_cache = jinja_env._template_cache()
    yield getattr(template_cache, "directory", None)
    yield CC.default_cache_dir()
    yield E.HostLibraries().directory
    yield test_nvrtc._record_path(("a.cu", "x", ()), "t", "h")


def test_relative_cache_variables_are_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("XDG_CACHE_HOME", "relative-cache")
    monkeypatch.setenv("OPGEN_CACHE_DIR", "relative-kernels")
    home = (tmp_path / "home").resolve()
    with pytest.warns(VC.CacheWarning, match="OPGEN_CACHE_DIR"):
        dirs = list(_default_dirs())
    for d in dirs:
        assert d is not None and d.is_absolute() and d.is_relative_to(home / ".cache" / "opgen"), d
    assert RenderCase(tmp_path).produce(0) == RenderCase(tmp_path).expected(0)
    assert not list(cwd.iterdir()), "a cache was made in the current directory"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("OPGEN_CACHE_DIR")
    assert disk_cache.cache_dir("names") == tmp_path / "xdg" / "opgen" / "names"
    assert CC.default_cache_dir() == tmp_path / "xdg" / "opgen" / "kernels"


def test_no_home_runs_without_caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.delenv("OPGEN_CACHE_DIR")
    monkeypatch.setattr(os.path, "expanduser", lambda p: p)  # as with no HOME and no passwd entry
    with pytest.warns(VC.CacheWarning):
        assert disk_cache.cache_dir("render") is None and CC.default_cache_dir() is None
    case = RenderCase(tmp_path)
    assert case.produce(0) == case.expected(0) and case.produce(0) == case.expected(0)
    assert case.computed == 2


def test_entry_names_are_plain() -> None:
    for bad in ("../x", "a/b", ".tmp-x", "", "a b", "x\n"):
        with pytest.raises(ValueError):
            VC.header("test", bad, b"")


def test_host_library_loads_from_a_private_file_without_memfd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              host_images: dict[str, bytes | str]) -> None:
    HostCase.images = host_images
    monkeypatch.setattr(E, "_load_from_memfd", lambda image, name: None)
    case = HostCase(tmp_path)
    entry, _ = _filled(case)
    _planted(case, entry, entry)
    _check_rebuilt(case)
