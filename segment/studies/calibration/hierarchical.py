r"""One population of C5-C6 segments calibrated to every laboratory and mode: a hierarchical
model with specimen and laboratory effects (issue 32).

Model (all parameters of a model form's space, each on an unbounded scale ``z = T(p)``: ``log``
for a stiffness factor, ``logit`` of the position in its range for a bounded width or gap,
``identity`` for a reference strain; ``hyperpriors.csv`` of the form names each)::

    z_i    = a_lab(i) + eta_i,        eta_i ~ N(0, diag tau^2)            specimen i
    a_lab  = mu + delta_lab,          delta_lab ~ N(0, diag tau_lab^2)     laboratory
    mu     ~ N(m0, diag s0^2)                                              component priors

``m0`` and ``s0`` are the space's own priors (``dist_mu``/``dist_sigma`` of a normal or
lognormal row; the logistic of a uniform row, ``s0 = pi / sqrt(3)`` on the logit scale):
published component values where the space cites them, "assumed" where it says so.
``tau_lab`` is fixed (two laboratories cannot estimate it; ``hyperpriors.csv`` gives the
reasoning); ``tau`` has a scaled inverse chi-square prior with 2 degrees of freedom around
``specimen_sd`` and is estimated.

Data and error models:

* **Nightingale et al. 2002** (:mod:`segment.studies.specimens`), laboratory
  ``nightingale2002``: the six static steps per direction of each specimen, and nothing
  else (no interpolated point). Measured: the moment (load cell) and the rotation (video) of
  each step, relative to one recorded (0, 0) origin per specimen. Error model of the 12 steps
  of a specimen (rotations as magnitudes, flexion then extension)::

      y = f(p_i, M) + o v + e,   o ~ N(0, sigma_o^2),  e ~ N(0, sigma_e^2 I),
      v = (+1, ..., +1, -1, ..., -1)

  ``o`` is the error of the origin, shared by every step of the record (it adds to the
  flexion magnitudes and subtracts from the extension ones), ``e`` the step-to-step error
  (video reading and what the model cannot follow). Both SDs are estimated by maximum
  likelihood from the steps (``sigma_e`` with a floor :data:`MIN_STEP_SD_DEG`); a fixed
  ``sigma_o`` can be given instead (:data:`ORIGIN_SD_DEG` is the start of the estimate). The
  origin error also carries the part of a specimen's flexion-extension asymmetry that its
  neutral zones do not: steps that start at 1.3 N m cannot tell the two apart. The moments
  are taken as exact (the load cell is far more precise than the video rotation).
* **Moroney et al. 1988**, laboratory ``moroney1988``: the mean rotation at 1.8 N m of the
  intact and of the posterior-removed segments in flexion, extension, lateral bending and
  axial rotation (``data/calibration_targets.csv``: ``intact`` and ``disc segment`` rows,
  SOURCES.md §2). Taken as the response of the laboratory's mean parameters ``a_moroney``
  (an approximation: the mean response of a population is not the response of its mean),
  with an SD of :data:`MORONEY_CV` of the value (assumed, see there).
* **The failure tests as bounds**: every training specimen was failure-tested after its
  static steps, so it was intact through all of them. Each specimen's model must keep every
  ligament below rupture (strain ratio g < 1, Table 3) at its last static step in each
  direction: a one-sided residual ``(g - 1) / INTACT_SD`` where it does not
  (:data:`INTACT_SD`, exact derivative). The failure tests' own peaks are not fitted: they
  were dynamic with 50-100 N of axial force (SOURCES.md §15).

Estimation: the MAP of ``(z_i, a_nightingale, a_moroney)`` for given ``tau``, ``sigma_e``
(block coordinate descent: each specimen's ``z_i`` by the bounded Levenberg-Marquardt of
:mod:`~segment.studies.calibration.lm` with its population prior; ``a_nightingale`` in closed
form; ``a_moroney`` by Levenberg-Marquardt on Moroney's data with its prior given
``a_nightingale``), alternated with the updates of ``tau`` (expectation-maximisation with
the Laplace variance of each ``z_i``) and ``sigma_e`` (maximum likelihood), until the
parameters move less than :data:`SWEEP_TOL`. Laplace (Gaussian) posteriors of the laboratory
means; ``mu`` integrated analytically. Every sum that reaches a written number is a
:func:`math.fsum` and every linear solve the plain-Python Cholesky of
:mod:`~segment.studies.calibration.lm`: the same bits on any CPU.

The modules beside this one hold the rest of the model: its settings
(:mod:`~segment.studies.calibration.hierarchical_settings`), hyperpriors and scales
(:mod:`~segment.studies.calibration.hierarchical_priors`), forward model
(:mod:`~segment.studies.calibration.hierarchical_forward`), data and error models
(:mod:`~segment.studies.calibration.hierarchical_data`) and result
(:mod:`~segment.studies.calibration.hierarchical_result`); this one fits it.

The predictive distribution of a new specimen
(:meth:`~segment.studies.calibration.hierarchical_result.PopulationFit.draw`): from a training
laboratory ``z = a_lab + eta`` (with the uncertainty of ``a_lab``), from a new laboratory
``z = mu + delta_new + eta`` with ``delta_new ~ N(0, tau_lab^2)``: the laboratory term is what
a prediction for a laboratory we have no data from must carry. Each member draws its own
``tau`` from the estimate's scaled inverse chi-square (a few specimens estimate it), which
gives the predictive the tails of a Student t. A parameter with ``lab_sd`` 0 in
``hyperpriors.csv`` has no laboratory effect (one mean for every laboratory).
"""

