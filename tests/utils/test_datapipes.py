"""G.utils.data DataPipes: functional forms chain as PyTorch's (compared item by item with torch), the
single-iterator rule, fork/demux buffers, shuffles seeded as PyTorch's, DataLoader settings (shuffle,
per-pass seeds, sharding across workers), the decorators, and _DatasetKind's fetchers."""

from __future__ import annotations

import pickle
import warnings

import pytest
from generated.utils.data import (
    DataChunk,
    DataLoader,
    IterDataPipe,
    MapDataPipe,
    _DatasetKind,
    argument_validation,
    functional_datapipe,
    guaranteed_datapipes_determinism,
    non_deterministic,
    runtime_validation,
    runtime_validation_disabled,
)

import generated as G
from runtime.utils.data.datapipes.iter import IterableWrapper
from runtime.utils.data.datapipes.map import SequenceWrapper

torch = pytest.importorskip("torch")
from torch.utils.data.datapipes.iter import IterableWrapper as TIterableWrapper  # noqa: E402
from torch.utils.data.datapipes.map import SequenceWrapper as TSequenceWrapper  # noqa: E402


def _double(x):
    return 2 * x


def _add(x, y):
    return x + y


def _odd(x):
    return x % 2 == 1


def _mod3(x):
    return x % 3


def _plain(v):
    """Tensors as nested lists, everything else as is (to compare opgen's items with torch's)."""
    if hasattr(v, "tolist") and hasattr(v, "shape"):
        return ("tensor", v.tolist())
    if isinstance(v, (list, tuple)):
        return type(v).__name__, [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


# each chain is applied to opgen's IterableWrapper and to torch's; the items must agree
ITER_CHAINS = {
    "map": lambda w: w(range(7)).map(_double),
    "map_columns": lambda w: w([(1, 2), (3, 4)]).map(_double, input_col=1),
    "map_append": lambda w: w([(1, 2), (3, 4)]).map(_double, input_col=0, output_col=-1),
    "map_two_cols": lambda w: w([(1, 2, 9), (3, 4, 9)]).map(_add, input_col=(0, 1)),
    "map_dict": lambda w: w([{"a": 1}, {"a": 3}]).map(_double, input_col="a", output_col="b"),
    "filter": lambda w: w(range(9)).filter(_odd),
    "filter_col": lambda w: w([(1, "a"), (2, "b"), (3, "c")]).filter(_odd, input_col=0),
    "batch": lambda w: w(range(10)).batch(3),
    "batch_drop": lambda w: w(range(10)).batch(3, drop_last=True),
    "unbatch": lambda w: w(range(10)).batch(4).batch(2).unbatch(),
    "unbatch2": lambda w: w([[[1, 2], [3]], [[4]]]).unbatch(unbatch_level=2),
    "unbatch_all": lambda w: w([[[1, 2], [3]], [[4, [5]]]]).unbatch(unbatch_level=-1),
    "concat": lambda w: w(range(3)).concat(w("ab"), w([7])),
    "zip": lambda w: w(range(5)).zip(w("abc")),
    "mux": lambda w: w(range(5)).mux(w("abc"), w([10, 11, 12, 13])),
    "chain": lambda w: w(range(20)).filter(_odd).map(_double).batch(3).unbatch().batch(2, drop_last=True),
    "sharding_default": lambda w: w(range(10)).sharding_filter(),
    "shuffle_seeded": lambda w: w(range(30)).shuffle().set_seed(11),
    "shuffle_small_buffer": lambda w: w(range(30)).shuffle(buffer_size=4).set_seed(5),
    "shuffle_off": lambda w: w(range(10)).shuffle().set_shuffle(False),
    "groupby": lambda w: w(range(20)).groupby(_mod3, group_size=3),
    "groupby_key": lambda w: w(range(12)).groupby(_mod3, keep_key=True),
    "groupby_buffer": lambda w: w([0, 1, 1, 2, 1, 0, 2, 2, 2, 0]).groupby(_mod3, buffer_size=4, group_size=3,
                                                                      guaranteed_group_size=2, drop_remaining=True),
}


@pytest.mark.parametrize("name", sorted(ITER_CHAINS))
def test_iter_chain_agrees_with_torch(name: str) -> None:
    ours = list(ITER_CHAINS[name](IterableWrapper))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = list(ITER_CHAINS[name](TIterableWrapper))
    assert _plain(ours) == _plain(theirs)
    assert [type(x).__name__ for x in ours] == [type(x).__name__ for x in theirs]


@pytest.mark.parametrize("name", ["map", "batch", "batch_drop", "concat", "zip", "mux", "shuffle_off"])
def test_len_agrees_with_torch(name: str) -> None:
    assert len(ITER_CHAINS[name](IterableWrapper)) == len(ITER_CHAINS[name](TIterableWrapper))


def test_len_of_a_filter_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        len(IterableWrapper(range(3)).filter(_odd))


def test_collate_makes_tensors() -> None:
    ours = list(IterableWrapper([G.tensor([1.0, 2.0]), G.tensor([3.0, 4.0])]).batch(2).collate())
    theirs = list(TIterableWrapper([torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])]).batch(2).collate())
    assert _plain(ours) == _plain(theirs)


