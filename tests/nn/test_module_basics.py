"""G.nn: Parameter, Module registration and traversal, layers, init, state_dict and save/load."""

from __future__ import annotations

import math
import pickle
import zipfile

import numpy as np
import pytest

import generated as G
from generated import nn

F = nn.functional


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.5))
        self.head = nn.Linear(8, 3, bias=False)
        self.register_buffer("steps", G.zeros(1))
        self.register_buffer("scratch", G.zeros(2), persistent=False)

    def forward(self, x):
        return self.head(self.body(x))


# -- Parameter -------------------------------------------------------------------------------------
def test_parameter_is_a_leaf_tensor_sharing_data() -> None:
    t = G.ones(2, 2)
    p = nn.Parameter(t)
    assert isinstance(p, G.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    assert p.data_ptr() == t.data_ptr()
    assert type(p * 2) is G.Tensor
    assert repr(p).startswith("Parameter containing:\ntensor(")
    assert not nn.Parameter(G.ones(1), requires_grad=False).requires_grad
    with pytest.raises(TypeError, match="must be a Tensor"):
        nn.Parameter([1.0])


def test_parameter_gets_gradients() -> None:
    p = nn.Parameter(G.tensor([1.0, 2.0]))
    (p * p).sum().backward()
    assert p.grad.numpy().tolist() == [2.0, 4.0]


# -- Module ----------------------------------------------------------------------------------------
def test_registration_and_traversal_order() -> None:
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == ["body.0.weight", "body.0.bias", "head.weight"]
    assert [n for n, _ in net.named_buffers()] == ["steps", "scratch"]
    assert [n for n, _ in net.named_children()] == ["body", "head"]
    assert [n for n, _ in net.named_modules()] == ["", "body", "body.0", "body.1", "body.2", "head"]
    assert len(list(net.parameters())) == 3
    assert len(list(net.parameters(recurse=False))) == 0
    assert net.head.bias is None
    assert "head" in dir(net)


def test_shared_parameters_are_listed_once() -> None:
    lin = nn.Linear(2, 2)
    seq = nn.Sequential(lin, lin)
    assert len(list(seq.parameters())) == 2


def test_assignment_errors() -> None:
    class Early(nn.Module):
        def __init__(self) -> None:
            self.fc = nn.Linear(1, 1)

    with pytest.raises(AttributeError, match="before Early.__init__ calls super"):
        Early()
    net = Net()
    with pytest.raises(TypeError, match="cannot assign 'Tensor' as parameter 'weight'"):
        net.head.weight = G.ones(3, 8)
    with pytest.raises(KeyError, match="can't be empty or contain"):
        net.register_parameter("a.b", None)
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        nn.Module()(1)


def test_train_eval_and_dropout() -> None:
    net = Net()
    assert all(m.training for m in net.modules())
    net.eval()
    assert not any(m.training for m in net.modules())
    x = G.ones(5, 4)
    np.testing.assert_array_equal(net(x).detach().numpy(), net(x).detach().numpy())
    drop = nn.Dropout(0.5)
    out = drop(G.ones(1000)).numpy()
    assert set(np.unique(out)) <= {0.0, 2.0}
    assert 350 < (out == 0).sum() < 650
    assert drop.eval()(G.ones(3)).numpy().tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)


