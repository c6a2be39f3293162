"""G.save / G.load: PyTorch's checkpoint format, weights-only loading, atomic saves, map_location, old .npz."""

from __future__ import annotations

import io
import json
import os
import pickle
import stat
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import generated as G
from generated import nn
from runtime.nn import checkpoint_archive, checkpoint_pickle, serialization

CPU_DTYPES = [G.uint8, G.int8, G.int16, G.int32, G.int64, G.float16, G.float32, G.float64, G.bool]


def _round_trip(obj, **load_args):
    buf = io.BytesIO()
    G.save(obj, buf)
    buf.seek(0)
    return G.load(buf, **load_args)


def _same(a, b) -> None:
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a.numpy(), b.numpy())


# -- round trips -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("key", ["allow_pickle", "file", "args", "kwds", "__opgen__", "", "a/b", "0"])
def test_every_key_round_trips(tmp_path, key) -> None:
    t = G.arange(6.0).reshape(2, 3)
    path = tmp_path / "ck.pt"
    G.save({key: t, "other": 1}, path)
    back = G.load(path)
    assert list(back) == [key, "other"]
    _same(back[key], t)


@pytest.mark.parametrize("dtype", CPU_DTYPES, ids=str)
def test_dtypes_and_layouts_round_trip(dtype) -> None:
    base = G.arange(24).reshape(2, 3, 4).to(dtype)
    cases = {"contig": base, "t": base.transpose(0, 2), "slice": base[:, 1:, ::2], "0d": base[1, 2, 3],
             "empty": G.zeros(0, 3, dtype=dtype), "flip": G.flip(base, [1])}
    back = _round_trip(cases)
    for name, t in cases.items():
        _same(back[name], t)
        assert back[name].stride() == t.stride() or name in ("flip", "empty"), name


def test_views_load_sharing_memory() -> None:
    x = G.arange(12.0).reshape(3, 4)
    back = _round_trip([x, x[:, 1], x.t()])
    back[0][0, 1] = 100.0
    assert back[1][0].item() == 100.0 and back[2][1, 0].item() == 100.0


def test_nested_containers_and_plain_values() -> None:
    obj = {"a": [G.tensor([1, 2]), {"b": 3.5, "c": None}], "d": (1, "x"), "e": {1, 2}, "f": b"\x00\xff",
           "g": G.float16, "h": G.device("cpu"), "i": G.Size([2, 3]), "j": OrderedDict(z=1, y=2), "k": 2 + 1j,
           "l": frozenset({3}), "m": True}
    back = _round_trip(obj)
    assert back["a"][0].tolist() == [1, 2] and back["a"][0].dtype == G.int64
    assert back["a"][1] == {"b": 3.5, "c": None} and back["d"] == (1, "x") and back["e"] == {1, 2}
    assert back["f"] == b"\x00\xff" and back["g"] is G.float16 and back["h"] == G.device("cpu")
    assert back["i"] == (2, 3) and isinstance(back["i"], G.Size) and list(back["j"]) == ["z", "y"]
    assert back["k"] == 2 + 1j and back["l"] == frozenset({3}) and back["m"] is True


def test_same_tensor_twice_is_one_object() -> None:
    t = G.ones(3)
    back = _round_trip({"a": t, "b": t})
    assert back["a"] is back["b"]


def test_requires_grad_and_parameters() -> None:
    leaf = G.ones(2, requires_grad=True)
    p = nn.Parameter(G.zeros(3))
    back = _round_trip({"leaf": leaf, "p": p, "frozen": nn.Parameter(G.ones(1), requires_grad=False)})
    assert back["leaf"].requires_grad and back["leaf"].is_leaf
    assert isinstance(back["p"], nn.Parameter) and back["p"].requires_grad
    assert isinstance(back["frozen"], nn.Parameter) and not back["frozen"].requires_grad


