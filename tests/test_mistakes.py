"""Realistic mistakes in scenarios, channel traces, testbed files and `squall run`'s options: each is
refused before anything is created — exit 2, one message naming the file (or option), the key and
what was expected, no run directory, no namespace (docs/scenarios.md, docs/runner.md).

`squall run` goes through testbed.cli.main with `--results` in a temporary directory and lanes from
$SQUALL_TEST_LANE_BASE. Should a mistake get through the checks, the stubs below stop the run
before a lane is built or a lab host is reached, and the test fails on the exit status or on the
run directory left behind.
"""
from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conftest import lane_base
from testbed import cli, netns
from testbed.addresses import MAX_LANE, namespaces

LANE = lane_base()

GOOD = """\
name = "mistake"
seed = 7
replications = 2
timeout = "60s"

[link]
bandwidth = "64kbit"
delay = "100ms"
mtu = "576B"

[flows.web]
kind = "http"
workload = "s+2s"
"""
LINK = '[link]\nbandwidth = "64kbit"\ndelay = "100ms"\nmtu = "576B"\n'
WEB = '[flows.web]\nkind = "http"\nworkload = "s+2s"\n'
HEAD = 'seed = 7\n'
LOSSY = '[link]\nprofile = "r2"\n'

LAB = """\
work_dir = "/var/tmp/squall"
bin_dir = "/opt/squall/build/bin"
[fixed]
ssh = "root@192.0.2.10"
address = "198.18.40.1"
[emu]
ssh = "root@192.0.2.11"
wireless_address = "198.19.40.1"
[mobile]
ssh = "root@192.0.2.12"
address = "198.19.40.2"
emulator = "198.19.168.1:5300"
fixed_net = "198.18.40.0/24"
"""


def replace(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new)


@dataclass(frozen=True)
class Mistake:
    name: str
    files: dict[str, str | bytes]      # written into the test's directory; s.toml is the scenario
    words: tuple[str, ...]             # the file (or option), the key, what was expected
    args: tuple[str, ...] = ()         # options of `squall run` besides the scenario
    scenario: str | None = "s.toml"    # None: not given (--resume)
    env: dict[str, str] = field(default_factory=dict)


