"""`squall run --testbed FILE` on three lab hosts reached only over SSH.

Lane $SQUALL_SSH_LANE (default 40) builds the data network (testbed/lanes/lane.py); a fourth
namespace `sq<lane>-ctl` plays the experimenter's machine with a management veth to each
host namespace (198.18.(128+lane).0/24, split in /30s: above the lanes' 198.18.0-127).
Each host runs its own sshd (own host key, root login by key only, listening only on the
management address). The runner runs in `sq<lane>-ctl`, which has only the management
network, with an `ip` on PATH that logs its calls: it must never use `ip netns`.
"""
from __future__ import annotations

import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

from analysis.aggregate.run_analysis import analyse_run

from conftest import built_lane, require_programs
from support_run import lenient_text
from testbed import netns
from testbed.addresses import LaneAddresses, lane_addresses
from testbed.lanes.capture import read_packets
from testbed.paths import bin_dir
from testbed.tcp_profile import RECORDED_SYSCTLS

pytestmark = pytest.mark.netns
REPO = Path(__file__).resolve().parents[1]
LANE = int(os.environ.get("SQUALL_SSH_LANE", "40"))
SSHD = "/usr/sbin/sshd"
ROLES = ("fixed", "emu", "mobile")

SCENARIO = """
name = "ssh-lab"
seed = 5
replications = 1
timeout = "40s"
tcp = "iw4"
router = "saarto"

[link]
bandwidth = "1Mbit"
delay = "10ms"
mtu = "576B"


[flows.web]
kind = "http"
workload = "s+2s"
http = "1.1"

[flows.bulk1]
kind = "bulk"
count = 8
length = "2096B"
start = "100ms"

[flows.voice]
kind = "udp"
size = "132B"
rate = "32kbit"
duration = "300ms"
"""


@dataclass(frozen=True)
class Lab:
    lane: int
    ctl: str
    mgmt: dict[str, str]          # role -> the host's management address
    testbed_file: Path
    namespaces: dict[str, str]    # role -> namespace

    @property
    def carrier(self) -> str:
        """Where the emulator listens: the emu host's carrier address (mobile.emulator)."""
        return lane_addresses(self.lane).emulator_for_mobile


def _mgmt(lane: int, index: int) -> tuple[str, str]:
    """(control side, host side) of the index-th /30 of the lane's management network."""
    base = 4 * index
    return f"198.18.{128 + lane}.{base + 1}", f"198.18.{128 + lane}.{base + 2}"


def _sshd_config(tmp: Path, role: str, address: str, host_key: Path, authorized: Path) -> Path:
    path = tmp / f"sshd-{role}.conf"
    path.write_text(f"""ListenAddress {address}:22
HostKey {host_key}
PidFile {tmp}/sshd-{role}.pid
AuthorizedKeysFile {authorized}
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
MaxSessions 100
MaxStartups 100
""")
    return path


def _keygen(path: Path) -> str:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)
    return path.with_suffix(".pub").read_text().strip()


def _wait_listening(ns: str, address: str, proc: subprocess.Popen, stderr: Path) -> None:
    deadline = time.monotonic() + 10
    while not netns.run_in(ns, ["ss", "-Hltn", f"src {address} and sport = :22"], check=False).stdout.strip():
        assert proc.poll() is None, f"sshd in {ns} exited {proc.returncode}: {stderr.read_text()}"
        assert time.monotonic() < deadline, f"sshd in {ns} does not listen on {address}:22: {stderr.read_text()}"
        time.sleep(0.05)


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[Lab]:
    if not os.access(SSHD, os.X_OK) or shutil.which("ssh") is None:
        pytest.skip(f"needs the OpenSSH server ({SSHD}) and client: scripts/install-deps installs them")
    require_programs("squall-emulator", "squall-npa", "squall-http", "squall-bulk", "squall-udp")
    with built_lane(LANE) as addr:
        yield from _lab_on(addr, tmp_path)


