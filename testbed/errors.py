"""Errors that point at what the user wrote."""
from __future__ import annotations


class ConfigError(ValueError):
    """A value in a scenario, profile or testbed file is wrong.

    The message names where (file and key path), what was found and what was expected,
    e.g. ``scenarios/x.toml: link.down.delay: "300" has no unit; expected a time such
    as "300ms"``.
    """

    def __init__(self, where: str, message: str):
        self.where = where
        self.detail = message
        super().__init__(f"{where}: {message}")