MISTAKES = [
    # --- names: the run directory must stay inside --results ---------------------------------
    Mistake("name climbs out of --results", {"s.toml": replace(GOOD, '"mistake"', '"../../../elsewhere"')},
            ("s.toml", "name", "safe file name")),
    Mistake("name is a path", {"s.toml": replace(GOOD, '"mistake"', '"a/b"')}, ("s.toml", "name", "no '/'")),
    Mistake("name is empty", {"s.toml": replace(GOOD, '"mistake"', '""')}, ("s.toml", "name", "safe file name")),
    Mistake("name is hidden", {"s.toml": replace(GOOD, '"mistake"', '".results"')}, ("s.toml", "name", "letter or digit")),
    Mistake("name is a number", {"s.toml": replace(GOOD, '"mistake"', "5")}, ("s.toml", "name", "not a string")),
    Mistake("file name unfit as a run name", {"my scenario!.toml": replace(GOOD, 'name = "mistake"\n', "")},
            ("my scenario!.toml", "name", "give name ="), scenario="my scenario!.toml"),
    # --- the file itself ----------------------------------------------------------------------
    Mistake("not UTF-8", {"s.toml": GOOD.encode() + b'description = "caf\xe9"\n'},
            ("s.toml", "line 14", "not UTF-8")),
    Mistake("scenario is a directory", {"s.toml/x": ""}, ("s.toml", "is a directory", "TOML file")),
    Mistake("scenario does not exist", {}, ("s.toml", "file not found")),
    Mistake("not TOML", {"s.toml": GOOD + "[link\n"}, ("s.toml", "not valid TOML")),
    # --- numbers and units at the top ----------------------------------------------------------
    Mistake("10^11 replications in the scenario", {"s.toml": replace(GOOD, "replications = 2", "replications = 100000000000")},
            ("s.toml", "replications", "<= 10000")),
    Mistake("replications as a fraction", {"s.toml": replace(GOOD, "replications = 2", "replications = 2.5")},
            ("s.toml", "replications", "whole number")),
    Mistake("seed as a string", {"s.toml": replace(GOOD, "seed = 7", 'seed = "7"')}, ("s.toml", "seed", "whole number")),
    Mistake("negative seed", {"s.toml": replace(GOOD, "seed = 7", "seed = -1")}, ("s.toml", "seed", ">= 0")),
    Mistake("timeout without unit", {"s.toml": replace(GOOD, 'timeout = "60s"', "timeout = 60")},
            ("s.toml", "timeout", "with a unit")),
    Mistake("timeout of two days", {"s.toml": replace(GOOD, 'timeout = "60s"', 'timeout = "172800s"')},
            ("s.toml", "timeout", "one day")),
    Mistake("timeout in hours", {"s.toml": replace(GOOD, 'timeout = "60s"', 'timeout = "2h"')},
            ("s.toml", "timeout", "unknown unit")),
    # --- the link ------------------------------------------------------------------------------
    Mistake("MTU beyond an IP packet", {"s.toml": replace(GOOD, 'mtu = "576B"', 'mtu = "1MB"')},
            ("s.toml", "link.down.mtu", "65535B")),
    Mistake("send buffer beyond 32 bits", {"s.toml": replace(GOOD, 'mtu = "576B"', 'mtu = "576B"\nsend_buffer = "8000MB"')},
            ("s.toml", "link.down.send_buffer", "too large")),
    Mistake("send buffer of 0 B", {"s.toml": replace(GOOD, 'mtu = "576B"', 'mtu = "576B"\nsend_buffer = "0B"')},
            ("s.toml", "link.down.send_buffer", "0 B is below the MTU 576 B")),
    Mistake("1 B buffers", {"s.toml": replace(GOOD, 'mtu = "576B"', 'mtu = "576B"\nsend_buffer = "1B"\nrecv_buffer = "1B"')},
            ("s.toml", "link.down.send_buffer", "1 B is below the MTU 576 B", "never fit")),
    Mistake("send buffer below the MTU uplink only", {"s.toml": GOOD + '[link.up]\nsend_buffer = "575B"\n'},
            ("s.toml", "link.up.send_buffer", "575 B is below the MTU 576 B")),
    Mistake("4 GiB per-packet overhead", {"s.toml": replace(GOOD, 'mtu = "576B"', 'mtu = "576B"\noverhead = "4294967295B"')},
            ("s.toml", "link.down.overhead", "more than the limit 65535 B")),
    Mistake("5000 ARQ retransmissions", {"s.toml": replace(GOOD, 'mtu = "576B"', 'mtu = "576B"\narq = { retransmissions = 5000, delay = "700ms" }')},
            ("s.toml", "link.down.arq.retransmissions", "limit 1000")),
    Mistake("rate with a slash unit", {"s.toml": replace(GOOD, '"64kbit"', '"64 kbit/s"')},
            ("s.toml", "link.down.bandwidth", "number and a unit")),
    Mistake("delay in scientific notation", {"s.toml": replace(GOOD, '"100ms"', '"1e2ms"')},
            ("s.toml", "link.down.delay", "number and a unit")),
    Mistake("a 200-step bandwidth schedule", {"s.toml": replace(GOOD, 'bandwidth = "64kbit"', "bandwidth = ["
                                                               + ", ".join(f'["{i}s", "64kbit"]' for i in range(200)) + "]")},
            ("s.toml", "link.down.bandwidth", "line longer than")),
    Mistake("rate of a terabit", {"s.toml": replace(GOOD, '"64kbit"', '"1000000Mbit"')},
            ("s.toml", "link.down.bandwidth", "too large")),
    # --- channel traces --------------------------------------------------------------------------
    Mistake("trace file missing", {"s.toml": HEAD + LOSSY + 'channel = { trace = "gone.trace" }\n' + WEB},
            ("s.toml", "link.channel.trace", "gone.trace", "cannot open")),
    Mistake("trace duration without unit", {"s.toml": HEAD + LOSSY + 'channel = { trace = "c.trace" }\n' + WEB,
                                            "c.trace": "# channel\ngood 2s\nbad 2\n"},
            ("s.toml", "link.channel.trace", "c.trace:3", "'good DURATION' or 'bad DURATION'")),
    Mistake("trace with an unknown state", {"s.toml": HEAD + LOSSY + 'channel = { trace = "c.trace" }\n' + WEB,
                                           "c.trace": "good 2s\nugly 700ms\n"},
            ("s.toml", "link.channel.trace", "c.trace:2", "good DURATION")),
    Mistake("trace with a zero duration", {"s.toml": HEAD + LOSSY + 'channel = { trace = "c.trace" }\n' + WEB,
                                          "c.trace": "good 0s\n"},
            ("s.toml", "link.channel.trace", "c.trace:1", "duration > 0")),
    Mistake("trace without a step", {"s.toml": HEAD + LOSSY + 'channel = { trace = "c.trace" }\n' + WEB,
                                    "c.trace": "# nothing yet\n\n"},
            ("s.toml", "link.channel.trace", "c.trace", "at least one")),
    Mistake("trace of binary bytes", {"s.toml": HEAD + LOSSY + 'channel = { trace = "c.trace" }\n' + WEB,
                                     "c.trace": b"good 2s\n\x00\xff\xfebad 1s\n"},
            ("s.toml", "link.channel.trace", "c.trace:2")),
    Mistake("trace is a device", {"s.toml": HEAD + LOSSY + 'channel = { trace = "/dev/zero" }\n' + WEB},
            ("s.toml", "link.channel.trace", "/dev/zero", "cannot read")),
    Mistake("trace through .. with an unknown state", {"s.toml": HEAD + LOSSY + 'channel = { trace = "sub/../c.trace" }\n'
                                                      + WEB, "sub/keep": "", "c.trace": "good 2s\nugly 700ms\n"},
            ("s.toml", "link.channel.trace", "c.trace:2", "good DURATION")),
    Mistake("trace beside distributions", {"s.toml": HEAD + LOSSY + 'channel = { trace = "c.trace", good = "fixed(1s)" }\n'
                                           + WEB, "c.trace": "good 1s\n"},
            ("s.toml", "link.channel.good", "a trace replaces")),
    # --- the matrix ----------------------------------------------------------------------------
    Mistake("two axes set the same key", {"s.toml": GOOD + '[matrix]\nlink = ["e0", "e0-384"]\n[[matrix.fast]]\nlabel = "384"\n'
                                          'set = { "link.profile" = "e0-384" }\n'},
            ("s.toml", "matrix.fast", "link.profile", "one axis only")),
    Mistake("an axis inside another's table", {"s.toml": GOOD + '[matrix]\n"flows.web.http" = ["1.0", "1.1"]\n'
                                               '[[matrix.page]]\nlabel = "custom"\nset = { "flows.web" = { kind = "http", objects = [1000] } }\n'},
            ("s.toml", "matrix.page", "flows.web.http", "one axis only")),
    Mistake("axis sets the timeout", {"s.toml": GOOD + '[matrix]\n[[matrix.t]]\nlabel = "short"\nset = { timeout = "10s" }\n'},
            ("s.toml", "matrix.t[0].set", "'timeout'", "same for every cell")),
    Mistake("axis key path misspelt", {"s.toml": GOOD + '[matrix]\n"lnk.delay" = ["10ms", "20ms"]\n'},
            ("s.toml", "matrix.lnk.delay", "'lnk.delay'", "dotted key path under")),
    Mistake("labels that make the same cell id", {"s.toml": GOOD + '[matrix]\n"link.delay" = ["10ms", "20ms"]\n'
                                                  '[[matrix.x]]\nlabel = "a b"\nset = { "flows.web.start" = "0s" }\n'
                                                  '[[matrix.x]]\nlabel = "a-b"\nset = { "flows.web.start" = "1s" }\n'},
            ("s.toml", "matrix", "both get the id", "'delay-10ms_x-a-b'")),
    Mistake("a matrix of millions of cells", {"s.toml": GOOD + "[matrix]\n" + "".join(
        f'"flows.f{i}.start" = [{", ".join(f"{chr(34)}{k}s{chr(34)}" for k in range(20))}]\n' for i in range(6))},
            ("s.toml", "matrix.flows.f", "more than 10000 cells")),
    # --- flows -----------------------------------------------------------------------------------
    Mistake("no flows", {"s.toml": HEAD + LINK}, ("s.toml", "flows", "measures nothing")),
    Mistake("flow starts after the timeout", {"s.toml": replace(GOOD, 'workload = "s+2s"', 'workload = "s+2s"\nstart = "90s"')},
            ("s.toml", "flows.web.start", "timeout")),
    Mistake("flow starts at minus one second", {"s.toml": replace(GOOD, 'workload = "s+2s"', 'workload = "s+2s"\nstart = "-1s"')},
            ("s.toml", "flows.web.start", "not a time")),
    Mistake("direction spelt out", {"s.toml": replace(GOOD, 'workload = "s+2s"', 'workload = "s+2s"\ndirection = "downlink"')},
            ("s.toml", "flows.web.direction", '"down"')),
    Mistake("HTTP version as a number", {"s.toml": replace(GOOD, 'workload = "s+2s"', 'workload = "s+2s"\nhttp = 1.1')},
            ("s.toml", "flows.web.http", "a string")),
    Mistake("an HTTP object of 10 TB", {"s.toml": HEAD + LINK + '[flows.web]\nkind = "http"\nobjects = [6288, 10000000000000]\n'},
            ("s.toml", "flows.web.objects[1]", "too large")),
    Mistake("UDP flow without duration", {"s.toml": HEAD + LINK + '[flows.voice]\nkind = "udp"\nsize = "132B"\nrate = "32kbit"\n'},
            ("s.toml", "flows.voice.duration", "missing")),
    Mistake("flow without kind", {"s.toml": HEAD + LINK + '[flows.web]\nworkload = "s+2s"\n'},
            ("s.toml", "flows.web.kind", "not a flow kind")),
    # --- options ---------------------------------------------------------------------------------
    Mistake("--replications 0", {"s.toml": GOOD}, ("--replications", "1..10000"), ("--replications", "0")),
    Mistake("--replications -1", {"s.toml": GOOD}, ("--replications", "1..10000"), ("--replications", "-1")),
    Mistake("--replications 10^11", {"s.toml": GOOD}, ("--replications", "1..10000"), ("--replications", "100000000000")),
    Mistake("--first-replication 0", {"s.toml": GOOD}, ("--first-replication", "1..10000"),
            ("--first-replication", "0")),
    Mistake("--first-replication past --replications", {"s.toml": GOOD},
            ("--first-replication", "replication 3 is past the last one the run selects, 2 (--replications 2)"), ("--first-replication", "3", "--replications", "2")),
    Mistake("--first-replication past the scenario's replications", {"s.toml": GOOD},
            ("--first-replication", "replication 5 is past the last one the run selects, 2 (the scenario's `replications`)"), ("--first-replication", "5")),
    Mistake("--lane-base 200", {"s.toml": GOOD}, ("--lane-base", "0..127"), ("--lane-base", "200")),
    Mistake("--lane-base -1", {"s.toml": GOOD}, ("--lane-base", "0..127"), ("--lane-base", "-1")),
    Mistake("--parallel past the last lane", {"s.toml": GOOD}, ("--parallel", "lane 129"),
            ("--lane-base", "125", "--parallel", "5")),
    Mistake("--parallel 0", {"s.toml": GOOD}, ("--parallel", "1..128"), ("--parallel", "0")),
    Mistake("--prepare-ahead's spare past the last lane", {"s.toml": GOOD},
            ("--parallel", "spare of --prepare-ahead", "lane 128"),
            ("--lane-base", "126", "--parallel", "2", "--prepare-ahead")),
    Mistake("--prepare-ahead's spares past a node's last lane", {"s.toml": GOOD},
            ("--lanes-per-node", "as many spares (--prepare-ahead)", "0..127"),
            ("--slurm", "--lanes-per-node", "2", "--lane-base", "125", "--units-per-task", "3", "--prepare-ahead")),
    Mistake("--prepare-ahead on Slurm with one unit per task", {"s.toml": GOOD},
            ("--prepare-ahead", "--units-per-task 2 or more"), ("--slurm", "--prepare-ahead")),
    Mistake("--prepare-ahead with one set of lab hosts", {"s.toml": GOOD, "lab.toml": LAB},
            ("--prepare-ahead", "one set of lab hosts"), ("--testbed", "{dir}/lab.toml", "--prepare-ahead")),
    Mistake("a browser flow on lab hosts", {"s.toml": GOOD.replace('kind = "http"\nworkload = "s+2s"',
                                                                   'kind = "browser"\nhar = "s+2s"'), "lab.toml": LAB},
            ("--testbed", "web (browser) run on lanes only"), ("--testbed", "{dir}/lab.toml")),
    Mistake("$SQUALL_LANE_BASE not a number", {"s.toml": GOOD}, ("SQUALL_LANE_BASE", "'lane7'", "0..127"), (),
            env={"SQUALL_LANE_BASE": "lane7"}),
    Mistake("$SQUALL_REALTIME_PRIORITY not a number", {"s.toml": GOOD},
            ("$SQUALL_REALTIME_PRIORITY", "'abc'", "1..99 (SCHED_FIFO)"), (), env={"SQUALL_REALTIME_PRIORITY": "abc"}),
    Mistake("$SQUALL_NPA_PRIORITY out of range", {"s.toml": GOOD},
            ("$SQUALL_NPA_PRIORITY", "'200'", "1..99 (SCHED_FIFO)"), (), env={"SQUALL_NPA_PRIORITY": "200"}),
    Mistake("--cells matching nothing", {"s.toml": GOOD + '[matrix]\nlink = ["e0", "e0-384"]\n'},
            ("--cells", "'link-r9'", "link-e0, link-e0-384"), ("--cells", "link-r9")),
    Mistake("--results is a file", {"s.toml": GOOD, "out": "not a directory"}, ("--results", "not a directory"),
            ("--results", "{dir}/out")),
    Mistake("--resume of a directory that is not a run", {"old/notes.txt": ""}, ("--resume", "old", "not a squall run directory"),
            ("--resume", "{dir}/old"), scenario=None),
    Mistake("--resume of a directory that does not exist", {}, ("--resume", "gone", "no such directory"),
            ("--resume", "{dir}/gone"), scenario=None),
    Mistake("--resume of a run with a damaged meta.json", {"old/scenario.toml": GOOD, "old/expanded.json": "{}",
                                                           "old/meta.json": ""},
            ("old/meta.json", "damaged"), ("--resume", "{dir}/old"), scenario=None),
    # --- testbed files -------------------------------------------------------------------------
    Mistake("testbed address out of range", {"s.toml": GOOD, "lab.toml": replace(LAB, '"198.18.40.1"', '"198.18.40.300"')},
            ("lab.toml", "fixed.address", "IPv4 address"), ("--testbed", "{dir}/lab.toml")),
    Mistake("testbed port out of range", {"s.toml": GOOD, "lab.toml": replace(LAB, ':5300"', ':70000"')},
            ("lab.toml", "mobile.emulator", "1..65535"), ("--testbed", "{dir}/lab.toml")),
    Mistake("testbed address with a prefix length", {"s.toml": GOOD, "lab.toml": replace(LAB, '"198.19.40.2"', '"198.19.40.2/24"')},
            ("lab.toml", "mobile.address", "without prefix length"), ("--testbed", "{dir}/lab.toml")),
    Mistake("testbed hosts sharing an address", {"s.toml": GOOD, "lab.toml": replace(LAB, '"198.19.40.2"', '"198.19.40.1"')},
            ("lab.toml", "mobile.address", "own testbed address"), ("--testbed", "{dir}/lab.toml")),
    Mistake("testbed file not UTF-8", {"s.toml": GOOD, "lab.toml": LAB.encode() + b"# \xff\n"},
            ("lab.toml", "not UTF-8"), ("--testbed", "{dir}/lab.toml")),
    Mistake("testbed ssh option that runs a local command", {"s.toml": GOOD, "lab.toml": replace(
        LAB, 'ssh = "root@192.0.2.11"\n', 'ssh = "root@192.0.2.11"\nssh_options = ["ProxyCommand=sh -c \'touch x\'"]\n')},
            ("lab.toml", "emu.ssh_options", "ProxyCommand is not an option squall passes to ssh"),
            ("--testbed", "{dir}/lab.toml")),
    Mistake("testbed file missing", {"s.toml": GOOD}, ("lab.toml", "file not found"),
            ("--testbed", "{dir}/lab.toml")),
    Mistake("testbed file nested too deeply", {"s.toml": GOOD, "lab.toml": "x = " + "[" * 5000 + "]" * 5000 + "\n"},
            ("lab.toml", "nested too deeply"), ("--testbed", "{dir}/lab.toml")),
    Mistake("testbed file is a directory", {"s.toml": GOOD, "lab.toml/x": ""},
            ("lab.toml", "is a directory"), ("--testbed", "{dir}/lab.toml")),
]


