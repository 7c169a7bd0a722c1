import math

import numpy as np
import pytest

from motivegym.envs.sparse.metrics import agent_scores, crafter_score, success_rates, team_score


def test_crafter_score_on_hand_computed_values():
    assert float(crafter_score(np.zeros(22))) == pytest.approx(0.0)
    assert float(crafter_score(np.full(22, 100.0))) == pytest.approx(100.0, rel=1e-5)
    assert float(crafter_score([100.0, 0.0])) == pytest.approx(math.sqrt(101.0) - 1.0, rel=1e-6)
    assert float(crafter_score([3.0, 15.0, 63.0])) == pytest.approx((4 * 16 * 64) ** (1 / 3) - 1.0, rel=1e-6)


def test_success_rates_and_agent_and_team_scores():
    # 2 episodes, 2 agents, 2 achievements
    flags = np.array(
        [
            [[True, True], [False, False]],
            [[True, False], [False, True]],
        ]
    )
    np.testing.assert_allclose(success_rates(flags), [[100.0, 50.0], [0.0, 50.0]])
    np.testing.assert_allclose(agent_scores(flags), [math.sqrt(101 * 51) - 1, math.sqrt(1 * 51) - 1], rtol=1e-6)
    assert float(team_score(flags)) == pytest.approx(100.0, rel=1e-5)  # each achievement: some agent, every episode
