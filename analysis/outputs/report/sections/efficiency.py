"""Report section: per-cycle throughput per core and % of the bound of the inner loop that ran, the
figures each node type measured for those bounds, and the clock each inner loop ran at."""

from __future__ import annotations

import statistics

import pandas as pd

from analysis.outputs.report.blocks import Block
from analysis.stats.efficiency import LICENCE_DROP_PCT, clock_by_path
from sbcore import simd_bounds

TITLE = "Vectorisation: work per cycle and % of bound"


def efficiency_blocks(result, plots) -> list[Block]:
    """The registered report section (its heading, TITLE, comes from sections/__init__.py)."""
    table = getattr(result, "efficiency", None)
    b = []
    if table is None or not len(table):
        b.append(Block("p", "No record carries a measured core clock (clock_ghz): no per-cycle figures."))
        return b
    b.append(
        Block(
            "p",
            "Median useful iterations (Mandelbrot) or samples (π) per core cycle, with the clock each "
            "kernel measured around its compute region, against the bound of the inner loop that ran, "
            "derived from the latencies and instruction-mix throughputs measured on the host that ran "
            "it (hosts/bounds/<hostname>.json; what limits each bound: efficiency.csv and "
            "docs/simd-bounds.md). table_bound_per_cycle is the bound config/reference/simd_bounds.csv "
            "gives the core design, a cross-check only. Empty bound = nothing measured on that host.",
        )
    )
    docs = getattr(getattr(result, "campaign", None), "simd_bounds", None) or {}
    b.extend(Block("p", text) for text in basis_sentences(table, docs))
    b.extend(Block("p", text) for text in licence_sentences(clock_by_path(table)))
    above = table[table["pct_of_bound"] > 100.0]
    # A figure above its bound is a wrong bound, never shown as a percentage (efficiency.csv keeps it).
    shown = table.assign(pct_of_bound=table["pct_of_bound"].where(~(table["pct_of_bound"] > 100.0)))
    shown = shown.drop(columns=["case_id", "limited_by"]).rename(columns={"pct_of_bound": "% of bound"})
    b.append(Block("table", shown))
    if len(above):
        which = ", ".join(sorted(set(above["binary"].astype(str))))
        b.append(
            Block(
                "p",
                f"{len(above)} case(s) above 100 % of the measured bound ({which}), left empty in the "
                "table: a bound cannot be exceeded, so the measurement of that host's bound was wrong, most "
                "likely taken while another tenant shared the core (docs/simd-bounds.md, host phases); "
                "delete its hosts/bounds/<hostname>.json and run again to measure it anew.",
            )
        )
    if table["oversubscribed"].any():
        b.append(
            Block("p", "Oversubscribed cases (more workers than cores) share cores: per-core figures drop.")
        )
    return b


def basis_sentences(table: pd.DataFrame, docs: dict[str, dict]) -> list[str]:
    """Per node type: the measured figures its bounds rest on (the median over its hosts) and the
    bounds they give, or that nothing was measured there."""
    out = []
    for node_type, rows in table.groupby("node_type", sort=True, observed=True):
        hosts = sorted({h for text in rows["hosts"].dropna().astype(str) for h in text.split(",") if h})
        measured = [docs[h] for h in hosts if h in docs]
        if not measured:
            where = ", ".join(hosts) if hosts else "its hosts"
            out.append(
                f"{node_type}: no SIMD bounds measured (no hosts/bounds/<hostname>.json for {where}): "
                "% of bound is left empty."
            )
            continue
        out.append(f"{node_type}: {figures_text(median_doc(measured), [d['hostname'] for d in measured])}")
        for doc in measured:
            if names := simd_bounds.unsettled(doc):
                out.append(
                    f"{node_type}: on host {doc['hostname']} {', '.join(names)} did not settle (the two "
                    "halves of the measurement disagreed: another tenant shared the core through one of "
                    "them; each figure is still the floor of all its trials, docs/simd-bounds.md)."
                )
    return out