def _lanes_of(args: tuple[str, ...]) -> set[int]:
    lanes = set(range(LANE, LANE + 5))
    if "--lane-base" in args:
        base = int(args[args.index("--lane-base") + 1])
        lanes |= {n for n in range(base, base + 5) if 0 <= n <= MAX_LANE}
    return lanes


def _present(lanes: set[int]) -> set[str]:
    names = set(netns.list_namespaces())
    return {ns for lane in lanes for ns in namespaces(lane).all() if ns in names}


class GotThrough(AssertionError):
    """A mistake passed every check: the run would have started."""


@pytest.fixture
def no_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing past the checks may happen: no lane, no leftover clean-up, no lab host, no replication."""
    from testbed.lab import hosts as lab_hosts
    from testbed.lanes import lane as lanes
    from testbed.lanes.hosts import NamespaceTestbed
    from testbed.run import runner

    def refuse(*args: object, **kwargs: object) -> None:
        raise GotThrough("the checks let the mistake through")

    monkeypatch.setattr(lanes, "cleanup_leftovers", lambda: [])
    monkeypatch.setattr(NamespaceTestbed, "create", refuse)
    monkeypatch.setattr(runner.Runner, "run", refuse)
    monkeypatch.setattr(lab_hosts.SshTestbed, "open", refuse)


def write_files(directory: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.name for m in MISTAKES])
def test_mistake_is_refused_before_anything_is_created(mistake: Mistake, tmp_path: Path, no_run: None,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    work = tmp_path / "work"
    work.mkdir()
    write_files(work, mistake.files)
    results = tmp_path / "results"
    monkeypatch.chdir(work)           # file names as a user types them
    for key, value in mistake.env.items():
        monkeypatch.setenv(key, value)
    args = tuple(a.replace("{dir}", str(work)) for a in mistake.args)
    argv = ["run"] + ([] if mistake.scenario is None else [mistake.scenario])
    if "--results" not in args:
        argv += ["--results", str(results)]
    if "--lane-base" not in args and not mistake.env and "--testbed" not in args:
        argv += ["--lane-base", str(LANE)]
    lanes = _lanes_of(args)
    before = _present(lanes)

    code = cli.main(argv + list(args))

    err = capsys.readouterr().err
    assert code == 2, err
    message = [line for line in err.splitlines() if line.startswith("squall: ")]
    assert len(message) == 1, err
    for words in mistake.words:
        assert words in message[0], message[0]
    assert not results.exists() or not any(results.iterdir()), "a run directory was created"
    assert sorted(os.listdir(work)) == sorted({Path(n).parts[0] for n in mistake.files}), "a file was created"
    assert _present(lanes) == before, "a namespace was created"


def test_show_exits_2_on_a_mistake_and_prints_warnings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.toml"
    path.write_text(replace(GOOD, '"mistake"', '"../x"'))
    assert cli.main(["show", str(path)]) == 2
    assert "s.toml: name" in capsys.readouterr().err


def test_a_scenario_that_is_a_device_or_a_pipe_is_refused_without_reading_it(tmp_path: Path) -> None:
    """Reading /dev/zero or a pipe nobody writes to would never end."""
    pipe = tmp_path / "s.toml"
    os.mkfifo(pipe)
    for scenario in (str(pipe), "/dev/zero"):
        for argv in (["show", scenario], ["run", scenario, "--results", str(tmp_path / "results")]):
            proc = subprocess.run([sys.executable, "-m", "testbed.cli", *argv], capture_output=True,
                                  text=True, timeout=60)
            assert proc.returncode == 2, proc.stderr
            assert f"{scenario}: is not a regular file" in proc.stderr
    assert not (tmp_path / "results").exists()


@pytest.mark.netns
@pytest.mark.parametrize("how", ["claimed by another squall", "namespaces squall did not make"])
def test_a_busy_lane_is_found_before_the_run_directory_exists(how: str, tmp_path: Path, no_run: None,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Exit 2 and no run directory: a run made first would be empty, and its "Resume with" hint would
    meet the same lane."""
    from testbed.lanes import claim as lane_claim
    from testbed.lanes import lane as lanes

    number = LANE + 4      # the lane tests' last lane; the run asks for LANE+3 and LANE+4
    (tmp_path / "s.toml").write_text(GOOD)
    results = tmp_path / "results"
    foreign = namespaces(number).fixed
    held = lane_claim.claim(number) if how.startswith("claimed") else None
    if held is None:
        lanes.teardown(number)
        subprocess.run(["ip", "netns", "add", foreign], check=True)
    try:
        code = cli.main(["run", str(tmp_path / "s.toml"), "--results", str(results), "--lane-base", str(LANE + 3),
                         "--parallel", "2"])
        err = capsys.readouterr().err
        if held is None:
            assert netns.exists(foreign), "a namespace squall did not make was removed"
    finally:
        if held is not None:
            held.release()
        else:
            subprocess.run(["ip", "netns", "delete", foreign], check=False)
    assert code == 2, err
    expected = "is claimed by another squall process" if held is not None else f"namespaces {foreign} exist without"
    assert f"squall: lane {number}" in err and expected in err, err
    assert not results.exists() or not any(results.iterdir()), "a run directory was created"


