"""``python -m benchmarks.table [RESULTS.json]``: the READMEs' tables and figures from a results
document (default: the committed CPU reference ``benchmarks/results/cpu.json``).

Rewrites the part of ``benchmarks/README.md`` between ``<!-- table:start -->`` and
``<!-- table:end -->``, the project README's performance block (:func:`summary`), and draws ``benchmarks/figures/throughput.png`` (client-oracle
evaluations per second against ``n``, log–log) and ``benchmarks/figures/roofline.png`` (each
batched product's flops per byte against its GFLOP/s, under the measured copy bandwidth and
one-thread matmul peak).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "cpu.json"
README = HERE / "README.md"
START, END = "<!-- table:start -->", "<!-- table:end -->"
#: the project README's performance block (the summary and the throughput figure)
MAIN_README = HERE.parent / "README.md"
MAIN_START, MAIN_END = "<!-- BEGIN performance -->", "<!-- END performance -->"


def _mib(value) -> str:
    return "" if value is None else f"{value / 2**20:.0f}"


def bound(case: dict[str, Any], copy_gbs: float, peak_gflops: float) -> str:
    """Which roof limits a bandwidth case: the larger of its time at the copy bandwidth and
    its time at the peak flop rate, and how far the measurement is above it."""
    t_mem = case["bytes_model"] / (copy_gbs * 1e9)
    t_flop = case["flops_model"] / (peak_gflops * 1e9)
    roof = "memory" if t_mem >= t_flop else "compute"
    return f"{roof} ({case['seconds'] / max(t_mem, t_flop):.1f}× the roof)"


#: The stages of the library's batched product per storage family (keys of the breakdown).
LIBRARY_STAGES = {
    "structured": ("v @ U", "gather a.take(idx, 0)", "(v@U) * a_i", "... @ U.T"),
    "dense": ("gather M.take(idx, 0)", "batched M_i @ v"),
}


def _ns_per_row(case: dict[str, Any]) -> float:
    return 1e9 * case["seconds"] / (case["replicates"] * case["sampled_clients"])


def _stage_sum(case: dict[str, Any]):
    """``(ns per row of the library's stages run one after another, their names, the
    gather's fraction of the copy bandwidth)``, or ``None`` without a breakdown."""
    names = LIBRARY_STAGES.get(case["storage"], ())
    stages = case.get("breakdown", {})
    if not names or not all(n in stages for n in names):
        return None
    gather = next(stages[n]["fraction_of_copy"] for n in names if n.startswith("gather"))
    return sum(stages[n]["ns_per_row"] for n in names), names, gather


def tables(doc: dict[str, Any]) -> str:
    """Markdown tables: speedup cases, rounds grid, bandwidth, FedNest loop, memory."""
    m = doc["machine"]
    copy = doc["copy_bandwidth"]["gbytes_per_s"]
    peak = doc.get("peak_flops", {}).get("gflops")
    load = m.get("load_average")
    lines = [f"Measured on {m['cpu_model']}, {m['cores']} cores, numpy {m['numpy']}, BLAS "
             f"{m['blas'].get('blas', {}).get('name')} {m['blas'].get('blas', {}).get('version')}"
             f", {'quick' if doc.get('quick') else 'full'} grid; copy bandwidth {copy:.1f} GB/s"
             + (f", one-thread matmul peak {peak:.1f} GFLOP/s" if peak else "")
             + (f"; load average at start {load[0]:.1f} (a shared machine: timings are noisy)"
                if load else "") + ".", ""]
    per_eval = [c["reference_seconds_per_client_eval"] for c in doc.get("speedup", ())
                if c.get("noise_distribution", "gaussian") == "gaussian" and c["noise"] > 0]
    loop_eval = min(per_eval) if per_eval else None
    if doc.get("speedup"):
        lines += ["**FedMBO round, library vs the per-client loop** (same recorded draws, one "
                  "process, side by side)", "",
                  "| d | R | n | noise | library s/round | loop s/round | speedup | "
                  "library peak MiB |", "|---|---|---|---|---|---|---|---|"]
        for c in doc["speedup"]:
            noise = (f"{c['noise']} {c.get('noise_distribution', 'gaussian')}" if c["noise"] > 0
                     else "none")
            ext = " (extrapolated)" if c["reference_extrapolated"] else ""
            lines.append(f"| {c['dim']} | {c['replicates']} | {c['sampled_clients']} | {noise} | "
                         f"{c['vectorized_seconds']:.4g} | {c['reference_seconds']:.3g}{ext} | "
                         f"{c['speedup']:.1f}× | "
                         f"{_mib(c.get('vectorized_peak_memory_bytes'))} |")
        lines.append("")
    if doc.get("rounds"):
        lines += ["**Rounds grid** (loop: the measured per-evaluation cost of the noisy loop × "
                  "the round's evaluations, an estimate)", "",
                  "| algorithm | d | R | n | library s/round | client evals/s | loop s/round "
                  "(≈) | library peak MiB |", "|---|---|---|---|---|---|---|---|"]
        for r in doc["rounds"]:
            head = f"| {r['algorithm']} | {r['dim']} | {r['replicates']} | {r['sampled_clients']}"
            if "skipped" in r:
                lines.append(f"{head} | skipped: {r['skipped']} | | | |")
                continue
            loop = "" if loop_eval is None else f"{loop_eval * r['client_oracle_evals']:.3g}"
            lines.append(f"{head} | {r['seconds_per_round']:.4g} | {r['evals_per_second']:.3g} | "
                         f"{loop} | {_mib(r['peak_memory_bytes'])} |")
        lines.append("")
    if doc.get("bandwidth"):
        lines += ["**Batched Hessian-vector product** (`exact_hvp_yy_g`, the library path; "
                  "fractions of the copy bandwidth measured at the suite's start and of a copy "
                  "timed alternately with the product, i.e. under the same load; the busy-core "
                  "columns use the latter)", "",
                  "| case | GB/s | % copy (start) | % adjacent copy | GFLOP/s | bound | "
                  "busy cores: pinned | busy cores: unpinned |",
                  "|---|---|---|---|---|---|---|---|"]
        for c in doc["bandwidth"]:
            cont = c.get("contended")
            def pct(r):
                return (f"{100 * r['fraction_of_adjacent_copy']:.0f}% "
                        f"({r['gbytes_per_s']:.2f} GB/s)")
            pin = pct(cont["pinned"]) if cont else ""
            unpin = (f"{pct(cont['unpinned'])}, BLAS threads {cont['blas_threads_unpinned']}"
                     if cont else "")
            lines.append(f"| {c['storage']} d={c['dim']} m={c['clients']} R={c['replicates']} "
                         f"n={c['sampled_clients']} | {c['gbytes_per_s']:.2f} | "
                         f"{100 * c['fraction_of_copy']:.0f}% | "
                         f"{100 * c.get('fraction_of_adjacent_copy', float('nan')):.0f}% | "
                         f"{c['gflops']:.2f} | "
                         f"{bound(c, copy, peak) if peak else ''} | {pin} | {unpin} |")
        staged = [(c, _stage_sum(c)) for c in doc["bandwidth"] if _stage_sum(c)]
        if staged:
            lines += ["", "What bounds them: the library product against its own stages, each "
                      "run alone over all rows (numpy passes, measured in the same run) — "
                      + "; ".join(
                          f"{c['storage']} d={c['dim']}: {_ns_per_row(c):.0f} ns/row fused vs "
                          f"{total:.0f} ns/row for {' + '.join(names)} one after another, the "
                          f"gather alone at {100 * gather:.0f}% of the copy bandwidth"
                          for c, (total, names, gather) in staged)
                      + ". Every stage alone runs at about half the copy bandwidth or less (a "
                        "random row gather is not a stream; a (k×d)·(d×d) product with d ≤ 32 "
                        "is far from the large-matrix peak); the fused kernel still performs "
                        "every stage, and its bound is access and small-matrix arithmetic, not "
                        "streaming bandwidth."]
        whole = [(c, c["contended"]["unblocked_product_ns_per_row"]) for c in doc["bandwidth"]
                 if c.get("contended", {}).get("unblocked_product_ns_per_row")]
        if whole:
            lines += ["", "What the pinning protects, under the same busy processes: one "
                      "unblocked `v @ U` over all rows (the earlier library path's first "
                      "product) — " + "; ".join(
                          f"{c['storage']} d={c['dim']}: {w['pinned']:.1f} ns/row pinned vs "
                          f"{w['blas_default']:.1f} ns/row at the BLAS default"
                          for c, w in whole) + "."]
        lines.append("")
    if doc.get("fednest_loop"):
        lines += ["**FedNest epoch: per-client federated code vs the toolkit** (all clients "
                  "participating, d = 10, noisy)", "",
                  "| m | loop s/epoch | toolkit s/epoch | ratio | torch loop s/epoch |",
                  "|---|---|---|---|---|"]
        for r in doc["fednest_loop"]:
            torch = r["torch"]
            t = f"{torch['loop_seconds']:.3g}" if "loop_seconds" in torch else torch["skipped"]
            lines.append(f"| {r['clients']} | {r['loop_seconds']:.3g} | "
                         f"{r['toolkit_seconds']:.3g} | {r['ratio']:.0f}× | {t} |")
        lines.append("")
    mm = doc.get("memory")
    if mm and "peak_rss_bytes" in mm:
        lines.append(f"Peak RSS of one FedMBO round, m = {mm['clients']}, d = {mm['dim']}, "
                     f"R = {mm['replicates']}, n = {mm['sampled_clients']}: "
                     f"{mm['peak_rss_bytes'] / 2**30:.2f} GiB (fresh subprocess).")
    return "\n".join(lines)


def summary(doc: dict[str, Any]) -> str:
    """The project README's block: the speedup cases against the target, the batched
    products' share of the copy bandwidth, and the throughput figure."""
    m = doc["machine"]
    target = doc.get("targets", {}).get("speedup", {}).get("minimum", 50.0)
    lines = [f"Measured on {m['cpu_model']} ({m['cores']} cores), numpy {m['numpy']}; "
             "regenerated by `python -m benchmarks.table` from `benchmarks/results/cpu.json`.",
             "", f"| FedMBO round, d = 10 | library s | per-client loop s | speedup "
             f"(target ≥ {target:g}×) |", "|---|---|---|---|"]
    for c in doc.get("speedup", ()):
        noise = (f"{c.get('noise_distribution', 'gaussian')} noise" if c["noise"] > 0
                 else "noise-free")
        lines.append(f"| R = {c['replicates']}, n = {c['sampled_clients']}, {noise} | "
                     f"{c['vectorized_seconds']:.3g} | {c['reference_seconds']:.3g} | "
                     f"{c['speedup']:.0f}× |")
    if doc.get("bandwidth"):
        lines += ["", "Batched Hessian-vector products (full-grid sizes): " + "; ".join(
            f"{c['storage']} d = {c['dim']}: {100 * c.get('fraction_of_adjacent_copy', 0):.0f}"
            "% of the copy bandwidth" for c in doc["bandwidth"]) + "."]
    lines += ["", "![client-oracle evaluations per second against n]"
                  "(benchmarks/figures/throughput.png)"]
    return "\n".join(lines)


def figures(doc: dict[str, Any], out: Path = HERE / "figures") -> list[Path]:
    """Throughput against ``n`` and the roofline; returns the files written."""
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    out.mkdir(parents=True, exist_ok=True)
    written = []
    rows = [r for r in doc.get("rounds", ()) if "evals_per_second" in r]
    if rows:
        fig, ax = plt.subplots(figsize=(6, 4))
        for key in sorted({(r["algorithm"], r["dim"], r["replicates"]) for r in rows}):
            pts = sorted((r["sampled_clients"], r["evals_per_second"]) for r in rows
                         if (r["algorithm"], r["dim"], r["replicates"]) == key)
            ax.loglog(*zip(*pts), marker="o", label=f"{key[0]} d={key[1]} R={key[2]}")
        per_eval = [c["reference_seconds_per_client_eval"] for c in doc.get("speedup", ())]
        if per_eval:
            ax.axhline(1 / min(per_eval), color="k", ls=":", label="per-client loop")
        ax.set_xlabel("sampled clients n")
        ax.set_ylabel("client-oracle evaluations / s")
        ax.set_title("Throughput of one round (numpy, CPU)")
        written.append(_save(fig, ax, out / "throughput.png"))
    peak = doc.get("peak_flops", {}).get("gflops")
    if doc.get("bandwidth") and peak:
        copy = doc["copy_bandwidth"]["gbytes_per_s"]
        fig, ax = plt.subplots(figsize=(6, 4))
        ai = [c["flops_model"] / c["bytes_model"] for c in doc["bandwidth"]]
        lo, hi = min(ai) / 4, max(ai) * 4
        xs = [lo * (hi / lo) ** (k / 50) for k in range(51)]
        ax.loglog(xs, [min(peak, x * copy) for x in xs], "k-", label="roof (copy bw, peak)")
        for c, x in zip(doc["bandwidth"], ai):
            label = f"{c['storage']} d={c['dim']}"
            ax.loglog([x], [c["gflops"]], "o", label=f"{label} (shared machine)")
            if "contended" in c:
                ax.loglog([x], [c["contended"]["pinned"]["gflops"]], "^",
                          label=f"{label} + busy processes (pinned)")
        ax.set_xlabel("flops per byte (compulsory traffic)")
        ax.set_ylabel("GFLOP/s")
        ax.set_title("Batched Hessian-vector product: roofline")
        written.append(_save(fig, ax, out / "roofline.png"))
    return written


def _save(fig, ax, path: Path) -> Path:
    """Legend, layout, write at 120 dpi, close; returns ``path``."""
    import matplotlib.pyplot as plt  # noqa: PLC0415

    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def update_readme(text: str, readme: Path = README, start: str = START,
                  end: str = END) -> None:
    """Replace the generated block between ``start`` and ``end`` (appended when the markers
    are missing)."""
    block = f"{start}\n{text}\n{end}"
    current = readme.read_text() if readme.exists() else ""
    if start in current and end in current:
        head, rest = current.split(start, 1)
        current = head + block + rest.split(end, 1)[1]
    else:
        current = current + ("\n" if current else "") + block + "\n"
    readme.write_text(current)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.table")
    parser.add_argument("results", nargs="?", default=str(RESULTS))
    parser.add_argument("--readme", default=str(README))
    parser.add_argument("--main-readme", default=str(MAIN_README))
    args = parser.parse_args(argv)
    doc = json.loads(Path(args.results).read_text())
    text = tables(doc)
    update_readme(text, Path(args.readme))
    update_readme(summary(doc), Path(args.main_readme), MAIN_START, MAIN_END)
    for path in figures(doc):
        print(f"wrote {path}")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
