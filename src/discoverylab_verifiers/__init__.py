"""verifiers plugin id `discoverylab-verifiers` (verifiers imports a taskset by a top-level module
name): re-exports `discoverylab.integrations.verifiers_env`."""

from discoverylab.integrations.verifiers_env import (
    DiscoveryLabConfig,
    DiscoveryLabEnv,
    DiscoveryLabTaskset,
    load_environment,
)

__all__ = ["DiscoveryLabConfig", "DiscoveryLabEnv", "DiscoveryLabTaskset", "load_environment"]
