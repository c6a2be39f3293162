"""G.utils.data: the package's module paths, datasets, samplers, collation, and DataLoader workers (real
processes: sharding, seeds, errors with the worker's traceback, persistent workers, shared-memory batches,
clean shutdown)."""

from __future__ import annotations

import collections
import importlib
import os

import numpy as np
import pytest
from generated.utils.data import (
    BatchSampler,
    ChainDataset,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    StackDataset,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    default_collate,
    default_convert,
    get_worker_info,
    random_split,
)

import generated as G


def test_pytorch_module_paths_import() -> None:
    for name in ("dataset", "dataloader", "sampler", "_utils.collate"):
        module = importlib.import_module(f"generated.utils.data.{name}")
        assert module is importlib.import_module(f"runtime.utils.data.{name}")
    from generated.utils.data.dataloader import DataLoader as DL
    from generated.utils.data.dataset import Dataset as DS
    assert DL is DataLoader and DS is Dataset


class Squares(Dataset):
    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> tuple:
        return G.tensor([float(i)]), i * i


class Stream(IterableDataset):
    """0..n-1, split between workers by id (the sharding get_worker_info exists for)."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(start, self.n, step))


class Failing(Dataset):
    def __len__(self) -> int:
        return 6

    def __getitem__(self, i: int):
        if i == 3:
            raise KeyError(f"no item {i}")
        return G.tensor([i])


class WorkerIds(Dataset):
    def __len__(self) -> int:
        return 8

    def __getitem__(self, i: int):
        info = get_worker_info()
        return G.tensor([info.id, info.num_workers, info.seed % 1000, os.getpid(), int(G.rand(1).item() * 1e6)])


def test_datasets_combine_and_split() -> None:
    a, b = Squares(3), Squares(2)
    cat = ConcatDataset([a, b])
    assert len(cat) == 5 and cat[3][1] == 0 and cat[-1][1] == 1
    assert len(a + b) == 5
    stack = StackDataset(x=a, y=Squares(3))
    assert set(stack[1]) == {"x", "y"} and len(stack) == 3
    with pytest.raises(ValueError):
        StackDataset(a, b)
    chain = ChainDataset([Stream(2), Stream(3)])
    assert list(chain) == [0, 1, 0, 1, 2]
    assert Subset(a, [2, 0])[0][1] == 4
    G.manual_seed(0)
    parts = random_split(Squares(10), [0.5, 0.3, 0.2])
    assert [len(p) for p in parts] == [5, 3, 2]
    assert sorted(i for p in parts for i in p.indices) == list(range(10))
    with pytest.raises(ValueError):
        random_split(Squares(10), [3, 3])


def test_samplers() -> None:
    assert list(SequentialSampler(range(4))) == [0, 1, 2, 3]
    g = G.Generator().manual_seed(1)
    perm = list(RandomSampler(range(6), generator=g))
    assert sorted(perm) == list(range(6))
    draws = list(RandomSampler(range(3), replacement=True, num_samples=50, generator=g))
    assert len(draws) == 50 and set(draws) <= {0, 1, 2} and len(set(draws)) == 3
    assert len(list(RandomSampler(range(4), num_samples=10))) == 10
    assert sorted(SubsetRandomSampler([5, 7, 9], generator=g)) == [5, 7, 9]
    w = list(WeightedRandomSampler([0.0, 1.0, 3.0], 4000, generator=g))
    counts = collections.Counter(w)
    assert counts[0] == 0 and 0.7 < counts[2] / 4000 < 0.8
    assert sorted(WeightedRandomSampler([1.0, 1.0, 1.0], 3, replacement=False, generator=g)) == [0, 1, 2]
    with pytest.raises(RuntimeError):
        WeightedRandomSampler([1.0, 0.0], 2, replacement=False)
    with pytest.raises(ValueError):
        RandomSampler(range(3), num_samples=0)
    assert list(BatchSampler(range(5), 2, drop_last=False)) == [[0, 1], [2, 3], [4]]
    assert len(BatchSampler(range(5), 2, drop_last=True)) == 2


def test_collate_and_convert() -> None:
    batch = default_collate([(np.ones(2), 1, 0.5, "a", {"k": True})] * 3)
    assert tuple(batch[0].shape) == (3, 2) and batch[1].dtype == G.int64 and batch[2].dtype == G.float64
    assert batch[3] == ["a", "a", "a"] and batch[4]["k"].dtype == G.bool
    Point = collections.namedtuple("Point", "x y")
    assert isinstance(default_collate([Point(1, 2), Point(3, 4)]), Point)
    converted = default_convert({"a": np.arange(3), "b": "s"})
    assert isinstance(converted["a"], G.Tensor) and converted["b"] == "s"


@pytest.mark.parametrize("workers", [0, 2])
def test_map_dataset_batches_in_order(workers: int) -> None:
    loader = DataLoader(Squares(7), batch_size=3, num_workers=workers)
    batches = list(loader)
    assert len(loader) == 3
    assert [b[1].tolist() for b in batches] == [[0, 1, 4], [9, 16, 25], [36]]
    assert batches[0][0].shape == (3, 1)


@pytest.mark.parametrize("workers", [0, 2, 3])
def test_iterable_dataset_sharded_by_worker_info(workers: int) -> None:
    loader = DataLoader(Stream(10), batch_size=4, num_workers=workers)
    items = [x for b in loader for x in b.tolist()]
    assert sorted(items) == list(range(10))  # each item once: the shards do not overlap
    with pytest.raises(TypeError):
        len(loader)  # an IterableDataset without __len__
    assert list(DataLoader(Stream(5), batch_size=None)) == [0, 1, 2, 3, 4]  # default_convert keeps ints


def test_worker_info_seeds_and_processes() -> None:
    inits = []
    rows = [r for b in DataLoader(WorkerIds(), batch_size=2, num_workers=2, worker_init_fn=inits.append)
            for r in b.tolist()]
    assert {int(r[0]) for r in rows} == {0, 1} and {int(r[1]) for r in rows} == {2}
    assert len({int(r[3]) for r in rows}) == 2 and os.getpid() not in {int(r[3]) for r in rows}
    by_worker = {int(r[0]): int(r[2]) for r in rows}
    assert (by_worker[1] - by_worker[0]) % 1000 == 1  # seed = base_seed + worker id
    assert get_worker_info() is None


def test_worker_error_is_reraised_with_the_worker_traceback() -> None:
    with pytest.raises(KeyError) as info:
        list(DataLoader(Failing(), batch_size=2, num_workers=2))
    text = str(info.value)
    assert "DataLoader worker process" in text and "no item 3" in text and "__getitem__" in text


def test_worker_init_error_and_dead_worker() -> None:
    def bad_init(worker_id: int) -> None:
        raise ValueError("init failed")
    with pytest.raises(ValueError, match="init failed"):
        list(DataLoader(Squares(4), batch_size=1, num_workers=1, worker_init_fn=bad_init))

    class Exits(Dataset):
        def __len__(self) -> int:
            return 2

        def __getitem__(self, i: int):
            os._exit(3)
    with pytest.raises(RuntimeError, match="exited unexpectedly"):
        list(DataLoader(Exits(), num_workers=1))


def test_timeout_raises() -> None:
    class Slow(Dataset):
        def __len__(self) -> int:
            return 1

        def __getitem__(self, i: int):
            import time
            time.sleep(2)
            return G.tensor([i])
    with pytest.raises(RuntimeError, match="timed out"):
        list(DataLoader(Slow(), num_workers=1, timeout=0.5))


def test_persistent_workers_keep_their_processes_and_shutdown_is_clean() -> None:
    loader = DataLoader(WorkerIds(), batch_size=4, num_workers=2, persistent_workers=True, prefetch_factor=1)
    pids = []
    for _ in range(3):
        pids.append({int(r[3]) for b in loader for r in b.tolist()})
    assert pids[0] == pids[1] == pids[2]
    it = loader._persistent_iter
    workers = list(it._workers)
    it.shutdown()
    assert all(not w.is_alive() for w in workers)
    assert all(w.exitcode == 0 for w in workers)  # joined, not terminated


def test_batches_come_back_through_shared_memory_without_leaks() -> None:
    ds = TensorDataset(G.arange(40.0).reshape(20, 2), G.arange(20))
    before = {f for f in os.listdir("/dev/shm") if f.startswith("opgen_dl_")} if os.path.isdir("/dev/shm") else set()
    loader = DataLoader(ds, batch_size=5, num_workers=2)
    first = next(iter(loader))  # the pass is abandoned after one batch
    assert first[0].tolist()[0] == [0.0, 1.0]
    del loader
    batches = list(DataLoader(ds, batch_size=5, num_workers=2, shuffle=True))
    assert sorted(x for b in batches for x in b[1].tolist()) == list(range(20))
    import gc
    gc.collect()
    if os.path.isdir("/dev/shm"):
        after = {f for f in os.listdir("/dev/shm") if f.startswith("opgen_dl_")}
        assert after <= before


def test_loader_argument_errors() -> None:
    with pytest.raises(ValueError):
        DataLoader(Squares(3), num_workers=0, prefetch_factor=2)
    with pytest.raises(ValueError):
        DataLoader(Squares(3), persistent_workers=True)
    with pytest.raises(ValueError):
        DataLoader(Stream(3), shuffle=True)
    with pytest.raises(ValueError):
        DataLoader(Squares(3), timeout=-1)
    DataLoader(Squares(3), pin_memory=True)  # accepted


def test_spawned_workers_load_the_same_batches() -> None:
    # a start method that pickles the dataset and imports opgen afresh in each worker
    ds = TensorDataset(G.arange(10.0).reshape(5, 2), G.arange(5))
    batches = [b[1].tolist() for b in DataLoader(ds, batch_size=2, num_workers=2, multiprocessing_context="spawn")]
    assert batches == [[0, 1], [2, 3], [4]]
