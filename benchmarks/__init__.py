"""Performance benchmarks of bilevel-theory; not timed tests.

Run ``python -m benchmarks [--quick] [--json OUT] [--backend numpy|cupy] [--blas-threads N]``:

* :mod:`benchmarks.rounds` — seconds per FedMBO round / FedNest epoch, client-oracle
  evaluations per second (ledger), peak memory, over ``n × d × R``;
* :mod:`benchmarks.speedup` — speedup over the per-client loop of :mod:`benchmarks.reference`
  (same recorded draws; tested equal in ``tests/test_benchmarks.py``);
* :mod:`benchmarks.bandwidth` — achieved bandwidth of the library's batched Hessian-vector
  step against the measured copy bandwidth, quiet and under busy processes (BLAS pinning on and
  off), with a stage breakdown and the earlier candidates (:mod:`benchmarks.hvp_variants`);
* :mod:`benchmarks.memory` — peak RSS of a 10⁶-client FedMBO round in a fresh subprocess;
* :mod:`benchmarks.fednest_loop` — FedNest written as per-client federated code vs the toolkit;
* :mod:`benchmarks.table` — the README's tables and figures from a results document.

This package imports nothing at import time (``--blas-threads`` must act before numpy loads).
"""
