"""Threshold rules that compilation cannot flip: every env decides ``rate ≥ 0.6``-style rules here.

A rule such as "an agent whose mean contribution rate is at least 0.6 earns the loyalty bonus" compares a
computed float32 quantity with a threshold. The last bits of that quantity depend on how XLA compiled the
step: with params baked in as constants it rewrites ``a / e`` as ``a · (1/e)``, so a rate of 30/50 comes out
as 0.59999996, and a mean of ten 0.6s rounds to 0.59999996 or to 0.6 depending on the summation order. A
plain ``>=`` then pays a different game through different doors (the learners, ``gymnasium.make``, the
functional API). So every such rule is decided with one documented tolerance::

    at_least(x, t)  ⇔  x ≥ t − TOLERANCE·max(1, |t|)        below(x, t) = not at_least(x, t)
    at_most(x, t)   ⇔  x ≤ t + TOLERANCE·max(1, |t|)        above(x, t) = not at_most(x, t)

``TOLERANCE = 1e-5`` is about 80 float32 ulps at 1 (compilation moves a rate by a few ulps) and far below any
meaningful change: on a 50-unit endowment it is 0.0005 units of effort. A value exactly on a threshold, or
within the tolerance of it, always counts as reaching it, whichever way the step was compiled.

Comparisons of raw actions with raw params (``a_i ≥ b_i``) involve no arithmetic, are exact on every door and
stay plain comparisons (they must agree with the trust signal ``tanh(κ(a − b)) > 0``); so do integer counters.

Two exact tools complete the set:

* :func:`ratio` is ``a / b`` written so that XLA cannot turn it into ``a · (1/b)``: a rate such as
  ``10/50`` is the correctly rounded 0.2 on every door (baked constants, traced params, eager).
* :func:`exactly_below` / :func:`exactly_at_least` are plain comparisons for the one kind of rule whose
  reference behaviour depends on the rounding of an elementwise recurrence: CoalitionFormation's loyalty θ
  (``θ ← θ − 0.05(0.5 − r)``) reaches 0.14999992 after 14 free-riding steps and the reference (spec
  Appendix A) excludes the agent at that step; a tolerance would move it to step 15. θ is elementwise
  arithmetic on exact rates, so it is bit-identical on the jitted doors (adapters, learners, ``make_jax``).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

Array = jax.Array

#: relative tolerance (absolute for thresholds of magnitude ≤ 1) of every threshold rule
TOLERANCE = 1e-5


def margin(threshold: Any) -> Array:
    """The slack of a threshold: ``TOLERANCE · max(1, |t|)``."""
    return TOLERANCE * jnp.maximum(1.0, jnp.abs(jnp.asarray(threshold, jnp.float32)))


def at_least(value: Any, threshold: Any) -> Array:
    """``value ≥ threshold`` up to the tolerance: ``value ≥ t − TOLERANCE·max(1, |t|)``."""
    return jnp.asarray(value) >= jnp.asarray(threshold, jnp.float32) - margin(threshold)


def below(value: Any, threshold: Any) -> Array:
    """``value < threshold`` beyond the tolerance (the complement of :func:`at_least`)."""
    return ~at_least(value, threshold)


def at_most(value: Any, threshold: Any) -> Array:
    """``value ≤ threshold`` up to the tolerance: ``value ≤ t + TOLERANCE·max(1, |t|)``."""
    return jnp.asarray(value) <= jnp.asarray(threshold, jnp.float32) + margin(threshold)


def above(value: Any, threshold: Any) -> Array:
    """``value > threshold`` beyond the tolerance (the complement of :func:`at_most`)."""
    return ~at_most(value, threshold)


def ratio(numerator: Any, denominator: Any) -> Array:
    """``numerator / denominator``, correctly rounded however the step is compiled.

    XLA's algebraic simplifier rewrites a division by a compile-time constant (params closed over by a
    jitted function) into a multiplication by its reciprocal; the optimisation barrier hides the constant
    from that rewrite (it is removed afterwards, so the program is a plain ``divide``).
    """
    return jnp.asarray(numerator) / jax.lax.optimization_barrier(jnp.asarray(denominator))


def exactly_below(value: Any, threshold: Any) -> Array:
    """Plain ``value < threshold``: only for exact elementwise recurrences whose reference decision depends on
    their rounding (see the module docstring); use :func:`below` for everything else."""
    return jnp.asarray(value) < jnp.asarray(threshold, jnp.float32)


def exactly_at_least(value: Any, threshold: Any) -> Array:
    """Plain ``value ≥ threshold`` (the complement of :func:`exactly_below`)."""
    return ~exactly_below(value, threshold)
