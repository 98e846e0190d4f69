"""Where a run's replications run: the backends (DESIGN.md 3.7, docs/architecture.md).

One interface (base.py `Backend`): check before anything is created, describe for meta.json,
run the planned units, close; one implementation per file: lanes.py (network namespaces on this
machine), lab.py (three lab hosts over SSH, a testbed file), slurm.py (units handed to a Slurm
cluster, run there by `squall worker`). testbed/run/runner.py `choose_backend` is the one place
that picks one; SIGINT/SIGTERM stop a run through testbed/run/stop.py whichever it is.
"""