from __future__ import annotations

import logging
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd

from segment.core.io import data_dir, sha256_of
from segment.elements.tangent import L_EPS, L_F, L_L0
from segment.studies.calibration.hierarchical_data import (
    _ml_error_sds,
    _ml_error_sds_fixed,
    _specimens,
    _whiten,
    _whiten_rows,
    moroney_targets,
)
from segment.studies.calibration.hierarchical_forward import Experiment, Forward, strain_ratios
from segment.studies.calibration.hierarchical_priors import default_hyperpriors, load_hyperpriors
from segment.studies.calibration.hierarchical_result import PopulationFit
from segment.studies.calibration.hierarchical_settings import (
    FAILED_RESIDUAL,
    FD_STEP,
    INTACT_SD,
    LM_OPTIONS,
    MAX_SWEEPS,
    MORONEY,
    NIGHTINGALE,
    ORIGIN_SD_DEG,
    SPECIMEN_SD_DOF,
    SWEEP_TOL,
    default_form_path,
)
from segment.studies.calibration.lm import least_squares_bounded, spd_inverse

log = logging.getLogger("segment.studies.calibration")

__all__ = ["fit_population"]


# ---------------------------------------------------------------------------- fitting
def fit_population(model, data, *, form=None, hyper=None, moroney: bool = True,
                   sigma_o: float | None = None, intact: bool = True,
                   max_sweeps: int = MAX_SWEEPS,
                   n_threads: int | None = 1, progress=None) -> PopulationFit:
    """Calibrate the hierarchy of the module docstring.

    Parameters
    ----------
    model : Segment
        The intact base model (the form's disc law is applied to it).
    data : SpecimenData
        The specimens' static steps (:func:`segment.studies.specimens.load_specimens`).
    form : Form, name or folder, optional
        Default: the population form (:func:`default_form_path`).
    hyper : Hyperpriors, optional
        Default: ``hyperpriors.csv`` beside the form's space, or where there is none
        :func:`default_hyperpriors`.
    moroney : bool
        Also fit Moroney's laboratory (default True); False: the Nightingale laboratory alone
        (its mean then has the prior ``N(m0, s0^2 + tau_lab^2)``).
    intact : bool
        The intact bound (:data:`INTACT_SD`): each specimen's model keeps every ligament
        below rupture at its last static step (default True).
    sigma_o : float, optional
        Origin SD [deg]; default None: estimated with the step SD by maximum likelihood
        (starting from :data:`ORIGIN_SD_DEG`).
    max_sweeps : int
    n_threads : int or None
    progress : callable, optional
        Called with (sweep, change) after each sweep.

    Returns
    -------
    PopulationFit
    """
    from segment.studies.forms import load_form

    t0 = time.perf_counter()
    form = load_form(default_form_path() if form is None else form)
    space = form.space
    if hyper is None:
        hyper = (load_hyperpriors(space)
                 if (Path(space.path).parent / "hyperpriors.csv").is_file()
                 else default_hyperpriors(space))
    hp = hyper
    fm = form.model(model)
    fwd = Forward(fm, space, n_threads=n_threads)
    specs = _specimens(data)
    n, d = len(specs), space.dim
    zlo, zhi = hp.z_lower, hp.z_upper
    m0, s0, tl = hp.m0, hp.s0, hp.tau_lab
    S = s0 ** 2 + 0.5 * tl ** 2                  # prior variance of (a + b) / 2
    shared = tl == 0.0                           # no laboratory effect: a = b = mu

    tau = 2.0 * hp.tau0
    sigma_e = 0.5
    estimate_origin = sigma_o is None
    sigma_o = ORIGIN_SD_DEG if sigma_o is None else float(sigma_o)
    a = np.clip(m0.copy(), zlo, zhi)
    b = a.copy()
    Z = np.tile(a, (n, 1))
    V = np.tile(tau ** 2, (n, 1))
    mor = moroney_targets() if moroney else None
    mor_exps = (tuple(Experiment(c, m, (1.8,)) for c, m in zip(mor["config"], mor["mode"],
                                                                strict=True))
                if moroney else ())
    var_b = tl ** 2
    converged, sweep, change = False, 0, math.inf
    for sweep in range(1, max_sweeps + 1):
        Z_old, tau_old, a_old, b_old = Z.copy(), tau.copy(), a.copy(), b.copy()
        for i, sp in enumerate(specs):
            Z[i], V[i] = _fit_specimen(fwd, hp, sp, Z[i], a, tau, sigma_e, sigma_o,
                                         intact)
        # a: closed form given b (or the prior alone), the specimens, tau; for a parameter
        # without a laboratory effect (tau_lab = 0) a = b = mu, updated with b when Moroney's
        # laboratory is fitted
        prec, rhs = [], []
        for j in range(d):
            pj = n / tau[j] ** 2
            rj = math.fsum(float(Z[i, j]) for i in range(n)) / tau[j] ** 2
            if not shared[j] and moroney:
                pj += 1.0 / (2.0 * tl[j] ** 2) + 1.0 / (4.0 * S[j])
                rj += b[j] / (2.0 * tl[j] ** 2) + (m0[j] - 0.5 * b[j]) / (2.0 * S[j])
            else:
                pj += 1.0 / (s0[j] ** 2 + tl[j] ** 2)
                rj += m0[j] / (s0[j] ** 2 + tl[j] ** 2)
            prec.append(pj)
            rhs.append(rj)
        a = np.clip(np.array([r / p for r, p in zip(rhs, prec, strict=True)]), zlo, zhi)
        var_a = np.array([1.0 / p for p in prec])
        if moroney:
            b, var_b = _fit_lab(fwd, hp, mor, mor_exps, b, a, S, Z, tau, shared)
            a = np.where(shared, b, a)
            var_a = np.where(shared, var_b, var_a)
        # tau: EM with the Laplace variances; sigma_e: maximum likelihood
        tau = np.array([math.sqrt((SPECIMEN_SD_DOF * hp.tau0[j] ** 2 + math.fsum(
            (float(Z[i, j]) - float(a[j])) ** 2 + float(V[i, j]) for i in range(n)))
            / (SPECIMEN_SD_DOF + n)) for j in range(d)])
        resid = [sp.observed - _predict(fwd, hp, sp, Z[i]) for i, sp in enumerate(specs)]
        if estimate_origin:
            sigma_e, sigma_o = _ml_error_sds(resid, [sp.signs for sp in specs])
        else:
            sigma_e = _ml_error_sds_fixed(resid, [sp.signs for sp in specs], sigma_o)
        change = max(float(np.max(np.abs(Z - Z_old))), float(np.max(np.abs(a - a_old))),
                     float(np.max(np.abs(b - b_old))),
                     max(abs(math.log(t / u)) for t, u in zip(tau, tau_old, strict=True)))
        log.info("population sweep %d: change %.3g, sigma_e %.4g, sigma_o %.4g", sweep, change,
                 sigma_e, sigma_o)
        if progress is not None:
            progress(sweep, change)
        if change < SWEEP_TOL:
            converged = True
            break
    # final: each specimen's Laplace variance at the final hyper-parameters
    for i, sp in enumerate(specs):
        Z[i], V[i] = _fit_specimen(fwd, hp, sp, Z[i], a, tau, sigma_e, sigma_o,
                                         intact)
    labs = {NIGHTINGALE: a}
    var_labs = {NIGHTINGALE: var_a}
    if moroney:
        labs[MORONEY] = b
        var_labs[MORONEY] = var_b
        # mu | a, b: precision 1/s0^2 + 2/tau_lab^2
        t2 = np.where(shared, 1.0, tl ** 2)
        pm = 1.0 / s0 ** 2 + 2.0 / t2
        mu = np.where(shared, a, (m0 / s0 ** 2 + (a + b) / t2) / pm)
        var_mu = np.where(shared, var_a, 1.0 / pm + (var_a + var_b) / (t2 ** 2 * pm ** 2))
    else:
        t2 = np.where(shared, 1.0, tl ** 2)
        pm = 1.0 / s0 ** 2 + 1.0 / t2
        mu = np.where(shared, a, (m0 / s0 ** 2 + a / t2) / pm)
        var_mu = np.where(shared, var_a, 1.0 / pm + var_a / (t2 ** 2 * pm ** 2))
    steps = _steps_table(fwd, hp, specs, Z)
    mor_table = _moroney_table(fwd, hp, mor, mor_exps, b) if moroney else pd.DataFrame()
    message = (f"converged in {sweep} sweeps" if converged else
               f"not converged after {sweep} sweeps (last change {change:.3g})")
    inputs = {Path(p).name: h for p, h in zip(data.paths, data.sha256, strict=True)}
    inputs.update({Path(p).name if Path(p).name != "space.csv" else "population/space.csv":
                   sha256_of(p) for p in form.files()})
    if hp.sha256:
        inputs["hyperpriors.csv"] = hp.sha256
    if moroney:
        tp = data_dir() / "calibration_targets.csv"
        inputs["calibration_targets.csv"] = sha256_of(tp)
    return PopulationFit(
        names=space.names, transform=hp.transform, a=labs, var_a=var_labs, mu=mu,
        var_mu=var_mu, tau=tau, tau_lab=tl.copy(), sigma_e=sigma_e, sigma_o=sigma_o,
        specimens=tuple(sp.name for sp in specs), z=Z, z_sd=np.sqrt(V), steps=steps,
        moroney=mor_table, sweeps=sweep, converged=converged, message=message, hyper=hp,
        form_path=str(Path(space.path).parent), inputs=inputs,
        elapsed=time.perf_counter() - t0)