def test_map_datapipes_agree_with_torch() -> None:
    for f in (lambda w: w(range(7)).map(_double), lambda w: w(range(7)).batch(3),
              lambda w: w(range(7)).batch(3, drop_last=True), lambda w: w(range(3)).concat(w("ab")),
              lambda w: w(range(3)).zip(w("abcd")), lambda w: w(range(12)).shuffle().set_seed(3)):
        ours, theirs = f(SequenceWrapper), f(TSequenceWrapper)
        assert len(ours) == len(theirs)
        assert _plain(list(ours)) == _plain(list(theirs))
    with pytest.raises(IndexError):
        SequenceWrapper(range(7)).batch(3, drop_last=True)[2]


def test_fork_and_demux_agree_with_torch() -> None:
    a, b, c = IterableWrapper(range(6)).fork(3)
    ta, tb, tc = TIterableWrapper(range(6)).fork(3)
    assert list(zip(a, b, c, strict=True)) == list(zip(ta, tb, tc, strict=True))
    assert len(a) == 6
    one = IterableWrapper(range(3))
    assert one.fork(1) is one
    with pytest.raises(ValueError):
        IterableWrapper(range(3)).fork(0)
    evens, odds = IterableWrapper(range(9)).demux(2, _odd)
    t_evens, t_odds = TIterableWrapper(range(9)).demux(2, _odd)
    assert (list(evens), list(odds)) == (list(t_evens), list(t_odds))
    parts = IterableWrapper(range(10)).demux(3, _mod3)
    assert [list(p) for p in parts] == [list(p) for p in TIterableWrapper(range(10)).demux(3, _mod3)]


def test_fork_copies_and_buffer_limit() -> None:
    a, b = IterableWrapper([[1], [2]]).fork(2, copy="deep")
    first = next(iter(a))
    first.append(99)
    assert list(b) == [[1], [2]]
    with pytest.raises(ValueError):
        IterableWrapper(range(3)).fork(2, copy="sideways")
    a, b = IterableWrapper(range(10)).fork(2, buffer_size=3)
    with pytest.raises(BufferError):
        list(a)
    bad = IterableWrapper(range(4)).demux(2, lambda x: 5)
    with pytest.raises(ValueError):
        list(bad[0])
    none_dropped = IterableWrapper(range(6)).demux(2, lambda x: None if x == 0 else x % 2, drop_none=True)
    assert list(none_dropped[0]) == [2, 4]


def test_a_second_iterator_invalidates_the_first() -> None:
    dp = IterableWrapper(range(3))
    with pytest.raises(RuntimeError):
        list(dp.zip(dp))
    tdp = TIterableWrapper(range(3))
    with pytest.raises(RuntimeError):  # the rule is PyTorch's
        list(tdp.zip(tdp))
    it1 = iter(dp)
    assert next(it1) == 0
    it2 = iter(dp)
    assert next(it2) == 0
    with pytest.raises(RuntimeError):
        next(it1)
    assert list(dp) == [0, 1, 2]  # a fresh iterator works


def test_reset_runs_for_each_new_iterator() -> None:
    class Counting(IterDataPipe):
        def __init__(self) -> None:
            self.resets = 0

        def reset(self) -> None:
            self.resets += 1

        def __iter__(self):
            yield from range(self.resets)

    dp = Counting()
    assert list(dp) == [0]
    assert list(dp) == [0, 1]


