"""Cold start: seconds from ``gymnasium.make`` to the end of the first ``step``, in fresh processes.

For every env (or ``--envs``), three processes run one after another, side by side in one invocation:

* ``off``: ``MOTIVEGYM_COMPILATION_CACHE=0`` (what every process paid before the persistent cache);
* ``first``: the cache on, in an empty directory (the first process after installing; it also writes entries);
* ``second``: the cache on, the same directory (every later process).

``import motivegym`` is timed separately. Usage::

    python benchmarks/cold_start.py                  # all registered envs
    python benchmarks/cold_start.py --envs TrustDilemma-v0,Harvest-v0 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

PROBE = r"""
import json, sys, time
start = time.perf_counter()
import gymnasium, motivegym
imported = time.perf_counter()
env = gymnasium.make("motivegym/" + sys.argv[1])
env.reset(seed=0)
env.step(env.action_space.sample())
done = time.perf_counter()
print(json.dumps({"import": imported - start, "make_to_first_step": done - imported}))
"""


def probe(env_id: str, environment: dict[str, str]) -> dict[str, float]:
    """One fresh process: its import time and its ``make`` → first ``step`` time."""
    out = subprocess.run([sys.executable, "-c", PROBE, env_id], env=environment, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(env_id: str, repeats: int) -> dict[str, list[float]]:
    """``repeats`` rounds of (off, first, second) for ``env_id``, each round with a new empty cache directory."""
    times: dict[str, list[float]] = {"off": [], "first": [], "second": [], "import": []}
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as directory:
            base = {**os.environ, "MOTIVEGYM_CACHE_DIR": directory}
            off = probe(env_id, {**base, "MOTIVEGYM_COMPILATION_CACHE": "0"})
            times["off"].append(off["make_to_first_step"])
            times["import"].append(off["import"])
            times["first"].append(probe(env_id, base)["make_to_first_step"])
            times["second"].append(probe(env_id, base)["make_to_first_step"])
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envs", default="all", help="comma-separated env ids, or 'all'")
    parser.add_argument("--repeats", type=int, default=1, help="rounds per env (medians are reported)")
    parser.add_argument("--json", default=None, help="also write the raw times here")
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    if args.envs == "all":
        import motivegym

        envs = motivegym.list_envs()
    else:
        envs = [e.strip() for e in args.envs.split(",") if e.strip()]
    results = {}
    print("| env | import s | make→first step s: cache off | first process (cache empty) | second process (cache warm) | off / second |")
    print("|---|---|---|---|---|---|")
    for env_id in envs:
        times = results[env_id] = measure(env_id, args.repeats)
        med = {k: statistics.median(v) for k, v in times.items()}
        row = (env_id, med["import"], med["off"], med["first"], med["second"], med["off"] / med["second"])
        print("| {} | {:.2f} | {:.2f} | {:.2f} | {:.2f} | {:.1f}x |".format(*row), flush=True)
    worst = max(statistics.median(t["second"]) for t in results.values())
    print(f"\nslowest second-process make→first step: {worst:.2f} s over {len(envs)} envs")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=1)


if __name__ == "__main__":
    main()
