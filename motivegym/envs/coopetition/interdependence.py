"""Interdependence matrices ``D`` (TR-1 Eq. 1): ``D[i, j]`` is how much agent i depends on j."""

from __future__ import annotations

import numpy as np


def _zero_diagonal(matrix: np.ndarray) -> np.ndarray:
    matrix = np.array(matrix, dtype=np.float32)  # copy: never modify the caller's array (spec §7.44)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"interdependence matrix must be square, got shape {matrix.shape}")
    np.fill_diagonal(matrix, 0.0)
    return matrix


def symmetric_interdependence(n_agents: int, strength: float = 0.5) -> np.ndarray:
    """All off-diagonal entries equal to ``strength``."""
    return _zero_diagonal(np.full((n_agents, n_agents), strength))


def asymmetric_interdependence(d01: float, d10: float) -> np.ndarray:
    """Dyad ``[[0, d01], [d10, 0]]``."""
    return _zero_diagonal(np.array([[0.0, d01], [d10, 0.0]]))


def hub_spoke_interdependence(n_spokes: int, hub_dependency: float = 0.3, spoke_dependency: float = 0.8) -> np.ndarray:
    """Agent 0 is the hub: ``D[0, j] = hub_dependency``, ``D[i, 0] = spoke_dependency``; spokes independent."""
    n = 1 + n_spokes
    matrix = np.zeros((n, n))
    matrix[0, 1:] = hub_dependency
    matrix[1:, 0] = spoke_dependency
    return _zero_diagonal(matrix)


def dependency_coefficient(records: list[tuple[int, int, float, float]], n_agents: int) -> np.ndarray:
    """``D_ij = Σ_d w_d·crit_d / Σ_d w_d`` over dependency records ``(depender, dependee, w, crit)``."""
    weighted = np.zeros((n_agents, n_agents))
    weights = np.zeros((n_agents, n_agents))
    for depender, dependee, importance, criticality in records:
        weighted[depender, dependee] += importance * criticality
        weights[depender, dependee] += importance
    matrix = np.divide(weighted, weights, out=np.zeros_like(weighted), where=weights > 0)
    return _zero_diagonal(matrix)