def _evaluator(fwd, hp, experiments, *, intact: bool = False):
    """``evaluate(z) -> (y, ok, J_z, h, Jh_z)`` with a one-entry cache (the LM asks for the
    residuals and the Jacobian at the same point). With ``intact``: ``h`` the intact-bound
    residuals (:data:`INTACT_SD`) of every ligament row at the largest moment of each
    experiment, ``Jh_z`` their Jacobian; empty otherwise."""
    cache: dict = {}

    def evaluate(z):
        key = z.tobytes()
        if key not in cache:
            cache.clear()
            p = hp.to_p(z)
            y, ok, jac = fwd(p, experiments, sensitivities=True, states=intact)
            dpz = hp.dp_dz(z)[0]
            h, Jh = np.zeros(0), np.zeros((0, len(z)))
            if intact and ok[0]:
                h, Jh = _intact_rows(fwd)
                Jh = Jh * dpz[None, :]
            cache[key] = (y[0], bool(ok[0]), jac[0] * dpz[None, :], h, Jh)
        return cache[key]

    return evaluate


def _intact_rows(fwd):
    """The intact-bound residuals and their derivative by p (:data:`INTACT_SD`): g from
    :func:`strain_ratios`, dg/dq by central differences, dg/dl0 exactly, dq/dp and dl0/dp from
    the solve. Only rows past rupture carry a residual; where none is, no derivative is
    computed (the residuals and their Jacobian are zero)."""
    rows, jrows = [], []
    for q, dq, glob, lig, dl0 in fwd.last:
        q, dq, glob, lig, dl0 = q[0], dq[0], glob[0], lig[0], dl0[0]
        d = dq.shape[1]
        g = strain_ratios(q, glob, lig)
        past = (g > 1.0) & (lig[:, L_F + 2] != 0.0)
        rows.extend(np.where(past, (g - 1.0) / INTACT_SD, 0.0).tolist())
        if not past.any():
            jrows.extend([np.zeros(d)] * g.size)
            continue
        dg_dq = np.empty((g.size, 6))
        for c in range(6):
            e = np.zeros(6)
            e[c] = FD_STEP
            dg_dq[:, c] = (strain_ratios(q + e, glob, lig)
                           - strain_ratios(q - e, glob, lig)) / (2.0 * FD_STEP)
        for i in range(g.size):
            if not past[i]:
                jrows.append(np.zeros(d))
                continue
            l0, eps = float(lig[i, L_L0]), float(lig[i, L_EPS + 2])
            dg_dl0 = -(g[i] * eps + 1.0) / (l0 * eps)
            row = np.array([math.fsum(float(dg_dq[i, c]) * float(dq[c, k]) for c in range(6))
                            + dg_dl0 * float(dl0[k, i]) for k in range(d)])
            jrows.append(row / INTACT_SD)
    return np.array(rows), np.array(jrows).reshape(len(rows), -1)


