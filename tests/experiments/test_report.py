import math

import numpy as np
import pytest

from motivegym.experiments.report import (
    aggregate_table,
    algorithm_rankings,
    improvement_over_base,
    paired_contrasts,
    plot_figures,
    report_markdown,
    reward_rankings,
    write_report,
)


def hand_made_rows() -> list[dict]:
    """Two envs × two rewards × three seeds, full budget only; cooperative beats private by 10 on env A, ties on B."""
    rows = []
    for env_id, offset in (("A", 0.0), ("B", 100.0)):
        for reward, lift in (("private", 0.0), ("cooperative", 10.0 if env_id == "A" else 0.0)):
            for seed, noise in enumerate((-1.0, 0.0, 1.5)):
                welfare = offset + lift + noise
                rows.append({
                    "env": env_id, "algo": "ippo", "sharing": "shared", "reward": reward, "seed": seed, "status": "ok",
                    "steps": 100, "budget": 100, "welfare": welfare, "normalized_score": welfare / 200.0, "run_id": f"{env_id}{reward}{seed}",
                    "gap_to_optimum_percent": -50.0, "random_welfare": 0.0,
                    **{m: 1.0 for m in ("efficiency", "equality", "sustainability", "peace")},
                })  # fmt: skip
    return rows


def test_final_rows_and_budget_fractions_when_the_budget_is_not_a_whole_number_of_updates():
    """A 100,000-step budget trains 48 updates of 2,048 steps: the last evaluation (98,304 steps) is the final one."""
    rows = [{**r, "steps": steps, "budget": 100_000, "normalized_score": r["normalized_score"] * k}
            for r in hand_made_rows() for k, steps in enumerate((24_576, 49_152, 98_304), start=1)]  # fmt: skip
    from motivegym.experiments.report import budget_table, final_rows

    final = final_rows(rows)
    assert len(final) == len(hand_made_rows()) and {r["steps"] for r in final} == {98_304}
    assert sorted({k[3] for k in budget_table(rows, reps=50)}) == [0.25, 0.5, 1.0]
    # 29 updates evaluated after ceil(0.25·29) = 8 and ceil(0.5·29) = 15: still the 25% and 50% columns
    odd = [{**r, "steps": steps} for r in rows for steps in [{24_576: 8 * 2048, 49_152: 15 * 2048, 98_304: 29 * 2048}[r["steps"]]]]
    assert sorted({k[3] for k in budget_table(odd, reps=50)}) == [0.25, 0.5, 1.0]


def test_paired_contrasts_pair_by_seed():
    contrasts = paired_contrasts(hand_made_rows())
    a = contrasts[("A", "ippo", "shared", "cooperative")]
    # the seed noise cancels in the paired differences: exactly 10 with zero width
    assert (a.estimate, a.low, a.high, a.n) == (10.0, 10.0, 10.0, 3)
    b = contrasts[("B", "ippo", "shared", "cooperative")]
    assert b.estimate == 0.0


def test_probability_of_improvement_and_aggregates_on_hand_made_rows():
    rows = hand_made_rows()
    improvement = improvement_over_base(rows, reps=200)[("ippo", "shared", "cooperative")]
    # env A: every cooperative run beats every private one (1.0); env B: identical values (0.5)
    assert improvement.estimate == pytest.approx(0.75)
    aggregate = aggregate_table(rows, reps=200)
    assert set(aggregate) == {("ippo", "shared", "private"), ("ippo", "shared", "cooperative")}
    assert aggregate[("ippo", "shared", "cooperative")].estimate > aggregate[("ippo", "shared", "private")].estimate


def test_rankings_carry_intervals():
    rows = hand_made_rows()
    ranks = reward_rankings(rows, reps=200)[("ippo", "shared")]
    assert ranks["cooperative"].estimate == pytest.approx((1 + 1.5) / 2) and ranks["private"].estimate == pytest.approx((2 + 1.5) / 2)
    by_algo = algorithm_rankings(rows + [{**r, "algo": "mappo", "welfare": r["welfare"] + 50} for r in rows], reps=200)
    assert by_algo["private"]["mappo/shared"].estimate == 1.0 and by_algo["private"]["ippo/shared"].high == 2.0


