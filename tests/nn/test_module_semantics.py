"""nn.Module semantics programs rely on: reassignment keeps positions, state-dict hooks and
_load_from_state_dict, non-persistent buffers, dtype moves, traversal helpers, containers, the
torch.nn.modules import paths, and assigning a value with leading size-1 dims into a tensor row."""

from __future__ import annotations

import copy
import importlib
import io
from collections import OrderedDict

import numpy as np
import pytest

import generated as G


class Net(G.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = G.nn.Conv2d(1, 2, 3)
        self.bn = G.nn.BatchNorm2d(2)
        self.fc = G.nn.Linear(8, 3)


def test_reassigning_a_child_keeps_its_position() -> None:
    net = Net()
    net.conv = G.nn.Conv2d(1, 2, 3)            # replace the first child
    assert [n for n, _ in net.named_children()] == ["conv", "bn", "fc"]
    trunk = G.nn.Sequential(*list(net.children())[:-1])
    assert [type(m).__name__ for m in trunk] == ["Conv2d", "BatchNorm2d"]
    net.fc.weight = G.nn.Parameter(G.zeros(3, 8))
    assert [n for n, _ in net.fc.named_parameters()] == ["weight", "bias"]
    keys = list(net.state_dict())
    assert keys.index("conv.weight") == 0 and keys.index("fc.weight") < keys.index("fc.bias")


def test_reassigning_across_kinds_moves_the_name() -> None:
    m = G.nn.Module()
    m.register_buffer("a", G.zeros(1), persistent=False)
    m.a = G.nn.Parameter(G.ones(1))
    assert "a" in m._parameters and "a" not in m._buffers and list(m.state_dict()) == ["a"]


def test_non_persistent_buffers_stay_out_of_the_state_dict() -> None:
    m = G.nn.Linear(2, 2)
    m.register_buffer("scratch", G.ones(2), persistent=False)
    m.register_buffer("kept", G.ones(2))
    assert "scratch" not in m.state_dict() and "kept" in m.state_dict()
    assert dict(m.named_buffers())["scratch"] is m.scratch
    m.load_state_dict(m.state_dict())  # a non-persistent buffer is not expected back


def test_state_dict_hooks_and_metadata() -> None:
    m = G.nn.Sequential(G.nn.Linear(2, 2))
    seen = []
    m[0].register_state_dict_pre_hook(lambda mod, prefix, keep_vars: seen.append(prefix))

    def rename(mod, sd, prefix, local_metadata):
        sd[prefix + "renamed"] = sd.pop(prefix + "bias")
    handle = m[0]._register_state_dict_hook(rename)
    sd = m.state_dict()
    assert seen == ["0."] and "0.renamed" in sd and sd._metadata["0"]["version"] == 1
    handle.remove()
    assert "0.bias" in m.state_dict()


def test_load_state_dict_pre_and_post_hooks() -> None:
    m = G.nn.Linear(2, 2)

    def upgrade(module, sd, prefix, *rest):
        if prefix + "b" in sd:
            sd[prefix + "bias"] = sd.pop(prefix + "b")
    m.register_load_state_dict_pre_hook(upgrade)
    seen = []
    m.register_load_state_dict_post_hook(lambda module, keys: seen.append(list(keys.missing_keys)))
    m.load_state_dict({"weight": G.ones(2, 2), "b": G.full((2,), 3.0)})
    assert m.bias.tolist() == [3.0, 3.0] and seen == [[]]


def test_load_from_state_dict_override() -> None:
    class Old(G.nn.Linear):
        def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing, unexpected, errors):
            key = prefix + "w"
            if key in state_dict:
                state_dict[prefix + "weight"] = state_dict.pop(key)
            super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing, unexpected, errors)
    m = G.nn.Sequential(Old(2, 1))
    m.load_state_dict({"0.w": G.ones(1, 2), "0.bias": G.zeros(1)})
    assert m[0].weight.tolist() == [[1.0, 1.0]]


