"""The PyTorch-compatible nn / optim / data / autograd.functional layer: import layout, errors, edge cases.

Values against PyTorch are covered program by program in tests/compat/; here each piece's contract and
its errors (PyTorch's exception types), with NumPy references where a value is checked.
"""

from __future__ import annotations

import importlib
import math
import sys

import generated.nn as nn
import generated.nn.functional as F
import numpy as np
import pytest
from generated.optim import lr_scheduler
from generated.utils.data import DataLoader, TensorDataset, random_split

import generated as G


# -- import layout ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["nn", "nn.functional", "nn.init", "nn.utils", "optim", "optim.lr_scheduler",
                                  "autograd", "autograd.functional", "utils", "utils.data"])
def test_submodules_import_as_the_runtime_modules(name: str) -> None:
    from runtime.api import SUBMODULES
    module = importlib.import_module(f"generated.{name}")
    assert module is importlib.import_module(SUBMODULES[name])
    assert sys.modules[f"generated.{name}"] is module
    parent, _, leaf = f"generated.{name}".rpartition(".")
    assert getattr(sys.modules[parent], leaf) is module


def test_from_imports_resolve() -> None:
    from generated.nn import functional
    from generated.utils.data import DataLoader as DL
    assert functional is F and DL is DataLoader


# -- layers -----------------------------------------------------------------------------------------
def test_batchnorm_errors() -> None:
    with pytest.raises(ValueError, match="expected 2D or 3D input"):
        nn.BatchNorm1d(3)(G.zeros(2, 3, 4, 5))
    with pytest.raises(ValueError, match="expected 4D input"):
        nn.BatchNorm2d(3)(G.zeros(2, 3))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        nn.BatchNorm1d(3)(G.zeros(1, 3))


def test_batchnorm_running_stats_follow_momentum() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(6, 2)).astype(np.float32)
    bn = nn.BatchNorm1d(2, momentum=0.3)
    bn(G.tensor(x))
    np.testing.assert_allclose(bn.running_mean.numpy(), 0.3 * x.mean(0), rtol=1e-5)
    np.testing.assert_allclose(bn.running_var.numpy(), 0.7 + 0.3 * x.var(0, ddof=1), rtol=1e-5)
    bn.eval()
    out = bn(G.tensor(x)).detach().numpy()
    np.testing.assert_allclose(out, (x - bn.running_mean.numpy()) / np.sqrt(bn.running_var.numpy() + 1e-5),
                               rtol=1e-5, atol=1e-6)


def test_norm_shape_errors() -> None:
    with pytest.raises(RuntimeError, match="Given normalized_shape=\\[5\\]"):
        nn.LayerNorm(5)(G.zeros(2, 4))
    with pytest.raises(ValueError, match="num_channels must be divisible by num_groups"):
        nn.GroupNorm(4, 6)
    with pytest.raises(RuntimeError, match="divisible by num_groups"):
        F.group_norm(G.zeros(2, 6, 3), 4)


def test_embedding_padding_idx() -> None:
    emb = nn.Embedding(4, 2, padding_idx=-1)
    assert emb.padding_idx == 3 and emb.weight[3].abs().sum().item() == 0
    emb(G.tensor([3, 1, 3])).sum().backward()
    assert emb.weight.grad[3].tolist() == [0.0, 0.0] and emb.weight.grad[1].tolist() == [1.0, 1.0]
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(4, 2, padding_idx=4)
    assert F.embedding(G.tensor([2]), G.arange(6.0).reshape(3, 2)).tolist() == [[4.0, 5.0]]


def test_recurrent_shapes_and_errors() -> None:
    lstm = nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True)
    names = [n for n, _ in lstm.named_parameters()]
    assert names[:4] == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"]
    assert names[4] == "weight_ih_l0_reverse" and lstm.weight_ih_l1.shape == (16, 8)
    bound = 1 / math.sqrt(4)
    assert all(p.abs().max().item() <= bound for p in lstm.parameters())
    out, (h, c) = lstm(G.randn(2, 5, 3))
    assert out.shape == (2, 5, 8) and h.shape == (4, 2, 4) and c.shape == (4, 2, 4)
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size"):
        lstm(G.randn(2, 5, 4))
    with pytest.raises(RuntimeError, match="Expected hidden size"):
        nn.GRU(3, 4)(G.randn(5, 2, 3), G.zeros(1, 3, 4))
    with pytest.raises(ValueError, match="Unknown nonlinearity"):
        nn.RNN(3, 4, nonlinearity="gelu")


