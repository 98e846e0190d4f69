"""A property-based fuzzer for the scenario loader (Hypothesis).

The property: whatever a scenario file holds — random bytes, TOML-ish text, TOML built from the
scenario keys and tricky values, or the shipped scenarios mutated (lines dropped, doubled or
garbled, values swapped for others, a channel trace of random bytes beside them) — the loader
either loads it or raises its own ConfigError naming the file and a key (or, for a file that is
no TOML at all, saying so). No other exception may escape, and a scenario that loads must also
give its warnings and expanded.json without one.

    python tests/fuzz_scenario.py --seconds 60     # make fuzz (FUZZ_SECONDS)
tests/test_scenario_fuzz.py runs a small bounded version in the normal pytest run.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import tomllib
import traceback
from pathlib import Path
from typing import Any

import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from testbed.errors import ConfigError  # noqa: E402
from testbed.run.lint import scenario_warnings  # noqa: E402
from testbed.run.runner import expanded  # noqa: E402
from testbed.scenario import loader  # noqa: E402

SCENARIOS = sorted((REPO / "scenarios").glob("*.toml"))
SOURCES = [p.read_text() for p in SCENARIOS]
# Messages about the file as a whole: there is no key to name.
FILE_LEVEL = ("not valid TOML", "is not UTF-8", "file not found", "is a directory", "cannot be read")

KEYS = ["name", "description", "seed", "replications", "timeout", "timing_tolerance", "cpu_wait_tolerance", "link", "router", "tcp", "flows", "matrix",
        "profile", "base", "channel", "bandwidth", "delay", "mtu", "send_buffer", "recv_buffer", "overhead",
        "error", "arq", "in_order", "down", "up", "good", "bad", "initial", "trace", "retransmissions",
        "kind", "workload", "objects", "http", "parallel", "persistent", "pipeline", "request_size", "count",
        "length", "nodelay", "size", "rate", "duration", "start", "dscp", "tos", "direction", "web", "voice",
        "engine", "queue", "classes", "default", "filters", "discipline", "limit", "min", "max", "avpkt",
        "burst", "w_q", "probability", "ecn", "class", "protocol", "sport", "dport", "src", "dst", "ceil",
        "priority", "quantum", "label", "set", "sysctl", "initcwnd", "flush_metrics", "EF", "BE",
        "link.profile", "link.delay", "flows.web.http", "router.rate", "tcp.profile", "x.y"]
TEXTS = ["64kbit", "300ms", "0s", "-1s", "1e3s", "1.5us", "0.0001s", "9600B", "576B", "1MB", "8000MB",
         "unlimited", "0bit", "99999999999999999999999s", "2h", "64 kbit", "fixed(2s)", "uniform(3s, 1s)",
         "uniform(1.4s, 3s)", "exponential(6s)", "exponential(6s, min=0s, max=9s)", "exponential(6s, min=9s, max=1s)",
         "exponential(6s, min=1s)", "normal(1s)", "fixed()", "e0", "r2", "r4", "iip-short", "always-good",
         "baseline", "iw4", "cbi", "saarto", "iip-ds", "s+2s", "l+8m", "bulk-90", "cbr-32k", "http", "bulk",
         "udp", "tcp", "1.0", "1.1", "2", "down", "up", "good", "bad", "EF", "AF11", "CS8", "pfifo", "bfifo",
         "red", "tc", "emulator", "198.18.0.1/32", "10.0.0.0/8", "300.1.1.1", "../../x", "a/b", "", " ",
         "\u00e9", "\x7f", "trace.txt", "/dev/null", "/dev/zero", "/", "net.ipv4.tcp_sack"]

scalars = st.one_of(
    st.sampled_from(TEXTS), st.text(max_size=12),
    st.integers(min_value=-2**63, max_value=2**63 - 1), st.sampled_from([0, 1, -1, 2, 20, 63, 64, 255, 65536, 10**11]),
    st.floats(allow_nan=True, allow_infinity=True), st.booleans(), st.dates(), st.times(), st.datetimes())
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.sampled_from(KEYS), inner, max_size=5)),
    max_leaves=20)
tables = st.dictionaries(st.sampled_from(KEYS), values, max_size=8)


def check(data: bytes, directory: Path, trace: bytes | None = None) -> str:
    """Loads `data` as a scenario in `directory`; returns "loaded" or "refused", or raises
    AssertionError (with the input) when anything but a proper ConfigError escapes."""
    path = directory / "fuzz.toml"
    path.write_bytes(data)
    if trace is not None:
        (directory / "trace.txt").write_bytes(trace)
    try:
        sc = loader.load(path)
    except ConfigError as e:
        where = str(e.where)
        named = where.startswith(str(path))
        keyed = where != str(path) or any(words in e.detail for words in FILE_LEVEL)
        assert named and keyed, f"ConfigError without the file and a key: {e!r}\ninput: {data[:2000]!r}"
        return "refused"
    except Exception as e:  # noqa: BLE001 - the property
        raise AssertionError(f"{type(e).__name__} escaped the loader: {e}\ninput: {data[:2000]!r}") from e
    scenario_warnings(sc)
    json.dumps(expanded(sc))
    return "loaded"


# --- the inputs -----------------------------------------------------------------------------

@st.composite
def toml_tables(draw: st.DrawFn) -> bytes:
    """TOML built from the scenario keys, with a seed and a link often present so it goes deeper."""
    table: dict[str, Any] = draw(tables)
    if draw(st.booleans()):
        table.setdefault("seed", 1)
        table.setdefault("link", draw(st.sampled_from(["e0", "r2", {"bandwidth": "64kbit", "delay": "10ms",
                                                                     "mtu": "576B"}])))
    try:
        return tomli_w.dumps(table).encode()
    except (TypeError, ValueError):
        return repr(table).encode()


def _set_at(table: dict[str, Any], path: list[str], value: Any) -> None:
    for key in path[:-1]:
        nxt = table.get(key)
        if not isinstance(nxt, dict):
            nxt = table[key] = {}
        table = nxt
    if value is _DELETE:
        table.pop(path[-1], None)
    else:
        table[path[-1]] = value


_DELETE = object()


def _paths(table: dict[str, Any], prefix: list[str]) -> list[list[str]]:
    found = []
    for key, value in table.items():
        found.append(prefix + [key])
        if isinstance(value, dict):
            found += _paths(value, prefix + [key])
    return found


@st.composite
def mutated_tables(draw: st.DrawFn) -> bytes:
    """A shipped scenario with a few keys set to other values, deleted or added."""
    table = tomllib.loads(draw(st.sampled_from(SOURCES)))
    for _ in range(draw(st.integers(1, 4))):
        paths = _paths(table, [])
        path = draw(st.sampled_from(paths)) if paths and draw(st.integers(0, 3)) else [draw(st.sampled_from(KEYS))]
        if draw(st.booleans()) and len(path) > 1:
            path = path[:-1] + [draw(st.sampled_from(KEYS))]
        _set_at(table, path, draw(st.one_of(values, st.just(_DELETE))))
    try:
        return tomli_w.dumps(table).encode()
    except (TypeError, ValueError):
        return b""


@st.composite
def mutated_text(draw: st.DrawFn) -> bytes:
    """A shipped scenario's text with lines dropped, doubled or replaced and bytes garbled."""
    lines = draw(st.sampled_from(SOURCES)).encode().split(b"\n")
    for _ in range(draw(st.integers(1, 6))):
        i = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["drop", "double", "value", "garble", "insert"]))
        if action == "drop":
            del lines[i]
        elif action == "double":
            lines.insert(i, lines[i])
        elif action == "value" and b"=" in lines[i]:
            key = lines[i].split(b"=", 1)[0]
            lines[i] = key + b"= " + draw(st.sampled_from([f'"{t}"' for t in TEXTS] + ["0", "-1", "true", "[]", "{}",
                                                                                         "nan", "1e400"])).encode()
        elif action == "garble" and lines[i]:
            j = draw(st.integers(0, len(lines[i]) - 1))
            lines[i] = lines[i][:j] + draw(st.binary(min_size=1, max_size=3)) + lines[i][j + 1:]
        else:
            lines.insert(i, draw(st.sampled_from([b"[flows.x]", b"[matrix]", b'trace = "trace.txt"',
                                                  b'[link.channel]', b"[[matrix.w]]", b'name = "../x"'])))
        if not lines:
            lines = [b""]
    return b"\n".join(lines)