def median_doc(docs: list[dict]) -> dict:
    """One document with the median of each figure over the hosts (the paths all of them measured)."""
    paths = [p for p in simd_bounds.PATHS if all(p in d["paths"] for d in docs)]
    names = [n for p in paths for n in simd_bounds.FIGURES[p]]
    docs = [d | {"clock_ghz": d.get("clock_ghz", {})} for d in docs]
    clocks = {k for d in docs for k in d["clock_ghz"]}
    return docs[0] | {
        "paths": paths,
        "figures": {n: statistics.median(d["figures"][n] for d in docs) for n in names},
        "clock_ghz": {
            k: statistics.median(d["clock_ghz"][k] for d in docs if k in d.get("clock_ghz", {}))
            for k in clocks
        },
    }


def figures_text(doc: dict, hosts: list[str]) -> str:
    f, parts = doc["figures"], []
    if "scalar" in doc["paths"]:
        parts.append(
            f"scalar FP latency mul {f['lat_mulsd']:.2f}, add {f['lat_addsd']:.2f}, sub {f['lat_subsd']:.2f} "
            f"cycles, π's scalar loop {f['mix_mcpi_scalar']:.2f} cycles per sample"
        )
    for path, lanes, samples in (("avx2", 4, 4), ("avx512", 16, 8)):
        if path in doc["paths"]:
            bits = simd_bounds.BITS[path]
            lat = "/".join(f"{f[f'lat_{op}pd_{bits}']:.2f}" for op in ("mul", "add", "sub"))
            mandelbrot, pi = f[f"mix_mandelbrot_{bits}"], f[f"mix_mcpi_{bits}"]
            parts.append(
                f"{bits}-bit latency mul/add/sub {lat}, Mandelbrot mix {mandelbrot:.2f} cycles per {lanes} "
                f"lane-steps, π mix {pi:.2f} cycles per {samples} samples"
            )
    clock = doc.get("clock_ghz", {})
    if "plain" in clock:
        wide = f", beside 512-bit code {clock['beside_512bit']:.2f}" if "beside_512bit" in clock else ""
        parts.append(f"clock {clock['plain']:.2f} GHz{wide}")
    found = simd_bounds.bounds(doc)
    per_kernel = []
    for kernel, name in (("mandelbrot", "Mandelbrot"), ("mcpi", "π")):
        paths = [f"{b.inner_path} {b.per_cycle:.3g}" for b in found if b.kernel == kernel]
        if paths:
            per_kernel.append(f"{name} " + ", ".join(paths))
    many = f"median over {len(hosts)} hosts" if len(hosts) > 1 else f"host {hosts[0]}"
    return (
        f"measured on {doc['uarch']} ({many}): "
        + "; ".join(parts)
        + ". Bounds per cycle: "
        + "; ".join(per_kernel)
        + "."
    )


def licence_sentences(clocks: pd.DataFrame) -> list[str]:
    """Per node type (and core design): the clock each inner loop ran at, and whether the 512-bit path
    ran at a lower clock than the scalar or 256-bit loop on the same node type (a frequency licence)."""
    out = []
    for (node_type, uarch), group in clocks.groupby(["node_type", "uarch"], sort=True):
        rows = group.set_index("inner_path")
        ran = ", ".join(f"{p} {rows.loc[p, 'clock_ghz']:.2f} GHz" for p in sorted(rows.index))
        if "avx512" not in rows.index:
            verdict = "no 512-bit path ran, so no licence drop could show"
        elif rows.loc["avx512", "reference"] is None or pd.isna(rows.loc["avx512", "below_reference_pct"]):
            verdict = "no scalar or AVX2 case ran beside the 512-bit path: a licence drop cannot be told"
        else:
            ref, drop = rows.loc["avx512", "reference"], rows.loc["avx512", "below_reference_pct"]
            if drop >= LICENCE_DROP_PCT:
                verdict = f"licence drop seen: the 512-bit path ran {drop:.0f} % below the {ref} loop's clock"
            else:
                verdict = (
                    f"no licence drop seen: the 512-bit path's clock is within {LICENCE_DROP_PCT:.0f} % "
                    f"of the {ref} loop's"
                )
        out.append(
            f"Clock on {node_type} ({uarch}), median of its cases, each read beside code like its own "
            f"(the 512-bit path's beside 512-bit multiplies, clock.method): {ran}; {verdict}."
        )
    return out