def test_rnn_cell_matches_numpy() -> None:
    cell = nn.RNNCell(3, 2)
    x = np.arange(6, dtype=np.float32).reshape(2, 3) / 10
    h = np.ones((2, 2), dtype=np.float32)
    w_ih, w_hh = cell.weight_ih.detach().numpy(), cell.weight_hh.detach().numpy()
    b = cell.bias_ih.detach().numpy() + cell.bias_hh.detach().numpy()
    got = cell(G.tensor(x), G.tensor(h)).detach().numpy()
    np.testing.assert_allclose(got, np.tanh(x @ w_ih.T + h @ w_hh.T + b), rtol=1e-5, atol=1e-6)


def test_attention_errors_and_masks() -> None:
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(6, 4)
    q = G.randn(1, 3, 4)
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set when is_causal=True"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=G.ones(3, 3), is_causal=True)
    keep_first = G.tensor([[True, False, False]] * 3)
    out = F.scaled_dot_product_attention(q, q, q, attn_mask=keep_first)
    np.testing.assert_allclose(out.detach().numpy(), np.broadcast_to(q.numpy()[:, :1], (1, 3, 4)), rtol=1e-6)
    mha = nn.MultiheadAttention(4, 2)
    x = G.randn(3, 2, 4)
    _, w = mha(x, x, x, key_padding_mask=G.tensor([[False, False, True], [False, False, False]]))
    assert w.shape == (2, 3, 3) and w[0, :, 2].abs().max().item() == 0.0
    np.testing.assert_allclose(w.sum(-1).detach().numpy(), np.ones((2, 3)), rtol=1e-6)


def test_losses_reduction_errors() -> None:
    a, b = G.zeros(3), G.ones(3)
    with pytest.raises(ValueError, match="is not a valid value for reduction"):
        F.l1_loss(a, b, reduction="avg")
    with pytest.raises(RuntimeError, match="non-positive values for delta"):
        F.huber_loss(a, b, delta=0.0)
    assert F.huber_loss(a, b * 3, delta=1.0).item() == pytest.approx(2.5)
    assert F.kl_div(G.log(G.tensor([0.5, 0.5])), G.tensor([1.0, 0.0]), reduction="sum").item() == pytest.approx(
        math.log(2))


# -- hooks ------------------------------------------------------------------------------------------
def test_backward_hook_replaces_grad_input_and_handles_remove() -> None:
    lin = nn.Linear(2, 2)
    calls = []

    def hook(module, grad_input, grad_output):
        calls.append((grad_input[0].clone(), grad_output[0].clone()))
        return (grad_input[0] * 0,)

    handle = lin.register_full_backward_hook(hook)
    x = G.ones(1, 2, requires_grad=True)
    lin(x).sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0]]
    np.testing.assert_allclose(calls[0][0].numpy(), lin.weight.detach().numpy().sum(0, keepdims=True), rtol=1e-6)
    assert calls[0][1].tolist() == [[1.0, 1.0]]
    handle.remove()
    x.grad = None
    lin(x).sum().backward()
    assert len(calls) == 1 and x.grad.abs().sum().item() > 0


def test_forward_pre_hook_with_kwargs() -> None:
    lin = nn.Identity()
    lin.register_forward_pre_hook(lambda m, args, kwargs: ((args[0] + 1,), kwargs), with_kwargs=True)
    assert lin(G.zeros(2)).tolist() == [1.0, 1.0]


# -- optim ------------------------------------------------------------------------------------------
def test_scheduler_errors_and_closed_form_epoch() -> None:
    with pytest.raises(TypeError, match="is not an Optimizer"):
        lr_scheduler.StepLR(object(), 2)  # type: ignore[arg-type]
    opt = G.optim.SGD([nn.Parameter(G.zeros(1))], lr=1.0)
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        lr_scheduler.ReduceLROnPlateau(opt, factor=1.0)
    sched = lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    sched.step(5)
    assert sched.get_last_lr() == [0.25]
    assert sched.state_dict()["last_epoch"] == 5 and "optimizer" not in sched.state_dict()


