"""Which XLA CPU settings should ``import motivegym`` apply? Host loop and PureJaxRL-style loop, side by side.

Every combination of the two settings (the sequential scheduler flag, inline dispatch) runs in fresh
processes, in interleaved rounds (A B C D A B C D ...) so drift on a shared machine hits all alike:

* host loop: ``gymnasium.make`` of one env, 2,000 steps after a warm-up (steps/s);
* training loop: one jitted IPPO call (``baselines.ppo``, 16 envs × 128 steps × ``--updates`` updates, the
  PureJaxRL structure: the whole loop in one XLA program), env-steps/s after compilation.

    python benchmarks/xla_defaults.py [--rounds 3] [--host-envs ApacheProject-v0,PlatformEcosystem-v0]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

SCHEDULER = "--xla_cpu_enable_concurrency_optimized_scheduler"
#: setting name -> environment of the child process (the user-choice escape hatches of core/cpu_defaults.py)
SETTINGS = {
    "scheduler + inline (import default before this measurement)": {},
    "scheduler only": {"JAX_CPU_ENABLE_ASYNC_DISPATCH": "true"},
    "inline only": {"XLA_FLAGS": f"{SCHEDULER}=true"},
    "neither (XLA defaults)": {"MOTIVEGYM_XLA_DEFAULTS": "0"},
}

HOST = r"""
import json, sys, time
import gymnasium, motivegym
env = gymnasium.make("motivegym/" + sys.argv[1]); env.reset(seed=0)
actions = [env.action_space.sample() for _ in range(64)]
for i in range(200):
    _, _, te, tr, _ = env.step(actions[i % 64])
    if te or tr: env.reset()
start = time.perf_counter()
for i in range(2000):
    _, _, te, tr, _ = env.step(actions[i % 64])
    if te or tr: env.reset()
print(json.dumps({"rate": 2000 / (time.perf_counter() - start), "settings": motivegym.core.cpu_defaults.active_cpu_settings()}))
"""

TRAIN = r"""
import json, sys, time
import jax, motivegym
from motivegym.baselines.ppo import MultiAgentPPO, PPOConfig
from motivegym.reward_layers import private
env, params = motivegym.make_jax(sys.argv[1])
config = PPOConfig(total_steps=int(sys.argv[2]) * 16 * 128, num_envs=16, num_steps=128)
train = jax.jit(MultiAgentPPO(env, params, (private(),), config).make_train())
jax.block_until_ready(train(jax.random.PRNGKey(0), 0))
start = time.perf_counter()
jax.block_until_ready(train(jax.random.PRNGKey(1), 0))
print(json.dumps({"rate": config.num_updates * 16 * 128 / (time.perf_counter() - start)}))
"""


def child(code: str, args: list[str], variables: dict[str, str]) -> float:
    environment = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "JAX_CPU_ENABLE_ASYNC_DISPATCH", "MOTIVEGYM_XLA_DEFAULTS")}
    out = subprocess.run([sys.executable, "-c", code, *args], env={**environment, **variables}, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])["rate"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--host-envs", default="ApacheProject-v0,PlatformEcosystem-v0")
    parser.add_argument("--train-envs", default="TrustDilemma-v0,PrisonersDilemma-v0")
    parser.add_argument("--updates", type=int, default=20)
    args = parser.parse_args()
    workloads = [(f"host {e}", HOST, [e]) for e in args.host_envs.split(",") if e]
    workloads += [(f"train {e}", TRAIN, [e, str(args.updates)]) for e in args.train_envs.split(",") if e]
    rates: dict[tuple[str, str], list[float]] = {}
    for round_ in range(args.rounds):
        for name, code, child_args in workloads:
            for setting, variables in SETTINGS.items():
                rates.setdefault((name, setting), []).append(child(code, child_args, variables))
        print(f"round {round_ + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    names = list(SETTINGS)
    print("| workload (env-steps/s, median of rounds) | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for name, _, _ in workloads:
        cells = []
        for setting in names:
            values = rates[(name, setting)]
            cells.append(f"{statistics.median(values):,.0f} ({min(values):,.0f}–{max(values):,.0f})")
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
