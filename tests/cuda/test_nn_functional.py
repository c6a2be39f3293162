"""The nn.functional and linalg compositions on the CUDA device (emulated in CI) give the CPU's values and
gradients: they are built from ops that have CUDA kernels, and their index tables move to the input's device."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

pytestmark = pytest.mark.cuda


def _rng() -> np.random.Generator:
    return np.random.default_rng(0)


def _x(*shape: int) -> np.ndarray:
    return _rng().standard_normal(shape)


def _cases() -> list[tuple[str, Callable[..., Any], tuple[np.ndarray, ...]]]:
    import generated as G
    F, L = G.nn.functional, G.linalg
    return [
        ("pad_reflect", lambda t: F.pad(t, (1, 2, 2, 1), "reflect"), (_x(2, 3, 5, 6),)),
        ("pad_circular", lambda t: F.pad(t, (2, -1), "circular"), (_x(2, 3, 5),)),
        ("conv1d_same", lambda t, w: F.conv1d(t, w, padding="same"), (_x(2, 3, 9), _x(4, 3, 4))),
        ("conv3d", lambda t, w: F.conv3d(t, w, stride=(1, 2, 1), padding=1), (_x(2, 3, 4, 5, 4), _x(4, 3, 2, 3, 2))),
        ("conv_transpose3d", lambda t, w: F.conv_transpose3d(t, w, stride=2, output_padding=1),
         (_x(1, 2, 3, 3, 2), _x(2, 3, 2, 2, 2))),
        ("max_pool3d", lambda t: F.max_pool3d(t, 2, ceil_mode=True), (_x(2, 3, 5, 4, 3),)),
        ("avg_pool1d", lambda t: F.avg_pool1d(t, 3, 2, 1, count_include_pad=False), (_x(2, 3, 10),)),
        ("adaptive_max_pool2d", lambda t: F.adaptive_max_pool2d(t, (2, 3)), (_x(2, 3, 5, 7),)),
        ("adaptive_avg_pool3d", lambda t: F.adaptive_avg_pool3d(t, 2), (_x(2, 3, 5, 4, 3),)),
        ("interpolate_bicubic", lambda t: F.interpolate(t, scale_factor=1.5, mode="bicubic"), (_x(1, 2, 4, 5),)),
        ("grid_sample", lambda t, g: F.grid_sample(t, g, align_corners=False), (_x(1, 2, 4, 5), _x(1, 3, 3, 2))),
        ("local_response_norm", lambda t: F.local_response_norm(t, 3), (_x(2, 5, 4),)),
        ("instance_norm", lambda t: F.instance_norm(t), (_x(2, 3, 6),)),
        ("triplet_margin_loss", lambda a, b, c: F.triplet_margin_loss(a, b, c), (_x(4, 5), _x(4, 5) + 1, _x(4, 5))),
        ("eigh", lambda a: L.eigh(a + a.mT)[0], (_x(2, 4, 4),)),
        ("slogdet", lambda a: L.slogdet(a)[1], (_x(3, 3) + 3 * np.eye(3),)),
        ("lu", lambda a: L.lu(a).U, (_x(4, 4),)),
        ("pinv", lambda a: L.pinv(a), (_x(4, 3),)),
    ]


@pytest.mark.parametrize("index", range(18))
def test_composition_on_cuda_matches_cpu(index: int) -> None:
    import generated as G
    name, fn, arrays = _cases()[index]
    results = []
    for device in ("cpu", "cuda"):
        inputs = [G.tensor(a, device=device, requires_grad=True) for a in arrays]
        out = fn(*inputs)
        out.sum().backward()
        results.append((out.detach().cpu().numpy(), [t.grad.cpu().numpy() for t in inputs]))
    (cpu, cpu_grads), (cuda, cuda_grads) = results
    np.testing.assert_allclose(cuda, cpu, atol=1e-9, err_msg=name)
    for a, b in zip(cuda_grads, cpu_grads, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-9, err_msg=name)
