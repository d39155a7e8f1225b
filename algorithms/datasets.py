"""Real data sets that ship inside a package, prepared for federated ERM.

``digits``: the 8x8 handwritten digits bundled with scikit-learn (1797 records, 64 pixel features with values
0..16; a small MNIST). Pixels are divided by 16 (into [0, 1]) and, as for breast_cancer, every record is
scaled by one common factor so that max ||x|| = r; the label is +1 for digits 5-9 and -1 for 0-4.

``breast_cancer``: the Wisconsin diagnostic breast cancer data bundled with scikit-learn (569 records,
30 features, binary label; no download). Features are standardised and every record is scaled by
the same factor so that max ||x|| = r exactly (the Lipschitz and smoothness constants then hold on the
data, not just in expectation); labels are mapped to {-1, +1}. The records are shuffled with the
spec's seed and dealt to N silos of n records each (the remainder is left out), either at random
(``split: random``, i.i.d.-like silos) or after sorting by label (``label_skew``: silos differ).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SPLITS = ("random", "label_skew")


@dataclass(frozen=True)
class SiloData:
    """A fixed federated data set: X (N, n, d), y (N, n)."""

    X: np.ndarray
    y: np.ndarray
    source: str

    @property
    def N(self) -> int:
        return self.X.shape[0]

    @property
    def n(self) -> int:
        return self.X.shape[1]

    @property
    def d(self) -> int:
        return self.X.shape[2]

    @property
    def radius(self) -> float:
        return float(np.linalg.norm(self.X, axis=-1).max())

    @property
    def y_max(self) -> float:
        return float(np.abs(self.y).max())


def breast_cancer_arrays() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_breast_cancer  # imported here: only this data set needs scikit-learn

    X, y = load_breast_cancer(return_X_y=True)
    return X.astype(np.float64), np.where(y == 1, 1.0, -1.0)


def digits_arrays() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits  # imported here: only the packaged data sets need scikit-learn

    X, y = load_digits(return_X_y=True)
    return X.astype(np.float64) / 16.0, np.where(y >= 5, 1.0, -1.0)


def _standardised_breast_cancer() -> tuple[np.ndarray, np.ndarray]:
    X, y = breast_cancer_arrays()
    return (X - X.mean(axis=0)) / X.std(axis=0), y


ARRAYS = {"breast_cancer": _standardised_breast_cancer, "digits": digits_arrays}
RECORDS = {"breast_cancer": 569, "digits": 1797}


def records_available(name: str) -> int:
    return RECORDS[name]


def federated(name: str, *, N: int, n: int | None, radius: float, split: str, rng: np.random.Generator) -> SiloData:
    """The named data set dealt to N silos of n records (default: as many as fit)."""
    X, y = ARRAYS[name]()
    X = X * (radius / np.linalg.norm(X, axis=1).max())
    per = len(y) // N if n is None else n
    if per < 1 or per * N > len(y):
        raise ValueError(f"{name} has {len(y)} records: N = {N} silos of n = {per} do not fit")
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; allowed: {', '.join(SPLITS)}")
    take = rng.permutation(len(y))[: per * N]
    if split == "label_skew":       # silo i gets the i-th contiguous block of the label-sorted records
        take = take[np.argsort(y[take], kind="stable")]
    return SiloData(X[take].reshape(N, per, -1), y[take].reshape(N, per), f"scikit-learn {name} ({split} split)")


def shuffleg_arrays(name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Private (A, y) and public (P, yp) records of the packaged stand-ins for seed 003 ch. 4's experiments
    (Table 4.5), in the order the data set ships them:
    - ``digits69``: scikit-learn's 8x8 digits, pixels / 16 (d = 64): private = the 6s, public = the 9s rotated by
      180 degrees (MNIST-69's construction on the 8x8 digits; 181 and 180 images).
    - ``cancer_split``: breast cancer, standardised features (d = 30), label 1 = malignant; private = tumours with
      mean radius above the median, public = the others (a covariate and label shift, as COMPAS's / CreditCard's
      group splits). Targets in {0, 1} (the logistic loss of §4.7.2).
    - ``diabetes_split``: scikit-learn's diabetes (d = 10), features and target standardised; private = sex code
      above 0, public = the others (the Crime split's role)."""
    if name == "digits69":
        from sklearn.datasets import load_digits

        X, y = load_digits(return_X_y=True)
        X = X.astype(np.float64) / 16.0
        six = X[y == 6]
        nine = X[y == 9].reshape(-1, 8, 8)[:, ::-1, ::-1].reshape(-1, 64)
        return six, np.zeros(len(six)), np.ascontiguousarray(nine), np.zeros(len(nine))
    if name == "cancer_split":
        from sklearn.datasets import load_breast_cancer

        X, t = load_breast_cancer(return_X_y=True)
        X = (X - X.mean(axis=0)) / X.std(axis=0)
        y = (t == 0).astype(np.float64)                  # 0 = malignant in scikit-learn's coding
        priv = X[:, 0] > np.median(X[:, 0])
        return X[priv], y[priv], X[~priv], y[~priv]
    if name == "diabetes_split":
        from sklearn.datasets import load_diabetes

        X, t = load_diabetes(return_X_y=True)
        priv = X[:, 1] > 0
        X = (X - X.mean(axis=0)) / X.std(axis=0)
        t = (t - t.mean()) / t.std()
        return X[priv], t[priv], X[~priv], t[~priv]
    raise ValueError(f"unknown data set {name!r}")
