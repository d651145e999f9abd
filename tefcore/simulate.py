r"""Synthetic sentence detectors whose calibration and independence are under our control, for which the
right answer is known (the theory chapters and the teaching lab derive and use them).

A document has a latent side :math:`Y`, change (:math:`s = +1`) with probability :math:`\pi`, else
stability (:math:`s = -1`). Sentence :math:`i` has a *strength* :math:`\mu_i \ge 0` and a latent
observation, with noise correlation :math:`\rho \in [0, 1)` within the document,

.. math::

    x_i = s\,\frac{\mu_i}{2} + \sqrt{\rho}\, z + \sqrt{1-\rho}\, e_i, \qquad z, e_i \sim \mathcal N(0, 1),

whose exact posterior log-odds :math:`\lambda_i = \mu_i x_i + \operatorname{logit}\pi` is calibrated.
The detector reports :math:`p_i = \sigma(\lambda_i / T + b + \eta_i)`, :math:`\eta_i \sim \mathcal
N(0, \tau^2)`: with :math:`T = 1`, :math:`b = \tau = \rho = 0` the sentences are calibrated and
conditionally independent (Proposition 2's hypotheses). *Decisive* sentences have strength
``strength``, *uncertain* ones ``uncertain_strength``; a :class:`Detector` holds the seven parameters.
Arrays are flat with a sorted ``doc_index``, the input of :func:`tefcore.fusion.fuse_many`.

Examples
--------
>>> from tefcore.simulate import Detector, simulate_documents
>>> from tefcore.fusion import fuse_many
>>> c = simulate_documents(1000, Detector(strength=3.0), n_decisive=1, n_uncertain=4, rng=0)
>>> c.n_docs, c.p.shape
(1000, (5000,))
>>> b = fuse_many(c.p, c.doc_index, rule="tef")
>>> bool((b.prediction == c.y).mean() > 0.8)
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.special import expit, logit
from scipy.stats import norm

from tefcore.fusion import CLASSES
from tefcore.information import Information, binary_entropy

__all__ = ["Detector", "SimulatedCorpus", "gaussian_information", "simulate_documents"]

_FloatArray = npt.NDArray[np.float64]
_IntArray = npt.NDArray[np.int64]
_BoolArray = npt.NDArray[np.bool_]
_RandomState = int | np.random.Generator | None
_Counts = int | Sequence[int] | npt.NDArray[np.integer]

_GH_NODES, _GH_WEIGHTS = np.polynomial.hermite_e.hermegauss(161)
_GH_WEIGHTS = _GH_WEIGHTS / math.sqrt(2.0 * math.pi)  # expectations under N(0, 1)


# --- the corpus -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class SimulatedCorpus:
    r"""Documents drawn from the Gaussian shift model: ``p`` (reported posteriors, what a judge writes into a
    cache), ``doc_index`` (non-decreasing), ``sentence_log_odds`` (the calibrated :math:`\lambda_i`) and
    ``decisive`` per sentence; ``y`` (true side) and ``true_log_odds`` (exact, correlation included) per
    document; ``params``, the generating parameters."""

    p: _FloatArray
    doc_index: _IntArray
    y: npt.NDArray[np.object_]
    true_log_odds: _FloatArray
    sentence_log_odds: _FloatArray
    decisive: _BoolArray
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def n_docs(self) -> int:
        """Number of documents."""
        return int(self.y.shape[0])

    @property
    def n_sentences(self) -> int:
        """Number of sentences over all documents."""
        return int(self.p.shape[0])

    @property
    def is_change(self) -> _BoolArray:
        """``y == "change"`` per document."""
        return np.asarray(self.y == CLASSES[0], dtype=bool)

    @property
    def sentence_is_change(self) -> _BoolArray:
        """The true side of each sentence's document, per sentence."""
        return self.is_change[self.doc_index]


# --- validation helpers ---------------------------------------------------------------------------
def _rng(rng: _RandomState) -> np.random.Generator:
    """The generator of a seed, a generator (returned as it is) or None."""
    if rng is not None and not isinstance(rng, (int, np.integer, np.random.Generator)):
        raise ValueError(f"rng must be None, an int seed or a numpy Generator, got {type(rng).__name__}")
    return np.random.default_rng(rng)


