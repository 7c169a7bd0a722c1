"""motivegym's CPU defaults: applied on import, never over a user's choice, off on request."""

import json
import os
import subprocess
import sys

import pytest

PROBE = (
    "import json, os\n"
    "{pre}\n"
    "import motivegym\n"
    "from motivegym.core.cpu_defaults import active_cpu_settings\n"
    "print(json.dumps({{'applied': motivegym.CPU_DEFAULTS_APPLIED, 'active': active_cpu_settings(),"
    " 'flags': os.environ.get('XLA_FLAGS', '')}}))\n"
)


def run_probe(env_overrides: dict[str, str | None], pre: str = "") -> dict:
    env = {
        k: v for k, v in os.environ.items() if k not in {"XLA_FLAGS", "JAX_CPU_ENABLE_ASYNC_DISPATCH", "MOTIVEGYM_XLA_DEFAULTS"}
    }
    env.update({k: v for k, v in env_overrides.items() if v is not None})
    env["JAX_PLATFORMS"] = "cpu"
    out = subprocess.run([sys.executable, "-c", PROBE.format(pre=pre)], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_applies_both_defaults():
    result = run_probe({})
    assert result["applied"] == {"sequential_scheduler": True, "inline_dispatch": True}
    assert result["active"] == {"sequential_scheduler": True, "inline_dispatch": True}


def test_existing_xla_flags_are_kept_and_extended():
    result = run_probe({"XLA_FLAGS": "--xla_force_host_platform_device_count=2"})
    assert result["flags"].split() == [
        "--xla_force_host_platform_device_count=2",
        "--xla_cpu_enable_concurrency_optimized_scheduler=false",
    ]


def test_user_choice_is_not_overridden():
    result = run_probe(
        {"XLA_FLAGS": "--xla_cpu_enable_concurrency_optimized_scheduler=true", "JAX_CPU_ENABLE_ASYNC_DISPATCH": "true"}
    )
    assert result["applied"] == {"sequential_scheduler": False, "inline_dispatch": False}
    assert result["flags"] == "--xla_cpu_enable_concurrency_optimized_scheduler=true"
    assert result["active"]["inline_dispatch"] is False


@pytest.mark.parametrize("value", ["0", "false", "off"])
def test_opt_out_variable_turns_everything_off(value):
    result = run_probe({"MOTIVEGYM_XLA_DEFAULTS": value})
    assert result["applied"] == {"sequential_scheduler": False, "inline_dispatch": False}
    assert result["active"] == {"sequential_scheduler": False, "inline_dispatch": False}


def test_nothing_is_applied_once_jax_backends_exist():
    result = run_probe({}, pre="import jax, jax.numpy as jnp\njnp.zeros(1).block_until_ready()")
    assert result["applied"] == {"sequential_scheduler": False, "inline_dispatch": False}


def test_use_host_devices_makes_one_device_per_request_and_respects_xla_flags():
    code = "import motivegym, jax\nfrom motivegym.core.cpu_defaults import use_host_devices\nprint(json.dumps({{'n': use_host_devices({n}), 'devices': len(jax.devices())}}))"
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    for flags, n, expected in (("", 3, 3), ("--xla_force_host_platform_device_count=2", 3, 2)):
        script = "import json\n" + code.format(n=n)
        done = subprocess.run([sys.executable, "-c", script], env={**env, "XLA_FLAGS": flags, "JAX_PLATFORMS": "cpu"},
                              capture_output=True, text=True, check=True)  # fmt: skip
        assert json.loads(done.stdout.strip().splitlines()[-1]) == {"n": expected, "devices": expected}


def test_use_host_devices_refuses_once_jax_has_started():
    import jax.numpy as jnp

    from motivegym.core.cpu_defaults import use_host_devices

    jnp.zeros(1).block_until_ready()
    if "xla_force_host_platform_device_count" in os.environ.get("XLA_FLAGS", ""):
        pytest.skip("this test process already fixed its host device count")
    with pytest.raises(RuntimeError, match="before JAX creates its backends"):
        use_host_devices(2)
