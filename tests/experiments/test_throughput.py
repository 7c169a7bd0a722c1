import json
import os
import subprocess
import sys

import jax
import pytest

import motivegym
from motivegym.experiments.throughput import sharded_random_rollout

SPLIT_CHECK = """
import json, jax, motivegym
from motivegym.experiments.throughput import batched_env_steps_per_second, sharded_random_rollout
env, params = motivegym.make_jax("Harvest-v0", max_steps=7)
run = sharded_random_rollout(env, params, 4, 9, jax.local_devices())
totals = run(jax.random.PRNGKey(3))
print(json.dumps({"devices": len(jax.local_devices()), "totals": [float(x) for x in totals],
                  "again": [float(x) for x in run(jax.random.PRNGKey(3))],
                  "rate": batched_env_steps_per_second("CoinGame-v0", 4, 0.0)}))
"""


@pytest.mark.slow  # default suite time (CI: keep the default run under ~10 min on 2 cores)
def test_the_batch_is_split_across_two_host_devices():
    env_vars = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=2"}
    result = subprocess.run([sys.executable, "-c", SPLIT_CHECK], capture_output=True, text=True, env=env_vars, check=True, timeout=300)
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["devices"] == 2 and len(report["totals"]) == 2  # one total per device's half of the batch
    assert report["totals"] == report["again"] and report["totals"][0] != report["totals"][1]  # shards draw their own keys
    assert report["rate"] > 0


def test_a_batch_that_does_not_split_evenly_is_refused():
    env, params = motivegym.make_jax("CoinGame-v0")
    with pytest.raises(ValueError, match="split evenly"):
        sharded_random_rollout(env, params, 3, 4, jax.local_devices() * 2)
