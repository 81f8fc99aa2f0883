"""Scripts written for the original DiscoveryWorld run unchanged on our engine (opt-in).

`python -m discoverylab.compat script.py [args...]` installs `shim` (the `discoveryworld`,
`discoveryworld.DiscoveryWorldAPI` and `discoveryworld.ScenarioMaker` modules, mapped to ours)
and runs the script. Nothing here is imported by a plain `import discoverylab`. This package sits
above `compat`; the original's extra API members (`THREAD_ID`, `ui`, `world`) that
`compat.DiscoveryWorldAPI` mixes in live below it, in `discoverylab.compat_members`.
"""
