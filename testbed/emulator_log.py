"""Reading the emulator's event log (emulator/LOG_FORMAT.md, format 1).

The testbed's own checks need only events, the header and the trailer; the
analysis package has the full metrics.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


class LogFormatError(ValueError):
    pass


@dataclass
class EmulatorLog:
    header: dict[str, str] = field(default_factory=dict)      # "seed" -> "42", ...
    config: dict[str, str] = field(default_factory=dict)      # "down.mtu" -> "576", ...
    columns: list[str] = field(default_factory=list)
    events: list[dict[str, str]] = field(default_factory=list)
    trailer: dict[str, dict[str, str]] = field(default_factory=dict)  # "rejected" -> {"truncated": "0", ...}
    end_time_us: int | None = None

    @property
    def complete(self) -> bool:
        """The trailer is there: the emulator was not killed."""
        return self.end_time_us is not None

    def counts(self, line: str) -> dict[str, int]:
        """A trailer line's counters, e.g. counts("rejected")["bad_token"]."""
        return {k: int(v) for k, v in self.trailer.get(line, {}).items()}

    def lateness_us(self) -> dict[str, int]:
        return self.counts("lateness_us")


def read(path: Path) -> EmulatorLog:
    log = EmulatorLog()
    fmt = None
    for number, line in enumerate(Path(path).read_text().splitlines(), 1):
        if line.startswith("#"):
            words = line[1:].strip().split(None, 1)
            if not words:
                continue
            key, rest = words[0], (words[1] if len(words) > 1 else "")
            if key == "format":
                fmt = rest
            elif key == "config":
                name, _, value = rest.partition("=")
                log.config[name.strip()] = value.strip()
            elif key == "columns":
                log.columns = rest.split()
            elif key == "end":
                log.end_time_us = int(rest.split()[1])
            elif key in ("counters", "rejected", "lateness_us"):
                _read_counters(log, key, rest)
            else:
                log.header[key] = rest
            continue
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != len(log.columns):
            raise LogFormatError(f"{path}:{number}: {len(fields)} fields; expected {len(log.columns)} "
                                 f"(the `# columns` line)")
        log.events.append(dict(zip(log.columns, fields)))
    if fmt != "1":
        raise LogFormatError(f"{path}: `# format {fmt}`; expected `# format 1`")
    return log


def _read_counters(log: EmulatorLog, key: str, rest: str) -> None:
    words = rest.split()
    if key == "counters":          # "# counters down in 12 enqueue 12 ..."
        key, words = f"counters {words[0]}", words[1:]
    log.trailer[key] = dict(zip(words[0::2], words[1::2]))
