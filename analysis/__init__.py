"""squall analysis: captures and emulator logs to per-connection, per-flow and
per-scenario metrics (definitions in analysis/README.md)."""
