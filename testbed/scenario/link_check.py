"""The one validator of a link: the emulator itself (`squall-emulator --check`, emulator/CONFIG.md).

Scenario loading renders every cell's link (and the emulator's router stage, when that
engine runs it) and hands the text to the emulator's own checker, so `squall show` and
`squall run` refuse exactly what the emulator would refuse at start-up, before anything is
created. Python parses types and units only; every rule about the values lives in C.
"""
from __future__ import annotations

import functools
import re
import subprocess
from pathlib import Path

from testbed.errors import ConfigError
from testbed.scenario import emulator_config
from testbed.paths import program_path
from testbed.router.directions import Routers
from testbed.router.plan import RouterConfig
from testbed.scenario.link_section import LinkConfig

# What the rendered file needs besides the link; never used, only checked.
_PLACEHOLDER = emulator_config.EmulatorRun(seed=0, replication=1, token="0" * 16, log_path=Path("/dev/null"))
_MESSAGE = re.compile(r"^squall-emulator: <stdin>(?::\d+)?: (?P<key>[^:\s]+): (?P<reason>.*)$")
_LINE = re.compile(r"^squall-emulator: <stdin>:(?P<line>\d+): (?P<reason>.*)$")   # no key: the line's
_SECTION = re.compile(r"^\[(?P<name>[^\]]+)\]$")
# The configuration file's keys where the scenario spells them differently.
_SCENARIO_KEYS = {"arq_retransmissions": "arq.retransmissions", "arq_delay": "arq.delay",
                  "error_good": "error.good", "error_bad": "error.bad",
                  "outage_every": "outages.every", "outage_length": "outages.length",
                  **{f"netem_{k}": f"netem.{k}" for k in ("loss", "delay", "distribution", "reorder", "gap",
                                                          "duplicate", "corrupt")}}


def check_link(link: LinkConfig, router: Routers | RouterConfig | None, where: str) -> None:
    """Raises ConfigError naming the scenario key when the emulator would refuse the link.
    `router`: the routers the emulator runs (engine "emulator"), or None."""
    text = emulator_config.render(link, _PLACEHOLDER, router=router)
    traces = _trace_files(link)
    problem = _emulator_check(text, traces, tuple(_file_state(path) for _, path in traces))
    if problem is not None:
        key, reason = problem
        raise ConfigError(f"{where}: {scenario_key(key)}", f"{reason} (the emulator's rule for {key})")


def _trace_files(link: LinkConfig) -> tuple[tuple[str, str], ...]:
    """(emulator key, path) of every file the emulator reads for this link."""
    files = [("channel.trace", link.channel.trace)] if link.channel.trace is not None else []
    files += [(f"{name}.bandwidth", d.capacity.path) for name in ("down", "up")
              if (d := link.direction(name)).capacity is not None]
    return tuple(files)


def _file_state(path: str | None) -> tuple[int, int, int] | None:
    """What tells a changed trace file from the one checked before (the check is cached)."""
    try:
        st = Path(path).stat() if path is not None else None
    except OSError:
        return None
    return None if st is None else (st.st_ino, st.st_mtime_ns, st.st_size)


def scenario_key(emulator_key: str) -> str:
    """down.arq_retransmissions -> link.down.arq.retransmissions; down.router.X -> router.X;
    up.router.X -> router.up.X."""
    head, _, rest = emulator_key.partition(".")
    if emulator_key == "link":
        return "link"
    if head == "down" and rest.startswith("router"):
        return rest
    if head == "up" and rest.startswith("router"):
        return "router.up" + rest.removeprefix("router")
    if head in ("down", "up"):
        return f"link.{head}.{_SCENARIO_KEYS.get(rest, rest)}"
    if head == "channel" and rest in _SCENARIO_KEYS:      # the link's outages: [link] outages
        return f"link.{_SCENARIO_KEYS[rest]}"
    if head == "channel":
        return f"link.{emulator_key}"
    return f"link ({emulator_key})"


@functools.lru_cache(maxsize=1024)
def _emulator_check(text: str, traces: tuple[tuple[str, str], ...], trace_state: object) -> tuple[str, str] | None:
    """(key, reason) of the emulator's refusal, or None; cached: a matrix repeats its links
    (`trace_state` is part of the key: the emulator reads the trace files too)."""
    argv = [str(program_path("squall-emulator")), "--check", "-"]
    proc = subprocess.run(argv, input=text, capture_output=True, text=True, errors="replace", timeout=30)
    if proc.returncode == 0:
        return None
    line = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ""
    if proc.returncode != 2:
        raise RuntimeError(f"squall-emulator --check failed unexpectedly (exit {proc.returncode}): {line}")
    for key, path in traces:
        if line.startswith(f"squall-emulator: {path}"):
            return key, line.removeprefix("squall-emulator: ")      # names the trace file (and line)
    m = _MESSAGE.match(line)
    if m is not None:
        return m.group("key"), m.group("reason")
    m = _LINE.match(line)
    if m is not None:       # e.g. a line too long: the key is the one on that line of the text
        return _key_on_line(text, int(m.group("line"))), m.group("reason")
    return "link", line.removeprefix("squall-emulator: ")


def _key_on_line(text: str, number: int) -> str:
    """The emulator's key (section.key) written on line `number` (1-based) of the rendered text."""
    lines = text.splitlines()
    if not 1 <= number <= len(lines):
        return "link"
    key = lines[number - 1].split("=", 1)[0].strip()
    section = next((m.group("name") for line in reversed(lines[:number - 1])
                    if (m := _SECTION.match(line.strip()))), None)
    return key if section is None else f"{section}.{key}"