def _counts(value: _Counts, n_docs: int, name: str) -> _IntArray:
    """Per-document sentence counts from one count or one per document."""
    arr = np.asarray(value)
    if arr.ndim == 0:
        arr = np.full(n_docs, arr)
    if arr.shape != (n_docs,):
        raise ValueError(
            f"{name} must be an int or an array of {n_docs} per-document counts, "
            f"got shape {arr.shape}"
        )
    if arr.dtype.kind not in "iu":
        if arr.dtype.kind == "f" and np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
        else:
            raise ValueError(f"{name} must hold integers, got dtype {arr.dtype}")
    if (arr < 0).any():
        raise ValueError(f"{name} must be >= 0, got a minimum of {int(arr.min())}")
    return arr.astype(np.int64)


def _check(name: str, value: float, ok: bool, bound: str) -> None:
    """The one-line error of a parameter out of its range (a NaN compares False, so never ``ok``)."""
    if not ok:
        raise ValueError(f"{name} must {bound}, got {value!r}")


# --- the detector ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Detector:
    r"""A sentence detector of the Gaussian shift model (the module notes): how much its sentences say and how
    it reports. A parameter out of its range raises a ValueError that names it.

    Attributes
    ----------
    strength, uncertain_strength : float
        :math:`\mu \ge 0` of the decisive and of the uncertain sentences; one decisive sentence alone is
        right with probability :math:`\Phi(\mu/2)` under equal priors (0.93 at the default 3).
    temperature, logit_noise, logit_bias : float
        :math:`T > 0` (< 1 overconfident), :math:`\tau \ge 0` and :math:`b` (a lean towards change when
        > 0, as an LLM that prefers one answer letter).
    correlation, prior : float
        :math:`\rho \in [0, 1)` and :math:`\pi = P(Y = \text{change}) \in (0, 1)`.

    Examples
    --------
    >>> Detector(logit_bias=0.5).calibrated, Detector().calibrated
    (False, True)
    """

    strength: float = 3.0
    uncertain_strength: float = 0.5
    temperature: float = 1.0
    logit_noise: float = 0.0
    logit_bias: float = 0.0
    correlation: float = 0.0
    prior: float = 0.5

    def __post_init__(self) -> None:
        for name in ("strength", "uncertain_strength", "logit_noise"):
            _check(name, getattr(self, name), 0.0 <= getattr(self, name) < math.inf, "be a finite number >= 0")
        _check("temperature", self.temperature, 0.0 < self.temperature < math.inf, "be a finite number > 0")
        _check("logit_bias", self.logit_bias, math.isfinite(self.logit_bias), "be finite")
        _check("correlation", self.correlation, 0.0 <= self.correlation < 1.0, "lie in [0, 1)")
        _check("prior", self.prior, 0.0 < self.prior < 1.0, "lie in (0, 1)")

    @property
    def calibrated(self) -> bool:
        """Whether the reported sentence posteriors are calibrated and conditionally independent
        (:math:`T = 1`, :math:`\tau = 0`, :math:`b = 0`, :math:`\rho = 0`: Proposition 2's hypotheses)."""
        return self.temperature == 1.0 and self.logit_noise == 0.0 and self.logit_bias == 0.0 \
            and self.correlation == 0.0


def _detector(detector: Detector | None, params: dict[str, float]) -> Detector:
    """``detector`` (default :class:`Detector`) with the fields named in ``params`` replaced."""
    known = {f.name for f in fields(Detector)}
    unknown = sorted(set(params) - known)
    if unknown:
        raise ValueError(f"unknown detector parameter(s) {unknown}; a Detector has {sorted(known)}")
    return replace(detector or Detector(), **params)