def test_report_names_failed_runs_and_nulls():
    rows = hand_made_rows() + [{"env": "A", "algo": "ippo", "sharing": "shared", "reward": "integrated", "seed": 0, "status": "failed",
                                "steps": 0, "budget": 100, "welfare": None, "run_id": "x", "error": "no interdependence weights"}]  # fmt: skip
    text = report_markdown(rows, reps=200)
    assert "no interdependence weights" in text
    assert "| B | ippo | shared | cooperative | 3 | 0.00 [0.00, 0.00] | not distinguishable |" in text
    assert "| A | ippo | shared | cooperative | 3 | 10.00 [10.00, 10.00] | higher |" in text


def test_report_figures_have_no_blank_lines(tiny_sweep):
    """Every figure is written and every line drawn in it has finite points."""
    from motivegym.experiments.sweep import read_results

    out, path = tiny_sweep
    text = write_report(out, reps=200).read_text()
    assert "| PrisonersDilemma-v0 | ippo | shared | cooperative | 2 |" in text
    assert "Probability of improvement" in text and "Budget robustness" in text
    figures = plot_figures(read_results(path), out, reps=200)
    names = ["welfare_vs_steps__ippo__shared.png", "aggregate_iqm.png", "probability_of_improvement.png",
             "performance_profiles.png", "returns_by_reward.png", "learning_curves.png"]  # fmt: skip
    for name in names:
        assert (out / name).stat().st_size > 1000, name
    drawn = 0
    for figure in figures:
        for ax in figure.axes:
            for line in ax.get_lines():
                x, y = (np.asarray(v, np.float64) for v in line.get_data())
                if line.get_linestyle() in ("--", "dashed") and len(set(y.tolist())) <= 1 or x.size == 2 and len(set(x.tolist())) == 1:
                    continue  # reference lines (0.5, 0) and error-bar stems
                assert np.isfinite(x).any() and np.isfinite(y).any(), f"blank line {line.get_label()!r} in {ax.get_title()!r}"
                drawn += 1
    assert drawn >= 5


def test_learning_curve_with_sparse_episodes_still_draws(tmp_path):
    """Episodes that end only every few updates leave NaN points; the curve is drawn through the finite ones."""
    rows = [{"env": "E", "algo": "ippo", "sharing": "shared", "reward": "private", "seed": s, "status": "ok", "steps": 400,
             "budget": 400, "welfare": 1.0 + s, "normalized_score": 0.5, "run_id": f"run{s}", "random_welfare": 0.0} for s in range(2)]  # fmt: skip
    (tmp_path / "curves").mkdir()
    for s in range(2):
        lines = ["update,welfare,reward,episodes"] + [f"{u},{u if u % 3 == 0 else 0},{u},{int(u % 3 == 0)}" for u in range(1, 5)]
        (tmp_path / "curves" / f"run{s}.csv").write_text("\n".join(lines) + "\n")
    figures = plot_figures(rows, tmp_path, reps=50)
    curve_axes = figures[-1].axes[0]
    (line,) = curve_axes.get_lines()
    assert np.isfinite(line.get_data()[1]).all() and len(line.get_data()[1]) == 1 and not math.isnan(line.get_data()[1][0])


def test_report_over_a_subset_of_envs_into_another_folder(tmp_path):
    """``--envs`` keeps only those envs' runs (tables and aggregates); an env the results do not hold is refused."""
    import csv

    from motivegym.experiments.sweep import RESULT_COLUMNS

    sweep = tmp_path / "sweep"
    sweep.mkdir()
    with open(sweep / "results.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=RESULT_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(hand_made_rows())
    path = write_report(sweep, reps=100, envs=("B",), out=tmp_path / "only_b")
    text = path.read_text()
    assert path.parent == tmp_path / "only_b" and not (sweep / "report.md").exists()
    assert "| B | ippo | shared | cooperative | 3 |" in text and "| A | ippo |" not in text
    assert "| ippo | shared | cooperative | 1 |" in text  # the aggregate counts one env
    with pytest.raises(ValueError, match=r"does not hold; it holds \['A', 'B'\]"):
        write_report(sweep, reps=100, envs=("C",))