TRACED = ('seed = 1\n[link]\nprofile = "r2"\nchannel = { trace = "trace.txt" }\n'
          '[flows.web]\nkind = "http"\nworkload = "s+2s"\n').encode()
traces = st.one_of(st.binary(max_size=200),
                   st.lists(st.sampled_from([b"good 2s", b"bad 700ms", b"# c", b"", b"good 0s", b"bad 2",
                                             b"ugly 1s", b"good 1.0000005s", b"bad 99999999999999999999s",
                                             b"good\t3us", b"  bad 1s  # x"]), max_size=8).map(b"\n".join))

# Nesting deeper than a parser's recursion: arrays, inline tables, dotted keys.
nested = st.tuples(st.sampled_from([(b"[", b"]"), (b"{a = ", b"}")]), st.integers(10, 3000)).map(
    lambda t: b'seed = 1\nlink = "e0"\nx = ' + t[0][0] * t[1] + b"1" + t[0][1] * t[1])
# Long values: a bandwidth schedule of up to 300 steps (the emulator's line is at most 4095 bytes).
schedules = st.integers(1, 300).map(lambda n: (
    'seed = 1\n[link]\ndelay = "1ms"\nmtu = "576B"\nbandwidth = ['
    + ", ".join(f'["{i}s", "{64 + i}kbit"]' for i in range(n)) + ']\n[flows.web]\nkind = "http"\nworkload = "s+2s"\n'
).encode())
inputs = st.one_of(st.binary(max_size=400), st.text(max_size=400).map(str.encode), toml_tables(),
                   mutated_tables(), mutated_text(), nested, schedules)