# --- drawing documents ----------------------------------------------------------------------------
def simulate_documents(
    n_docs: int,
    detector: Detector | None = None,
    *,
    n_decisive: _Counts = 1,
    n_uncertain: _Counts = 4,
    rng: _RandomState = None,
    **params: float,
) -> SimulatedCorpus:
    r"""Draw documents of decisive and uncertain sentences from the Gaussian shift model, in random order
    within a document (their position carries no information; a tied Majority Vote goes to the first vote).

    Parameters
    ----------
    n_docs : int
        Number of documents (>= 1).
    detector : Detector, optional
        Default ``Detector()``, calibrated and independent.
    n_decisive, n_uncertain : int or array_like of int
        Sentences of each kind, for all documents or per document (at least one sentence each).
    rng : int, numpy.random.Generator or None
        Seed or generator; the same seed gives the same corpus.
    **params : float
        Fields of :class:`Detector` that replace those of ``detector`` (``strength=2.0``, ...).

    Returns
    -------
    SimulatedCorpus

    Notes
    -----
    :math:`x \mid Y \sim \mathcal N(s\,m, \Sigma)`, :math:`m_i = \mu_i/2`, :math:`\Sigma = (1-\rho) I +
    \rho\,\mathbf 1\mathbf 1^\top` gives the exact document log-odds :math:`\operatorname{logit}\pi +
    2\,m^\top\Sigma^{-1}x = \operatorname{logit}\pi + \frac{2}{1-\rho}\big(\sum_i m_i x_i - \frac{\rho
    \sum_i m_i \sum_i x_i}{1-\rho+N\rho}\big)`.

    Examples
    --------
    >>> c = simulate_documents(2, Detector(strength=4.0), n_decisive=1, n_uncertain=2, rng=1)
    >>> c.doc_index.tolist(), c.decisive.tolist()
    ([0, 0, 0, 1, 1, 1], [False, False, True, False, False, True])
    """
    if not isinstance(n_docs, (int, np.integer)) or n_docs < 1:
        raise ValueError(f"n_docs must be a positive integer, got {n_docs!r}")
    n_docs = int(n_docs)
    det = _detector(detector, params)
    n_dec = _counts(n_decisive, n_docs, "n_decisive")
    n_unc = _counts(n_uncertain, n_docs, "n_uncertain")
    n_per_doc = n_dec + n_unc
    if (n_per_doc == 0).any():
        first = int(np.flatnonzero(n_per_doc == 0)[0])
        raise ValueError(
            f"every document needs at least one sentence; document {first} has "
            "n_decisive = n_uncertain = 0"
        )
    gen = _rng(rng)
    rho = det.correlation

    is_change = gen.random(n_docs) < det.prior
    sign = np.where(is_change, 1.0, -1.0)
    doc_index = np.repeat(np.arange(n_docs, dtype=np.int64), n_per_doc)
    starts = np.concatenate(([0], np.cumsum(n_per_doc)[:-1]))
    position = np.arange(doc_index.shape[0]) - starts[doc_index]
    decisive = position < n_dec[doc_index]
    mu = np.where(decisive, det.strength, det.uncertain_strength)

    shared = gen.standard_normal(n_docs)
    own = gen.standard_normal(doc_index.shape[0])
    noise = math.sqrt(rho) * shared[doc_index] + math.sqrt(1.0 - rho) * own
    x = sign[doc_index] * mu / 2.0 + noise
    prior_lo = float(logit(det.prior))
    lam = mu * x + prior_lo

    eta = gen.standard_normal(doc_index.shape[0]) * det.logit_noise if det.logit_noise > 0 else 0.0
    p = expit(lam / det.temperature + det.logit_bias + eta)

    m = mu / 2.0  # the Notes' formula (at rho = 0 exactly logit(pi) + 2 sum_i m_i x_i)
    smx = np.bincount(doc_index, weights=m * x, minlength=n_docs)
    sm = np.bincount(doc_index, weights=m, minlength=n_docs)
    sx = np.bincount(doc_index, weights=x, minlength=n_docs)
    shrink = rho / (1.0 - rho + n_per_doc * rho)
    true_lo = prior_lo + 2.0 / (1.0 - rho) * (smx - shrink * sm * sx)

    y = np.where(is_change, CLASSES[0], CLASSES[1]).astype(object)
    shuffled = np.lexsort((gen.random(doc_index.shape[0]), doc_index))  # drawn last: the rest stays as drawn
    drawn = {
        "n_docs": n_docs,
        **asdict(det),
        "n_decisive": int(n_dec[0]) if np.all(n_dec == n_dec[0]) else "per-document",
        "n_uncertain": int(n_unc[0]) if np.all(n_unc == n_unc[0]) else "per-document",
    }
    return SimulatedCorpus(p=p[shuffled].astype(np.float64), doc_index=doc_index, y=y, true_log_odds=true_lo,
                           sentence_log_odds=lam[shuffled], decisive=decisive[shuffled], params=drawn)


