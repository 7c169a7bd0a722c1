"""``name(key=value, ...)`` in reward strings: a layer's fields set by name."""

import pytest

from motivegym.experiments.intrinsic import layer_entry, parse_layers
from motivegym.experiments.sweep import split_list
from motivegym.reward_layers import ICM, RND, AutoBonus, Loyalty, WeightedSum, integrated, reward_layer, split_specs


def test_options_set_fields_with_the_coefficient_and_training_suffix():
    assert reward_layer("icm(normalize=true, hidden=32):0.5@rollout") == ICM(coef=0.5, normalize=True, hidden=32, train_on="rollout")
    assert reward_layer("rnd(normalize=false)") == RND(normalize=False)
    assert reward_layer("auto(ucb_scale=2):count/re3") == AutoBonus(arms=("count", "re3"), ucb_scale=2.0)


def test_an_integer_for_a_float_field_becomes_a_float():
    layer = reward_layer("icm(coef=1, learning_rate=1)")
    assert type(layer.coef) is float and type(layer.learning_rate) is float
    assert type(reward_layer("icm(hidden=8)").hidden) is int


def test_options_work_inside_sums_and_wrappers():
    total = reward_layer("integrated+0.05*e3b(normalize=true)@rollout")
    assert isinstance(total, WeightedSum)
    assert total.terms[0] == (1.0, integrated())
    assert total.terms[1][0] == 0.05 and total.terms[1][1].normalize and total.terms[1][1].train_on == "rollout"
    assert reward_layer("loyalty:icm(normalize=true)") == Loyalty(ICM(normalize=True))


@pytest.mark.parametrize(
    "spec, message",
    [
        ("icm(normalise=true)", "unknown option.*normalise.*ICM takes.*normalize"),
        ("private(x=1)", "unknown option.*Private takes no options"),
        ("icm(hidden=-1)", "hidden"),
        ("icm(normalize=maybe)", "normalize"),
        ("icm(normalize)", "not 'key=value'"),
        ("icm(coef=1, coef=2)", "given twice"),
        ("icm(normalize=true", "options right after the name"),
        ("icm:0.5(normalize=true)", "needs a number"),
        ("count(train_on=rollout)", "learn a model"),
    ],
)
def test_bad_options_are_refused_with_a_message(spec, message):
    with pytest.raises(ValueError, match=message):
        reward_layer(spec)


def test_lists_split_only_at_commas_outside_options():
    assert split_specs(" none, icm(normalize=true, hidden=32)@rollout ,,x=e3b(ridge=0.5)") == [
        "none",
        "icm(normalize=true, hidden=32)@rollout",
        "x=e3b(ridge=0.5)",
    ]
    for bad in ("a,(b", "a),b"):
        with pytest.raises(ValueError, match="unbalanced"):
            split_specs(bad)
    assert split_list("private,icm(normalize=true, hidden=32)") == ("private", "icm(normalize=true, hidden=32)")


def test_experiment_layers_take_options_with_or_without_a_label():
    entries = parse_layers("none,icm_norm=icm(normalize=true, hidden=32)@rollout,e3b(normalize=true)")
    assert [layer_entry(e) for e in entries] == [
        ("none", "none"),
        ("icm_norm", "icm(normalize=true, hidden=32)@rollout"),
        ("e3b(normalize=true)", "e3b(normalize=true)"),
    ]


def test_a_comma_separated_layer_argument_in_a_list_points_to_named_fields():
    with pytest.raises(ValueError, match=r"set its fields by name.*inequity_aversion\(envy=5, guilt=0.05\)"):
        split_list("private,inequity_aversion:5,0.05")
    assert reward_layer("inequity_aversion(envy=5, guilt=0.05)") == reward_layer("inequity_aversion:5,0.05")