def _lab_on(addr: LaneAddresses, tmp_path: Path) -> Iterator[Lab]:
    """The control namespace and an sshd per host on a built lane; all gone afterwards."""
    ctl = f"sq{LANE}-ctl"
    roles = {"fixed": addr.ns.fixed, "emu": addr.ns.emu, "mobile": addr.ns.mobile}
    daemons: list[subprocess.Popen] = []
    try:
        netns.create(ctl)
        client_key = tmp_path / "client_key"
        authorized = tmp_path / "authorized_keys"
        authorized.write_text(_keygen(client_key) + "\n")
        known = []
        Path("/run/sshd").mkdir(exist_ok=True)       # sshd's privilege separation directory
        mgmt = {}
        for index, (role, ns) in enumerate(roles.items()):
            ctl_side, host_side = _mgmt(LANE, index)
            mgmt[role] = host_side
            dev = f"mg-{role}"
            netns.run_in(ctl, ["ip", "link", "add", dev, "type", "veth", "peer", "name", "mgmt0", "netns", ns])
            netns.run_in(ctl, ["ip", "address", "add", f"{ctl_side}/30", "dev", dev])
            netns.run_in(ctl, ["ip", "link", "set", dev, "up"])
            netns.run_in(ns, ["ip", "address", "add", f"{host_side}/30", "dev", "mgmt0"])
            netns.run_in(ns, ["ip", "link", "set", "mgmt0", "up"])
            host_key = tmp_path / f"host_key_{role}"
            known.append(f"{host_side} {_keygen(host_key)}")
            conf = _sshd_config(tmp_path, role, host_side, host_key, authorized)
            stderr = tmp_path / f"sshd-{role}.stderr"
            with open(stderr, "wb") as err:
                proc = netns.popen_in(ns, [SSHD, "-D", "-e", "-f", str(conf)], stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=err)
            daemons.append(proc)
            _wait_listening(ns, host_side, proc, stderr)
        (tmp_path / "known_hosts").write_text("\n".join(known) + "\n")
        testbed_file = tmp_path / "lab.toml"
        testbed_file.write_text(_testbed_toml(tmp_path, mgmt, addr))
        yield Lab(LANE, ctl, mgmt, testbed_file, roles)
    finally:
        for proc in daemons:
            proc.terminate()
        for proc in daemons:
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        netns.delete(ctl)


def _testbed_toml(tmp: Path, mgmt: dict[str, str], addr) -> str:
    options = f'ssh_options = ["UserKnownHostsFile={tmp}/known_hosts", "StrictHostKeyChecking=yes"]'
    common = f'identity = "{tmp}/client_key"\n{options}\n'
    return f"""name = "test-lab"
bin_dir = "{bin_dir().resolve()}"

[fixed]
ssh = "root@{mgmt['fixed']}"
{common}work_dir = "{tmp}/host-fixed"
address = "{addr.fixed_host}"
capture_dev = "{addr.fixed_eth.dev}"

[emu]
ssh = "root@{mgmt['emu']}"
{common}work_dir = "{tmp}/host-emu"
wireless_address = "{addr.emu_wireless.address}"
emulator_port = {addr.emulator_port}

[mobile]
ssh = "root@{mgmt['mobile']}"
{common}work_dir = "{tmp}/host-mobile"
address = "{addr.mobile_host}"
emulator = "{addr.emulator_for_mobile}"
fixed_net = "{addr.fixed_net}"
"""


def host_state(ns: str) -> dict[str, object]:
    """What a run may change on a host: sysctls, routes, qdiscs, links, processes."""
    sysctls = {key: netns.run_in(ns, ["sysctl", "-n", key], check=False).stdout.strip() for key in RECORDED_SYSCTLS}
    return {"sysctls": sysctls,
            "routes": netns.run_in(ns, ["ip", "route", "show", "table", "main"]).stdout,
            "qdiscs": netns.run_in(ns, ["tc", "qdisc", "show"]).stdout,
            "links": [line.split(":")[1].strip() for line in
                      netns.run_in(ns, ["ip", "-o", "link", "show"]).stdout.splitlines()],
            "processes": sorted(_comm(pid) for pid in netns.pids(ns))}


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return "?"


def _settled_state(ns: str, before: dict[str, object]) -> dict[str, object]:
    """The host's state once sshd's session processes have gone (they end just after the run)."""
    deadline = time.monotonic() + 5
    while True:
        state = host_state(ns)
        if state == before or time.monotonic() > deadline:
            return state
        time.sleep(0.1)