def test_functional_datapipe_registers_a_method() -> None:
    @functional_datapipe("opgen_test_repeat")
    class Repeat(IterDataPipe):
        def __init__(self, source: IterDataPipe, times: int) -> None:
            self.source, self.times = source, times

        def __iter__(self):
            for x in self.source:
                for _ in range(self.times):
                    yield x

    assert list(IterableWrapper([1, 2]).opgen_test_repeat(2).map(_double)) == [2, 2, 4, 4]
    assert "opgen_test_repeat" in dir(IterableWrapper([]))
    with pytest.raises(Exception, match="already taken"):
        functional_datapipe("opgen_test_repeat")(Repeat)
    with pytest.raises(AttributeError):
        IterableWrapper([]).no_such_form()

    @functional_datapipe("opgen_test_negate")
    class Negate(MapDataPipe):
        def __init__(self, source: MapDataPipe) -> None:
            self.source = source

        def __getitem__(self, i: int) -> int:
            return -self.source[i]

        def __len__(self) -> int:
            return len(self.source)

    assert list(SequenceWrapper([1, 2]).opgen_test_negate()) == [-1, -2]
    assert not hasattr(IterableWrapper([]), "opgen_test_negate")


def test_determinism_guard() -> None:
    @non_deterministic
    class Random(IterDataPipe):
        def __iter__(self):
            yield 1

    @non_deterministic(lambda flag: flag)
    class Sometimes(IterDataPipe):
        def __init__(self, flag: bool) -> None:
            self.flag = flag

        def __iter__(self):
            yield self.flag

    assert list(Random()) == [1]
    with guaranteed_datapipes_determinism():
        with pytest.raises(TypeError):
            Random()
        assert list(Sometimes(False)) == [False]
        with pytest.raises(TypeError):
            Sometimes(True)
    assert list(Sometimes(True)) == [True]
    with pytest.raises(TypeError):
        non_deterministic(int)


def test_type_validation() -> None:
    class Ints(IterDataPipe[int]):
        def __init__(self, items):
            self.items = items

        @runtime_validation
        def __iter__(self):
            yield from self.items

    class Strs(IterDataPipe[str]):
        def __iter__(self):
            yield "a"

    assert list(Ints([1, 2])) == [1, 2]
    with pytest.raises(RuntimeError):
        list(Ints([1, "x"]))
    with runtime_validation_disabled():
        assert list(Ints([1, "x"])) == [1, "x"]

    @argument_validation
    def consume(dp: IterDataPipe[int]) -> list:
        return list(dp)

    assert consume(Ints([3])) == [3]
    with pytest.raises(TypeError):
        consume([1, 2])
    with pytest.raises(TypeError):
        consume(Strs())
    with pytest.raises(TypeError):
        runtime_validation(lambda self: iter(()))


def test_a_pipe_may_have_a_type_attribute() -> None:
    class Tagged(IterDataPipe[int]):
        def __init__(self) -> None:
            self.type = "train"

        def __iter__(self):
            yield 1

    assert Tagged().type == "train" and list(Tagged()) == [1]


def test_type_hints_of_containers() -> None:
    class Pairs(IterDataPipe[tuple[int, str]]):
        @runtime_validation
        def __iter__(self):
            yield (1, "a")
            yield (1, 2)

    it = iter(Pairs())
    assert next(it) == (1, "a")
    with pytest.raises(RuntimeError):
        next(it)


def test_datachunk() -> None:
    chunk = DataChunk([1, 2, 3])
    assert chunk == [1, 2, 3] and chunk.items == [1, 2, 3]
    assert chunk.as_str("  ") == "  [1, 2, 3]"
    assert list(chunk.raw_iterator()) == [1, 2, 3]


def test_dataloader_shuffle_settings_and_seeds() -> None:
    pipe = IterableWrapper(range(20)).shuffle()
    ordered = [b.tolist() for b in DataLoader(pipe, batch_size=5, shuffle=False)]
    assert ordered == [list(range(i, i + 5)) for i in range(0, 20, 5)]
    loader = DataLoader(IterableWrapper(range(20)).shuffle(), batch_size=5, shuffle=True,
                        generator=G.Generator().manual_seed(1))
    first = sum((b.tolist() for b in loader), [])
    second = sum((b.tolist() for b in loader), [])
    assert sorted(first) == list(range(20)) and first != list(range(20)) and first != second
    again = DataLoader(IterableWrapper(range(20)).shuffle(), batch_size=5, shuffle=True,
                       generator=G.Generator().manual_seed(1))
    assert sum((b.tolist() for b in again), []) == first
    with pytest.warns(UserWarning):
        added = DataLoader(IterableWrapper(range(20)), batch_size=None, shuffle=True)
    assert sorted(int(x) for x in added) == list(range(20))


@pytest.mark.parametrize("persistent", [False, True])
def test_dataloader_workers_shard_a_shuffled_pipe(persistent: bool) -> None:
    pipe = IterableWrapper(range(24)).shuffle().sharding_filter().map(_double)
    loader = DataLoader(pipe, batch_size=4, num_workers=2, shuffle=True, persistent_workers=persistent)
    for _ in range(2):
        items = sorted(sum((b.tolist() for b in loader), []))
        assert items == [2 * i for i in range(24)]  # every item once: the workers' shuffles agree


