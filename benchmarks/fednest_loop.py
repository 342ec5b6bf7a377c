"""What a user would run instead: FedNest written as federated-learning code usually is.

Federated research code (FedNest's released implementation among it) keeps one object per
client with its own data and random stream, and the server loops over clients, and each
client over its local steps, calling the client's gradient / Hessian-vector routines one
vector at a time; the server averages Python lists of vectors.  :func:`fednest_epoch_loop`
does one FedNest epoch (Tarzanagh et al., ICML 2022, Alg. 1: ``T`` FedInn rounds with SVRG
local steps, FedIHGP with a random truncation ``N'``, FedOut with SVRG local steps) in that
style with numpy, on the same instance and hyperparameters as
``bilevel_theory.fednest.FedNest`` (the toolkit's vectorized epoch), every client
participating.  Noise-free it reproduces the toolkit's epoch to round-off given the same
truncation (``tests/test_benchmarks.py``); with noise each client draws its own Gaussian noise.

If ``torch`` is importable, :class:`TorchClient` also times the same loop with torch CPU
tensors and autograd Hessian-vector products (the released code's way); it is skipped
otherwise (the JSON says so).

``python -m benchmarks.fednest_loop [--clients 100 1000]`` prints the per-epoch seconds of
the loop and of the toolkit and their ratio.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from typing import Any

import numpy as np

from bilevel_theory import ALGORITHMS, make_context

from .reference import RecordingGenerator, ReferenceData, Tape, _constant

HYPERPARAMETERS = dict(inner_steps=5, local_steps=2, neumann_steps=10, replace=False)


class Client:
    """One client: its own matrices (dense, as a model's parameters would be) and its own
    random stream; every method answers for one point."""

    def __init__(self, data: ReferenceData, i: int, grad_noise: float, hessian_noise: float,
                 seed: int):
        s = data.slot[i]
        self.A, self.B, self.R, self.S = data.A[s], data.B[s], data.R[s], data.S[s]
        self.c, self.p, self.q, self.P = data.c[s], data.p[s], data.q[s], data.P
        self.sg, self.sh = grad_noise, hessian_noise
        self.rng = np.random.default_rng([seed, i])

    def _xi(self, d: int, scale: float):
        return scale / math.sqrt(d) * self.rng.standard_normal(d) if scale > 0 else 0.0

    def grad_y_g(self, x, y):
        return self.A @ y - self.B @ x - self.c + self._xi(y.size, self.sg)

    def pair_grad_y_g(self, x, y1, y2):
        """One sample at two points (the SVRG correction's minibatch)."""
        xi = self._xi(y1.size, self.sg)
        return self.A @ y1 - self.B @ x - self.c + xi, self.A @ y2 - self.B @ x - self.c + xi

    def grad_y_f(self, x, y):
        return self.R.T @ x + self.S @ y + self.q + self._xi(y.size, self.sg)

    def pair_grad_x_f(self, x1, x2, y):
        xi = self._xi(x1.size, self.sg)
        return (self.P.T @ x1 + self.R @ y + self.p + xi,
                self.P.T @ x2 + self.R @ y + self.p + xi)

    def grad_x_f(self, x, y):
        return self.P.T @ x + self.R @ y + self.p + self._xi(x.size, self.sg)

    def hvp(self, v):
        return self.A @ v + self._xi(v.size, self.sh) * math.sqrt(v @ v)

    def jvp(self, v):
        return -(self.B.T @ v) + self._xi(self.B.shape[1], self.sh) * math.sqrt(v @ v)


def make_clients(problem, seed: int = 0, cls=None) -> list:
    """One client object per client of ``problem`` (dense copies of its matrices)."""
    data = ReferenceData.build(problem)
    cls = cls or Client
    return [cls(data, i, problem.grad_noise, problem.hessian_noise, seed)
            for i in range(problem.clients)]


def fednest_epoch_loop(clients: list, x, y, hp: dict, truncation: int):
    """One FedNest epoch, all clients participating, looping over clients and local steps.

    ``hp``: the resolved hyperparameters of ``FedNest`` (step sizes read at epoch 0);
    ``truncation``: FedIHGP's ``N'`` for this epoch.  Returns ``(x, y)``.
    """
    T, N = hp["inner_steps"], hp["neumann_steps"]
    tau_in, tau_out = hp["inner_local_steps"], hp["local_steps"]
    beta, alpha, ell = (_constant(hp["inner_step"]), _constant(hp["outer_step"]),
                        float(hp["neumann_scale"]))
    m = len(clients)
    for _ in range(T):  # FedInn (Alg. 4)
        q = sum(c.grad_y_g(x, y) for c in clients) / m
        local = []
        for c in clients:
            y_loc = y * 1.0  # a copy (numpy arrays and torch tensors alike)
            for _ in range(tau_in):
                g_loc, g_ref = c.pair_grad_y_g(x, y_loc, y)
                y_loc = y_loc - (beta / tau_in) * (g_loc - g_ref + q)
            local.append(y_loc)
        y = sum(local) / m
    p = (N / ell) * (sum(c.grad_y_f(x, y) for c in clients) / m)  # FedIHGP (Alg. 3)
    for _ in range(int(truncation)):
        p = p - (sum(c.hvp(p) for c in clients) / m) / ell
    h = sum(c.grad_x_f(x, y) - c.jvp(p) for c in clients) / m  # FedOut (Alg. 2)
    local = []
    for c in clients:
        x_loc = x * 1.0
        for _ in range(tau_out):
            f_loc, f_ref = c.pair_grad_x_f(x_loc, x, y)
            x_loc = x_loc - (alpha / tau_out) * (f_loc - f_ref + h)
        local.append(x_loc)
    return sum(local) / m, y


def record_epoch(problem, seed: int = 0) -> dict[str, Any]:
    """The toolkit's FedNest epoch (one replicate, all clients) with its draws recorded."""
    hp = dict(HYPERPARAMETERS, sampled_clients=problem.clients)
    algorithm = ALGORITHMS["fednest"](problem, **hp)
    ctx = make_context(problem, 1, seed, "numpy")
    tape = Tape()
    ctx.oracle.rng = RecordingGenerator(ctx.oracle.rng, tape)
    state = algorithm.init(ctx)
    new = algorithm.step(ctx, state, 0)
    trunc = next(v for k, v in tape.entries if k == "integers" and v.shape == (1,))
    return dict(x0=np.array(state["x"])[0], y0=np.array(state["y"])[0],
                x=np.array(new["x"])[0], y=np.array(new["y"])[0], hp=dict(algorithm.hp),
                truncation=int(trunc[0]))


def compare(problem, seed: int = 0, repeats: int = 3) -> dict[str, Any]:
    """Seconds per epoch of the per-client loop (numpy; torch if importable) and of the
    toolkit's vectorized epoch, at ``n = m``; the loop is checked against the toolkit on the
    noise-free twin of ``problem`` when ``problem`` is noise-free."""
    from .rounds import round_case  # noqa: PLC0415

    rec = record_epoch(problem, seed)
    clients = make_clients(problem, seed)
    loop_times = []
    for _ in range(repeats):
        start = time.perf_counter()
        x, y = fednest_epoch_loop(clients, rec["x0"], rec["y0"], rec["hp"], rec["truncation"])
        loop_times.append(time.perf_counter() - start)
    noisy = problem.grad_noise > 0 or problem.hessian_noise > 0
    vec = round_case(problem, "fednest", 1, problem.clients, "numpy", seed, repeats=5,
                     budget=3.0, measure_memory=False)
    out = dict(clients=problem.clients, dim=problem.dim_x, noise=problem.grad_noise,
               hyperparameters=HYPERPARAMETERS, loop_seconds=min(loop_times),
               toolkit_seconds=vec["seconds_per_round"],
               ratio=min(loop_times) / vec["seconds_per_round"],
               loop_style="numpy, one object per client, Python loops over clients and local "
                          "steps")
    if not noisy:
        out["loop_matches_toolkit"] = _matches_toolkit(x, y, rec)
    out["torch"] = _torch_case(problem, rec, seed, repeats)
    return out


def _matches_toolkit(x, y, rec: dict[str, Any]) -> bool:
    """Whether a loop's epoch ``(x, y)`` (numpy arrays or CPU tensors) is the recorded toolkit
    epoch to round-off (``1e-10`` relative)."""
    x, y = np.asarray(x), np.asarray(y)
    err = max(float(np.abs(x - rec["x"]).max()), float(np.abs(y - rec["y"]).max()))
    return bool(err <= 1e-10 * max(1.0, float(np.abs(x).max())))


def _torch_case(problem, rec, seed: int, repeats: int) -> dict[str, Any]:
    try:
        import torch  # noqa: PLC0415  (optional)
    except ImportError:
        return dict(skipped="torch is not installed")
    torch.set_num_threads(1)
    clients = make_clients(problem, seed, cls=TorchClient)
    t = {k: torch.as_tensor(rec[k], dtype=torch.float64) for k in ("x0", "y0")}
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        x, y = fednest_epoch_loop(clients, t["x0"], t["y0"], rec["hp"], rec["truncation"])
        times.append(time.perf_counter() - start)
    out = {}
    if not (problem.grad_noise > 0 or problem.hessian_noise > 0):
        out["loop_matches_toolkit"] = _matches_toolkit(x, y, rec)
    return dict(out, loop_seconds=min(times), torch=torch.__version__,
                style="torch CPU tensors, gradients and Hessian-vector products by autograd")


class TorchClient(Client):
    """The same client with torch tensors; derivatives by autograd of ``g_i`` and ``f_i``
    (as the released FedNest code computes them), noise from the client's torch generator."""

    def __init__(self, data, i, grad_noise, hessian_noise, seed):
        import torch  # noqa: PLC0415

        super().__init__(data, i, grad_noise, hessian_noise, seed)
        self.torch = torch
        for name in ("A", "B", "R", "S", "c", "p", "q", "P"):
            setattr(self, name, torch.as_tensor(np.array(getattr(self, name))))
        self.gen = torch.Generator().manual_seed(seed * 1_000_003 + i)

    def _xi(self, d, scale):
        if scale <= 0:
            return 0.0
        return scale / math.sqrt(d) * self.torch.randn(d, generator=self.gen,
                                                       dtype=self.torch.float64)

    def _g(self, x, y):
        return 0.5 * y @ (self.A @ y) - (self.B @ x + self.c) @ y

    def _f(self, x, y):
        return 0.5 * x @ (self.P @ x) + x @ (self.R @ y) + 0.5 * y @ (self.S @ y) \
            + self.p @ x + self.q @ y

    def _grad(self, fn, x, y, wrt: int, create_graph=False):
        x = x.detach().requires_grad_(wrt == 0 or create_graph)
        y = y.detach().requires_grad_(wrt == 1 or create_graph)
        (g,) = self.torch.autograd.grad(fn(x, y), (x, y)[wrt], create_graph=create_graph)
        return g, x, y

    def grad_y_g(self, x, y):
        return self._grad(self._g, x, y, 1)[0] + self._xi(y.numel(), self.sg)

    def pair_grad_y_g(self, x, y1, y2):
        xi = self._xi(y1.numel(), self.sg)
        return (self._grad(self._g, x, y1, 1)[0] + xi, self._grad(self._g, x, y2, 1)[0] + xi)

    def grad_y_f(self, x, y):
        return self._grad(self._f, x, y, 1)[0] + self._xi(y.numel(), self.sg)

    def grad_x_f(self, x, y):
        return self._grad(self._f, x, y, 0)[0] + self._xi(x.numel(), self.sg)

    def pair_grad_x_f(self, x1, x2, y):
        xi = self._xi(x1.numel(), self.sg)
        return (self._grad(self._f, x1, y, 0)[0] + xi, self._grad(self._f, x2, y, 0)[0] + xi)

    def hvp(self, v):
        y0 = self.torch.zeros_like(v)
        g, _, y = self._grad(self._g, self.torch.zeros(self.B.shape[1], dtype=v.dtype), y0, 1,
                             create_graph=True)
        (hv,) = self.torch.autograd.grad(g @ v, y)
        return hv + self._xi(v.numel(), self.sh) * self.torch.sqrt(v @ v)

    def jvp(self, v):
        g, x, _ = self._grad(self._g, self.torch.zeros(self.B.shape[1], dtype=v.dtype),
                             self.torch.zeros_like(v), 1, create_graph=True)
        (jv,) = self.torch.autograd.grad(g @ v, x)
        return jv + self._xi(self.B.shape[1], self.sh) * self.torch.sqrt(v @ v)


def main(argv: list[str] | None = None) -> int:
    from .rounds import build_instance  # noqa: PLC0415

    parser = argparse.ArgumentParser(prog="python -m benchmarks.fednest_loop")
    parser.add_argument("--clients", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--dim", type=int, default=10)
    args = parser.parse_args(argv)
    for m in args.clients:
        problem, _ = build_instance(m, args.dim, "numpy")
        row = compare(problem)
        print(json.dumps(row))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
