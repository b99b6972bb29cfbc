"""Jobs that train many runs: one trial pool, one record format, the backends they run on.

- ``backend``      where trials execute: local processes (forked or spawned) and the lifetime rule
- ``ray_backend``  the same calls as Ray tasks
- ``pool``         the one coordinator loop (start, poll, release, stop, heartbeat, timeout, signals)
- ``record``       what every job record shares (status, id lookup, crash detection)
- ``seeds``        outcomes over seeds: counts, spread and interval estimates (scipy)

Fix experiments (``experiments``), sweeps and sweep checks (``sweeps``) are jobs: policies the pool runs.
Nothing here imports torch except ``backend.ForkBackend``, which imports the trainer once to fork trials.
"""