@pytest.mark.parametrize("kind", ["fifo", "symlink to a bad trace"])
def test_a_trace_that_is_a_pipe_or_behind_a_symlink_is_refused_under_its_key(kind: str, tmp_path: Path) -> None:
    """A FIFO would hold the emulator's check until it timed out (a traceback after 30 s)."""
    trace = tmp_path / "c.trace"
    if kind == "fifo":
        os.mkfifo(trace)
    else:
        (tmp_path / "real.trace").write_text("good 2s\nugly 700ms\n")
        trace.symlink_to(tmp_path / "real.trace")
    scenario = tmp_path / "s.toml"
    scenario.write_text(HEAD + LOSSY + 'channel = { trace = "c.trace" }\n' + WEB)
    for argv in (["show", str(scenario)], ["run", str(scenario), "--results", str(tmp_path / "results")]):
        proc = subprocess.run([sys.executable, "-m", "testbed.cli", *argv], capture_output=True, text=True, timeout=20)
        assert proc.returncode == 2, proc.stderr
        expected = "c.trace: cannot read: not a regular file" if kind == "fifo" else "real.trace:2: "
        assert proc.stderr.startswith(f"squall: {scenario}: link.channel.trace: ") and expected in proc.stderr, \
            proc.stderr
    assert not (tmp_path / "results").exists()