def test_failed_load_changes_nothing() -> None:
    m = G.nn.Sequential(G.nn.Linear(2, 2), G.nn.Linear(2, 3))
    before = {k: v.clone() for k, v in m.state_dict().items()}
    bad = {"0.weight": G.ones(2, 2), "0.bias": G.ones(2), "1.weight": G.ones(2, 2), "1.bias": G.ones(3)}
    with pytest.raises(RuntimeError, match="size mismatch for 1.weight"):
        m.load_state_dict(bad)
    for k, v in m.state_dict().items():
        assert v.tolist() == before[k].tolist()
    result = m.load_state_dict({"0.weight": G.ones(2, 2), "extra": G.ones(1)}, strict=False)
    assert result.missing_keys == ["0.bias", "1.weight", "1.bias"] and result.unexpected_keys == ["extra"]
    assert m[0].weight.tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_load_state_dict_assign() -> None:
    m = G.nn.Linear(2, 1)
    w = G.full((1, 2), 5.0)
    m.load_state_dict({"weight": w, "bias": G.zeros(1)}, assign=True)
    assert isinstance(m.weight, G.nn.Parameter) and m.weight.tolist() == [[5.0, 5.0]]


def test_extra_state_round_trips() -> None:
    class WithState(G.nn.Module):
        def __init__(self):
            super().__init__()
            self.counter = 0

        def get_extra_state(self):
            return {"counter": self.counter}

        def set_extra_state(self, state):
            self.counter = state["counter"]
    a, b = WithState(), WithState()
    a.counter = 7
    b.load_state_dict(a.state_dict())
    assert b.counter == 7 and "_extra_state" in a.state_dict()


def test_dtype_moves_and_requires_grad() -> None:
    m = G.nn.Sequential(G.nn.Linear(2, 2), G.nn.BatchNorm1d(2))
    w = m[0].weight
    assert m.double()[0].weight.dtype is G.float64 and m[0].weight is w
    assert m[1].num_batches_tracked.dtype is G.int64  # integer buffers keep their dtype
    assert m.half()[0].weight.dtype is G.float16
    assert m.to(G.float32)[1].running_mean.dtype is G.float32
    assert m.to("cpu", G.float64)[0].bias.dtype is G.float64
    assert m.to(G.zeros(1, dtype=G.float32))[0].weight.dtype is G.float32
    with pytest.raises(TypeError):
        m.to(G.int32)
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())


def test_traversal_helpers() -> None:
    shared = G.nn.Linear(2, 2)
    m = G.nn.Sequential(OrderedDict([("a", shared), ("b", G.nn.Sequential(shared, G.nn.ReLU()))]))
    assert [n for n, _ in m.named_modules()] == ["", "a", "b", "b.1"]
    assert [n for n, _ in m.named_modules(remove_duplicate=False)] == ["", "a", "b", "b.0", "b.1"]
    assert [n for n, _ in m.named_modules(prefix="net")][:2] == ["net", "net.a"]
    assert m.get_submodule("b.1").__class__ is G.nn.ReLU and m.get_parameter("b.0.bias") is shared.bias
    with pytest.raises(AttributeError):
        m.get_submodule("b.7")
    assert len(list(m.named_parameters(remove_duplicate=False))) == 4
    visited = []
    m.apply(lambda mod: visited.append(type(mod).__name__))
    assert visited[-1] == "Sequential"
    m.set_submodule("b.1", G.nn.Tanh())
    assert isinstance(m.b[1], G.nn.Tanh)


def test_sequential_and_dict_containers() -> None:
    s = G.nn.Sequential(G.nn.Linear(2, 2), G.nn.ReLU(), G.nn.Linear(2, 1))
    s[1] = G.nn.Tanh()
    assert isinstance(s[1], G.nn.Tanh)
    del s[0]
    assert [n for n, _ in s.named_children()] == ["0", "1"]
    s.insert(0, G.nn.Linear(2, 2))
    assert len(s) == 3 and isinstance(s.pop(0), G.nn.Linear) and len(s + s) == 4
    d = G.nn.ParameterDict({"a": G.ones(1)})
    assert d.get("b") is None and isinstance(d.setdefault("b", G.zeros(2)), G.nn.Parameter)
    md = G.nn.ModuleDict({"x": G.nn.ReLU()})
    assert md.get("x") is md["x"]


