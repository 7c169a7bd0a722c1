# ruff: noqa: F821 - reward code runs with `jnp` provided by the sandbox and imports nothing
# Hand-written stand-in for an LLM's answer to `motivegym llm progress --env KeyDoorGift-v0` (the prompt of
# motivegym.reward_layers.llm.progress): no LLM server runs on the machine that ran docs/intrinsic.md's experiment.
# It reads only what the prompt describes: the observation's last three entries are holding-the-key, own-door-open
# and t/max_steps, and info["doors_open"] holds every door's flag.
def progress(obs, info):
    holding = obs[:, -3]
    own_door_open = obs[:, -2]
    doors_open = jnp.mean(jnp.where(info["doors_open"], 1.0, 0.0))
    return 0.25 * holding + 0.25 * own_door_open + 0.5 * doors_open
