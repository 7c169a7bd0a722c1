"""Reward layers and the parser that turns ``reward="..."`` into a layer."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

from motivegym.reward_layers.base import LayerChoice, LayerSpec, RewardLayer, WeightedSum
from motivegym.reward_layers.intrinsic import (
    RND,
    TRAINED_LAYERS,
    CountBonus,
    EpisodicNovelty,
    ImpactBonus,
    IntrinsicLayer,
    LearningProgress,
)
from motivegym.reward_layers.intrinsic_models import E3B, ICM, RE3, AutoBonus, Disagreement, Empowerment
from motivegym.reward_layers.motives import MAX_NESTING, Loyalty, Reciprocity, loyalty, reciprocity
from motivegym.reward_layers.social import (
    Cooperative,
    InequityAversion,
    Integrated,
    Mutuality,
    Private,
    SocialValueOrientation,
    cooperative,
    inequity_aversion,
    integrated,
    mutuality,
    private,
    svo,
)

#: name → factory taking the optional ``:argument`` string
LAYER_FACTORIES: dict[str, Callable[[str | None], RewardLayer]] = {
    "private": lambda arg: _no_argument("private", arg, Private()),
    "integrated": lambda arg: _no_argument("integrated", arg, Integrated()),
    "cooperative": lambda arg: Cooperative(arg or "mean_payoff"),
    "mutuality": lambda arg: Mutuality(_float_argument("mutuality", arg)),
    "loyalty": lambda arg: Loyalty(reward_layer(arg) if arg else Private()),
    "reciprocity": lambda arg: Reciprocity(reward_layer(arg) if arg else Integrated()),
    "inequity_aversion": lambda arg: inequity_aversion(*_float_list("inequity_aversion", arg, 3)),
    "svo": lambda arg: svo(*_float_list("svo", arg, 2)),
    "count": lambda arg: _with_coef(CountBonus, "count", arg),
    "rnd": lambda arg: _with_coef(RND, "rnd", arg),
    "novelty": lambda arg: _with_coef(EpisodicNovelty, "novelty", arg),
    "impact": lambda arg: _with_coef(ImpactBonus, "impact", arg),
    "learning_progress": lambda arg: _with_coef(LearningProgress, "learning_progress", arg),
    "icm": lambda arg: _with_coef(ICM, "icm", arg),
    "disagreement": lambda arg: _with_coef(Disagreement, "disagreement", arg),
    "e3b": lambda arg: _with_coef(E3B, "e3b", arg),
    "re3": lambda arg: _with_coef(RE3, "re3", arg),
    "empowerment": lambda arg: _with_coef(Empowerment, "empowerment", arg),
    "auto": lambda arg: _auto_layer(arg),
    "code": lambda arg: _llm_layer("code", arg, "reward_code", "code_reward_from_file"),
    "learned": lambda arg: _llm_layer("learned", arg, "motif", "learned_reward"),
    "progress": lambda arg: _llm_layer("progress", arg, "progress", "progress_reward_from_file"),
}

#: the names of the intrinsic-motivation layers (what ``experiments/intrinsic.py --layers`` accepts besides ``none``)
INTRINSIC_LAYER_NAMES = ("count", "rnd", "novelty", "impact", "learning_progress", "icm", "disagreement", "e3b", "re3", "empowerment", "auto")


def _llm_layer(name: str, path: str | None, module: str, factory: str) -> RewardLayer:
    """``code:<file.py>`` (LLM-written reward code) / ``learned:<model.npz>`` (a distilled Motif model),
    imported lazily so plain use never loads the LLM tooling."""
    if not path:
        example = {"code": "reward.py", "progress": "progress.py"}.get(name, "reward_model.npz")
        raise ValueError(f"reward layer {name!r} needs a file path, e.g. '{name}:{example}'")
    import importlib

    return getattr(importlib.import_module(f"motivegym.reward_layers.llm.{module}"), factory)(path)


#: ``+`` separating terms of a sum (not the sign of an exponent such as ``1e+3``)
_TERM_SEPARATOR = re.compile(r"(?<![0-9.][eE])\+")


#: layers whose ``:argument`` is another layer
_WRAPPERS = ("loyalty", "reciprocity")


def _check_nesting(spec: str) -> None:
    """At most :data:`~motivegym.reward_layers.motives.MAX_NESTING` wrapping layers (``loyalty:loyalty:…``),
    counted without recursion so a deep string raises ``ValueError``, not ``RecursionError``."""
    depth, rest = 0, spec
    while depth <= MAX_NESTING:
        head, _, rest = rest.strip().partition(":")
        if head.rpartition("*")[2].strip() not in _WRAPPERS or not rest:
            return
        depth += 1
    raise ValueError(
        f"reward {spec[:60]!r}...: more than {MAX_NESTING} nested motive layers (loyalty:/reciprocity:); at most {MAX_NESTING} are allowed"
    )


def _no_argument(name: str, arg: str | None, layer: RewardLayer) -> RewardLayer:
    if arg is not None:
        raise ValueError(f"reward layer {name!r} takes no argument, got {name}:{arg}")
    return layer


def _float_argument(name: str, arg: str | None) -> float:
    try:
        return float(arg)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"reward layer {name!r} needs a number, e.g. '{name}:0.5', got {arg!r}") from None


def _with_coef(layer_class: type[IntrinsicLayer], name: str, arg: str | None) -> IntrinsicLayer:
    return layer_class() if arg is None else layer_class(coef=_float_argument(name, arg))


def _auto_layer(arg: str | None) -> AutoBonus:
    """``auto`` (the default arms), ``auto:<coef>`` or ``auto:<arm>/<arm>/…`` (the bandit picks among these arms,
    e.g. ``auto:count/novelty/re3``; ``/`` reads "or", and a coefficient goes in front: ``0.5*auto:count/re3``)."""
    if arg is None:
        return AutoBonus()
    if "/" not in arg and arg.strip() not in INTRINSIC_LAYER_NAMES:
        try:
            return AutoBonus(coef=float(arg))
        except ValueError:
            pass
    arms = tuple(arm.strip() for arm in arg.split("/"))
    if not all(arms) or any(arm not in INTRINSIC_LAYER_NAMES or arm == "auto" for arm in arms):
        names = "/".join(n for n in INTRINSIC_LAYER_NAMES if n != "auto")
        raise ValueError(
            f"reward layer 'auto' takes a coefficient ('auto:0.5') or arms separated by '/' ('auto:count/novelty/re3', "
            f"arms from {names}), got auto:{arg}"
        )
    return AutoBonus(arms=arms)


def _float_list(name: str, arg: str | None, most: int) -> list[float]:
    """``"5,0.05"`` → ``[5.0, 0.05]`` (at most ``most`` numbers; none gives the layer's defaults)."""
    if arg is None:
        return []
    try:
        values = [float(v) for v in arg.split(",")]
    except ValueError:
        raise ValueError(f"reward layer {name!r} takes up to {most} comma-separated numbers, got {arg!r}") from None
    if len(values) > most:
        raise ValueError(f"reward layer {name!r} takes up to {most} comma-separated numbers, got {arg!r}")
    return values


def reward_layer(spec: str | RewardLayer) -> RewardLayer:
    """A layer from a name (``"private"``, ``"integrated"``, ``"cooperative"``,
    ``"cooperative:mean_integrated"``, ``"mutuality:0.25"``, ``"loyalty"`` / ``"loyalty:<base>"``,
    ``"reciprocity"`` / ``"reciprocity:<base>"``, ``"inequity_aversion"`` / ``"inequity_aversion:α,β,smoothing"``,
    ``"svo"`` / ``"svo:target_degrees,weight"``, ``"code:<file.py>"``, ``"learned:<model.npz>"``, ``"progress:<file.py>"`` (LLM progress function + count bonus), the intrinsic bonuses ``"count"``, ``"rnd"``, ``"novelty"``,
    ``"impact"``, ``"learning_progress"``, ``"icm"``, ``"disagreement"``, ``"e3b"``, ``"re3"``, ``"empowerment"``,
    ``"auto"`` with an optional ``:coef``; ``"auto:count/novelty/re3"`` picks its arms; a layer that learns a model
    trains per step, or on the learner's rollouts with the suffix ``@rollout``: ``"rnd@rollout"``, ``"icm:0.5@rollout"``)
    or a layer object (returned as is). Any field of a layer can be set by name in parentheses right after its name:
    ``"icm(normalize=true, hidden=32):0.5@rollout"``.

    A weighted sum is written ``"a+w*b"``, e.g. ``"integrated+0.05*rnd"``; ``+`` binds loosest, so
    ``"loyalty:private+rnd"`` is ``loyalty(private) + rnd``."""
    if isinstance(spec, RewardLayer):
        return spec
    if not isinstance(spec, str):
        raise TypeError(f"reward must be a layer name or a RewardLayer, got {type(spec).__name__}")
    _check_nesting(spec)
    terms = _TERM_SEPARATOR.split(spec)
    if len(terms) > 1 or "*" in spec.partition(":")[0]:
        return WeightedSum(tuple(pair for term in terms for pair in _weighted_term(term, spec).terms))
    return _named_layer(spec)


def _weighted_term(term: str, spec: str) -> WeightedSum:
    """``"w*name"`` or ``"name"`` as a one-term :class:`WeightedSum`."""
    term = term.strip()
    if not term:
        raise ValueError(f"empty term in reward {spec!r}; write sums as 'a+w*b', e.g. 'integrated+0.05*rnd'")
    weight, star, rest = term.partition("*")
    if not star:
        return WeightedSum.of(_named_layer(term))
    try:
        value = float(weight)
    except ValueError:
        raise ValueError(f"reward term {term!r} in {spec!r}: the weight before '*' must be a number") from None
    return WeightedSum(((value, _named_layer(rest)),))


#: ``<layer>@rollout`` / ``<layer>@step``: when an intrinsic layer's model trains (``IntrinsicLayer.train_on``)
TRAIN_ON_SUFFIXES = ("@rollout", "@step")

#: ``name(key=value, ...)``: a layer's fields set by name, e.g. ``icm(normalize=true, hidden=32)``
_OPTIONS = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*\((.*)\)\s*$", re.DOTALL)


def _layer_options(head: str, spec: str) -> tuple[str, dict[str, bool | int | float | str]]:
    """``"icm(normalize=true, hidden=32)"`` → ``("icm", {"normalize": True, "hidden": 32})``; ``"icm"`` → ``("icm", {})``.
    Values read as ``true``/``false``, an integer, a float, else text."""
    head = head.strip()
    if "(" not in head and ")" not in head:
        return head, {}
    match = _OPTIONS.match(head)
    if not match:
        raise ValueError(f"reward layer {spec!r}: write options right after the name, e.g. 'icm(normalize=true, hidden=32):0.5@rollout'")
    name, body = match.groups()
    options: dict[str, bool | int | float | str] = {}
    for item in split_specs(body):
        key, equals, value = (part.strip() for part in item.partition("="))
        if not equals or not key.isidentifier() or not value:
            raise ValueError(f"reward layer {spec!r}: option {item!r} is not 'key=value'")
        if key in options:
            raise ValueError(f"reward layer {spec!r}: option {key!r} given twice")
        options[key] = _option_value(value)
    return name, options


def _option_value(text: str) -> bool | int | float | str:
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _with_options(layer: RewardLayer, options: dict[str, bool | int | float | str], spec: str) -> RewardLayer:
    """``layer`` with ``options`` replacing its fields (the layer's own checks run on the new values)."""
    if not options:
        return layer
    fields = {f.name for f in dataclasses.fields(layer) if f.init and f.name != "name"}
    unknown = sorted(set(options) - fields)
    if unknown:
        takes = ", ".join(sorted(fields)) or "no options"
        raise ValueError(f"reward layer {spec!r}: unknown option(s) {', '.join(unknown)}; {type(layer).__name__} takes {takes}")
    typed = {key: float(v) if type(v) is int and isinstance(getattr(layer, key), float) else v for key, v in options.items()}
    return dataclasses.replace(layer, **typed)


def split_specs(text: str) -> list[str]:
    """Split a comma-separated list of reward specs at the commas outside parentheses:
    ``"none,icm(normalize=true, hidden=32)"`` → ``["none", "icm(normalize=true, hidden=32)"]`` (items stripped, empty
    items dropped). Unbalanced parentheses raise ``ValueError``."""
    items, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            raise ValueError(f"unbalanced ')' in {text!r}")
        if char == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    if depth:
        raise ValueError(f"unbalanced '(' in {text!r}")
    items.append(text[start:])
    items = [item.strip() for item in items if item.strip()]
    for before, item in zip(items, items[1:]):
        if ":" in before and _is_number(item):
            raise ValueError(
                f"{before!r} then {item!r} in {text!r}: a layer's comma-separated argument cannot go in a comma-separated "
                "list; set its fields by name instead, e.g. 'inequity_aversion(envy=5, guilt=0.05)', 'svo(target_degrees=30, weight=0.5)'"
            )
    return items


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _named_layer(spec: str) -> RewardLayer:
    spec = spec.strip()
    train_on = next((suffix for suffix in TRAIN_ON_SUFFIXES if spec.endswith(suffix)), None)
    if train_on:
        spec = spec[: -len(train_on)]
    head, _, arg = spec.partition(":")
    name, options = _layer_options(head, spec)
    if name not in LAYER_FACTORIES:
        from motivegym.core.errors import unknown_names_error

        raise unknown_names_error("reward layer", [name], LAYER_FACTORIES, "reward")
    layer = _with_options(LAYER_FACTORIES[name](arg or None), options, spec)
    if train_on is None:
        return layer
    if not isinstance(layer, IntrinsicLayer):
        raise ValueError(f"reward layer {spec!r}{train_on}: only intrinsic layers take '@rollout' / '@step' (when their model trains)")
    return dataclasses.replace(layer, train_on=train_on[1:])


__all__ = [
    "LayerChoice",
    "LayerSpec",
    "RewardLayer",
    "WeightedSum",
    "Private",
    "Integrated",
    "Cooperative",
    "Mutuality",
    "Loyalty",
    "Reciprocity",
    "InequityAversion",
    "SocialValueOrientation",
    "inequity_aversion",
    "svo",
    "IntrinsicLayer",
    "TRAINED_LAYERS",
    "CountBonus",
    "RND",
    "EpisodicNovelty",
    "ImpactBonus",
    "LearningProgress",
    "ICM",
    "Disagreement",
    "E3B",
    "RE3",
    "Empowerment",
    "AutoBonus",
    "INTRINSIC_LAYER_NAMES",
    "loyalty",
    "reciprocity",
    "private",
    "integrated",
    "cooperative",
    "mutuality",
    "reward_layer",
    "LAYER_FACTORIES",
    "split_specs",
]