def test_whole_module_and_optimizer_state(tmp_path) -> None:
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    opt = G.optim.Adam(model.parameters(), lr=0.1)
    model(G.ones(5, 4)).sum().backward()
    opt.step()
    path = tmp_path / "all.pt"
    G.save({"model": model, "opt": opt.state_dict(), "epoch": 3}, path)
    with pytest.raises(pickle.UnpicklingError, match="Sequential"):  # a whole module is code: not by default
        G.load(path)
    back = G.load(path, weights_only=False)
    x = G.randn(2, 4)
    _same(back["model"](x).detach(), model(x).detach())
    assert back["epoch"] == 3
    state = G.load(path, weights_only=False)["opt"]
    opt2 = G.optim.Adam(back["model"].parameters(), lr=0.1)
    opt2.load_state_dict(state)
    _same(opt2.state_dict()["state"][0]["exp_avg"], opt.state_dict()["state"][0]["exp_avg"])
    # the optimizer's state alone is weights only
    G.save(opt.state_dict(), path)
    assert G.load(path)["param_groups"][0]["lr"] == 0.1


def test_file_objects_and_unseekable_streams(tmp_path) -> None:
    t = G.arange(5)
    with open(tmp_path / "f.pt", "wb") as fh:
        G.save(t, fh)

    class Stream(io.RawIOBase):  # readable, not seekable
        def __init__(self, data: bytes) -> None:
            self.inner = io.BytesIO(data)

        def readable(self) -> bool:
            return True

        def readinto(self, b):  # type: ignore[no-untyped-def]
            return self.inner.readinto(b)

    data = (tmp_path / "f.pt").read_bytes()
    _same(G.load(Stream(data)), t)
    with open(tmp_path / "f.pt", "rb") as fh:
        _same(G.load(fh), t)


def test_storage_records_are_aligned(tmp_path) -> None:
    G.save({"a": G.ones(3, dtype=G.float64), "b": G.ones(7, dtype=G.int8)}, tmp_path / "x.pt")
    with zipfile.ZipFile(tmp_path / "x.pt") as zf:
        for info in zf.infolist():
            assert (info.header_offset + 30 + len(info.filename) + len(info.extra)) % 64 == 0, info.filename
            assert info.compress_type == zipfile.ZIP_STORED


def test_public_namespace() -> None:
    import generated.serialization as S

    assert S is G.serialization and S.save is G.save and S.load is G.load
    for name in ("add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals", "DEFAULT_PROTOCOL"):
        assert hasattr(S, name)


# -- atomic saves -------------------------------------------------------------------------------------------

def _leftovers(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_failed_save_keeps_the_old_file(tmp_path) -> None:
    path = tmp_path / "ck.pt"
    G.save({"w": G.ones(3)}, path)
    before = path.read_bytes()
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        G.save({"w": G.zeros(3), "f": lambda: 0}, path)  # fails while pickling
    assert path.read_bytes() == before and _leftovers(tmp_path) == []


def test_save_interrupted_while_writing_keeps_the_old_file(tmp_path, monkeypatch) -> None:
    path = tmp_path / "ck.pt"
    G.save({"w": G.ones(3)}, path)
    before = path.read_bytes()

    def broken(fh, pickled, storages):  # type: ignore[no-untyped-def]
        fh.write(b"PK half a file")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(serialization, "write_archive", broken)
    with pytest.raises(OSError, match="No space"):
        G.save({"w": G.zeros(3)}, path)
    assert path.read_bytes() == before and _leftovers(tmp_path) == []
    _same(G.load(path)["w"], G.ones(3))


def test_save_fsyncs_before_rename(tmp_path, monkeypatch) -> None:
    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: (events.append("fsync"), real_fsync(fd))[1])
    monkeypatch.setattr(os, "replace", lambda a, b: (events.append("replace"), real_replace(a, b))[1])
    G.save(G.ones(1), tmp_path / "x.pt")
    assert events[:2] == ["fsync", "replace"]


def test_save_keeps_mode_and_follows_symlinks(tmp_path) -> None:
    real = tmp_path / "real.pt"
    G.save(G.ones(1), real)
    os.chmod(real, 0o640)
    link = tmp_path / "link.pt"
    link.symlink_to(real)
    G.save(G.zeros(2), link)
    assert link.is_symlink() and stat.S_IMODE(os.stat(real).st_mode) == 0o640
    _same(G.load(real), G.zeros(2))


