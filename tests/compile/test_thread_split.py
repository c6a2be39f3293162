"""The measured thread crossover of fused kernels (runtime/compile/thread_split.py, Note [Threads of fused
kernels]): measured once, cached beside the compiled kernels and read back only when the entry verifies."""

from __future__ import annotations

import pytest

from runtime import verified_cache
from runtime.compile import thread_split
from runtime.compile.cpp_build import cache_dir, find_compiler

pytestmark = pytest.mark.skipif(find_compiler() is None, reason="needs a C++ compiler")


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(thread_split, "_known", {})


def test_the_calibration_times_every_size_on_both_counts_and_derives_the_crossover() -> None:
    crossover, rows = thread_split.measure(2)
    assert [size for size, _, _ in rows] == list(thread_split.SIZES)
    assert all(one > 0 and many > 0 for _, one, many in rows)
    winning = [size for size, one, many in rows if many <= thread_split.WIN * one]
    if crossover is None:
        assert not rows or rows[-1][2] > thread_split.WIN * rows[-1][1]
    else:
        assert all(size in winning for size, _, _ in rows if size >= crossover)


def test_the_crossover_is_measured_once_and_then_read_from_the_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(thread_split, "measure", lambda n: (calls.append(n), (1 << 16, [(1 << 16, 2e-4, 1e-4)]))[1])
    assert thread_split.threshold(3) == 1 << 16
    assert thread_split.threshold(3) == 1 << 16
    assert calls == [3], "the second answer came from the cache entry"
    monkeypatch.setattr(thread_split, "measure", lambda n: (calls.append(n), (None, []))[1])
    assert thread_split.threshold(5) is None and calls == [3, 5]
    assert thread_split.threshold(5) is None and calls == [3, 5]


@pytest.mark.parametrize("body", [b"crossover lots\n", b"", b"\xff\xfe", b"crossover 12 13\n"])
def test_an_entry_that_does_not_parse_or_verify_is_measured_again(body: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(thread_split, "measure", lambda n: (calls.append(n), (4096, []))[1])
    root = verified_cache.user_cache_root()
    directory = cache_dir()
    name = thread_split._entry(2)
    verified_cache.write(directory, name, body, "compile", root=root)
    assert thread_split.threshold(2) == 4096 and calls == [2]
    # a file changed after it was written (the header no longer matches the body) is not believed either
    path = directory / name
    path.write_bytes(path.read_bytes().replace(b"4096", b"0001"))
    assert thread_split.threshold(2) == 4096 and calls == [2, 2]


def test_one_thread_never_calibrates_and_the_split_follows_the_crossover(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(thread_split, "measure", lambda n: pytest.fail("no calibration on one thread"))
    monkeypatch.setattr(thread_split, "kernel_threads", lambda: 1)
    assert thread_split.split_threads(1 << 30) == 1
    monkeypatch.setattr(thread_split, "measure", lambda n: (1 << 14, []))
    monkeypatch.setattr(thread_split, "kernel_threads", lambda: 4)
    assert thread_split.split_threads(1 << 13) == 1
    assert thread_split.split_threads(1 << 14) == 4
    assert thread_split.split_threads(100) == 1
    monkeypatch.setattr(thread_split, "kernel_threads", lambda: 2)
    monkeypatch.setattr(thread_split, "measure", lambda n: (None, []))
    assert thread_split.split_threads(1 << 30) == 1


def test_a_calibration_that_cannot_build_keeps_kernels_on_one_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> None:
        raise RuntimeError("the C++ compiler failed")

    monkeypatch.setattr(thread_split, "calibration_kernel", broken)
    monkeypatch.setattr(thread_split, "kernel_threads", lambda: 2)
    assert thread_split.split_threads(1 << 22) == 1
    assert thread_split._known == {2: None}
