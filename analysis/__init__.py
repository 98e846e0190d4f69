"""squall analysis: captures and emulator logs to per-connection, per-flow and
per-scenario metrics (definitions in analysis/README.md)."""


def __getattr__(name: str):
    # `analysis.load_run` without importing pandas and the run analysis with the package
    if name in ("load_run", "RunData"):
        from analysis.aggregate import loader
        return getattr(loader, name)
    raise AttributeError(f"module 'analysis' has no attribute {name!r}")