def run(max_examples: int, directory: Path, counts: dict[str, int],
        escapes: dict[str, bytes] | None = None) -> None:
    """One Hypothesis run of both properties; `counts` gathers the outcomes. With `escapes`, an
    escape is recorded there (its kind -> the first input) and the run goes on instead of failing."""
    common = settings(max_examples=max_examples, deadline=None, database=None,
                      suppress_health_check=list(HealthCheck))

    def one(data: bytes, trace: bytes | None, label: str) -> None:
        try:
            outcome = check(data, directory, trace)
        except AssertionError as e:
            if escapes is None:
                raise
            cause = e.__cause__
            kind = str(e).splitlines()[0][:120]
            if cause is not None:     # an exception kind and where it was raised
                frame = traceback.extract_tb(cause.__traceback__)[-1]
                kind = f"{type(cause).__name__} at {Path(frame.filename).name}:{frame.lineno} ({frame.name})"
            escapes.setdefault(kind, data if trace is None else trace)
            outcome = "escape"
        counts[label + outcome] = counts.get(label + outcome, 0) + 1

    @common
    @given(inputs)
    def any_scenario(data: bytes) -> None:
        one(data, None, "")

    @common
    @given(traces)
    def any_trace(trace: bytes) -> None:
        one(TRACED, trace, "trace ")

    any_scenario()
    any_trace()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=60.0, help="run for about this long (default 60)")
    parser.add_argument("--batch", type=int, default=500, help="examples per Hypothesis run")
    parser.add_argument("--collect", action="store_true",
                        help="record every kind of escape and go on (default: stop at the first, shrunk)")
    args = parser.parse_args()
    counts: dict[str, int] = {}
    escapes: dict[str, bytes] | None = {} if args.collect else None
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="squall-fuzz-") as tmp:
        while time.monotonic() - began < args.seconds:
            run(args.batch, Path(tmp), counts, escapes)
    total = sum(counts.values())
    took = time.monotonic() - began
    print(f"fuzz_scenario: {total} executions in {took:.0f} s "
          f"({', '.join(f'{k} {v}' for k, v in sorted(counts.items()))})")
    for kind, data in (escapes or {}).items():
        print(f"escape: {kind}\n  input: {data[:300]!r}")
    return 1 if escapes else 0


if __name__ == "__main__":
    sys.exit(main())