def assert_hosts_as_before(lab: Lab, before: dict[str, dict[str, object]]) -> None:
    after = {role: _settled_state(ns, before[role]) for role, ns in lab.namespaces.items()}
    for role in ROLES:
        assert after[role] == before[role], f"the {role} host changed: before {before[role]}, after {after[role]}"


def run_squall(lab: Lab, tmp: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """`squall run ... --testbed FILE` in the control namespace, with `ip` calls logged."""
    wrappers = tmp / "bin"
    wrappers.mkdir(exist_ok=True)
    calls = tmp / "ip-calls.log"
    real_ip = shutil.which("ip")
    (wrappers / "ip").write_text(f'#!/bin/sh\necho "$*" >> {calls}\nexec {real_ip} "$@"\n')
    (wrappers / "ip").chmod(0o755)
    env = {**os.environ, "PATH": f"{wrappers}:{os.environ['PATH']}", "PYTHONPATH": str(REPO)}
    argv = [sys.executable, "-m", "testbed.cli", "run", *args, "--testbed", str(lab.testbed_file)]
    trace = [f"SQUALL_SSH_TRACE={os.environ['SQUALL_SSH_TRACE']}"] if os.environ.get("SQUALL_SSH_TRACE") else []
    proc = netns.run_in(lab.ctl, ["env", f"PATH={env['PATH']}", f"PYTHONPATH={REPO}", *trace, *argv],
                        check=False, timeout=300)
    logged = calls.read_text().splitlines() if calls.exists() else []
    return proc, logged


def start_squall_until_bulk(lab: Lab, scenario: Path, results: Path) -> subprocess.Popen[str]:
    """`squall run` in the background, returned once the bulk sender on the fixed host runs:
    the replication is under way."""
    argv = [sys.executable, "-m", "testbed.cli", "run", str(scenario), "--results", str(results),
            "--no-analysis", "--testbed", str(lab.testbed_file)]
    proc = netns.popen_in(lab.ctl, ["env", f"PYTHONPATH={REPO}", *argv], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while "squall-bulk" not in host_state(lab.namespaces["fixed"])["processes"]:
            assert proc.poll() is None, f"squall run ended early: {proc.communicate()}"
            assert time.monotonic() < deadline, "the bulk flow never started"
            time.sleep(0.1)
    except BaseException:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        raise
    return proc


def test_a_replication_on_ssh_lab_hosts(lab: Lab, tmp_path: Path) -> None:
    scenario = tmp_path / "ssh-lab.toml"
    scenario.write_text(lenient_text(SCENARIO))     # not about timing
    before = {role: host_state(ns) for role, ns in lab.namespaces.items()}
    results = tmp_path / "results"
    proc, ip_calls = run_squall(lab, tmp_path, str(scenario), "--results", str(results), "--no-analysis")
    reasons = [json.loads(p.read_text())["reason"] for p in results.glob("*/cells/*/rep-*/status.json")]
    assert proc.returncode == 0, f"squall run failed: {reasons}\n{proc.stdout}\n{proc.stderr}"
    assert not [c for c in ip_calls if c.split()[:1] == ["netns"]], f"the runner used ip netns: {ip_calls}"

    (run_dir,) = results.iterdir()
    (rep,) = (run_dir / "cells").glob("*/rep-01")
    status = json.loads((rep / "status.json").read_text())
    assert status["status"] == "ok", status["reason"]
    meta = json.loads((run_dir / "meta.json").read_text())["testbed"]
    assert meta["backend"] == "ssh" and set(meta["hosts"]) == set(ROLES)
    assert meta["hosts"]["emu"]["kernel"].startswith("Linux ") and "tcpdump" in meta["hosts"]["fixed"]["tcpdump"]
    details = status["details"]
    assert details["testbed"]["backend"] == "ssh"
    assert set(details["testbed"]["clock_offsets"]) == set(ROLES)
    for name in ("emulator.log.gz", "emulator.conf", "fixed.pcap.gz", "mobile.pcap.gz", "tcp.json", "workloads.json",
                 "web.client.log", "web.access.log", "web.error.log", "bulk1.sender.log", "bulk1.receiver.log",
                 "web.client.stdout", "emulator.stderr", "npa-mobile.stderr", "router.tc", "router-queue.tsv",
                 "tc-stats.json"):
        assert (rep / name).is_file(), f"{name} missing from {sorted(p.name for p in rep.iterdir())}"
    trailer = [line for line in gzip.decompress((rep / "emulator.log.gz").read_bytes()).decode().splitlines()
               if line.startswith("# end")]
    assert trailer, "emulator.log has no trailer"
    # STOP came through the SSH connection (squall-control on the emu host), the emulator
    # listened on the carrier address only, and no file names the token.
    assert trailer[0].endswith(" by_comm squall-control"), trailer
    conf = (rep / "emulator.conf").read_text()
    assert "\ntoken = <redacted>\n" in conf and f"\nlisten = {lab.carrier}\n" in conf, conf
    assert f"listening on {lab.carrier}\n" in (rep / "emulator.stderr").read_text()
    assert not list(Path("/tmp").glob(f"{details['testbed']['run_id']}-p.*")), "a private directory was left"
    web_port, bulk_port = 8080, 5002
    for stem in ("fixed", "mobile"):
        packets = read_packets(rep / f"{stem}.pcap.gz")
        ports = {p.payload.sport for p in packets if hasattr(p.payload, "sport")} | \
            {p.payload.dport for p in packets if hasattr(p.payload, "dport")}
        assert {web_port, bulk_port} <= ports, f"{stem}.pcap lacks a flow: ports {sorted(ports)}"
    tcp = json.loads((rep / "tcp.json").read_text())
    assert all(r["initcwnd"] == 4 for r in tcp["hosts"]["fixed"]["routes"])
    stats = json.loads((rep / "tc-stats.json").read_text())
    assert sum(c.get("packets", 0) for c in stats["class"]) > 0, "the tc router on the emu host saw no packet"
    assert len((rep / "router-queue.tsv").read_text().splitlines()) > 3
    workloads = json.loads((rep / "workloads.json").read_text())
    assert workloads["web"]["client"]["summary"]["ok"] and workloads["bulk1"]["sender"]["summary"]["ok"]
    # The UDP receiver was ended by SIGTERM sent over SSH and still printed its summary.
    receiver = workloads["voice"]["receiver"]
    assert receiver["exit_code"] == 0 and receiver["summary"]["ok"] and receiver["summary"]["received"] == 10, receiver

    assert_hosts_as_before(lab, before)
    for role in ROLES:
        assert not list((tmp_path / f"host-{role}").glob("squall-*")), f"the {role} host keeps the run's files"

    # The analysis reads a lab run like a lane run: the replication is analysed, its flows found.
    (cell,) = analyse_run(run_dir, jobs=1, progress=None).cells
    (result,) = cell.replications
    assert result.analysed, result.error
    assert {"web", "bulk1", "voice"} <= {f.name for f in result.flows}, result.flows


def test_linux_2_4s_bpf_program_is_attached_on_the_lab_hosts_and_gone_after_the_run(lab: Lab, tmp_path: Path) -> None:
    """The linux-2.4 profile through SSH: squall-hostbpf on each endpoint host holds the program
    during the replications and is ended by the run's restore (each new apply ends the last)."""
    require_programs("squall-hostbpf")
    scenario = tmp_path / "ssh-lab-2004.toml"
    scenario.write_text(lenient_text(SCENARIO.replace('tcp = "iw4"', 'tcp = "linux-2.4"')
                                     .replace("replications = 1", "replications = 2")))
    before = {role: host_state(ns) for role, ns in lab.namespaces.items()}
    results = tmp_path / "results"
    proc, _ = run_squall(lab, tmp_path, str(scenario), "--results", str(results), "--no-analysis")
    assert proc.returncode == 0, f"squall run failed:\n{proc.stdout}\n{proc.stderr}"
    programs = []
    for tcp_json in sorted(results.glob("*/cells/*/rep-*/tcp.json")):
        hosts = json.loads(tcp_json.read_text())["hosts"]
        assert all(hosts[role]["bpf"]["settings"] == {"syn_rto_ms": 3000, "delack_max_ms": 200}
                   for role in ("fixed", "mobile")), hosts
        programs += [hosts[role]["bpf"]["program_id"] for role in ("fixed", "mobile")]
    assert len(set(programs)) == 4, programs
    shown = [subprocess.run(["bpftool", "prog", "show", "id", str(p)], capture_output=True).returncode for p in programs]
    assert all(code != 0 for code in shown), f"programs left attached: {programs}, bpftool exit codes {shown}"
    assert_hosts_as_before(lab, before)


def test_a_host_without_a_program_is_refused_before_the_run(lab: Lab, tmp_path: Path) -> None:
    text = lab.testbed_file.read_text()
    lab.testbed_file.write_text(text.replace('[mobile]\n', f'[mobile]\nbin_dir = "{tmp_path}/no-bin"\n'))
    scenario = tmp_path / "ssh-lab.toml"
    scenario.write_text(SCENARIO)
    results = tmp_path / "results"
    proc, _ = run_squall(lab, tmp_path, str(scenario), "--results", str(results), "--no-analysis")
    assert proc.returncode == 2
    assert f"the mobile host (root@{lab.mgmt['mobile']}): program {tmp_path}/no-bin/squall-npa is missing" \
        in proc.stderr, proc.stderr
    assert not results.exists(), "a run directory was made although the hosts were refused"


def test_an_unreachable_host_is_refused_before_the_run(lab: Lab, tmp_path: Path) -> None:
    lab.testbed_file.write_text(lab.testbed_file.read_text().replace(f'root@{lab.mgmt["emu"]}', "root@198.18.250.9")
                                .replace("[emu]\n", "[emu]\nport = 22\n"))
    scenario = tmp_path / "ssh-lab.toml"
    scenario.write_text(SCENARIO)
    proc, _ = run_squall(lab, tmp_path, str(scenario), "--results", str(tmp_path / "results"), "--no-analysis")
    assert proc.returncode == 2
    assert "the emu host: cannot reach root@198.18.250.9:22 over SSH" in proc.stderr, proc.stderr


def test_sigterm_mid_replication_leaves_the_hosts_as_before_and_resume_completes(lab: Lab, tmp_path: Path) -> None:
    scenario = tmp_path / "ssh-lab.toml"
    scenario.write_text(lenient_text(SCENARIO.replace("count = 8\n", "count = 400\n")))   # ~7 s at 1 Mbit/s; not about timing
    before = {role: host_state(ns) for role, ns in lab.namespaces.items()}
    results = tmp_path / "results"
    proc = start_squall_until_bulk(lab, scenario, results)
    try:
        # `ip netns exec` execs: the pid is the runner's.
        os.kill(proc.pid, signal.SIGTERM)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + signal.SIGTERM, f"{out}\n{err}"
    assert "squall run --resume" in err
    assert not list(results.glob("*/cells/*/rep-01/status.json")), "an interrupted replication was recorded"
    assert_hosts_as_before(lab, before)

    (run_dir,) = results.iterdir()
    done, _ = run_squall(lab, tmp_path, "--resume", str(run_dir), "--no-analysis")
    assert done.returncode == 0, f"the resumed run failed:\n{done.stdout}\n{done.stderr}"
    (status,) = run_dir.glob("cells/*/rep-01/status.json")
    assert json.loads(status.read_text())["status"] == "ok"


def test_a_replication_whose_emulator_dies_fails_and_the_next_one_starts_fresh(lab: Lab, tmp_path: Path) -> None:
    scenario = tmp_path / "ssh-lab.toml"
    scenario.write_text(lenient_text(SCENARIO.replace("replications = 1", "replications = 2")
                                     .replace("count = 8\n", "count = 400\n")))     # not about timing
    before = {role: host_state(ns) for role, ns in lab.namespaces.items()}
    results = tmp_path / "results"
    proc = start_squall_until_bulk(lab, scenario, results)
    try:
        (emulator,) = [pid for pid in netns.pids(lab.namespaces["emu"]) if _comm(pid).startswith("squall-emulat")]
        os.kill(emulator, signal.SIGKILL)
        out, err = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1, f"{out}\n{err}"
    (run_dir,) = results.iterdir()
    first = json.loads(next(run_dir.glob("cells/*/rep-01/status.json")).read_text())
    second = json.loads(next(run_dir.glob("cells/*/rep-02/status.json")).read_text())
    assert first["status"] == "failed" and "the emulator exited with code -9" in first["reason"], first["reason"]
    assert second["status"] == "ok", second["reason"]
    assert_hosts_as_before(lab, before)
