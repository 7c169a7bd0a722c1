"""Throughput of every registered env (same as ``motivegym bench``).

    python benchmarks/throughput.py [--envs TrustDilemma-v0,...] [--seconds 1.0] [--json out.json]
"""

import sys

from motivegym.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", *sys.argv[1:]]))
