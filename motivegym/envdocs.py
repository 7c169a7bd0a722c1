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
listed per env with their type and valid range; unknown names and invalid values (wrong type,
NaN/inf, out of range) raise `ValueError` naming the parameter, the value and the valid range.
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


def parameter_rows(env, params) -> list[tuple[str, str, str]]:
    """``(parameter, default, valid range)`` of every field, constructor argument and other keyword of an env."""
    import dataclasses

    from motivegym.core.params import flat_fields, specs_of, summary

    specs = specs_of(type(env))

    def valid(name: str, keyword: bool = False) -> str:
        spec = None if specs is None else (specs.keyword(name) if keyword else specs.fields.get(name))
        if spec is None:
            return ""
        return summary(spec) + (f" ({spec.note})" if spec.note else "")

    fields = flat_fields(params)
    rows = [(name, _format_value(value), valid(name)) for name, value in fields.items()]
    structural = getattr(env, "structural_arguments", lambda: ())()
    defaults = inspect.signature(env.make_params).parameters if structural else {}
    rows += [(f"{name} (constructor)", repr(defaults[name].default), valid(name, keyword=True)) for name in structural]
    field_names = {f.name for f in dataclasses.fields(params)}
    others = [name for name in env.parameter_names() if name not in fields and name not in structural and name not in field_names]
    rows += [
        (f"{name} (keyword)", specs.keyword(name).default if specs and specs.keyword(name) else "", valid(name, keyword=True))
        for name in others
    ]
    return rows


def parameter_constraints(env) -> list[str]:
    """The env's conditions on several parameters at once (``ParamRule`` s)."""
    from motivegym.core.params import specs_of

    specs = specs_of(type(env))
    return [] if specs is None else [rule.requirement for rule in specs.rules]


def environment_section(env_id: str) -> str:
    import motivegym

    spec = motivegym.get_spec(env_id)
    env, params = motivegym.make_jax(env_id)
    doc = textwrap.dedent(inspect.getdoc(spec.env_class) or "").strip()
    rows = parameter_rows(env, params)
    table = "\n".join(f"| `{name}` | {f'`{value}`' if value else '—'} | {valid} |" for name, value, valid in rows)
    constraints = "".join(f"\n* {text}" for text in parameter_constraints(env))
    return (
        f"## {env_id}\n\n`{spec.env_class.__module__}.{spec.env_class.__name__}` · agents: "
        f"{', '.join(env.agent_names(params))}\n\n{doc}\n\n| parameter | default | valid |\n|---|---|---|\n{table}\n"
        + (f"\nConstraints:\n{constraints}\n" if constraints else "")
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
