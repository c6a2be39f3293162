"""The generator's caches across runs (Note [Generator caches], codegen/disk_cache.py): a hit gives what
a fresh render gives, any change of an input changes the output, and a damaged entry is never trusted."""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path

import jinja2
import pytest

from codegen import derivatives, disk_cache, gen, gen_cuda, kernel_targets
from codegen.jinja_env import environment
from codegen.native import load_native_functions
from codegen.render import cuda_kernels
from runtime import verified_cache

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).resolve().parents[1] / "cuda_corpus.yaml"


@pytest.fixture(autouse=True)
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "cache-home"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    return home


def _uncached(root: Path) -> jinja2.Environment:
    """An environment the render cache does not serve (its loader is not one directory)."""
    env = environment(root)
    env.loader = jinja2.ChoiceLoader([jinja2.FileSystemLoader(str(root / "templates"))])
    return env


def _entries(home: Path, kind: str) -> list[Path]:
    return sorted(p for p in (home / "opgen" / kind).rglob("*") if p.is_file())


def test_cached_cuda_sources_equal_a_fresh_render(cache_home: Path) -> None:
    functions = load_native_functions(CORPUS, root=ROOT)
    fresh = cuda_kernels.generate(functions, _uncached(ROOT))
    first = cuda_kernels.generate(functions, environment(ROOT))  # fills the cache
    assert _entries(cache_home, "render")
    second = cuda_kernels.generate(functions, environment(ROOT))  # served from it
    assert first == fresh and second == fresh


def test_changed_context_renders_again() -> None:
    op = gen_cuda.pointwise_ops(load_native_functions(CORPUS, root=ROOT))[0]
    render = cuda_kernels._renderer(environment(ROOT))
    before = render("cuda/pointwise.cu.j2", op=op, paths=gen_cuda.KERNEL_PATHS, index_types=gen_cuda.INDEX_BITS)
    changed = dataclasses.replace(op, expr="(a_self * 12345)")
    after = render("cuda/pointwise.cu.j2", op=changed, paths=gen_cuda.KERNEL_PATHS,
                   index_types=gen_cuda.INDEX_BITS)
    assert "(a_self * 12345)" in after and "(a_self * 12345)" not in before


def test_edited_template_renders_again(tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(ROOT / "templates", project / "templates")
    functions = load_native_functions(CORPUS, root=ROOT)
    before = cuda_kernels.generate(functions, environment(project))
    template = project / "templates" / "cuda" / "pointwise.cu.j2"
    template.write_text("// an edited template\n" + template.read_text())
    after = cuda_kernels.generate(functions, environment(project))
    op_path = gen_cuda.pointwise_ops(functions)[0].path
    assert after[op_path].startswith("// an edited template") and "edited" not in before[op_path]


@pytest.mark.parametrize("damage", ["garbage", "truncated", "other body", "empty"])
def test_damaged_render_entries_are_not_trusted(cache_home: Path, damage: str) -> None:
    functions = load_native_functions(CORPUS, root=ROOT)
    good = cuda_kernels.generate(functions, environment(ROOT))
    entries = _entries(cache_home, "render")
    for path in entries:
        raw = path.read_bytes()
        check, _, body = raw.partition(b"\n")
        path.write_bytes({"garbage": b"\xff\xfe not an entry",
                          "truncated": raw[: len(raw) // 2],
                          "other body": check + b"\n" + body.replace(b"__global__", b"__device__"),
                          "empty": b""}[damage])
    assert cuda_kernels.generate(functions, environment(ROOT)) == good
    assert all(disk_cache.DiskCache("render").get(p.name) is not None for p in entries)  # rewritten


def test_module_names_cache_follows_the_source(tmp_path: Path, cache_home: Path) -> None:
    module = tmp_path / "kernels.py"
    module.write_text("import os\n\ndef a(x):\n    return x\n\nclass B:\n    pass\n\nc = d = 1\ne: int = 2\n")
    def names() -> str:
        stat = module.stat()
        return kernel_targets._module_functions(module, stat.st_mtime_ns, stat.st_size)

    first = names()
    assert first == ("B:makes-it-a-class@6 a:3 c:assigns-it@9 d:assigns-it@9 e:assigns-it@10 "
                     "os:binds-it-with-an-import@1")
    for entry in _entries(cache_home, "names"):
        entry.write_bytes(b"0" * 64 + b"\nos a B c d")  # a body that does not match its digest
    kernel_targets._module_functions.cache_clear()
    assert names() == first
    module.write_text("def renamed(x):\n    return x\n")
    os.utime(module, ns=(1, 1))  # a different mtime, as an edit gives
    assert names() == "renamed:1"


def test_formula_helpers_cache_follows_the_source(tmp_path: Path, cache_home: Path) -> None:
    helpers = tmp_path / derivatives.HELPERS_MODULE
    helpers.parent.mkdir(parents=True)
    helpers.write_text("def one(x):\n    return x\n\ndef _private(x):\n    return x\n")
    assert derivatives.helper_names(tmp_path) == {"one"}
    for entry in _entries(cache_home, "names"):
        entry.write_bytes(entry.read_bytes().replace(b"one", b"two"))  # the body no longer matches its digest
    assert derivatives.helper_names(tmp_path) == {"one"}
    helpers.write_text("def one(x):\n    return x\n\ndef three(x):\n    return x\n")
    assert derivatives.helper_names(tmp_path) == {"one", "three"}


def test_unwritable_cache_still_generates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # cache_dir lies under a file: every write fails
    functions = load_native_functions(CORPUS, root=ROOT)
    with pytest.warns(verified_cache.CacheWarning, match="runs without the cache"):
        cached = cuda_kernels.generate(functions, environment(ROOT))
    assert cached == cuda_kernels.generate(functions, _uncached(ROOT))


def test_swapped_render_entries_do_not_swap_sources(cache_home: Path) -> None:
    """Two entries' files exchanged: each is another key's entry now, so both are misses, and no op's
    source is written under another's name."""
    functions = load_native_functions(CORPUS, root=ROOT)
    good = cuda_kernels.generate(functions, environment(ROOT))
    entries = _entries(cache_home, "render")
    assert len(entries) >= 2
    a, b = entries[0].read_bytes(), entries[1].read_bytes()
    entries[0].write_bytes(b)
    entries[1].write_bytes(a)
    assert cuda_kernels.generate(functions, environment(ROOT)) == good


def test_cuda_templates_read_only_their_context() -> None:
    """The render cache keys a CUDA template by its context; `inline` reads runtime sources, which the key
    does not cover, so no cached template may call it."""
    for template in (ROOT / "templates" / "cuda").rglob("*.j2"):
        assert "inline(" not in template.read_text(), template


def test_generate_twice_is_identical() -> None:
    assert gen.render_all(ROOT) == gen.render_all(ROOT)
