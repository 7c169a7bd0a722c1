"""Generate ``docs/environments.md`` from the registry, so docs and code cannot drift.

``motivegym docs`` rewrites the page; a test fails when the committed page differs.
"""

from __future__ import annotations

import inspect
import textwrap
from pathlib import Path

import numpy as np

HEADER = """# Environments

*Generated from the registry by `motivegym docs`; do not edit by hand.*

Every env returns **payoffs**; the reward a learner sees comes from a reward layer
(`reward="private" | "integrated" | "cooperative" | "mutuality:<rho>"`). Ids are
`motivegym/<Name>-v0` for `gymnasium.make` and `<Name>-v0` for `motivegym.parallel_env`,
`motivegym.aec_env` and `motivegym.make_jax`. Keyword arguments are the parameter names
listed per env; unknown names raise `ValueError`.
"""


def _format_value(value) -> str:
    """Scalars as is; small numeric arrays as lists; maps (strings) and large arrays by shape."""
    array = np.asarray(value)
    if array.ndim == 0:
        item = array.item()
        return f"{item:g}" if isinstance(item, float) else str(item)
    if array.dtype.kind not in "biuf":
        kind = "text" if array.dtype.kind == "U" else str(array.dtype)
        return f"{kind} array of shape {array.shape}"
    if array.size > 64:
        return f"{array.dtype} array of shape {array.shape} (mean {float(array.mean()):.4g})"
    return str(np.round(array.astype(np.float64), 4).tolist())


def environment_table() -> str:
    import motivegym

    lines = [
        "| id | family | tier | agents | horizon | obs (global / per agent) | mechanism | default reward |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for env_id in motivegym.list_envs():
        spec = motivegym.get_spec(env_id)
        env, params = motivegym.make_jax(env_id)
        sizes = f"{env.global_state_size(params)} / {env.observation_size(params)}"
        lines.append(
            f"| [`{env_id}`](#{env_id.lower()}) | {spec.family} | {spec.tier} | {env.n_agents(params)} | "
            f"{env.max_episode_steps(params)} | {sizes} | {spec.mechanism} | {spec.default_reward} |"
        )
    return "\n".join(lines)


def environment_section(env_id: str) -> str:
    import dataclasses

    import motivegym

    spec = motivegym.get_spec(env_id)
    env, params = motivegym.make_jax(env_id)
    doc = textwrap.dedent(inspect.getdoc(spec.env_class) or "").strip()
    rows = []
    for field in dataclasses.fields(params):
        value = getattr(params, field.name)
        if dataclasses.is_dataclass(value):
            rows += [(f"{sub.name}", _format_value(getattr(value, sub.name))) for sub in dataclasses.fields(value)]
        else:
            rows.append((field.name, _format_value(value)))
    structural = getattr(env, "structural_arguments", lambda: ())()
    defaults = inspect.signature(env.make_params).parameters if structural else {}
    rows += [(f"{name} (constructor)", repr(defaults[name].default)) for name in structural]
    table = "\n".join(f"| `{name}` | `{value}` |" for name, value in rows)
    return (
        f"## {env_id}\n\n`{spec.env_class.__module__}.{spec.env_class.__name__}` · agents: "
        f"{', '.join(env.agent_names(params))}\n\n{doc}\n\n| parameter | default |\n|---|---|\n{table}\n"
    )


def render_environment_docs() -> str:
    import motivegym
    from motivegym.experiments.dilemma_strength import dilemma_strength_table

    sections = "\n".join(environment_section(env_id) for env_id in motivegym.list_envs())
    strength = f"## Dilemma strength\n\n{dilemma_strength_table()}\n"
    return f"{HEADER}\n{environment_table()}\n\n{strength}\n{sections}"


def write_environment_docs(path: str | Path = "docs/environments.md") -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_environment_docs())
    return path
