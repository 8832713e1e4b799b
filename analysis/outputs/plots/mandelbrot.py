"""The Mandelbrot image a kernel dumped (PGM)."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from analysis.outputs.plots.figure import (
    Plot,
    save,
)


def read_pgm(path: Path) -> np.ndarray:
    """P5 PGM (8- or 16-bit, big-endian) -> 2-D array."""
    data = path.read_bytes()
    fields, pos = [], 0
    while len(fields) < 4:
        while data[pos : pos + 1].isspace():
            pos += 1
        if data[pos : pos + 1] == b"#":
            pos = data.index(b"\n", pos)
            continue
        end = pos
        while not data[end : end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    if fields[0] != b"P5":
        raise ValueError(f"{path}: not a binary PGM (magic {fields[0]!r})")
    width, height, maxval = (int(f) for f in fields[1:])
    dtype = ">u2" if maxval > 255 else "u1"
    pixels = np.frombuffer(data, dtype=dtype, count=width * height, offset=pos + 1)
    return pixels.reshape(height, width)


def mandelbrot_plot(campaign_dir: Path, out_dir: Path) -> list[Plot]:
    dumps = sorted(
        p for p in campaign_dir.rglob("*.pgm") if "analysis" not in p.relative_to(campaign_dir).parts
    )
    if not dumps:
        return [
            Plot("mandelbrot", "Mandelbrot image", "image", skipped="no --dump PGM in the campaign directory")
        ]
    try:
        image = read_pgm(dumps[0])
    except (ValueError, OSError) as err:
        return [Plot("mandelbrot", "Mandelbrot image", "image", skipped=f"{dumps[0]}: unreadable ({err})")]
    fig, ax = plt.subplots(figsize=(7, 7 * image.shape[0] / image.shape[1] + 0.5))
    shown = ax.imshow(np.log1p(image.astype(float)), cmap="magma", interpolation="nearest")
    fig.colorbar(shown, ax=ax, label="log(1 + iteration count)")
    ax.set_title(f"{dumps[0].name} ({image.shape[1]} x {image.shape[0]} pixels)", fontsize=10)
    ax.set_xlabel("pixel column")
    ax.set_ylabel("pixel row")
    return [save(fig, out_dir, "mandelbrot", f"Mandelbrot image from {dumps[0].name}", "image")]
