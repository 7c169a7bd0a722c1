def progress(obs, info):
    return jnp.mean(jnp.where(info["achievements"], 1.0, 0.0), axis=1)