def _predict(fwd, hp, sp, z):
    y, _, _ = fwd(hp.to_p(z), sp.experiments)
    return y[0]


def n_intact(fwd, sp) -> int:
    """Intact-bound residuals of a specimen: every packed ligament row at the largest moment
    of each of its experiments."""
    return fwd.model._packed[1].shape[0] * len(sp.experiments)


def _fit_specimen(fwd, hp, sp, z0, a, tau, sigma_e, sigma_o, intact=True):
    """MAP of one specimen's z under ``N(a, tau^2)`` and its Laplace variances (D,)."""
    evaluate = _evaluator(fwd, hp, sp.experiments, intact=intact)
    n = len(sp.observed)
    n_h = n_intact(fwd, sp) if intact else 0

    def fun(z):
        y, ok, _, h, _ = evaluate(z)
        data = (_whiten(sp.observed - y, sp.signs, sigma_e, sigma_o) if ok
                else np.full(n, FAILED_RESIDUAL))
        return np.concatenate([data, h if ok else np.zeros(n_h), (z - a) / tau])

    def jac(z):
        _, ok, J, _, Jh = evaluate(z)
        jd = (-_whiten_rows(J, sp.signs, sigma_e, sigma_o) if ok
              else np.zeros((n, len(z))))
        return np.vstack([jd, Jh if ok else np.zeros((n_h, len(z))), np.diag(1.0 / tau)])

    start = np.clip(z0, hp.z_lower, hp.z_upper)
    if not evaluate(start)[1]:
        start = np.clip(a, hp.z_lower, hp.z_upper)
    s = least_squares_bounded(fun, jac, start, hp.z_lower, hp.z_upper, **LM_OPTIONS)
    z = np.clip(s.x, hp.z_lower, hp.z_upper)
    return z, _laplace_var(jac(z)[:n + n_h], 1.0 / tau ** 2)


