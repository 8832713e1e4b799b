"""The one numpy Mandelbrot reference of the tests: the per-pixel loop of kernels/common/sb_mandelbrot.h
vectorised, same operation order, float64, no FMA (numpy never fuses), so it matches the kernels pixel
for pixel."""

from pathlib import Path

import numpy as np

PRESETS = {"symmetric": (-2.0, 0.5, -1.25, 1.25), "asymmetric": (-0.75, 0.25, 0.0, 1.0)}


def reference_counts(width: int, height: int, max_iter: int, region=PRESETS["symmetric"]) -> np.ndarray:
    """Iteration count per pixel, rows from the top (y1) down."""
    x0, x1, y0, y1 = region
    dx = (x1 - x0) / width
    dy = (y1 - y0) / height
    cx = x0 + (np.arange(width, dtype=np.float64) + 0.5) * dx
    cy = y1 - (np.arange(height, dtype=np.float64) + 0.5) * dy
    cx, cy = np.meshgrid(cx, cy)
    x = np.zeros_like(cx)
    y = np.zeros_like(cx)
    n = np.zeros(cx.shape, dtype=np.int64)
    for _ in range(max_iter):
        active = x * x + y * y <= 4.0
        if not active.any():
            break
        xt = (x * x - y * y) + cx
        yt = ((2.0 * x) * y) + cy
        x = np.where(active, xt, x)
        y = np.where(active, yt, y)
        n += active
    return n


def pgm16(counts: np.ndarray) -> bytes:
    """Counts as the kernels' --dump writes them: P5, 16 bits big-endian, clamped to 65535."""
    height, width = counts.shape
    header = f"P5\n{width} {height}\n65535\n".encode()
    return header + np.minimum(counts, 65535).astype(">u2").tobytes()


def read_pgm16(path: Path) -> np.ndarray:
    data = Path(path).read_bytes()
    magic, dims, maxval, rest = data.split(b"\n", 3)
    assert magic == b"P5" and maxval == b"65535"
    width, height = map(int, dims.split())
    assert len(rest) == 2 * width * height
    return np.frombuffer(rest, dtype=">u2").reshape(height, width).astype(np.int64)


def fnv1a64_u32le(counts: np.ndarray) -> int:
    """The kernels' Mandelbrot checksum: FNV-1a 64 over the counts as little-endian uint32."""
    h = 0xCBF29CE484222325
    for b in counts.astype("<u4").tobytes():
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h
