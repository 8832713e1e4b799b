"""Throughput and latency of the vector instructions the SIMD bounds rest on, on this core (prints,
asserts nothing).

docs/simd-bounds.md derives each kernel's bound (useful iterations or samples per core cycle) from
how many of which instructions one step needs and how many of each the core issues per cycle. This
measures the second half instead of taking it from published tables: for each instruction below, a
loop of 12 independent copies (throughput: cycles per instruction) or of 12 dependent ones
(latency: cycles per result), in 128/256/512-bit forms where the CPU has them.

Cycles are counted, not assumed: every timed loop is paired with a chain of dependent scalar adds
(one cycle each on every x86-64 core) run right before it in the same trial, and with a chain of
dependent 512-bit (or 256-bit) integer adds, which gives the clock *while vector code runs* (the
AVX-512 "licence" some Intel cores drop to shows there and not in the scalar chain). A trial's
figure is its loop's time divided by the adjacent scalar chain's time per add; the median over
trials is printed with the spread. Pinned to one CPU; CPU time of the thread (a preempted trial
only counts the time it ran).

The subset the bounds need (latencies of the Mandelbrot loops' FP ops, the loops' mixes) is measured on
every host a campaign runs on by build/bin/simd-bounds (kernels/bounds/simd_bounds.c, the same mixes),
and the records are held against that (docs/simd-bounds.md); this script measures more, for people.

Run: .venv/bin/python perf/perf_simd_ops.py [--trials N] [--cpu K] [--csv FILE]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

# One instruction form per row: (name, width in bits, the CPU flags it needs, asm with {d} the
# destination and {s} the source register; throughput loops write 12 destinations from 2 fixed
# sources, latency loops feed each result into the next).
REG = {64: "xmm", 256: "ymm", 512: "zmm"}  # 64: a scalar double in an xmm register
NEEDS = {64: ("avx",), 256: ("avx2",), 512: ("avx512f", "avx512dq")}


@dataclass(frozen=True)
class Op:
    name: str
    widths: tuple[int, ...]
    asm: str  # AT&T syntax: "{op} {s}, {t}, {d}"
    extra_flags: tuple[str, ...] = ()
    latency: bool = True  # also time a dependent chain


OPS = [
    Op("vmulsd", (64,), "vmulsd {s}, {t}, {d}"),
    Op("vaddsd", (64,), "vaddsd {s}, {t}, {d}"),
    Op("vmulpd", (256, 512), "vmulpd {s}, {t}, {d}"),
    Op("vaddpd", (256, 512), "vaddpd {s}, {t}, {d}"),
    Op("vsubpd", (256, 512), "vsubpd {s}, {t}, {d}"),
    Op("vpmullq", (256, 512), "vpmullq {s}, {t}, {d}", ("avx512vl", "avx512dq")),
    Op("vpmuludq", (256, 512), "vpmuludq {s}, {t}, {d}"),
    Op("vpmulld", (256, 512), "vpmulld {s}, {t}, {d}"),
    Op("vpaddq", (256, 512), "vpaddq {s}, {t}, {d}"),
    Op("vpxorq", (512,), "vpxorq {s}, {t}, {d}"),
    Op("vpxor", (256,), "vpxor {s}, {t}, {d}"),
    Op("vpsrlq", (256, 512), "vpsrlq $30, {s}, {d}"),
    Op("vpsllq", (256,), "vpsllq $32, {s}, {d}"),
    Op("vpand", (256,), "vpand {s}, {t}, {d}"),
    Op("vpor", (256,), "vpor {s}, {t}, {d}"),
    Op("vcvtuqq2pd", (256, 512), "vcvtuqq2pd {s}, {d}", ("avx512vl", "avx512dq")),
    Op("vcmppd->k", (512,), "vcmpltpd {s}, {t}, %k1", latency=False),
    Op("vcmppd", (256,), "vcmpltpd {s}, {t}, {d}"),
    Op("vpsubq{k}", (512,), "vpsubq {s}, {t}, {d}%{{%k1%}}", latency=False),
    Op("vblendmpd{k}", (512,), "vblendmpd {s}, {t}, {d}%{{%k1%}}", latency=False),
    Op("vpblendd", (256,), "vpblendd $0xaa, {s}, {t}, {d}"),
]

# Pairs of classes timed together (half the copies each): 0.5 cycles per instruction when each class
# has its own two pipes and the pair runs side by side at 0.25, more when they share.
PAIRS = [
    ("vmulpd", "vaddpd"),
    ("vpmullq", "vmulpd"),
    ("vpmullq", "vaddpd"),
    ("vpmullq", "vpsrlq"),
    ("vpsrlq", "vmulpd"),
    ("vpsrlq", "vaddpd"),
    ("vcvtuqq2pd", "vpsrlq"),
    ("vcvtuqq2pd", "vmulpd"),
    ("vcvtuqq2pd", "vaddpd"),
    ("vcvtuqq2pd", "vpmullq"),
]
# Each kernel's loop as a mix of independent instructions: (instruction, count per unit of work);
# the mix's cycles per unit, measured, is the bound of that loop's instruction mix on this core
# (its dependencies and branches are what the kernel adds). Counts are those of the loops as
# compiled (objdump -d build/obj/common/sb_*_simd.o); c comes as a memory operand, not timed here.
MIXES = {
    # per 2 vector steps (16 lane-steps): 2*x as x+x on every second vector
    ("mandelbrot", 512): [("vmulpd", 7), ("vaddpd", 7)],
    # per vector step (4 lane-steps): 4 multiplies, 3 adds
    ("mandelbrot", 256): [("vmulpd", 4), ("vaddpd", 3)],
    # per 8 samples of the AVX-512 loop (a quarter of its trip): 2 outputs x (3 shift-xor pairs, 2
    # 64-bit multiplies, shift and convert), 2 input adds, the hit test and the masked count
    # per 4 samples of the AVX2 loop (a quarter of its trip; its 25 register reloads per trip go to
    # the load pipes and are not timed here)
    ("mcpi", 256): [
        ("vpaddq", 11),
        ("vpsrlq", 10),
        ("vpxor", 6),
        ("vaddpd", 5),
        ("vpsllq", 4),
        ("vpmuludq", 4),
        ("vpmulld", 4),
        ("vpand", 4),
        ("vpor", 2),
        ("vpblendd", 2),
        ("vmulpd", 2),
        ("vcmppd", 1),
    ],
    ("mcpi", 512): [
        ("vpsrlq", 8),
        ("vpxorq", 6),
        ("vpmullq", 4),
        ("vpaddq", 2),
        ("vmulpd", 2),
        ("vcvtuqq2pd", 2),
        ("vaddpd", 1),
        ("vcmppd->k", 1),
        ("vpsubq{k}", 1),
    ],
}
# The clock while these run is measured too (a licence drop for wide vector code shows there).
CLOCK_OPS = ("vmulpd", "vpmullq")
COPIES = 12  # independent destinations per loop pass (registers 2..13; 0 and 1 are the sources)

PRELUDE = r"""
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <time.h>
static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}
static double scalar_chain(uint64_t n) { /* 8 dependent adds per pass: 1 cycle each */
    uint64_t acc = 0;
    double t0 = cpu_now();
    __asm__ volatile(".p2align 6\n1:\n\t"
                     "add %[one], %[acc]\n\tadd %[one], %[acc]\n\tadd %[one], %[acc]\n\t"
                     "add %[one], %[acc]\n\tadd %[one], %[acc]\n\tadd %[one], %[acc]\n\t"
                     "add %[one], %[acc]\n\tadd %[one], %[acc]\n\tdec %[n]\n\tjnz 1b"
                     : [acc] "+r"(acc), [n] "+r"(n) : [one] "r"((uint64_t)1) : "cc");
    return cpu_now() - t0;
}
"""


def asm_loop(width: int, body_lines: list[str], clobbers: list[str]) -> str:
    """The timed loop; its sources (and a chain's start) are set to 1.0 first, so that no FP input
    is a denormal (which would take a slow path) and a chain of products stays at 1.0."""
    r = REG[width]
    load = "vmovsd" if width == 64 else "vbroadcastsd"
    init = [f"{load} %[one], %%{r}0", f"vmovapd %%{r}0, %%{r}1", f"vmovapd %%{r}0, %%{r}{1 + COPIES}"]
    text = "".join(f'"{line}\\n\\t"\n' for line in init)
    text += '".p2align 6\\n1:\\n\\t"\n'
    text += "".join(f'"{line}\\n\\t"\n' for line in body_lines)
    clob = ", ".join(f'"{c}"' for c in [*clobbers, "cc"])
    return (
        f'    __asm__ volatile({text}"dec %[n]\\n\\tjnz 1b"\n'
        f'        : [n] "+r"(n), [acc] "+r"(acc) : [one] "m"(one), [inc] "r"((uint64_t)1) : {clob});\n'
    )


def op_lines(op: Op | tuple[Op, Op], width: int, kind: str) -> tuple[list[str], list[str]]:
    """kind: "tput" (independent copies), "lat" (a dependent chain) or "clock" (independent copies
    beside a chain of dependent scalar adds, one per copy, which then sets the pace: one cycle each
    whatever clock the core runs the vector code at)."""
    r = REG[width]
    chain = kind == "lat"
    if kind == "mix":
        return mix_lines(op, width)
    if kind == "pair":
        first, second = op
    lines, clobbers = [], [f"{r}0", f"{r}1"]
    for i in range(COPIES):
        if kind == "pair" and i % 2:
            op = second
        elif kind == "pair":
            op = first
        if kind == "clock":
            lines.append("add %[inc], %[acc]")
        d = f"%%{r}{2 + i}"
        # a chain reads the previous copy's result; throughput copies read only the two sources
        # (the other source stays fixed: an op of a register with itself may be a zeroing idiom)
        s = f"%%{r}{1 + i if i else 1 + COPIES}" if chain else f"%%{r}0"
        t = f"%%{r}1" if not chain else f"%%{r}0"
        lines.append(op.asm.format(s=s, t=t, d=d).replace("%k1", "%%k1"))
        clobbers.append(f"{r}{2 + i}")
    if any("%k1" in line for line in lines):
        clobbers.append("k1")
    return lines, clobbers


MIX_UNITS = 4  # units of a mix per loop pass (the loop's own decrement and branch are then few)


def mix_lines(mix: list[tuple[Op, int]], width: int) -> tuple[list[str], list[str]]:
    """MIX_UNITS units of the mix, the instructions dealt round-robin, destinations cycling through
    the 12 registers (a register written again is renamed: no dependency)."""
    r = REG[width]
    left = [[op, count * MIX_UNITS] for op, count in mix]
    lines, i = [], 0
    while any(count for _, count in left):
        for entry in left:
            if entry[1]:
                entry[1] -= 1
                d = f"%%{r}{2 + i % COPIES}"
                lines.append(entry[0].asm.format(s=f"%%{r}0", t=f"%%{r}1", d=d).replace("%k1", "%%k1"))
                i += 1
    clobbers = [f"{r}{k}" for k in range(2 + COPIES)] + ["k1"]
    return lines, clobbers


def c_source(forms: list[tuple[str, Op, int, str]]) -> str:
    """One function per timed loop, then main: trials x (scalar chain, loop) pairs, tab-separated."""
    parts = [PRELUDE]
    for fn, op, width, kind in forms:
        lines, clobbers = op_lines(op, width, kind)
        parts.append(
            f"static double {fn}(uint64_t n) {{\n    const double one = 1.0;\n    uint64_t acc = 0;\n"
        )
        parts.append("    double t0 = cpu_now();\n")
        parts.append(asm_loop(width, lines, clobbers))
        parts.append("    return cpu_now() - t0;\n}\n")
    table = ", ".join(fn for fn, *_ in forms)
    names = ", ".join(f'"{fn}"' for fn, *_ in forms)
    parts.append(
        f"""
static double (*const loops[])(uint64_t) = {{{table}}};
static const char *const names[] = {{{names}}};
int main(int argc, char **argv) {{
    int trials = argc > 1 ? atoi(argv[1]) : 30;
    uint64_t passes = argc > 2 ? strtoull(argv[2], 0, 10) : 20000;
    for (int t = 0; t < trials; t++)
        for (unsigned k = 0; k < sizeof loops / sizeof *loops; k++) {{
            double chain = scalar_chain(passes * {COPIES} / 8);
            double loop = loops[k](passes);
            printf("%s\\t%.9g\\t%.9g\\n", names[k], chain, loop);
        }}
    return 0;
}}
"""
    )
    return "#include <stdlib.h>\n" + "".join(parts)


def cpu_flags() -> set[str]:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def forms_for(flags: set[str]) -> list[tuple[str, Op, int, str]]:
    forms = []
    for op in OPS:
        for width in op.widths:
            need = set(NEEDS[width]) | set(op.extra_flags)
            if width == 512:
                need -= {"avx512vl"}
            if not need <= flags:
                continue
            base = f"{op.name.replace('->', '_to_').replace('{k}', '_k')}_{width}"
            forms.append((f"tput_{base}", op, width, "tput"))
            if op.latency:
                forms.append((f"lat_{base}", op, width, "lat"))
            if op.name in CLOCK_OPS:
                forms.append((f"clock_{base}", op, width, "clock"))
    usable = {(op.name, width): op for _, op, width, kind in forms if kind == "tput"}
    for (kernel, width), mix in MIXES.items():
        if all((name, width) in usable for name, _ in mix):
            forms.append((f"mix_{kernel}_{width}", [(usable[n, width], c) for n, c in mix], width, "mix"))
    for a, b in PAIRS:
        for width in (256, 512):
            if (a, width) in usable and (b, width) in usable:
                pair = (usable[a, width], usable[b, width])
                forms.append((f"pair_{a}__{b}_{width}", pair, width, "pair"))
    return forms


MEASURES = {
    "tput": "cycles/instr",
    "lat": "latency",
    "clock": "cycles/add",
    "pair": "pair c/instr",
    "mix": "cycles/unit",
}


def describe(fn: str) -> tuple[str, str, int]:
    kind, rest = fn.split("_", 1)
    name, width = rest.rsplit("_", 1)
    return MEASURES[kind], name.replace("__", "+"), int(width)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=30, help="pairs per loop (default 30)")
    parser.add_argument("--passes", type=int, default=200000, help="loop passes per trial (default 200000)")
    parser.add_argument("--cpu", type=int, default=0, help="CPU to pin to (default 0)")
    parser.add_argument("--csv", type=Path, help="also write the table as CSV here")
    args = parser.parse_args()
    cc = os.environ.get("CC") or shutil.which("cc") or "gcc"
    flags = cpu_flags()
    forms = forms_for(flags)
    if not forms:
        print("perf_simd_ops: this CPU has no AVX2: nothing to measure")
        return 0
    with tempfile.TemporaryDirectory(prefix="sb-simd-ops-") as tmp:
        src, exe = Path(tmp) / "ops.c", Path(tmp) / "ops"
        src.write_text(c_source(forms))
        isa = ["-mavx2"] + (["-mavx512f", "-mavx512dq", "-mavx512vl"] if "avx512f" in flags else [])
        subprocess.run([cc, "-O2", *isa, str(src), "-o", str(exe)], check=True)
        os.sched_setaffinity(0, {args.cpu})
        out = subprocess.run(
            [str(exe), str(args.trials), str(args.passes)], check=True, capture_output=True, text=True
        ).stdout
    ratios: dict[str, list[float]] = {}
    clocks: list[float] = []
    for line in out.splitlines():
        fn, chain, loop = line.split("\t")
        chain_s, loop_s = float(chain), float(loop)
        adds = args.passes * COPIES // 8 * 8
        clocks.append(adds / chain_s * 1e-9)
        # cycles per instruction: the loop's time over the chain's time per add (1 cycle)
        per_pass = MIX_UNITS if fn.startswith("mix_") else COPIES
        ratios.setdefault(fn, []).append(loop_s / (chain_s / adds) / (args.passes * per_pass))
    load = os.getloadavg()[0]
    print(
        f"perf_simd_ops: CPU {args.cpu}, {args.trials} trials of {args.passes} x {COPIES} per loop, "
        f"scalar-chain clock median {statistics.median(clocks):.3f} GHz, load average {load:.2f}"
    )
    rows = []
    print(f"{'instruction':<14} {'bits':>4} {'measure':<13} {'median':>7} {'min':>7} {'max':>7}")
    for fn, values in ratios.items():
        measure, name, width = describe(fn)
        row = (name, width, measure, statistics.median(values), min(values), max(values))
        rows.append(row)
        print(f"{name:<14} {width:>4} {measure:<13} {row[3]:7.3f} {row[4]:7.3f} {row[5]:7.3f}")
    # the clock while vector code runs: the scalar add chain beside it takes 1 cycle per add
    for name, width, measure, median, *_ in rows:
        if measure == "cycles/add":
            ghz = statistics.median(clocks) / median
            print(f"clock while {width}-bit {name} runs beside the scalar chain: {ghz:.3f} GHz")
    if args.csv:
        lines = ["instruction,bits,measure,median,min,max"]
        lines += [f"{n},{w},{m},{a:.4f},{b:.4f},{c:.4f}" for n, w, m, a, b, c in rows]
        args.csv.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
