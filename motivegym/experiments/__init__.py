"""Experiments: sweeps, evaluation of reference policies, result tables, plots."""
