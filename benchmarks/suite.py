"""The benchmark suite: grids (full and ``--quick``), targets, JSON document, Markdown tables."""

from __future__ import annotations

import gc
import time
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from bilevel_theory.problems import get_backend
from bilevel_theory.problems.oracle import with_noise_distribution

from . import bandwidth, fednest_loop, memory, rounds, speedup
from .common import copy_bandwidth, machine_info

SCHEMA = "bilevel-theory-benchmarks/1"

TARGETS = dict(
    speedup=dict(minimum=50.0, at_sampled_clients=10_000,
                 statement="vectorized FedMBO round ≥ 50× faster than the per-client loop "
                           "at n = 10⁴ (CPU)"),
    bandwidth=dict(minimum=0.40, statement="batched Hessian-vector step ≥ 40% of the measured "
                                           "copy bandwidth at large n"),
    memory=dict(maximum_bytes=4e9, statement="10⁶-client instance, dims 10: one FedMBO round "
                                             "under 4 GB peak RSS (CPU)"),
    gpu_speedup=dict(minimum=20.0, at_sampled_clients=100_000,
                     statement="on an H100, at n = 10⁵, ≥ 20× faster than numpy on the CPU "
                               "(python -m benchmarks.compare)"),
)


@dataclass
class Grid:
    """Sizes of one suite run."""

    grid_clients: int = 100_000
    dims: tuple[int, ...] = (10, 32)
    replicates: tuple[int, ...] = (1, 32)
    sampled: tuple[int, ...] = (10, 1_000, 10_000, 100_000)
    algorithms: tuple[str, ...] = ("fedmbo", "fednest")
    max_case_seconds: float = 60.0
    memory_cap_bytes: float = 8 * 2**30
    speedup_sampled: int = 10_000
    speedup_dims: tuple[int, ...] = (10, 32)
    speedup_replicates: tuple[int, ...] = (1, 32)
    speedup_timed_replicates: int = 2
    #: also time a noise-free twin of the instance (no Gaussian draws: isolates the math)
    speedup_noise_free: bool = True
    #: also time the instance with these non-default noise distributions (same covariance)
    speedup_distributions: tuple[str, ...] = ("rademacher",)
    #: (storage, dim, clients, replicates, sampled clients)
    bandwidth_cases: tuple[tuple[str, int, int, int, int], ...] = (
        ("structured", 10, 100_000, 8, 100_000),
        ("structured", 32, 100_000, 4, 100_000),
        ("dense", 10, 100_000, 8, 100_000),
        ("dense", 32, 20_000, 1, 100_000),
    )
    memory_case: dict[str, int] = field(default_factory=lambda: dict(
        clients=1_000_000, dim=10, replicates=32, sampled_clients=10_000))
    copy_bytes: int = 1 << 28
    #: also time the library's product under busy processes on every core (pinned/unpinned)
    bandwidth_contention: bool = True
    #: FedNest written as per-client federated code vs the toolkit, all clients participating
    fednest_loop_clients: tuple[int, ...] = (100, 1_000)


QUICK = Grid(
    grid_clients=2_000, dims=(10,), replicates=(1, 4), sampled=(10, 1_000),
    max_case_seconds=10.0, speedup_sampled=10_000, speedup_dims=(10,),
    speedup_replicates=(1, 4), speedup_timed_replicates=1,
    bandwidth_cases=(("structured", 10, 20_000, 1, 10_000), ("dense", 10, 5_000, 1, 10_000)),
    memory_case=dict(clients=20_000, dim=10, replicates=2, sampled_clients=1_000),
    copy_bytes=1 << 25,
)

SECTIONS = ("rounds", "speedup", "bandwidth", "memory", "fednest_loop")