def test_deepcopy_gives_independent_parameters() -> None:
    m = G.nn.Linear(2, 2)
    c = copy.deepcopy(m)
    assert c.weight is not m.weight and c.weight.tolist() == m.weight.tolist()
    with G.no_grad():
        c.weight.add_(1)
    assert c.weight.tolist() != m.weight.tolist()


def test_deepcopy_of_a_trained_module_owns_its_memory_and_its_gradients() -> None:
    m = G.nn.Linear(2, 1)
    m(G.ones(1, 2)).sum().backward()  # the leaves now have their AccumulateGrad edges and a grad
    m.weight.tag = "kept"  # a user attribute is copied
    c = copy.deepcopy(m)
    m.zero_grad(set_to_none=True)
    c.zero_grad(set_to_none=True)
    c(G.ones(1, 2)).sum().backward()
    assert m.weight.grad is None and c.weight.grad.tolist() == [[1.0, 1.0]]
    assert c.weight.tag == "kept"
    assert c.weight.data_ptr() == c.weight.untyped_storage().data_ptr() != m.weight.data_ptr()
    buffer = io.BytesIO()
    G.save(c.state_dict(), buffer)  # the copy's storage is its own, so it saves and loads
    buffer.seek(0)
    assert G.load(buffer)["weight"].tolist() == c.weight.tolist()


@pytest.mark.parametrize(("path", "name"), [("generated.nn.modules.linear", "Linear"),
                                            ("generated.nn.modules.module", "Module"),
                                            ("generated.nn.modules.loss", "_Loss"),
                                            ("generated.nn.modules.batchnorm", "_BatchNorm"),
                                            ("generated.nn.modules.transformer", "TransformerEncoderLayer"),
                                            ("generated.nn.modules.utils", "_pair"),
                                            ("generated.nn.parameter", "Parameter"),
                                            ("generated.nn.parameter", "UninitializedParameter"),
                                            ("generated.nn.utils.rnn", "pack_padded_sequence"),
                                            ("generated.optim.optimizer", "Optimizer")])
def test_torch_module_paths(path: str, name: str) -> None:
    module = importlib.import_module(path)
    assert getattr(module, name) is not None
    if not name.startswith("_") and path.startswith("generated.nn.modules"):
        assert getattr(module, name) is getattr(G.nn, name)
        assert name in dir(module)


def test_a_missing_class_under_a_module_path_is_an_attribute_error() -> None:
    import generated.nn.modules.linear as linear
    with pytest.raises(AttributeError):
        linear.NoSuchLayer  # noqa: B018


def test_assignment_drops_the_values_leading_unit_dims() -> None:
    a = G.zeros(3, 4)
    a[0] = G.ones(1, 4)
    a[1:2] = G.full((1, 1, 4), 2.0)
    a[G.tensor([2])] = np.full((1, 1, 4), 3.0, dtype=np.float32).tolist()
    assert a.tolist() == [[1.0] * 4, [2.0] * 4, [3.0] * 4]
    with pytest.raises(RuntimeError):
        a[0] = G.ones(2, 4)


def test_data_parallel_on_one_device_calls_the_module() -> None:
    inner = G.nn.Linear(2, 1)
    wrapped = G.nn.DataParallel(inner)
    x = G.ones(3, 2)
    assert wrapped(x).tolist() == inner(x).tolist()
    assert list(wrapped.state_dict()) == ["module.weight", "module.bias"] and wrapped.module is inner


def test_full_backward_pre_hook_replaces_grad_output_as_torch() -> None:
    torch = pytest.importorskip("torch")
    results = []
    for lib in (torch, G):
        m = lib.nn.Linear(2, 2)
        with lib.no_grad():
            m.weight.copy_(lib.tensor([[1.0, 2.0], [3.0, 4.0]]))
        seen = []
        m.register_full_backward_pre_hook(lambda mod, grad_output: (grad_output[0] * 2,))
        m.register_full_backward_hook(lambda mod, gi, go, seen=seen: seen.append((gi[0].tolist(), go[0].tolist())))
        x = lib.ones(1, 2, requires_grad=True)
        m(x).sum().backward()
        results.append((x.grad.tolist(), m.weight.grad.tolist(), seen))
    assert results[0] == results[1]