def test_workers_shard_like_torch() -> None:
    ours = [b.tolist() for b in DataLoader(IterableWrapper(range(10)).sharding_filter(), batch_size=3,
                                           num_workers=2)]
    theirs = [b.tolist() for b in torch.utils.data.DataLoader(TIterableWrapper(range(10)).sharding_filter(),
                                                              batch_size=3, num_workers=2)]
    assert ours == theirs


def test_sharding_groups() -> None:
    from runtime.utils.data.datapipes.iter.sharding import SHARDING_PRIORITIES
    dp = IterableWrapper(range(20)).sharding_filter()
    dp.apply_sharding(2, 1, SHARDING_PRIORITIES.DISTRIBUTED)
    dp.apply_sharding(3, 2, SHARDING_PRIORITIES.MULTIPROCESSING)
    tdp = TIterableWrapper(range(20)).sharding_filter()
    tdp.apply_sharding(2, 1, 2)
    tdp.apply_sharding(3, 2, 3)
    assert list(dp) == list(tdp) and len(dp) == len(tdp)
    with pytest.raises(RuntimeError):
        dp.apply_sharding(2, 0)
    with pytest.raises(ValueError):
        IterableWrapper(range(3)).sharding_filter().apply_sharding(2, 2)


def test_datapipes_pickle() -> None:
    pipe = IterableWrapper(range(10)).map(_double).filter(_odd).batch(3)
    restored = pickle.loads(pickle.dumps(pipe))
    assert list(restored) == list(pipe)


def test_dataset_kind_fetchers() -> None:
    assert (_DatasetKind.Map, _DatasetKind.Iterable) == (torch.utils.data._DatasetKind.Map,
                                                         torch.utils.data._DatasetKind.Iterable)
    fetcher = _DatasetKind.create_fetcher(_DatasetKind.Map, [10, 11, 12], True, list, False)
    assert fetcher.fetch([2, 0]) == [12, 10]
    fetcher = _DatasetKind.create_fetcher(_DatasetKind.Iterable, IterableWrapper(range(5)), True, list, True)
    assert fetcher.fetch([None, None]) == [0, 1] and fetcher.fetch([None, None]) == [2, 3]
    with pytest.raises(StopIteration):
        fetcher.fetch([None, None])


def test_dataloader_over_a_map_datapipe() -> None:
    pipe = SequenceWrapper(list(range(10))).map(_double)
    tpipe = TSequenceWrapper(list(range(10))).map(_double)
    for workers in (0, 2):
        ours = [b.tolist() for b in DataLoader(pipe, batch_size=4, num_workers=workers)]
        theirs = [b.tolist() for b in torch.utils.data.DataLoader(tpipe, batch_size=4, num_workers=workers)]
        assert ours == theirs
    shuffled = sum((b.tolist() for b in DataLoader(pipe, batch_size=4, shuffle=True)), [])
    assert sorted(shuffled) == [2 * i for i in range(10)]


def test_file_pipes_agree_with_torch(tmp_path) -> None:
    from torch.utils.data.datapipes.iter import FileLister as TFileLister

    from runtime.utils.data.datapipes.iter import FileLister
    (tmp_path / "b").mkdir()
    for name, text in {"z.txt": "last\nline", "a.txt": "first", "c.csv": "1,2", "b/inner.txt": "deep"}.items():
        (tmp_path / name).write_text(text)
    for kw in ({}, {"masks": "*.txt"}, {"masks": ["*.csv", "i*"], "recursive": True}):
        assert list(FileLister(str(tmp_path), **kw)) == list(TFileLister(str(tmp_path), **kw))
    ours = list(FileLister(str(tmp_path), "*.txt").open_files().read_from_stream())
    theirs = list(TFileLister(str(tmp_path), "*.txt").open_files().read_from_stream())
    assert ours == theirs
    chunks = list(FileLister(str(tmp_path), "z.txt").open_files(mode="b").read_from_stream(chunk=3))
    assert [c for _, c in chunks] == [b"las", b"t\nl", b"ine"]
    lines = [list(stream) for _, stream in IterableWrapper([str(tmp_path / "z.txt")]).open_files()]
    assert lines == [["last\n", "line"]]
    with pytest.raises(ValueError):
        IterableWrapper([]).open_files(mode="w")
    with pytest.raises(TypeError):
        len(FileLister(str(tmp_path)))
