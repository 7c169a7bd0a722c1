"""Thin adapters over the functional core: Gymnasium Env and VectorEnv, PettingZoo Parallel and AEC."""