def run_suite(quick: bool = False, backend: str = "numpy", sections=SECTIONS,
              grid: Grid | None = None, log=print) -> dict[str, Any]:
    """Run the selected sections and return the JSON document (see ``README`` of the module)."""
    grid = grid or (QUICK if quick else Grid())
    get_backend(backend)  # a missing CuPy or GPU fails here, before any work
    started = time.perf_counter()
    doc: dict[str, Any] = dict(schema=SCHEMA, quick=quick, backend=backend,
                               machine=machine_info(backend), grid=asdict(grid),
                               hyperparameters=rounds.HYPERPARAMETERS, targets=TARGETS)
    log(f"# benchmarks ({'quick' if quick else 'full'}, backend={backend})")
    copy = copy_bandwidth(backend, grid.copy_bytes)
    doc["copy_bandwidth"] = copy
    log(f"copy bandwidth: {copy['gbytes_per_s']:.1f} GB/s ({copy['method']})")
    doc["peak_flops"] = bandwidth.peak_gflops(backend)
    log(f"peak: {doc['peak_flops']['gflops']:.1f} GFLOP/s ({doc['peak_flops']['method']})")

    instances: dict[int, Any] = {}
    setup: dict[str, Any] = {}
    if "rounds" in sections or "speedup" in sections:
        for dim in sorted(set(grid.dims) | set(grid.speedup_dims)):
            log(f"building instance m={grid.grid_clients}, d={dim} ...")
            instances[dim], setup[str(dim)] = rounds.build_instance(grid.grid_clients, dim,
                                                                   backend)
            log(f"  built in {setup[str(dim)]['build_seconds']:.1f} s, constants in "
                f"{setup[str(dim)]['constants_seconds']:.1f} s")
    doc["instances"] = setup

    rows: list[dict[str, Any]] = []
    if "rounds" in sections:
        log("## rounds")
        rows = rounds.rounds_grid({d: instances[d] for d in grid.dims}, grid.algorithms,
                                  grid.replicates, grid.sampled, backend,
                                  grid.memory_cap_bytes, grid.max_case_seconds, log=log)
    doc["rounds"] = rows

    doc["speedup"] = []
    if "speedup" in sections:
        log("## speedup over the per-client loop")
        for dim in grid.speedup_dims:
            variants = [instances[dim]]
            for dist in grid.speedup_distributions:
                log(f"  {dist} noise twin of the d={dim} instance (constants recomputed) ...")
                variants.append(with_noise_distribution(instances[dim], dist))
            if grid.speedup_noise_free:
                log(f"  noise-free twin of the d={dim} instance (constants recomputed) ...")
                variants.append(replace(instances[dim], grad_noise=0.0, hessian_noise=0.0))
            for problem in variants:
                noisy = problem.grad_noise > 0 or problem.hessian_noise > 0
                for R in grid.speedup_replicates:
                    default = problem.spec.get("noise_distribution", "gaussian") == "gaussian"
                    reuse = next((r for r in rows if noisy and default
                                  and r.get("algorithm") == "fedmbo"
                                  and r["dim"] == dim and r["replicates"] == R
                                  and r["sampled_clients"] == grid.speedup_sampled
                                  and "seconds_per_round" in r), None)
                    case = speedup.speedup_case(problem, R, grid.speedup_sampled, backend,
                                                grid.speedup_timed_replicates, vectorized=reuse)
                    case["target"] = TARGETS["speedup"]["minimum"]
                    case["met"] = bool(case["speedup"] >= case["target"])
                    doc["speedup"].append(case)
                    log(f"  d={dim} R={R} n={grid.speedup_sampled} noise={case['noise']} "
                        f"({case['noise_distribution']}): loop "
                        f"{case['reference_seconds']:.2f} s, vectorized "
                        f"{case['vectorized_seconds']:.4f} s, speedup {case['speedup']:.1f}x "
                        f"(matches: {case['reference_matches']})")
    instances.clear()
    gc.collect()

    doc["bandwidth"] = []
    if "bandwidth" in sections:
        log("## Hessian-vector bandwidth")
        for storage, dim, m, R, n in grid.bandwidth_cases:
            try:
                case = bandwidth.hvp_case(storage, dim, m, R, n, backend, copy["gbytes_per_s"],
                                          contention=grid.bandwidth_contention,
                                          copy_bytes=grid.copy_bytes)
            except (ValueError, MemoryError) as err:  # e.g. the instance does not fit here
                doc["bandwidth_skipped"] = [*doc.get("bandwidth_skipped", []),
                                            dict(storage=storage, dim=dim, clients=m,
                                                 error=str(err))]
                log(f"  {storage} d={dim} m={m}: skipped ({err})")
                continue
            case["target"] = TARGETS["bandwidth"]["minimum"]
            case["met"] = bool(case["fraction_of_copy"] >= case["target"])
            case["met_adjacent"] = bool(case["fraction_of_adjacent_copy"] >= case["target"])
            doc["bandwidth"].append(case)
            gc.collect()  # the case's instance and arrays are garbage now
            name, fraction = best_variant(case)
            log(f"  {storage:10s} d={dim} m={m} R={R} n={n}: {case['gbytes_per_s']:.2f} GB/s "
                f"= {100 * case['fraction_of_copy']:.0f}% of copy (adjacent copy: "
                f"{100 * case['fraction_of_adjacent_copy']:.0f}%)"
                + (f"; best variant {name!r}: {100 * fraction:.0f}%" if name else ""))
            if "contended" in case:
                c = case["contended"]
                log(f"    under {c['busy_processes']} busy processes (of adjacent copy): pinned "
                    f"{100 * c['pinned']['fraction_of_adjacent_copy']:.0f}%, unpinned (BLAS "
                    f"threads {c['blas_threads_unpinned']}) "
                    f"{100 * c['unpinned']['fraction_of_adjacent_copy']:.0f}%")
                w = c.get("unblocked_product_ns_per_row")
                if w:
                    log(f"    one unblocked v @ U over all rows: pinned {w['pinned']:.1f} ns/row, "
                        f"BLAS default {w['blas_default']:.1f} ns/row")

    doc["fednest_loop"] = []
    if "fednest_loop" in sections and backend == "numpy":
        log("## FedNest as per-client federated code vs the toolkit (all clients)")
        for m in grid.fednest_loop_clients:
            problem, _ = rounds.build_instance(m, 10, backend)
            row = fednest_loop.compare(problem)
            doc["fednest_loop"].append(row)
            log(f"  m={m}: loop {row['loop_seconds']:.3f} s/epoch, toolkit "
                f"{row['toolkit_seconds']:.4f} s/epoch: {row['ratio']:.0f}x"
                + (f"; torch loop {row['torch']['loop_seconds']:.3f} s"
                   if "loop_seconds" in row["torch"] else f"; torch: {row['torch']['skipped']}"))

    doc["memory"] = None
    if "memory" in sections:
        log("## memory (subprocess)")
        mc = grid.memory_case
        doc["memory"] = memory.peak_rss(mc["clients"], mc["dim"], mc["replicates"],
                                        mc["sampled_clients"], backend,
                                        TARGETS["memory"]["maximum_bytes"])
        if "peak_rss_bytes" in doc["memory"]:
            log(f"  m={mc['clients']} d={mc['dim']}: peak RSS "
                f"{doc['memory']['peak_rss_bytes'] / 2**30:.2f} GiB")
        else:
            log(f"  failed: {doc['memory'].get('error')}")
    doc["summary"] = summary(doc)
    doc["total_seconds"] = time.perf_counter() - started
    return doc


