"""FedNest (Tarzanagh, Li, Thrampoulidis & Oymak, ICML 2022, arXiv:2205.02215): executable claims.

Every claim runs the algorithm with the hyperparameter schedule its result prescribes as a
function of the swept variable (constants chosen, rates not); predictions are derived with
``bilevel_theory.rates`` (registered bounds where they exist; where the paper states no bound,
a sympy expression below, tagged ``[INFERRED]``, fed to the same derivation functions).  The
readings ``FEDNEST-R*`` / ``FEDNEST-I*`` are in ``docs/papers/fednest.md``.

Claims (``id``: kind, variable, role):

* ``fednest.ihgp_bias_vs_N``: geometric in ``N`` (control): the implemented FedIHGP's bias
  decays as Lemma 2.2's ``((κ_g−1)/κ_g)^N`` (an identity of the series, attained here).
* ``fednest.ihgp_deviation_bound``: bounded_by ``2/μ_g`` in ``N`` (confirmation, Lemma 2.2's
  second bound at its worst case κ_g = 1, where the ratio is ``1 − 1/N``).
* ``fednest.ihgp_deviation_noisy``: the same bound with Hessian samples ``ℓ_{g,1}(1 ± 1/2)``
  (finding): Assumption B does not bound the samples' range, and a sample above ``ℓ_{g,1}``
  makes ``Ĥ_y`` change sign.
* ``fednest.ihgp_deviation_vs_kappa`` / ``fednest.indirect_bias_vs_kappa``: Lemma 2.2's two
  bounds (eq. 14's ``2/μ_g``, confirmation; eq. 15's ``b``, finding) at a fixed ``N`` with
  ``κ_g = ℓ_{g,1}/μ_g`` swept from 1.
* ``fednest.fedinn_vs_fedavg``: contrast in ``h`` (confirmation, §2.5).
* ``fednest.rounds_per_epoch`` / ``lfednest.rounds_per_epoch``: exact (confirmation): §2.6's
  ``2T + N + 3`` for the FedNest that executes ``N`` Neumann iterations (the official code's
  fixed schedule; Alg. 3's random ``N'`` executes ``2T + N' + 3 ≤ 2T + N + 2``, beside it,
  FEDNEST-R1) / ``T + 1``; ``fednest.rounds_per_epoch_vs_T`` / ``lfednest.rounds_per_epoch_vs_N``
  the same counts in the other variable (``T`` at ``N = 4``; ``N`` at ``T = 3``).
* ``fednest.rounds_vs_local_steps``: at_most ``−1`` in ``τ`` (confirmation, §4.1 / Fig. 2(c)):
  the rounds to bring Thm 3.1's average stationarity below a target fall as ``1/τ`` at a
  fixed local step (FEDNEST-R13); mutant ``local_step_over_tau`` caught.
* ``fednest.bilevel_rate`` / ``minimax_rate`` / ``compositional_rate`` /
  ``fedsvrg_single_level``: at_most ``−1/2`` in ``K`` (confirmations; Cor. 3.1–3.3, Thm 3.2).
* ``fednest.kappa_iterations`` / ``minimax_kappa_iterations``: at_most ``0`` in ``κ_g`` /
  ``κ_f`` (confirmations; Cor. 3.1's ``K = O(κ_g⁵ε⁻²)``, Cor. 3.2's ``K = O(κ_f²ε⁻²)``): the
  average stationarity at the κ-scaled schedule does not grow with κ.
* ``fednest.minimax_linear``: at_most on the semilog slope (confirmation, §4.3 / Fig. 4);
  ``fednest.minimax_linear_vs_heterogeneity``: at_most ``0`` in the spread ``s`` of the
  ``b_i`` of the distance left after ``K = 24`` epochs (confirmation, Fig. 4's "despite
  heterogeneity"; mutant ``simultaneous_updates``, FedAvg-S's local steps, caught).
* ``fednest.minimax_vs_fedavg_s`` (paper's λ = 10) and ``…_notebook`` (notebook's λ = 0.1,
  s = 10): contrast in ``k`` (confirmations, Fig. 4); ``fednest.lfednest_vs_fedavg_s``: the
  same contrast with LFedNest (confirmation, Fig. 4's "LFedNest slightly outperforms
  FedAvg-S").
* ``fednest.minimax_vs_lfednest``: contrast in ``k`` (finding about Fig. 4's text): a faithful
  FedNest equals LFedNest on the §4.3 instance.
* ``lfednest.bias_under_heterogeneity``: matches ``h⁴`` (confirmation of an [INFERRED] law).
* ``fednest.variance_floor``: at_most ``−1`` in ``K`` (finding): Thm 3.1 read with ``σ = 0`` at
  a constant step; the random truncation ``N'`` leaves a floor ``∝ αN``.
* ``fednest.variance_floor_vs_N``: at_most ``0`` in ``N`` at ``K = 400`` (finding): the same
  floor grows about linearly in FedIHGP's ``N``, while Thm 3.1's only ``N``-term ``b²`` falls.
* ``fednest.variance_floor_vs_step``: at_most ``0`` in ``ᾱ`` on Thm 3.1's ``ᾱ/√K`` branch at
  ``σ = 0`` (control: the mechanism of ``fednest.variance_floor``; one K cannot refute an
  O(·) in K): the floor grows ``∝ α``.
* ``fednest.released_bias_vs_N``: geometric in ``N`` (defect of the released code): the
  official code's estimator does not have Lemma 2.2's geometric bias (series weighted by
  ``1/k``, own Hessians); Alg. 3's estimator, which the Lemma describes, has it.

Every measure builds its instance from a fixed seed (the instance does not change between sweep
points or replicates); the point seed drives the algorithm's randomness only.  Mutants are
keyword arguments of the measures (``Claim.mutants``).

The claims are grouped by family of results, one module each, in catalogue order: ``estimator``
(Lemma 2.2), ``kappa`` (Lemma 2.2 in κ_g), ``client_drift`` (§2.5), ``communication`` (§2.6),
``local_steps`` (Fig. 2(c)), ``convergence`` (Cor 3.1, 3.2), ``kappa_complexity`` (Cor 3.1, 3.2
in κ), ``linear_minimax`` (§4.3), ``special_cases`` (Cor 3.3, Thm 3.2), ``heterogeneity_bias``
(LFedNest) and ``truncation_floor`` (Thm 3.1 at σ = 0); ``common`` holds what several of them
share (claim factories, rate-claim settings, hypotheses).
"""

