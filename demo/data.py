"""A deterministic synthetic dataset of handwritten-looking digits (no download).

Each digit 0-9 is a few pen strokes (polylines in the unit square, `STROKES`). A sample is its digit's
strokes with every vertex jittered, put through a random affine map (rotation, scale, shear,
translation), drawn with a random pen width as a soft line on a `size` x `size` grid, and covered in
Gaussian pixel noise. Everything comes from one NumPy generator, so a seed fixes the dataset bit for
bit on every machine.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

Polyline = list[tuple[float, float]]


def _ellipse(cx: float, cy: float, rx: float, ry: float, start: float = 0.0, end: float = 360.0,
             n: int = 12) -> Polyline:
    angles = np.radians(np.linspace(start, end, n + 1))
    return [(cx + rx * math.cos(a), cy + ry * math.sin(a)) for a in angles]


# (x, y) with x to the right and y downwards, in [0, 1].
STROKES: dict[int, list[Polyline]] = {
    0: [_ellipse(0.5, 0.5, 0.27, 0.38)],
    1: [[(0.32, 0.28), (0.52, 0.1), (0.52, 0.9)], [(0.35, 0.9), (0.68, 0.9)]],
    2: [[(0.22, 0.3), (0.35, 0.13), (0.62, 0.1), (0.78, 0.27), (0.72, 0.45), (0.22, 0.9), (0.8, 0.9)]],
    3: [[(0.22, 0.12), (0.78, 0.12), (0.48, 0.45), (0.72, 0.55), (0.78, 0.75), (0.6, 0.9), (0.22, 0.86)]],
    4: [[(0.66, 0.9), (0.66, 0.1), (0.16, 0.64), (0.86, 0.64)]],
    5: [[(0.78, 0.1), (0.28, 0.1), (0.24, 0.46), (0.6, 0.42), (0.78, 0.6), (0.7, 0.84), (0.22, 0.88)]],
    6: [[(0.72, 0.1), (0.38, 0.32), (0.24, 0.64)], _ellipse(0.5, 0.68, 0.26, 0.21, 180.0, 540.0)],
    7: [[(0.2, 0.1), (0.8, 0.1), (0.42, 0.9)], [(0.36, 0.5), (0.7, 0.5)]],
    8: [_ellipse(0.5, 0.29, 0.21, 0.19), _ellipse(0.5, 0.7, 0.26, 0.2)],
    9: [_ellipse(0.5, 0.32, 0.25, 0.21), [(0.75, 0.32), (0.7, 0.9)]],
}
NUM_CLASSES = len(STROKES)


class Dataset(NamedTuple):
    """Images (N, 1, size, size) float32 in about [0, 1] and integer labels (N,) int64."""

    images: np.ndarray
    labels: np.ndarray


def _segments() -> tuple[np.ndarray, np.ndarray]:
    """Every class's strokes as segments: (classes, S, 2, 2) endpoints and a (classes, S) validity mask."""
    per_class = [[(a, b) for line in STROKES[c] for a, b in zip(line[:-1], line[1:], strict=True)]
                 for c in range(NUM_CLASSES)]
    most = max(len(s) for s in per_class)
    seg = np.zeros((NUM_CLASSES, most, 2, 2))
    valid = np.zeros((NUM_CLASSES, most), dtype=bool)
    for c, segs in enumerate(per_class):
        seg[c, :len(segs)] = segs
        valid[c, :len(segs)] = True
    return seg, valid


def _random_affine(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(n, 2, 2) matrices and (n, 2) offsets: rotate, scale and shear about the centre, then shift."""
    angle = np.radians(rng.uniform(-15, 15, n))
    sx, sy = rng.uniform(0.8, 1.08, n), rng.uniform(0.8, 1.08, n)
    shear = rng.uniform(-0.25, 0.25, n)
    cos, sin = np.cos(angle), np.sin(angle)
    rot = np.stack([np.stack([cos, -sin], -1), np.stack([sin, cos], -1)], -2)
    shape = np.zeros((n, 2, 2))
    shape[:, 0, 0], shape[:, 0, 1], shape[:, 1, 1] = sx, shear * sx, sy
    shift = rng.uniform(-0.09, 0.09, (n, 2))
    return rot @ shape, shift


def _distance_to_segments(points: np.ndarray, seg: np.ndarray) -> np.ndarray:
    """Distance from each of P points (P, 2) to each segment of each sample (n, S, 2, 2): (n, S, P)."""
    seg = seg.astype(np.float32)
    ax, ay = seg[:, :, 0, 0, None], seg[:, :, 0, 1, None]        # (n, S, 1)
    dx, dy = seg[:, :, 1, 0, None] - ax, seg[:, :, 1, 1, None] - ay
    px, py = points[:, 0].astype(np.float32), points[:, 1].astype(np.float32)  # (P,)
    apx, apy = px - ax, py - ay                                   # (n, S, P)
    t = np.clip((apx * dx + apy * dy) / np.maximum(dx * dx + dy * dy, 1e-12), 0.0, 1.0)
    ex, ey = apx - t * dx, apy - t * dy
    return np.sqrt(ex * ex + ey * ey)


def make_digits(n: int, seed: int = 0, size: int = 12, noise: float = 0.2,
                chunk: int = 1000) -> Dataset:
    """`n` samples, labels cycling 0..9 in a random order, drawn from the generator seeded by `seed`."""
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.arange(n) % NUM_CLASSES).astype(np.int64)
    seg, valid = _segments()
    coords = (np.arange(size) + 0.5) / size
    points = np.stack(np.meshgrid(coords, coords, indexing="xy"), -1).reshape(-1, 2)  # (P, 2) as (x, y)
    images = np.empty((n, size * size), dtype=np.float32)
    for lo in range(0, n, chunk):
        lab = labels[lo:lo + chunk]
        m = len(lab)
        s = seg[lab] + rng.normal(0.0, 0.025, (m, seg.shape[1], 2, 2))
        matrix, shift = _random_affine(rng, m)
        s = np.einsum("nij,nskj->nski", matrix, s - 0.5) + 0.5 + shift[:, None, None]
        d = _distance_to_segments(points, s)
        d = np.where(valid[lab][:, :, None], d, np.inf).min(1)  # (m, P)
        width = rng.uniform(0.045, 0.085, (m, 1))
        ink = np.exp(-((d / width) ** 2))
        ink *= rng.uniform(0.7, 1.0, (m, 1))
        images[lo:lo + m] = ink + rng.normal(0.0, noise, ink.shape)
    return Dataset(images.reshape(n, 1, size, size), labels)


def train_test_split(n_train: int = 6000, n_test: int = 2000, seed: int = 0,
                     size: int = 12) -> tuple[Dataset, Dataset]:
    """The demo's data: disjoint train and test sets from one seed (the test set is drawn first)."""
    test = make_digits(n_test, seed=seed * 2 + 1, size=size)
    train = make_digits(n_train, seed=seed * 2 + 2, size=size)
    return train, test


def ascii_image(image: np.ndarray) -> str:
    """A (H, W) or (1, H, W) image as text, darker characters for more ink (for looking at the data)."""
    ramp = " .:-=+*#%@"
    img = np.clip(np.asarray(image).reshape(image.shape[-2:]), 0.0, 1.0)
    return "\n".join("".join(ramp[int(v * (len(ramp) - 1))] * 2 for v in row) for row in img)
