"""0-dim CPU tensors among CUDA tensors in pointwise ops (Note [CPU scalars beside device tensors] in
runtime/dispatcher.py): taken as inputs like Python numbers, as PyTorch's TensorIterator does, with
PyTorch's promotion and a gradient that comes back to the CPU; a written-to CPU scalar or a CPU tensor
with dimensions stays a device mismatch."""

from __future__ import annotations

import pytest

import generated as G
from runtime.dispatcher import dispatcher

pytestmark = pytest.mark.cuda

MISMATCH = "expected all tensors to be on the same device"


def _cuda(values: list, **kw: object) -> G.Tensor:
    return G.tensor(values, device="cuda", **kw)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "maximum", "eq", "lt", "pow", "atan2"])
@pytest.mark.parametrize("scalar_first", [False, True])
def test_binary_ops_take_a_cpu_scalar(op: str, scalar_first: bool) -> None:
    x, s = _cuda([1.0, 2.0, 3.0]), G.tensor(2.0)
    args = (s, x) if scalar_first else (x, s)
    out = getattr(G, op)(*args)
    expected = getattr(G, op)(*(a.cpu() for a in args))
    assert out.device == x.device and out.dtype == expected.dtype
    assert out.cpu().tolist() == expected.tolist()


def test_promotion_is_the_scalar_tensors() -> None:
    ints = _cuda([1, 2, 3])
    assert (ints * G.tensor(2.5)).dtype == G.float32  # a 0-dim float lifts integers to the default float
    assert (ints + G.tensor(1)).dtype == G.int64
    assert (_cuda([1.0], dtype=G.float16) * G.tensor(2.0, dtype=G.float64)).dtype == G.float16


def test_ternary_in_place_and_out() -> None:
    x = _cuda([1.0, 2.0, 3.0])
    assert G.where(x > 1, G.tensor(0.0), x).cpu().tolist() == [1.0, 0.0, 0.0]
    assert G.lerp(x, _cuda([3.0, 3.0, 3.0]), G.tensor(0.5)).cpu().tolist() == [2.0, 2.5, 3.0]
    version = x._version
    assert x.add_(G.tensor(1.0)) is x and x.cpu().tolist() == [2.0, 3.0, 4.0] and x._version == version + 1
    out = G.empty(3, device="cuda")
    assert G.mul(x, G.tensor(2.0), out=out) is out and out.cpu().tolist() == [4.0, 6.0, 8.0]
    assert x.masked_fill(x > 2, G.tensor(-1.0)).cpu().tolist() == [2.0, -1.0, -1.0]


def test_what_stays_a_device_mismatch() -> None:
    x, s = _cuda([1.0, 2.0]), G.tensor(1.0)
    with pytest.raises(RuntimeError, match=MISMATCH):
        s.add_(x)  # the written-to tensor is the CPU scalar
    with pytest.raises(RuntimeError, match=MISMATCH):
        G.add(x, x, out=G.tensor(0.0))
    with pytest.raises(RuntimeError, match=MISMATCH):
        x + G.ones(2)  # a CPU tensor with dimensions
    with pytest.raises(RuntimeError, match=MISMATCH):
        G.mm(x.reshape(1, 2), G.ones(2, 1))  # not pointwise
    assert s.tolist() == 1.0


def test_the_scalars_gradient_comes_back_to_the_cpu() -> None:
    w = G.tensor(3.0, requires_grad=True)
    x = _cuda([1.0, 2.0], requires_grad=True)
    (x * w + w).sum().backward()
    assert w.grad.device.type == "cpu" and w.grad.item() == 5.0  # 1 + 2 from the product, 2 from the sum
    assert x.grad.device == x.device and x.grad.cpu().tolist() == [3.0, 3.0]


def test_only_pointwise_inputs_are_declared() -> None:
    assert dispatcher.find("add.Tensor").scalar_positions == (0, 1)
    assert dispatcher.find("add_.Tensor").scalar_positions == (1,)  # not self, which it writes
    assert dispatcher.find("add.out").scalar_positions == (0, 1)  # not out
    assert dispatcher.find("mm").scalar_positions == ()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sign_of_nan_is_zero_as_on_the_cpu(dtype: str) -> None:
    values = [float("nan"), -float("inf"), -2.5, -0.0, 0.0, 3.0, float("inf")]
    cpu = G.sign(G.tensor(values, dtype=getattr(G, dtype)))
    dev = G.sign(G.tensor(values, dtype=getattr(G, dtype), device="cuda"))
    assert cpu.tolist() == [0.0, -1.0, -1.0, 0.0, 0.0, 1.0, 1.0]
    assert dev.cpu().tolist() == cpu.tolist()