# --- Proposition 1: information -------------------------------------------------------------------
def gaussian_information(
    strength: float | npt.ArrayLike,
    *,
    prior: float = 0.5,
    temperature: float = 1.0,
    logit_noise: float = 0.0,
) -> Information:
    r"""Exact :math:`I(Y; p_i)` and :math:`I(Y; \hat y_i)` of one sentence of the Gaussian shift model. Logit
    noise makes a Gaussian shift of strength :math:`\mu_e = \mu/\sqrt{1 + (T\tau/\mu)^2}` (a temperature
    alone changes neither quantity), so that, by Gauss-Hermite quadrature,

    .. math::

        I(Y; p_i) = h(\pi) - \mathbb E\big[h\big(\sigma(\mu_e u + \operatorname{logit}\pi)\big)\big],
        \qquad u \mid Y \sim \mathcal N(\pm\mu_e/2, 1),

    and the hard label is a binary channel, :math:`P(\hat y = 1 \mid Y) = 1 - \Phi(c - s\,\mu_e/2)` with
    :math:`c = -\operatorname{logit}\pi / (\mu\sqrt{1+(T\tau/\mu)^2})`:

    .. math:: I(Y; \hat y_i) = h\big(P(\hat y = 1)\big) - \sum_y P(y)\, h\big(P(\hat y = 1\mid y)\big).

    Parameters
    ----------
    strength : float or array_like
        Sentence strength :math:`\mu \ge 0`.
    prior, temperature, logit_noise : float
        As in :class:`Detector`.

    Returns
    -------
    tefcore.information.Information
        In nats; floats for a scalar ``strength``, arrays otherwise.

    Examples
    --------
    >>> info = gaussian_information(3.0)
    >>> round(info.soft, 3), round(info.hard, 3), info.lost > 0
    (0.527, 0.448, True)
    """
    Detector(prior=prior, temperature=temperature, logit_noise=logit_noise)  # checks the three
    mu = np.asarray(strength, dtype=np.float64)
    if (mu < 0).any() or not np.isfinite(mu).all():
        raise ValueError("strength must be finite and >= 0")
    scalar = mu.ndim == 0
    mu = np.atleast_1d(mu)
    spread = np.sqrt(
        1.0
        + np.divide(temperature * logit_noise, mu, out=np.full_like(mu, np.inf), where=mu > 0) ** 2
    )
    mu_e = np.where(mu > 0, mu / spread, 0.0)
    lo = float(logit(prior))
    h_prior = float(binary_entropy(prior))

    # E[h(sigma(mu_e u + lo))] in each class s = +1, -1, u = s mu_e / 2 + a standard normal
    h_change, h_stab = (binary_entropy(expit(mu_e[:, None] * (s * mu_e[:, None] / 2.0 + _GH_NODES[None, :]) + lo))
                        @ _GH_WEIGHTS for s in (1.0, -1.0))
    soft = np.clip(h_prior - prior * h_change - (1.0 - prior) * h_stab, 0.0, None)

    with np.errstate(divide="ignore", invalid="ignore"):
        c = np.where(mu > 0, -lo / (mu * spread), 0.0)
    a1 = norm.sf(c - mu_e / 2.0)  # P(yhat = change | change)
    a0 = norm.sf(c + mu_e / 2.0)  # P(yhat = change | stability)
    marginal = prior * a1 + (1.0 - prior) * a0
    hard = (
        binary_entropy(marginal) - prior * binary_entropy(a1) - (1.0 - prior) * binary_entropy(a0)
    )
    hard = np.where(mu > 0, np.clip(hard, 0.0, None), 0.0)
    soft = np.where(mu > 0, soft, 0.0)
    if scalar:
        return Information(float(soft[0]), float(hard[0]))
    return Information(soft, hard)