from __future__ import annotations

from . import (
    client_drift,
    communication,
    convergence,
    estimator,
    heterogeneity_bias,
    kappa,
    kappa_complexity,
    linear_minimax,
    local_steps,
    special_cases,
    truncation_floor,
)
from .client_drift import INNER_TAIL, fedinn_vs_fedavg
from .common import N_sym, T_sym
from .communication import (
    ROUNDS_MEAN,
    ROUNDS_T,
    fednest_rounds,
    lfednest_rounds,
    with_extra_aggregation,
)
from .estimator import (
    DEV_NOISE,
    TIGHT,
    deviation_closed_form,
    ihgp_bias,
    ihgp_deviation,
    indirect_bias,
    released_bias,
    released_closed_form,
    scalar_problem,
)
from .heterogeneity_bias import lfednest_bias, lfednest_mean_tail
from .linear_minimax import MM_DIM, MM_SETTINGS, MM_TAU
from .special_cases import compositional_rate
from .truncation_floor import (
    IHGP_VARIANCE,
    ell_sym,
    rho_sym,
    variance_floor,
    variance_floor_vs_N,
    variance_floor_vs_step,
)

CLAIMS = [
    *estimator.CLAIMS,
    *kappa.CLAIMS,
    *client_drift.CLAIMS,
    *communication.CLAIMS,
    *local_steps.CLAIMS,
    *convergence.CLAIMS,
    *kappa_complexity.CLAIMS,
    *linear_minimax.CLAIMS,
    *special_cases.CLAIMS,
    *heterogeneity_bias.CLAIMS,
    *truncation_floor.CLAIMS,
]

#: the names imported from this package outside it (re-exported from its modules)
__all__ = [
    "CLAIMS", "DEV_NOISE", "IHGP_VARIANCE", "INNER_TAIL", "MM_DIM", "MM_SETTINGS", "MM_TAU",
    "ROUNDS_MEAN", "ROUNDS_T", "TIGHT", "N_sym", "T_sym", "compositional_rate",
    "deviation_closed_form", "ell_sym", "fedinn_vs_fedavg", "fednest_rounds", "ihgp_bias",
    "ihgp_deviation", "indirect_bias", "lfednest_bias", "lfednest_mean_tail", "lfednest_rounds",
    "released_bias", "released_closed_form", "rho_sym", "scalar_problem", "variance_floor",
    "variance_floor_vs_N", "variance_floor_vs_step", "with_extra_aggregation",
]
