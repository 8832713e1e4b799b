"""Microbenchmark tables (osbench, timing, smt kernels and the standard tools): per case the median
over repetitions of each record's per-operation statistics, the seeds' published figures beside ours
(config/reference/seed-00{1,3,4}-*.toml) and ours next to the standard tools run as kernels in the same
campaign (perf bench sched pipe, stress-ng --switch, cyclictest: kernels/tools/standard_tools.py) with
the ratio and the agreement verdict."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from scipy import stats

from analysis.reference_data import micro_references
from analysis.stats.median_interval import median_interval
from analysis.stats.smt import compare_with_topology, siblings_by_timing
from analysis.stats.verdicts import DEFAULT_MARGIN, EQUIVALENCE_CONFIDENCE, Band, equivalence, equivalence_in

MICRO_KERNELS = ("osbench", "timing", "smt")
TOOL_KERNELS = (
    "perfbench",
    "stressng",
    "cyclictest",
)  # the standard tools (lang "tool", kernels/tools/standard_tools.py)
UNIT = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "x": 1.0}
STATS = ("min_s", "median_s", "mean_s", "p99_s", "max_s")
NO_SMT = "needs a host with SMT (two hardware threads per core); this campaign's hosts have none"
CI_RESAMPLES = 200  # bootstrap draws of the repetitions for a published figure's CI
TOOL_RESAMPLES = 2000  # bootstrap draws of each side for the CI of ours / a standard tool's


RECORD_FIELDS = ("case_id", "node_type", "kernel", "lang", "threads", "rep", "host")  # what is read here


def micro_records(records: pd.DataFrame) -> list[dict]:
    """The measured (non-warm-up) records of the micro kernels and the standard tools, by case and
    repetition, as this module reads them: the fields it uses, with `params`, `result` (their own
    statistics, from the records table's result_json) and the pinned `pin.cpus`."""
    if "result_json" not in records or "kernel" not in records:
        return []
    mine = records[records["kernel"].isin(MICRO_KERNELS + TOOL_KERNELS) & ~records["warmup"].astype(bool)]
    mine = mine.assign(case_id=mine["case_id"].astype(str)).sort_values(["case_id", "rep"], kind="stable")
    out = []
    for row in mine.to_dict("records"):
        record = {k: row[k] for k in RECORD_FIELDS if k in row and pd.notna(row[k])}
        record["params"] = json.loads(row["params_json"])
        record["result"] = json.loads(row["result_json"]) if isinstance(row["result_json"], str) else {}
        cpus = row.get("pin_cpus")
        if isinstance(cpus, str) and cpus:
            record["pin"] = {"cpus": [int(c) for c in cpus.split(",")]}
        out.append(record)
    return out


def rep_table(records: list[dict]) -> pd.DataFrame:
    """One row per repetition: kernel, threads, params and each numeric statistic of its record."""
    rows = []
    for r in records:
        row = {
            "case_id": r.get("case_id", ""),
            "node_type": r.get("node_type", ""),
            "kernel": r["kernel"],
            "threads": r["threads"],
            "rep": r["rep"],
        }
        row.update({f"param_{k}": str(v) for k, v in r["params"].items()})
        row["op"] = r["result"].get("op", "")
        row.update(
            {k: v for k, v in r["result"].items() if isinstance(v, int | float) and not isinstance(v, bool)}
        )
        rows.append(row)
    return pd.DataFrame(rows)


def _case_keys(df: pd.DataFrame) -> list[str]:
    return [
        c
        for c in df.columns
        if c in ("case_id", "node_type", "kernel", "threads", "op") or c.startswith("param_")
    ]


def medians_by_case(reps: pd.DataFrame) -> pd.DataFrame:
    """One row per case: the median over its repetitions of each statistic, and their count."""
    keys = _case_keys(reps)
    numeric = [c for c in reps.columns if c not in keys and c != "rep"]
    table = reps.groupby(keys, dropna=False)[numeric].median().reset_index()
    table.insert(len(keys), "reps", reps.groupby(keys, dropna=False).size().to_numpy())
    return table


def case_table(records: list[dict]) -> pd.DataFrame:
    """One row per case: kernel, threads, params, and the median over repetitions of each statistic."""
    reps = rep_table(records)
    return medians_by_case(reps) if len(reps) else pd.DataFrame()


def _matching(table: pd.DataFrame, match: dict, threads: int | None = None) -> pd.DataFrame:
    sel = table
    for key, value in match.items():
        column = f"param_{key.replace('_', '-')}" if f"param_{key}" not in table.columns else f"param_{key}"
        if column not in sel.columns:
            return sel.iloc[0:0]
        sel = sel[sel[column] == str(value)]
    if threads is not None:
        sel = sel[sel["threads"] == threads]
    # smt cases pinned by their own CPU list or prioritised by --nices answer another question (P3)
    if "cpus" not in match and "param_cpus" in sel.columns:
        sel = sel[~sel["param_cpus"].fillna("").str.match(r"^\d")]
    if "nices" not in match and "param_nices" in sel.columns:
        sel = sel[sel["param_nices"].fillna("").isin(["", "0,0", "nan"])]
    return sel


def ours_for(table: pd.DataFrame, figure: dict) -> tuple[float | None, str]:
    """Our value for one reference figure (in the figure's unit) and how it was formed."""
    stat, match, scale = figure["stat"], figure.get("match", {}), UNIT.get(figure.get("unit", "s"), 1.0)
    if stat in ("mean", "min", "max") or stat == "smallest_step":
        column = "smallest_step_s" if stat == "smallest_step" else f"{stat}_s"
        sel = _matching(table, match)
        if column not in sel.columns or sel[column].dropna().empty:
            return None, "no matching case"
        value = sel[column].min() if stat in ("min", "smallest_step") else sel[column].median()
        typical = (
            f", median {sel['median_s'].median() / scale:.4g} {figure.get('unit', '')}"
            if stat == "mean"
            else ""
        )
        return value / scale, f"{column} over {len(sel)} case(s){typical}"
    if stat in ("ht_speedup", "slowdown"):
        base_match = {k: v.split(",")[0] for k, v in match.items()}
        alone = _matching(table, base_match, threads=1)
        other = _matching(table, match, threads=2)
        if alone.empty or other.empty:
            return None, "needs the 1-worker and the 2-worker case"
        t1, t2 = alone["median_s"].median(), other["median_s"].median()
        if stat == "slowdown":
            return t2 / t1, "t(next to sibling) / t(alone)"
        return 2 * t1 / t2, "2 t(alone) / t(pair)"
    if stat == "period":
        sel = _matching(table, match)
        return (None, "no matching case") if sel.empty else (sel["period_s"].median() / scale, "our period")
    return None, f"unknown stat '{stat}'"


def resampled_case_tables(reps: pd.DataFrame, resamples: int, rng: np.random.Generator):
    """Case tables of repetitions drawn with replacement within each case (a bootstrap over
    repetitions), one per resample."""
    groups = [g for _, g in reps.groupby("case_id", sort=True)]
    for _ in range(resamples):
        drawn = [g.iloc[rng.integers(0, len(g), len(g))] for g in groups]
        yield medians_by_case(pd.concat(drawn, ignore_index=True))


def figure_verdict(fig: dict, ours, low, high, n) -> tuple[str, float]:
    """The equivalence verdict (analysis/stats/verdicts.py) of ours against a published figure."""
    if ours is None or pd.isna(low):
        return ("not measured" if ours is None else "inconclusive"), np.nan
    value = fig["value"]
    verdicts, needed = equivalence(
        [ours / value], [low / value], [high / value], fig.get("margin", DEFAULT_MARGIN), [max(n, 1)]
    )
    return str(verdicts[0]), float(needed[0])


def reference_table(
    table: pd.DataFrame,
    references: list[dict] | None = None,
    reps: pd.DataFrame | None = None,
    seed: int = 0,
    smt: bool = False,
) -> pd.DataFrame:
    """Every published figure with ours beside it (same unit), ours / published, and, given the
    repetitions (`reps`: rep_table), ours' 90 % bootstrap CI and the equivalence verdict; per node type
    (`references`: reference_data.micro_references()). A figure marked `not_reproducible` says why, as
    does one that `requires = "smt"` when no host of the campaign has SMT (`smt`); one marked
    `not_comparable` shows ours and the ratio, gets no verdict, and says why."""
    references = micro_references() if references is None else references
    if len(table) and table["node_type"].nunique() > 1:
        parts = [
            reference_table(
                part, references, None if reps is None else reps[reps["node_type"] == node], seed, smt
            )
            for node, part in table.groupby("node_type")
        ]
        return pd.concat(parts, ignore_index=True)
    figures = [(ref, fig) for ref in references for fig in ref.get("figure", [])]
    resampled = []
    if reps is not None and len(reps):
        rng = np.random.default_rng(seed)
        resampled = list(resampled_case_tables(reps, CI_RESAMPLES, rng))
    rows = []
    for ref, fig in figures:
        reason = fig.get("not_reproducible")
        if reason:
            ours, how = None, f"not reproducible here: {reason}"
        else:  # (a figure that needs SMT shows what ran, without a verdict, on a host without it)
            ours, how = ours_for(table, fig) if len(table) else (None, "no micro records")
            if fig.get("requires") == "smt" and not smt:
                reason, how = NO_SMT, f"{how}; not reproducible here: {NO_SMT}"
        low = high = coverage = np.nan
        single = one_case_values(reps, table, fig) if ours is not None and reps is not None else None
        if single is not None:  # a median over one case's repetitions: the distribution-free interval
            low, high, coverage = median_interval(single / UNIT.get(fig.get("unit", "s"), 1.0), 0.90)
        elif ours is not None and resampled:
            draws = [v for v, _ in (ours_for(t, fig) for t in resampled) if v is not None]
            if len(draws) == len(resampled):
                tail = (1 - EQUIVALENCE_CONFIDENCE) / 2
                low, high = np.quantile(draws, [tail, 1 - tail])
        n = int(table["reps"].min()) if "reps" in table and len(table) else 0
        verdict, needed = (
            ("not reproducible here", np.nan) if reason else figure_verdict(fig, ours, low, high, n)
        )
        if not reason and fig.get("not_comparable"):
            verdict, needed = "not comparable", np.nan
            how = f"{how}; not comparable: {fig['not_comparable']}"
        rows.append(
            {
                "seed": ref.get("seed", ""),
                "node_type": table["node_type"].iloc[0] if len(table) else "",
                "what": fig["what"],
                "published": fig["value"],
                "unit": fig.get("unit", ""),
                "ours": ours,
                "ci_low": low,
                "ci_high": high,
                "coverage": coverage,
                "ratio": ours / fig["value"] if ours is not None and fig["value"] else None,
                "margin": fig.get("margin", DEFAULT_MARGIN),
                "verdict": verdict,
                "needed_n": needed,
                "how": how,
                "binding": binding_note(fig),
            }
        )
    return pd.DataFrame(rows)


def one_case_values(reps: pd.DataFrame, table: pd.DataFrame, fig: dict) -> np.ndarray | None:
    """The per-repetition values behind a "mean" figure bound to exactly one case (ours is then their
    median), else None (ours combines cases or is no median: its interval is the bootstrap's)."""
    if fig["stat"] != "mean" or "mean_s" not in reps:
        return None
    sel = _matching(table, fig.get("match", {}))
    if len(sel) != 1:
        return None
    return reps.loc[reps["case_id"] == sel["case_id"].iloc[0], "mean_s"].to_numpy(dtype=float)


def binding_note(fig: dict) -> str:
    """What a reader must know about how the figure is bound: inferred readings, derived values."""
    notes = [f"{k}: {fig[k]}" for k in ("inferred", "derived_from") if fig.get(k)]
    return "; ".join(notes)


def _case_medians(records: list[dict]) -> dict[str, dict]:
    """Per case: its first record (for kernel, params, node type, placement) and the median over its
    repetitions of each numeric result statistic, with the repetition count."""
    by_case: dict[str, list[dict]] = {}
    for r in records:
        by_case.setdefault(r.get("case_id", ""), []).append(r)
    out = {}
    for case_id, reps in by_case.items():
        numbers = pd.DataFrame(
            [{k: v for k, v in r["result"].items() if isinstance(v, int | float) and not isinstance(v, bool)}
             for r in reps]
        )  # fmt: skip
        out[case_id] = {
            "first": reps[0],
            "median": numbers.median().to_dict(),
            "values": numbers,
            "reps": len(reps),
        }
    return out


def _pinned_to(record: dict) -> tuple[int, ...] | None:
    cpus = (record.get("pin") or {}).get("cpus")
    return tuple(cpus) if cpus else None


def _params_text(params: dict, keys) -> str:
    return " ".join(f"{k}={params[k]}" for k in keys if k in params)


def ratio_with_ci(
    base: np.ndarray, point: np.ndarray, rng: np.random.Generator
) -> tuple[float, float, float]:
    """median(base) / median(point) and its 90 % percentile-bootstrap CI (two independent samples:
    the tools' few repetitions, 3 in seed-003, give no order-statistic interval, docs/analysis.md)."""
    ratio = float(np.median(base) / np.median(point))
    if len(base) < 2 or len(point) < 2:
        return ratio, np.nan, np.nan
    if np.ptp(base) == 0 and np.ptp(point) == 0:  # every repetition alike (a count): no spread to resample
        return ratio, ratio, ratio
    res = stats.bootstrap(
        (base, point),
        lambda b, p, axis: np.median(b, axis=axis) / np.median(p, axis=axis),
        vectorized=True,
        paired=False,
        confidence_level=EQUIVALENCE_CONFIDENCE,
        n_resamples=TOOL_RESAMPLES,
        method="percentile",
        rng=rng,
    )
    return ratio, float(res.confidence_interval.low), float(res.confidence_interval.high)


def tools_table(records: list[dict]) -> pd.DataFrame:
    """Ours next to the standard tools measured in the same campaign: for every tool case, every case of
    ours that measures the same quantity (the tool record's `compares_with`: kernel and params) on the same
    node type pinned to the same CPUs; the compared statistic is the median over each case's repetitions.
    Columns: ratio = ours / theirs in our definition of the operation; `agrees`: the ratio lies in the
    range the definitions predict (`expected_low`..`expected_high`, from the tool record; AGREEMENT where
    both measure the same thing) by the equivalence rule (analysis/stats/verdicts.py): the 90 % CI of
    the ratio of medians wholly inside the range (`verdict` agrees, `agrees` true), wholly outside
    (differs), else inconclusive."""
    cases = _case_medians(records)
    rng = np.random.default_rng(0)
    tools = [c for c in cases.values() if c["first"].get("lang") == "tool"]
    rows = []
    for theirs in sorted(tools, key=lambda c: (c["first"]["kernel"], sorted(c["first"]["params"].items()))):
        t = theirs["first"]
        want = t["result"]["compares_with"]
        stat = want["stat"]
        for ours in cases.values():
            o = ours["first"]
            if (
                o.get("lang") == "tool"
                or o["kernel"] != want["kernel"]
                or o.get("node_type") != t.get("node_type")
                or _pinned_to(o) != _pinned_to(t)
                or any(str(o["params"].get(k)) != str(v) for k, v in want["params"].items())
            ):
                continue
            ours_s, theirs_s = ours["median"].get(stat), theirs["median"].get(stat)
            if not (pd.notna(ours_s) and pd.notna(theirs_s) and ours_s > 0 and theirs_s > 0):
                continue
            r, ci_low, ci_high = ratio_with_ci(
                ours["values"][stat].to_numpy(dtype=float), theirs["values"][stat].to_numpy(dtype=float), rng
            )
            low, high = t["result"].get("expected_ratio", AGREEMENT)
            verdict, needed = equivalence_in(
                [r], [ci_low], [ci_high], Band(low, high), [min(ours["reps"], theirs["reps"])]
            )
            factor = theirs["median"].get("our_ops_per_their_op", 1)
            rows.append(
                {
                    "node_type": t.get("node_type", ""),
                    "cpus": ",".join(map(str, _pinned_to(t) or ())) or "unpinned",
                    "ours": f"{o['kernel']} {_params_text(o['params'], want['params'])}",
                    "theirs": f"{t['kernel']} {_params_text(t['params'], t['params'])}",
                    "stat": stat.removesuffix("_s"),
                    "ours_us": ours_s * 1e6,
                    "theirs_us": theirs_s * 1e6,
                    "reps_ours": ours["reps"],
                    "reps_theirs": theirs["reps"],
                    "ratio": r,
                    "ci_low": ci_low,
                    "ci_high": ci_high,
                    "expected_low": low,
                    "expected_high": high,
                    "verdict": verdict[0],
                    "needed_n": needed[0],
                    "agrees": verdict[0] == "agrees",
                    "our_ops_per_their_op": factor,
                    "switches_per_their_op": theirs["median"].get("switches_per_their_op"),
                    "definition": t["result"].get("definition", ""),
                }
            )
    return pd.DataFrame(rows)


def siblings_table(hosts: dict[str, dict], records: list[dict]) -> pd.DataFrame:
    """Per host: SMT pairs found by timing (smt cases with their own --cpus: one worker alone per CPU,
    two workers on a pair) against the sibling groups of the host's likwid topology (hosts/<host>.json)."""
    alone: dict[str, dict[int, list[float]]] = {}
    pairs: dict[str, dict[tuple[int, int], list[float]]] = {}
    for r in records:
        cpus = str(r["params"].get("cpus", ""))
        if r["kernel"] != "smt" or not cpus or str(r["params"].get("nices", "")) not in ("", "0,0"):
            continue
        ids = [int(c) for c in cpus.split(",")][: r["threads"]]
        host = r.get("host", "")
        if len(ids) == 1:
            alone.setdefault(host, {}).setdefault(ids[0], []).append(r["result"]["median_s"])
        elif len(ids) == 2 and ids[0] != ids[1]:
            pairs.setdefault(host, {}).setdefault(tuple(sorted(ids)), []).append(r["result"]["max_s"])
    rows = []
    for host, host_pairs in sorted(pairs.items()):
        a = {cpu: float(pd.Series(t).median()) for cpu, t in alone.get(host, {}).items()}
        p = {pair: float(pd.Series(t).median()) for pair, t in host_pairs.items() if set(pair) <= set(a)}
        if not p:
            continue
        found = siblings_by_timing(a, p)
        groups = sibling_groups(hosts[host]["topology"]) if host in hosts else []
        verdict = compare_with_topology(found, [g for g in groups if len(g) > 1])
        rows.append(
            {
                "host": host,
                "pairs_timed": " ".join(f"{x},{y}" for x, y in sorted(p)),
                "slowdowns": " ".join(f"{t / max(a[x], a[y]):.2f}" for (x, y), t in sorted(p.items())),
                "siblings_by_timing": " ".join(f"{x},{y}" for x, y in found) or "none",
                "siblings_by_likwid": " ".join(",".join(map(str, g)) for g in groups if len(g) > 1) or "none",
                "agree": not verdict["invented"] and not [m for m in verdict["missed"] if m in p],
            }
        )
    return pd.DataFrame(rows)


def micro_tables(table: pd.DataFrame, hosts: dict[str, dict]) -> dict[str, pd.DataFrame]:
    """The CSV tables of this module from the records table, by file name (none without a micro
    kernel's record); `hosts`: campaign.read_hosts."""
    if "kernel" not in table or not table["kernel"].isin(MICRO_KERNELS).any():
        return {}
    records = micro_records(table)
    reps = rep_table(records)
    cases = medians_by_case(reps) if len(reps) else pd.DataFrame()
    tables = {}
    if len(cases):
        tables["micro.csv"] = cases
        mine = cases["kernel"].isin(MICRO_KERNELS)
        tables["micro_reference.csv"] = reference_table(
            cases[mine], reps=reps[reps["kernel"].isin(MICRO_KERNELS)]
        )
    siblings = siblings_table(hosts, records)
    if len(siblings):
        tables["micro_siblings.csv"] = siblings
    tools_rows = tools_table(records)
    if len(tools_rows):
        tables["micro_tools.csv"] = tools_rows
    return tables


# Agreement: ours / theirs within [0.75, 1/0.75]: "within 25 %" whichever of the two is taken as the base.
AGREEMENT = (0.75, 1 / 0.75)


def has_smt(hosts: dict[str, dict]) -> bool:
    """True when a host of the campaign has a core with more than one hardware thread."""
    return any(len(g) > 1 for h in hosts.values() for g in sibling_groups(h.get("topology") or {}))


def sibling_groups(topology: dict) -> list[list[int]]:
    """Hardware threads sharing a core (same socket and core id) in a host file's `topology`."""
    groups: dict[tuple[int, int], list[int]] = {}
    for h in topology.get("hwthreads", []):
        groups.setdefault((h["socket"], h["core"]), []).append(h["hwthread"])
    return [sorted(g) for _, g in sorted(groups.items())]
