"""Command lines with placeholders: a command flow's `client` and `server` (docs/runner.md).

    client = ["iperf3", "-c", "{server_address}", "-p", "{port}", "-t", "5"]

One job: check such a list when the scenario loads (a list of strings, the program a plain
word or an absolute path, only known placeholders) and fill it in when a replication starts it.
A placeholder is `{name}`; `{{` and `}}` are a literal brace. The names and their values are
the flow's (testbed/scenario/flows/command.py, CommandFlow); this module knows none of them.
"""
from __future__ import annotations

import re
from typing import Any, Iterable, Mapping

from testbed.errors import ConfigError

MAX_ARGS = 256
MAX_ARG_BYTES = 4096
# A program: a plain word found on the host's PATH (iperf3, curl) or an absolute path.
_PROGRAM = re.compile(r"^(/[A-Za-z0-9_.+@/-]+|[A-Za-z0-9_][A-Za-z0-9_.+-]*)$")
_FIELD = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")


def parse(value: Any, where: str, known: Iterable[str]) -> tuple[str, ...]:
    """The command line as given, checked: a non-empty list of strings, the first a program
    name without placeholders, every placeholder among `known`."""
    known = set(known)
    if not isinstance(value, list) or not value:
        raise ConfigError(where, "expected a command line as a list of strings, e.g. "
                          "[\"iperf3\", \"-c\", \"{server_address}\", \"-p\", \"{port}\"]")
    if len(value) > MAX_ARGS:
        raise ConfigError(where, f"{len(value)} arguments: at most {MAX_ARGS}")
    for i, arg in enumerate(value):
        if not isinstance(arg, str):
            raise ConfigError(f"{where}[{i}]", f"{arg!r} is not a string (write numbers as \"5\")")
        if "\0" in arg or len(arg.encode()) > MAX_ARG_BYTES:
            raise ConfigError(f"{where}[{i}]", f"an argument is at most {MAX_ARG_BYTES} bytes, without NUL "
                              "characters")
        names = placeholders(arg, f"{where}[{i}]")
        unknown = sorted(names - known)
        if unknown:
            raise ConfigError(f"{where}[{i}]", f"unknown placeholder {{{unknown[0]}}}; expected one of "
                              f"{', '.join('{' + k + '}' for k in sorted(known))} (write a literal brace as "
                              "{{ or }})")
    program = value[0]
    if not _PROGRAM.match(program) or "/../" in program + "/" or "/./" in program + "/":
        raise ConfigError(f"{where}[0]", f"{program!r}: the program is a plain name found on the host's PATH "
                          "(\"iperf3\") or an absolute path (\"/usr/bin/iperf3\"), without placeholders or "
                          "spaces; its arguments follow as further strings")
    return tuple(value)


def placeholders(arg: str, where: str) -> set[str]:
    """The placeholder names in one argument; a stray brace is a ConfigError."""
    names = set()
    for m in _FIELD.finditer(arg):
        text = m.group(0)
        if text in ("{{", "}}"):
            continue
        if m.group(1) is None or not re.fullmatch(r"[a-z][a-z0-9_]*", m.group(1)):
            raise ConfigError(where, f"{arg!r}: a placeholder is {{name}} (lower-case letters, digits, '_'); "
                              "write a literal brace as {{ or }}")
        names.add(m.group(1))
    return names


def fill(argv: Iterable[str], values: Mapping[str, str]) -> list[str]:
    """The command line with every placeholder replaced by its value."""
    def one(m: re.Match[str]) -> str:
        text = m.group(0)
        if text in ("{{", "}}"):
            return text[0]
        return values[m.group(1)]
    return [_FIELD.sub(one, arg) for arg in argv]
