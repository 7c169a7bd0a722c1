"""What ONI-style online LLM feedback costs the learner: PPO throughput with the feedback worker on vs off.

One process, one env, the same PPO program (the reward always includes the swappable model; with the
worker off it stays zero). The LLM is ``examples/llm_server.py`` on loopback (its own process) with ``--delay`` seconds per
answer (default 0.2: a slow model), so the annotator is busy for the whole run and the reward-model
learner distills in between. Runs alternate off/on ``--repeats`` times; throughput counts env steps
after the first update (which compiles). Target: on ≥ 90 % of off. It also prints the learner process's CPU time
(all threads) per 1,000 env steps, which a busy shared machine disturbs less than wall-clock rates, and the CPU
time of the feedback worker's own process.

    python benchmarks/oni_overhead.py                       # TrustDilemma-v0, 16 envs × 128 steps, 40 updates
    python benchmarks/oni_overhead.py --updates 120 --delay 0.5

The worker's own CPU work (captions, HTTP, Bradley-Terry fits with their first compilations) runs in its own
process at low priority: on a CPU-only machine it takes the cores the learner leaves.

Prints one line per run and the ratio of the medians; record it in benchmarks/README.md with the machine.
"""

from __future__ import annotations

import argparse
import resource
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


def toy_server(delay: float):
    """``examples/llm_server.py --delay`` in its own process on a free loopback port (as a real LLM server would be:
    its request handling must not count against the learner's process); ``(process, base URL)``."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    script = Path(__file__).resolve().parents[1] / "examples" / "llm_server.py"
    process = subprocess.Popen([sys.executable, str(script), "--port", str(port), "--delay", str(delay)], stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(f"{url}/models", timeout=1).read()
            return process, url
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise RuntimeError(f"the toy LLM server did not start on port {port}") from None
            time.sleep(0.1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", default="TrustDilemma-v0")
    parser.add_argument("--param", action="append", default=["max_steps=20"], help="env parameter NAME=VALUE")
    parser.add_argument("--num-envs", type=int, default=16)
    parser.add_argument("--num-steps", type=int, default=128)
    parser.add_argument("--updates", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--delay", type=float, default=0.2, help="seconds the toy server waits before each answer")
    parser.add_argument("--states-per-update", type=int, default=4)
    parser.add_argument("--warm-distill-steps", type=int, default=None, help="AdamW steps of each later fit (default: ONIConfig's)")
    parser.add_argument("--worker-nice", type=int, default=None, help="niceness of the worker's threads (default: ONIConfig's)")
    args = parser.parse_args(argv)

    import jax

    import motivegym
    from motivegym.baselines.ppo import PPOConfig
    from motivegym.cli import parse_env_kwargs
    from motivegym.experiments.oni import ONIConfig, train_oni
    from motivegym.reward_layers.llm import LLMClient

    env, params = motivegym.make_jax(args.env, **parse_env_kwargs(args.param))
    ppo = PPOConfig(total_steps=args.updates * args.num_envs * args.num_steps, num_envs=args.num_envs, num_steps=args.num_steps)
    overrides = {name: value for name, value in (("warm_distill_steps", args.warm_distill_steps), ("worker_nice", args.worker_nice)) if value is not None}
    config = ONIConfig(states_per_update=args.states_per_update, **overrides)  # min_labels 32, distill_every 32, 300 + 60 distill steps
    server, url = toy_server(args.delay)
    print(f"{args.env}: {ppo.num_updates} updates × {args.num_envs} envs × {args.num_steps} steps; toy LLM server delay {args.delay} s; "
          f"{jax.devices()[0].platform} ({jax.device_count()} device(s))")  # fmt: skip
    rates: dict[bool, list[float]] = {False: [], True: []}
    cpu: dict[bool, list[float]] = {False: [], True: []}  # process CPU seconds (all threads) per 1k env steps
    try:
        for repeat in range(args.repeats):
            for feedback in (False, True):
                client = LLMClient(url, "toy", timeout=60, max_workers=4) if feedback else None
                children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
                result = train_oni(env, params, client, ppo, config, "private", seed=repeat, feedback=feedback)
                children = resource.getrusage(resource.RUSAGE_CHILDREN)  # the worker process, joined by train_oni
                worker_cpu = children.ru_utime + children.ru_stime - children_before.ru_utime - children_before.ru_stime
                rate = result.steady_steps_per_s
                rates[feedback].append(rate)
                extra = ""
                if feedback:
                    s = result.stats
                    extra = (f"; worker process {worker_cpu:.1f} CPU-s; {s.labels} labels, {s.distills} models distilled, {len(result.swaps)} swaps, "
                             f"{s.dropped} snapshots dropped, {result.compiles} compile(s)")  # fmt: skip
                cpu_per_k = 1e3 * result.steady_cpu_s / (result.env_steps * (ppo.num_updates - 1) / ppo.num_updates)
                cpu[feedback].append(cpu_per_k)
                print(f"  repeat {repeat} worker {'on ' if feedback else 'off'}: {rate:,.0f} env-steps/s, {cpu_per_k:.3f} process CPU-s per 1k env-steps "
                      f"(first update {result.first_update_s:.1f} s){extra}")  # fmt: skip
    finally:
        server.terminate()
        server.wait(timeout=30)
    off, on = statistics.median(rates[False]), statistics.median(rates[True])
    print(f"median: off {off:,.0f} env-steps/s, on {on:,.0f} env-steps/s, on/off = {on / off:.3f} (target >= 0.90)")
    cpu_off, cpu_on = statistics.median(cpu[False]), statistics.median(cpu[True])
    print(f"median CPU per 1k env-steps: off {cpu_off:.3f} s, on {cpu_on:.3f} s (the worker's extra CPU: {cpu_on / cpu_off - 1:+.0%})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