def test_new_file_gets_the_mode_open_would_give(tmp_path) -> None:
    (tmp_path / "plain").write_bytes(b"")
    G.save(G.ones(1), tmp_path / "new.pt")
    assert stat.S_IMODE(os.stat(tmp_path / "new.pt").st_mode) == stat.S_IMODE(os.stat(tmp_path / "plain").st_mode)


def test_save_to_a_folder_is_refused_and_writes_nothing(tmp_path) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(IsADirectoryError):
        G.save(G.ones(1), tmp_path / "d")
    assert _leftovers(tmp_path) == [] and list((tmp_path / "d").iterdir()) == []


def test_save_to_missing_folder_names_the_path(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="missing"):
        G.save(G.ones(1), tmp_path / "missing" / "x.pt")


# -- weights_only ---------------------------------------------------------------------------------------------

class _Evil:
    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (os.system, ("touch PWNED",))


def _archive_of(pickled: bytes, storages=()) -> bytes:  # type: ignore[no-untyped-def]
    buf = io.BytesIO()
    checkpoint_archive.write_archive(buf, pickled, list(storages))
    return buf.getvalue()


def test_malicious_pickle_is_refused(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "evil.pt"
    path.write_bytes(_archive_of(pickle.dumps({"w": _Evil()}, protocol=2)))
    with pytest.raises(pickle.UnpicklingError, match=r"evil\.pt.*(posix|os|nt)\.system"):
        G.load(path)
    assert not (tmp_path / "PWNED").exists()
    with pytest.raises(pickle.UnpicklingError, match="system"):
        G.load(path, weights_only=True)
    assert not (tmp_path / "PWNED").exists()


@pytest.mark.parametrize("payload", [
    pickle.dumps(eval, protocol=2), pickle.dumps(getattr, protocol=4), pickle.dumps(np.ones, protocol=2),
    b"cbuiltins\nexec\n(S'import os'\ntR.", b"\x80\x02cos\nsystem\nq\x00.",
])
def test_other_globals_are_refused(payload) -> None:
    with pytest.raises(pickle.UnpicklingError):
        G.load(io.BytesIO(_archive_of(payload)))


class Config:
    def __init__(self, depth: int) -> None:
        self.depth = depth


def test_safe_globals_allow_listed_classes() -> None:
    data = io.BytesIO()
    G.save({"cfg": Config(3), "w": G.ones(2)}, data)
    with pytest.raises(pickle.UnpicklingError, match="Config"):
        G.load(io.BytesIO(data.getvalue()))
    with G.serialization.safe_globals([Config]):
        assert G.load(io.BytesIO(data.getvalue()))["cfg"].depth == 3
    assert Config not in G.serialization.get_safe_globals()
    G.serialization.add_safe_globals([Config])
    try:
        assert Config in G.serialization.get_safe_globals()
        assert G.load(io.BytesIO(data.getvalue()))["cfg"].depth == 3
    finally:
        G.serialization.clear_safe_globals()
    with pytest.raises(pickle.UnpicklingError):
        G.load(io.BytesIO(data.getvalue()))


def test_unsafe_globals_are_listed_without_loading(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "mixed.pt"
    G.save({"cfg": Config(1), "w": G.ones(2), "m": nn.Linear(2, 2)}, path)
    found = G.serialization.get_unsafe_globals_in_checkpoint(path)
    assert f"{Config.__module__}.Config" in found and "runtime.nn.layers.Linear" in found
    assert not any(name.startswith(("torch.", "collections.")) for name in found)
    evil = tmp_path / "evil.pt"
    evil.write_bytes(_archive_of(pickle.dumps(_Evil(), protocol=4)))  # protocol 4: STACK_GLOBAL
    assert [n.rsplit(".", 1)[1] for n in G.serialization.get_unsafe_globals_in_checkpoint(evil)] == ["system"]
    assert not (tmp_path / "PWNED").exists()
    assert G.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(_archive_of(pickle.dumps([1], 2)))) == []


def _pickled_tensor(offset, size, stride, numel=4, dtype_name="FloatStorage"):  # type: ignore[no-untyped-def]
    """A data.pkl of one tensor with the given geometry, written opcode by opcode."""
    class Pickler(checkpoint_pickle.CheckpointPickler):
        def reducer_override(self, obj):  # type: ignore[no-untyped-def]
            if obj == "TENSOR":
                rec = ("storage", self._name("torch", dtype_name), "0", "cpu", numel)
                return (self._name("torch._utils", "_rebuild_tensor_v2"), (_Pid(rec), offset, size, stride, False,
                                                                            OrderedDict()))
            return NotImplemented

        def persistent_id(self, obj):  # type: ignore[no-untyped-def]
            return obj.rec if isinstance(obj, _Pid) else None

    class _Pid:
        def __init__(self, rec) -> None:  # type: ignore[no-untyped-def]
            self.rec = rec

    buf = io.BytesIO()
    Pickler(buf).dump(_Wrapper("TENSOR"))
    return buf.getvalue()


class _Wrapper(str):
    pass


@pytest.mark.parametrize("offset,size,stride", [
    (0, (5,), (1,)), (3, (2,), (1,)), (0, (2, 2), (3, 1)), (-1, (1,), (1,)), (0, (2,), (-1,)), (0, (2,), (1, 1)),
    ("0", (1,), (1,)),
])
def test_crafted_geometry_outside_the_storage_is_refused(offset, size, stride) -> None:
    data = _archive_of(_pickled_tensor(offset, size, stride), [("0", memoryview(bytes(16)))])
    with pytest.raises(serialization.CheckpointError, match="<BytesIO>"):
        G.load(io.BytesIO(data))


def test_crafted_geometry_inside_the_storage_loads() -> None:
    data = _archive_of(_pickled_tensor(1, (3,), (1,)), [("0", memoryview(np.arange(4, dtype=np.float32).tobytes()))])
    assert G.load(io.BytesIO(data)).tolist() == [1.0, 2.0, 3.0]


def test_storage_record_of_the_wrong_size_is_refused() -> None:
    data = _archive_of(_pickled_tensor(0, (4,), (1,), numel=4), [("0", memoryview(bytes(12)))])
    with pytest.raises(serialization.CheckpointError, match="12 bytes where 16"):
        G.load(io.BytesIO(data))


# -- corrupted files -------------------------------------------------------------------------------------------

def test_truncated_and_corrupted_files_name_the_file(tmp_path) -> None:
    path = tmp_path / "ck.pt"
    G.save({"w": G.arange(100.0)}, path)
    data = path.read_bytes()
    cases = {"empty": b"", "half": data[: len(data) // 2], "garbage": os.urandom(200), "text": b"hello\n"}
    # a flipped byte inside the storage's record: its CRC no longer matches
    record = zipfile.ZipFile(path).getinfo("archive/data/0")
    start = record.header_offset + 30 + len(record.filename) + len(record.extra)
    cases["flipped"] = data[:start + 8] + bytes([data[start + 8] ^ 0xFF]) + data[start + 9:]
    # a data.pkl cut short
    cases["short_pickle"] = _archive_of(zipfile.ZipFile(path).read("archive/data.pkl")[:-5],
                                        [("0", memoryview(zipfile.ZipFile(path).read("archive/data/0")))])
    for name, content in cases.items():
        bad = tmp_path / f"{name}.pt"
        bad.write_bytes(content)
        with pytest.raises(serialization.CheckpointError, match=f"{name}.pt"):
            G.load(bad)


def test_missing_file_is_file_not_found(tmp_path) -> None:
    with pytest.raises(FileNotFoundError):
        G.load(tmp_path / "nope.pt")


# -- map_location ----------------------------------------------------------------------------------------------

@pytest.fixture
def cuda_checkpoint(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    """A checkpoint whose storages say they were saved on cuda:0 (written on this CPU machine)."""
    monkeypatch.setattr(checkpoint_pickle, "_location", lambda device: "cuda:0")
    path = tmp_path / "gpu.pt"
    G.save({"w": G.arange(4.0)}, path)
    monkeypatch.undo()
    return path


def test_map_location_forms(cuda_checkpoint, monkeypatch) -> None:
    seen = []

    def to_cpu(storage, location):  # type: ignore[no-untyped-def]
        seen.append((storage.dtype, storage.shape, location))
        return storage

    for where in ("cpu", G.device("cpu"), {"cuda:0": "cpu"}, to_cpu, lambda s, loc: s.to("cpu")):
        w = G.load(cuda_checkpoint, map_location=where)["w"]
        assert w.device == G.device("cpu") and w.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert seen == [(G.uint8, (16,), "cuda:0")]
    from runtime import cuda
    monkeypatch.setattr(cuda, "is_available", lambda: False)
    for where in (None, {"cuda:1": "cpu"}, lambda s, loc: None):
        with pytest.raises(RuntimeError, match="map_location"):
            G.load(cuda_checkpoint, map_location=where)
    with pytest.raises(TypeError, match="map_location"):
        G.load(cuda_checkpoint, map_location=3.5)


@pytest.mark.cuda
def test_cuda_tensors_save_and_load(tmp_path) -> None:
    x = G.arange(6.0, device="cuda").reshape(2, 3)
    G.save({"x": x, "v": x[:, 1]}, tmp_path / "c.pt")
    back = G.load(tmp_path / "c.pt")
    assert back["x"].device.type == "cuda" and back["x"].cpu().tolist() == x.cpu().tolist()
    assert back["v"].cpu().tolist() == [1.0, 4.0]
    cpu = G.load(tmp_path / "c.pt", map_location="cpu")
    assert cpu["x"].device == G.device("cpu") and cpu["x"].tolist() == x.cpu().tolist()
    on_gpu = G.load(tmp_path / "c.pt", map_location=lambda s, loc: s.cuda())
    assert on_gpu["v"].device.type == "cuda"
    G.save(G.ones(2, dtype=G.bfloat16, device="cuda"), tmp_path / "bf.pt")
    assert G.load(tmp_path / "bf.pt").float().cpu().tolist() == [1.0, 1.0]
    with pytest.raises(serialization.CheckpointError, match="bfloat16"):
        G.load(tmp_path / "bf.pt", map_location="cpu")


# -- the .npz files of opgen's first format --------------------------------------------------------------------

def test_old_npz_checkpoints_still_load(tmp_path) -> None:
    tree = {"__dict__": [["w", {"__tensor__": "w", "dtype": "float32"}],
                         ["n", {"__tensor__": "n", "dtype": "int64"}],
                         ["nested", {"__list__": [1, {"__tuple__": ["a", None]}]}]]}
    meta = json.dumps({"format": "opgen", "version": 1, "tree": tree})
    path = tmp_path / "old.npz"
    with open(path, "wb") as fh:
        np.savez(fh, w=np.ones((2, 2), np.float32), n=np.array(7), __opgen__=np.array(meta))
    back = G.load(path)
    assert list(back) == ["w", "n", "nested"] and back["w"].tolist() == [[1.0, 1.0], [1.0, 1.0]]
    assert back["n"].dtype == G.int64 and back["n"].shape == () and back["nested"] == [1, ("a", None)]
    np.savez(tmp_path / "plain.npz", a=np.arange(3))
    assert G.load(tmp_path / "plain.npz")["a"].tolist() == [0, 1, 2]


# -- PyTorch, both ways --------------------------------------------------------------------------------------------

def test_pytorch_state_dict_loads_in_opgen(tmp_path) -> None:
    torch = pytest.importorskip("torch")
    net = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3), torch.nn.Linear(3, 2))
    path = tmp_path / "torch.pt"
    torch.save(net.state_dict(), path)
    mine = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3), nn.Linear(3, 2))
    sd = G.load(path)
    mine.load_state_dict(sd)
    for (k, a), (k2, b) in zip(net.state_dict().items(), mine.state_dict().items(), strict=True):
        assert k == k2 and str(a.dtype).removeprefix("torch.") == b.dtype.name
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    net.eval()
    mine.eval()
    np.testing.assert_allclose(mine(G.tensor(x)).detach().numpy(), net(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)


def test_pytorch_tensors_of_every_dtype_and_layout_load(tmp_path) -> None:
    torch = pytest.importorskip("torch")
    base = torch.arange(24).reshape(2, 3, 4)
    obj = {}
    for dtype in CPU_DTYPES:
        t = base.to(getattr(torch, dtype.name))
        obj[dtype.name] = [t, t.transpose(0, 2), t[:, 1:, ::2], t[1, 2, 3]]
    obj["param"] = torch.nn.Parameter(torch.ones(2))
    obj["meta"] = [torch.float16, torch.device("cpu"), torch.Size([1, 2]), b"xy"]
    torch.save(obj, tmp_path / "t.pt")
    back = G.load(tmp_path / "t.pt")
    for dtype in CPU_DTYPES:
        for a, b in zip(obj[dtype.name], back[dtype.name], strict=True):
            assert b.dtype is dtype and tuple(b.shape) == tuple(a.shape) and b.stride() == a.stride()
            np.testing.assert_array_equal(b.numpy(), a.numpy())
    back[G.float32.name][0][0, 0, 1] = 50.0  # views of one storage share it, as in PyTorch
    assert back[G.float32.name][1][1, 0, 0].item() == 50.0
    assert isinstance(back["param"], nn.Parameter) and back["param"].requires_grad
    assert back["meta"] == [G.float16, G.device("cpu"), (1, 2), b"xy"]


def test_pytorch_dtypes_opgen_lacks_are_named(tmp_path) -> None:
    torch = pytest.importorskip("torch")
    torch.save({"c": torch.ones(2, dtype=torch.complex64)}, tmp_path / "c.pt")
    with pytest.raises(serialization.CheckpointError, match="ComplexFloatStorage"):
        G.load(tmp_path / "c.pt")
    torch.save({"u": torch.ones(2, dtype=torch.uint16)}, tmp_path / "u.pt")
    with pytest.raises(serialization.CheckpointError, match="uint16"):
        G.load(tmp_path / "u.pt")
    torch.save(torch.ones(2, dtype=torch.bfloat16), tmp_path / "bf.pt")
    with pytest.raises(serialization.CheckpointError, match="bfloat16.*map_location"):
        G.load(tmp_path / "bf.pt")


def test_opgen_checkpoints_load_in_pytorch_weights_only(tmp_path) -> None:
    torch = pytest.importorskip("torch")
    mine = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3), nn.Linear(3, 2))
    mine(G.randn(6, 4))  # running stats move
    path = tmp_path / "opgen.pt"
    G.save(mine.state_dict(), path)
    net = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3), torch.nn.Linear(3, 2))
    net.load_state_dict(torch.load(path, weights_only=True))
    for (k, a), (k2, b) in zip(net.state_dict().items(), mine.state_dict().items(), strict=True):
        assert k == k2
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    base = G.arange(24).reshape(2, 3, 4)
    typed = {d: base.to(d) for d in CPU_DTYPES}
    obj = {d.name: [t, t.transpose(0, 2), t[:, 1:, ::2], t[1, 2, 3]] for d, t in typed.items()}
    obj["extra"] = [G.float64, G.device("cpu"), G.Size([2]), nn.Parameter(G.ones(2)), G.zeros(0, 2), b"q"]
    G.save(obj, path)
    back = torch.load(path, weights_only=True)
    for d in CPU_DTYPES:
        for a, b in zip(obj[d.name], back[d.name], strict=True):
            assert str(b.dtype) == f"torch.{d.name}" and b.stride() == a.stride()
            np.testing.assert_array_equal(b.numpy(), a.numpy())
    assert back["extra"][:3] == [torch.float64, torch.device("cpu"), torch.Size([2])]
    assert isinstance(back["extra"][3], torch.nn.Parameter) and back["extra"][4].shape == (0, 2)
    assert back["extra"][5] == b"q"
    # storages shared by views stay shared in PyTorch too
    back["float32"][0][0, 0, 1] = 50.0
    assert back["float32"][1][1, 0, 0].item() == 50.0