def best_variant(case: dict[str, Any]) -> tuple[str | None, float | None]:
    """``(name, fraction of copy bandwidth)`` of a bandwidth case's fastest hvp variant, or
    ``(None, None)`` when it has none."""
    variants = case.get("variants", {})
    if not variants:
        return None, None
    name = max(variants, key=lambda k: variants[k]["fraction_of_copy"])
    return name, variants[name]["fraction_of_copy"]


def summary(doc: dict[str, Any]) -> dict[str, Any]:
    """Whether each target was met, case by case."""
    out: dict[str, Any] = {}
    if doc.get("speedup"):
        out["speedup"] = [dict(dim=c["dim"], replicates=c["replicates"], noise=c["noise"],
                               noise_distribution=c.get("noise_distribution", "gaussian"),
                               speedup=c["speedup"], met=c["met"]) for c in doc["speedup"]]
    if doc.get("bandwidth"):
        out["bandwidth"] = [dict(storage=c["storage"], dim=c["dim"],
                                 fraction_of_copy=c["fraction_of_copy"], met=c["met"])
                            for c in doc["bandwidth"]]
    if doc.get("memory"):
        out["memory"] = dict(peak_rss_bytes=doc["memory"].get("peak_rss_bytes"),
                             met=doc["memory"].get("met"))
    return out