def test_zero_grad() -> None:
    net = Net()
    net(G.ones(2, 4)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(float(p.grad.numpy().sum()) == 0.0 for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())


def test_repr() -> None:
    assert repr(nn.Sequential(nn.Linear(2, 3), nn.ReLU())) == (
        "Sequential(\n  (0): Linear(in_features=2, out_features=3, bias=True)\n  (1): ReLU()\n)")


# -- layers ----------------------------------------------------------------------------------------
def test_linear_matches_numpy_and_init_bounds() -> None:
    lin = nn.Linear(50, 40)
    w, b = lin.weight.detach().numpy(), lin.bias.detach().numpy()
    assert w.shape == (40, 50) and b.shape == (40,)
    bound = 1 / math.sqrt(50)  # kaiming_uniform(a=sqrt(5)) and the bias rule both give 1/sqrt(fan_in)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert np.abs(b).max() <= bound
    x = np.random.default_rng(0).standard_normal((7, 50)).astype(np.float32)
    np.testing.assert_allclose(lin(G.tensor(x)).detach().numpy(), x @ w.T + b, rtol=1e-5, atol=1e-5)


def test_init_is_seeded() -> None:
    G.manual_seed(123)
    a = nn.Linear(3, 3).weight.detach().numpy().copy()
    G.manual_seed(123)
    b = nn.Linear(3, 3).weight.detach().numpy()
    np.testing.assert_array_equal(a, b)


def test_init_functions() -> None:
    t = G.empty(200, 100)
    nn.init.xavier_uniform_(t)
    assert np.abs(t.numpy()).max() <= math.sqrt(6 / 300)
    nn.init.kaiming_normal_(t, nonlinearity="relu")
    assert abs(t.numpy().std() - math.sqrt(2 / 100)) < 0.01
    nn.init.constant_(t, 0.5)
    assert np.all(t.numpy() == 0.5)
    assert nn.init.calculate_fan_in_and_fan_out(G.empty(8, 3, 5, 5)) == (75, 200)
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        nn.init.kaiming_uniform_(G.empty(3))


def test_sequential_indexing_and_flatten() -> None:
    seq = nn.Sequential(nn.Flatten(), nn.Linear(12, 2), nn.ReLU())
    assert isinstance(seq[1], nn.Linear) and isinstance(seq[-1], nn.ReLU) and len(seq) == 3
    assert [type(m).__name__ for m in seq[1:]] == ["Linear", "ReLU"]
    assert tuple(seq(G.ones(5, 3, 2, 2)).shape) == (5, 2)
    assert tuple(F.flatten(G.ones(2, 3, 4), 1).shape) == (2, 12)


def test_functional_reexports_ops() -> None:
    assert F.linear is G.linear and F.sigmoid is G.sigmoid  # no adapter: the op itself
    x = G.tensor([-1.0, 2.0])
    assert F.relu(x).tolist() == [0.0, 2.0] and x.tolist() == [-1.0, 2.0]
    assert F.relu(x, inplace=True) is x and x.tolist() == [0.0, 2.0]  # torch.nn.functional's inplace=
    with pytest.raises(AttributeError, match="no function 'no_such_op'"):
        F.no_such_op  # noqa: B018


def test_mse_loss() -> None:
    a, b = G.tensor([1.0, 2.0, 4.0]), G.tensor([1.0, 0.0, 1.0])
    assert nn.MSELoss()(a, b).item() == pytest.approx(13 / 3)
    assert F.mse_loss(a, b, reduction="sum").item() == pytest.approx(13)


@pytest.mark.skipif(not hasattr(G, "conv2d"), reason="conv2d has not landed")
def test_conv2d_layer_shapes() -> None:
    conv = nn.Conv2d(3, 8, 3, padding=1)
    assert tuple(conv.weight.shape) == (8, 3, 3, 3)
    assert tuple(conv(G.ones(2, 3, 6, 6)).shape) == (2, 8, 6, 6)
    assert np.abs(conv.weight.detach().numpy()).max() <= 1 / math.sqrt(27)


# -- state_dict, save, load ------------------------------------------------------------------------
def test_state_dict_keys_and_detached_values() -> None:
    sd = Net().state_dict()
    assert list(sd) == ["steps", "body.0.weight", "body.0.bias", "head.weight"]  # own tensors first
    assert not any(v.requires_grad for v in sd.values())


def test_load_state_dict_copies_in_place() -> None:
    a, b = Net(), Net()
    weight = b.head.weight
    b.load_state_dict(a.state_dict())
    assert b.head.weight is weight
    for (_, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items(), strict=True):
        np.testing.assert_array_equal(x.numpy(), y.numpy())


def test_load_state_dict_errors() -> None:
    net = Net()
    sd = net.state_dict()
    del sd["head.weight"]
    sd["extra"] = G.ones(1)
    with pytest.raises(RuntimeError) as err:
        net.load_state_dict(sd)
    assert str(err.value) == ('Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: '
                              '"head.weight". \n\tUnexpected key(s) in state_dict: "extra". ')
    result = net.load_state_dict(sd, strict=False)
    assert result.missing_keys == ["head.weight"] and result.unexpected_keys == ["extra"]
    sd = net.state_dict()
    sd["head.weight"] = G.ones(3, 9)
    with pytest.raises(RuntimeError, match=r"size mismatch for head.weight: copying a param with shape "
                                           r"\[3, 9\] from checkpoint, the shape in current model is \[3, 8\]"):
        net.load_state_dict(sd, strict=False)
    with pytest.raises(TypeError, match="dict-like"):
        net.load_state_dict([1])


def test_save_load_file_round_trip(tmp_path) -> None:
    a, b = Net(), Net()
    path = tmp_path / "net.npz"
    G.save(a.state_dict(), path)
    with zipfile.ZipFile(path) as zf:  # PyTorch's checkpoint format: data.pkl and one record per storage
        assert "archive/data.pkl" in zf.namelist() and len([n for n in zf.namelist() if "/data/" in n]) == 4
    loaded = G.load(path)
    assert list(loaded) == list(a.state_dict()) and loaded["steps"].dtype == G.float32
    b.load_state_dict(loaded)
    x = G.ones(2, 4)
    a.eval()
    b.eval()
    np.testing.assert_array_equal(a(x).detach().numpy(), b(x).detach().numpy())
    b.head.save(tmp_path / "head.npz")
    fresh = nn.Linear(8, 3, bias=False)
    fresh.load(tmp_path / "head.npz")
    np.testing.assert_array_equal(fresh.weight.detach().numpy(), b.head.weight.detach().numpy())


def test_save_nested_and_plain_npz(tmp_path) -> None:
    obj = {"a": [G.tensor([1, 2]), {"b": 3.5, "c": None}], "d": (1, "x")}
    G.save(obj, tmp_path / "obj.npz")
    back = G.load(tmp_path / "obj.npz")
    assert back["a"][0].dtype == G.int64 and back["a"][0].tolist() == [1, 2]
    assert back["a"][1] == {"b": 3.5, "c": None} and back["d"] == (1, "x")
    np.savez(tmp_path / "plain.npz", w=np.ones(3, np.float32))
    assert G.load(tmp_path / "plain.npz")["w"].tolist() == [1.0, 1.0, 1.0]
    G.save({"x": Net}, tmp_path / "code.pt")  # a class: saved by name, loaded only when trusted
    with pytest.raises(pickle.UnpicklingError, match=r"Net"):
        G.load(tmp_path / "code.pt")
    assert G.load(tmp_path / "code.pt", weights_only=False)["x"] is Net
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        G.save({"x": lambda: 1}, tmp_path / "bad.pt")
    assert not (tmp_path / "bad.pt").exists()


def test_module_to_cpu_keeps_parameter_identity() -> None:
    lin = nn.Linear(2, 2)
    w = lin.weight
    assert lin.to("cpu") is lin and lin.weight is w
    lin.double()
    assert lin.weight is w and w.dtype == G.float64 and w.requires_grad
    lin(G.ones(1, 2, dtype=G.float64)).sum().backward()
    assert w.grad.dtype == G.float64


@pytest.mark.cuda
def test_module_to_cuda_and_back() -> None:
    lin = nn.Linear(3, 2)
    ref = lin(G.ones(1, 3)).detach().numpy()
    lin.cuda()
    assert lin.weight.is_cuda
    opt = G.optim.SGD(lin.parameters(), lr=0.1, momentum=0.9)
    out = lin(G.ones(1, 3, device="cuda"))
    np.testing.assert_allclose(out.detach().numpy(force=True), ref, rtol=1e-5)
    out.sum().backward()
    opt.step()
    assert lin.cpu().weight.is_cpu


def test_every_layer_runs_forward_and_backward() -> None:
    x = G.randn(2, 3, 8, 8, requires_grad=True)
    net = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(4, 4, 1),
                        nn.GELU(), nn.AvgPool2d(2), nn.Flatten(), nn.Dropout(0.1), nn.Linear(16, 6), nn.Tanh(),
                        nn.SiLU(), nn.Sigmoid(), nn.Identity())
    out = net(x)
    assert tuple(out.shape) == (2, 6)
    target = G.tensor([1, 4])
    loss = nn.CrossEntropyLoss(label_smoothing=0.1)(out, target) + nn.MSELoss()(nn.Softmax(1)(out), G.zeros(2, 6))
    loss = loss + F.nll_loss(nn.LogSoftmax(dim=1)(out), target)
    loss.backward()
    assert tuple(x.grad.shape) == (2, 3, 8, 8)
    assert all(p.grad is not None for p in net.parameters())


def test_functional_adapters_match_the_ops() -> None:
    logits, target = G.randn(4, 5), G.tensor([0, 2, 4, -100])
    ref = G.cross_entropy_loss(logits, target, None, reduction="sum", ignore_index=-100, label_smoothing=0.0)
    assert F.cross_entropy(logits, target, reduction="sum").item() == pytest.approx(ref.item())
    logp = F.log_softmax(logits, 1)
    assert F.nll_loss(logp, target, ignore_index=-100).item() == pytest.approx(
        F.cross_entropy(logits, target).item(), rel=1e-6)
    x = G.ones(1000)
    assert F.dropout(x, 0.5, training=False) is x
    out = F.dropout(G.ones(1000), 0.25).numpy()
    assert set(np.unique(out).tolist()) <= {0.0, np.float32(1 / 0.75).item()}
    y = G.ones(100)
    assert F.dropout(y, 0.5, inplace=True) is y and (y.numpy() == 0).any()
