import os

# One XLA intra-op thread per xdist worker: two workers already fill the 2-core CI machine. (The CI hangs
# once blamed on Eigen were batched LAPACK QR in network init deadlocking that pool; networks.py no longer
# calls LAPACK, see test_networks.py.)
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")

import faulthandler
from pathlib import Path

import jax
import pytest

import motivegym

# Under xdist a killed worker's output is lost, so each test arms faulthandler to write its Python stacks to a
# file shortly before pytest-timeout kills it; the controller prints those files in the terminal summary.
HANG_DUMP_MARGIN_S = 20


def hang_dump_dir(config: pytest.Config) -> Path:
    return config.rootpath / ".pytest_cache" / "hang_stacks"


@pytest.fixture(autouse=True)
def dump_stacks_if_the_test_hangs(request):
    timeout = float(request.config.getoption("timeout", None) or request.config.getini("timeout") or 0)  # --timeout wins
    if timeout <= HANG_DUMP_MARGIN_S:
        yield
        return
    folder = hang_dump_dir(request.config)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{os.getpid()}.txt"
    with open(path, "w") as handle:
        handle.write(f"{request.node.nodeid} ran for {timeout - HANG_DUMP_MARGIN_S:.0f} s; Python stacks:\n")
        handle.flush()
        faulthandler.dump_traceback_later(timeout - HANG_DUMP_MARGIN_S, file=handle)
        try:
            yield
        finally:
            faulthandler.cancel_dump_traceback_later()
    path.unlink(missing_ok=True)


def pytest_terminal_summary(terminalreporter, config):
    if hasattr(config, "workerinput"):  # only the xdist controller reports
        return
    folder = hang_dump_dir(config)
    for path in sorted(folder.glob("*.txt")) if folder.exists() else []:
        if process_alive(int(path.stem)):  # a test still running in another pytest run on this checkout
            continue
        text = path.read_text()
        path.unlink()
        if text.count("\n") > 1:  # faulthandler wrote stacks: the test hit the timeout
            terminalreporter.section(f"hung test (stacks from {path.name})")
            terminalreporter.write(text)
        # header only: its process ended mid-test (killed or crashed; xdist reports a lost worker), not a hang


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True

TR12_ENVS = [
    "TrustDilemma-v0",
    "PartnerHoldUp-v0",
    "PlatformEcosystem-v0",
    "DynamicPartnerSelection-v0",
    "RecoveryRace-v0",
    "SynergySearch-v0",
    "SLCD-v0",
    "RenaultNissan-v0",
    "CooperativeNegotiation-v0",
    "ReputationMarket-v0",
]


@pytest.fixture(scope="session")
def key():
    return jax.random.PRNGKey(0)


@pytest.fixture(scope="session")
def example():
    """``example("purejaxrl_ppo")``: the module ``examples/<name>.py`` (examples are scripts, not a package)."""
    import importlib.util

    def load(name: str):
        spec = importlib.util.spec_from_file_location(name, Path(__file__).resolve().parents[1] / "examples" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load


def all_env_ids():
    return motivegym.list_envs()
