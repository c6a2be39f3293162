"""Helpers that make tensors for their inputs make them on the inputs' device (gradcheck's probe vectors,
index_fill's mask, the DataLoader's batches), and a DataLoader iterator may be shared by threads."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

import generated as G
from runtime import opcall
from runtime.autograd.gradcheck import gradcheck, gradgradcheck


def test_gradcheck_builds_its_probes_on_the_outputs_device(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Without a GPU: every tensor gradcheck makes names the device of the output it probes."""
    made: list[Any] = []
    real = opcall.api.tensor

    def spy(data: Any, **kwargs: Any) -> Any:
        made.append(kwargs.get("device"))
        return real(data, **kwargs)

    monkeypatch.setattr(opcall.api, "tensor", spy)
    x = G.randn(3, dtype=G.float64, requires_grad=True)
    assert gradcheck(lambda t: (t * t).sum(), (x,))
    assert gradgradcheck(lambda t: t.sin(), (x,))
    assert made and all(d is not None and G.device(d) == x.device for d in made)


@pytest.mark.cuda
@pytest.mark.parametrize("fn", [lambda t: t.sin(), lambda t: (t * t).sum(), lambda t: t.exp() / (1 + t * t)])
def test_gradcheck_on_cuda(fn) -> None:  # type: ignore[no-untyped-def]
    x = G.randn(2, 3, dtype=G.float64, device="cuda", requires_grad=True)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


@pytest.mark.cuda
def test_gradcheck_on_cuda_finds_a_wrong_gradient() -> None:
    x = G.randn(3, dtype=G.float64, device="cuda", requires_grad=True)
    bad = x.detach().clone() + 1  # (bad * t).detach(): its numerical gradient is bad, its autograd one 0
    assert not gradcheck(lambda t: t * t + (bad * t).detach(), (x,), raise_exception=False)


@pytest.mark.cuda
def test_index_fill_on_cuda() -> None:
    x = G.zeros(4, device="cuda").index_fill_(0, G.tensor([1, -1], device="cuda"), 2.0)
    assert x.device.type == "cuda" and x.cpu().tolist() == [0.0, 2.0, 0.0, 2.0]
    assert G.zeros((), device="cuda").index_fill_(0, G.tensor([0], device="cuda"), 1.0).cpu().item() == 1.0


class _SlowDataset(G.utils.data.Dataset):
    """Each item takes a moment, so another thread asks for the next batch while one is being made."""

    def __len__(self) -> int:
        return 200

    def __getitem__(self, i: int) -> tuple[Any, ...]:
        time.sleep(0.0005)
        return (G.tensor(i),)


def test_one_dataloader_iterator_shared_by_threads() -> None:
    it = iter(G.utils.data.DataLoader(_SlowDataset(), batch_size=2))
    seen: list[int] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def work() -> None:
        try:
            for (batch,) in it:
                with lock:
                    seen.extend(batch.tolist())
        except BaseException as e:  # the test reports whatever a thread raised
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and sorted(seen) == list(range(200))


@pytest.mark.cuda
def test_rnn_over_an_empty_sequence_stays_on_its_device() -> None:
    rnn = G.nn.GRU(3, 4).to("cuda")
    out, h = rnn(G.zeros(0, 2, 3, device="cuda"))
    assert out.shape == (0, 2, 4) and out.device.type == "cuda" and h.device.type == "cuda"


@pytest.mark.cuda
def test_jacobian_of_an_empty_output_stays_on_its_device() -> None:
    x = G.ones(3, device="cuda")
    jac = G.autograd.functional.jacobian(lambda t: t[:0] * 2, x)
    assert jac.shape == (0, 3) and jac.device.type == "cuda"