def markdown(doc: dict[str, Any]) -> str:
    """The document as Markdown tables."""
    m = doc["machine"]
    lines = [f"Machine: {m['cpu_model']}, {m['cores']} cores, numpy {m['numpy']}, "
             f"BLAS {m['blas'].get('blas', {}).get('name')} "
             f"{m['blas'].get('blas', {}).get('version')}, backend {doc['backend']}; copy "
             f"bandwidth {doc['copy_bandwidth']['gbytes_per_s']:.1f} GB/s.", ""]
    if doc.get("rounds"):
        lines += ["| algorithm | d | R | n | s/round | client evals/s | peak MiB |",
                  "|---|---|---|---|---|---|---|"]
        for r in doc["rounds"]:
            if "skipped" in r:
                lines.append(f"| {r['algorithm']} | {r['dim']} | {r['replicates']} | "
                             f"{r['sampled_clients']} | skipped: {r['skipped']} | | |")
                continue
            peak = r["peak_memory_bytes"]
            lines.append(f"| {r['algorithm']} | {r['dim']} | {r['replicates']} | "
                         f"{r['sampled_clients']} | {r['seconds_per_round']:.4g} | "
                         f"{r['evals_per_second']:.3g} | "
                         f"{'' if peak is None else f'{peak / 2**20:.0f}'} |")
        lines.append("")
    if doc.get("speedup"):
        lines += ["| speedup case | loop s | vectorized s | speedup | ≥ 50×? |",
                  "|---|---|---|---|---|"]
        for c in doc["speedup"]:
            ext = f" (timed {c['reference_timed_replicates']} rep., ×)" if c[
                "reference_extrapolated"] else ""
            lines.append(f"| d={c['dim']} R={c['replicates']} n={c['sampled_clients']} "
                         f"noise={c['noise']} {c.get('noise_distribution', 'gaussian')} | "
                         f"{c['reference_seconds']:.3g}{ext} | {c['vectorized_seconds']:.3g} | "
                         f"{c['speedup']:.1f}× | {'yes' if c['met'] else 'no'} |")
        lines.append("")
    if doc.get("bandwidth"):
        lines += ["| hvp case | GB/s | % copy | GFLOP/s | best variant (% copy) | ≥ 40%? |",
                  "|---|---|---|---|---|---|"]
        for c in doc["bandwidth"]:
            name, fraction = best_variant(c)
            bv = f"{name} ({100 * fraction:.0f}%)" if name else ""
            lines.append(f"| {c['storage']} d={c['dim']} m={c['clients']} R={c['replicates']} "
                         f"n={c['sampled_clients']} | {c['gbytes_per_s']:.2f} | "
                         f"{100 * c['fraction_of_copy']:.0f}% | {c['gflops']:.2f} | {bv} | "
                         f"{'yes' if c['met'] else 'no'} |")
        lines.append("")
    if doc.get("memory") and "peak_rss_bytes" in doc["memory"]:
        mm = doc["memory"]
        lines.append(f"Memory: m={mm['clients']} d={mm['dim']} R={mm['replicates']} "
                     f"n={mm['sampled_clients']}: peak RSS {mm['peak_rss_bytes'] / 2**30:.2f} "
                     f"GiB (< 4 GB: {'yes' if mm['met'] else 'no'}).")
    lines.append(f"Total {doc.get('total_seconds', 0):.0f} s.")
    return "\n".join(lines)