def test_adagrad_matches_numpy() -> None:
    p = nn.Parameter(G.tensor([1.0, -2.0]))
    opt = G.optim.Adagrad([p], lr=0.5, initial_accumulator_value=0.1)
    ref, acc = np.array([1.0, -2.0]), np.full(2, 0.1)
    for _ in range(3):
        p.grad = p.detach() * 2
        opt.step()
        g = ref * 2
        acc += g * g
        ref = ref - 0.5 * g / (np.sqrt(acc) + 1e-10)
    np.testing.assert_allclose(p.detach().numpy(), ref, rtol=1e-5)
    assert opt.state_dict()["state"][0]["step"].item() == 3


def test_rmsprop_validates() -> None:
    with pytest.raises(ValueError, match="Invalid alpha value"):
        G.optim.RMSprop([nn.Parameter(G.zeros(1))], alpha=-1)


# -- data -------------------------------------------------------------------------------------------
def test_dataloader_errors_and_len() -> None:
    ds = TensorDataset(G.arange(10.0))
    assert len(DataLoader(ds, batch_size=3)) == 4 and len(DataLoader(ds, batch_size=3, drop_last=True)) == 3
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        DataLoader(ds, batch_size=0)
    with pytest.raises(ValueError, match="num_workers option should be non-negative"):
        DataLoader(ds, num_workers=-1)
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(G.zeros(3), G.zeros(4))


def test_shuffle_is_reproducible_with_a_generator() -> None:
    ds = TensorDataset(G.arange(12))

    def order(seed: int) -> list[int]:
        loader = DataLoader(ds, batch_size=5, shuffle=True, generator=G.Generator().manual_seed(seed))
        return [int(v) for (b,) in loader for v in b]

    assert order(1) == order(1) and sorted(order(1)) == list(range(12)) and order(1) != list(range(12))


def test_random_split() -> None:
    parts = random_split(range(10), [0.5, 0.5], generator=G.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [5, 5] and sorted(parts[0].indices + parts[1].indices) == list(range(10))
    with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
        random_split(range(10), [3, 3])


# -- autograd.functional -----------------------------------------------------------------------------
def test_autograd_functional_errors_and_values() -> None:
    from generated.autograd.functional import hessian, jacobian, jvp, vjp
    with pytest.raises(TypeError, match="must be either a Tensor or a tuple of Tensors"):
        jacobian(lambda x: x, [1.0])
    with pytest.raises(RuntimeError, match="The vector v can only be None"):
        vjp(lambda x: x * 2, G.ones(3))
    x = G.tensor([1.0, 2.0])
    np.testing.assert_allclose(jacobian(lambda z: z.exp(), x).numpy(), np.diag(np.exp([1.0, 2.0])), rtol=1e-6)
    np.testing.assert_allclose(hessian(lambda z: (z ** 3).sum(), x).numpy(), np.diag([6.0, 12.0]), rtol=1e-6)
    out, tangent = jvp(lambda z: z * z, x, G.tensor([1.0, -1.0]))
    assert tangent.tolist() == [2.0, -4.0] and not out.requires_grad


def test_save_load_keeps_zero_dim_tensors(tmp_path) -> None:
    bn = nn.BatchNorm1d(3)
    path = tmp_path / "bn.pt"
    G.save(bn.state_dict(), path)
    loaded = G.load(path)
    assert loaded["num_batches_tracked"].shape == () and loaded["num_batches_tracked"].dtype == G.int64
    nn.BatchNorm1d(3).load_state_dict(loaded)


def test_functional_resolves_torch_names_of_renamed_ops() -> None:
    from generated.nn import functional as F

    import generated as G

    x = G.tensor([-30.0, -1.0, 0.0, 2.0])
    assert F.logsigmoid(x).tolist() == G.log_sigmoid(x).tolist()
    with pytest.raises(AttributeError, match="no function 'no_such_fn'"):
        F.no_such_fn  # noqa: B018