def _laplace_var(Jw, prior_prec) -> np.ndarray:
    """Diagonal of ``(Jw^T Jw + diag(prior_prec))^-1`` (correctly rounded sums, Cholesky)."""
    d = Jw.shape[1]
    H = np.array([[math.fsum(float(Jw[i, p]) * float(Jw[i, q]) for i in range(Jw.shape[0]))
                   for q in range(d)] for p in range(d)]) + np.diag(prior_prec)
    inv = spd_inverse(H)
    if inv is None:
        return 1.0 / np.asarray(prior_prec, dtype=float)
    return np.clip(np.diag(inv), 0.0, None)


def _fit_lab(fwd, hp, mor, exps, b0, a, S, Z, tau, shared):
    """MAP of Moroney's laboratory mean ``b`` and its Laplace variances. A parameter with a
    laboratory effect has the prior of ``b`` given ``a`` (two linear residuals: the
    difference ``b - a`` of two laboratory effects and the mean ``(a + b) / 2`` about m0); a
    shared one (``a = b = mu``) has the specimens' residuals ``(z_i - b) / tau`` and its
    prior ``(b - m0) / s0``."""
    evaluate = _evaluator(fwd, hp, exps)
    obs = mor["value_deg"].to_numpy(float)
    sd = mor["sd_deg"].to_numpy(float)
    tl, m0, s0 = hp.tau_lab, hp.m0, hp.s0
    k, d, n = len(obs), len(b0), Z.shape[0]
    own = np.flatnonzero(~shared)
    common = np.flatnonzero(shared)

    def prior_rows(b):
        r = [(b[j] - a[j]) / (math.sqrt(2.0) * tl[j]) for j in own]
        r += [(0.5 * (a[j] + b[j]) - m0[j]) / math.sqrt(S[j]) for j in own]
        r += [(b[j] - Z[i, j]) / tau[j] for j in common for i in range(n)]
        r += [(b[j] - m0[j]) / s0[j] for j in common]
        return np.array(r)

    def prior_jac():
        rows = []
        for j in own:
            e = np.zeros(d)
            e[j] = 1.0 / (math.sqrt(2.0) * tl[j])
            rows.append(e)
        for j in own:
            e = np.zeros(d)
            e[j] = 0.5 / math.sqrt(S[j])
            rows.append(e)
        for j in common:
            for _ in range(n):
                e = np.zeros(d)
                e[j] = 1.0 / tau[j]
                rows.append(e)
        for j in common:
            e = np.zeros(d)
            e[j] = 1.0 / s0[j]
            rows.append(e)
        return np.array(rows).reshape(-1, d)

    Jp = prior_jac()

    def fun(b):
        y, ok, _, _, _ = evaluate(b)
        data = (y - obs) / sd if ok else np.full(k, FAILED_RESIDUAL)
        return np.concatenate([data, prior_rows(b)])

    def jac(b):
        _, ok, J, _, _ = evaluate(b)
        jd = J / sd[:, None] if ok else np.zeros((k, d))
        return np.vstack([jd, Jp])

    start = np.clip(b0, hp.z_lower, hp.z_upper)
    if not evaluate(start)[1]:
        start = np.clip(a, hp.z_lower, hp.z_upper)
    s = least_squares_bounded(fun, jac, start, hp.z_lower, hp.z_upper, **LM_OPTIONS)
    b = np.clip(s.x, hp.z_lower, hp.z_upper)
    prior_prec = np.array([math.fsum(float(Jp[r, j]) ** 2 for r in range(Jp.shape[0]))
                           for j in range(d)])
    return b, _laplace_var(jac(b)[:k], prior_prec)


def _steps_table(fwd, hp, specs, Z) -> pd.DataFrame:
    rows = []
    for i, sp in enumerate(specs):
        y = _predict(fwd, hp, sp, Z[i])
        k = 0
        for e in sp.experiments:
            for point, m in enumerate(e.moment_Nm, start=1):
                rows.append({"specimen": sp.name, "direction": e.mode, "point": point,
                             "moment_Nm": m, "observed_deg": sp.observed[k],
                             "fitted_deg": y[k], "residual_deg": sp.observed[k] - y[k]})
                k += 1
    return pd.DataFrame(rows)


def _moroney_table(fwd, hp, mor, exps, b) -> pd.DataFrame:
    y, ok, _ = fwd(hp.to_p(b), exps)
    out = mor[["config", "mode", "moment_Nm", "value_deg", "sd_deg"]].copy()
    out["fitted_deg"] = y[0] if ok[0] else np.nan
    out["z"] = (out["fitted_deg"] - out["value_deg"]) / out["sd_deg"]
    return out
