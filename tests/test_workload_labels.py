"""Workload labels and the generators' handling of bad input (no root needed)."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from testbed.scenario import workloads as workload_profiles
from testbed.errors import ConfigError
from testbed.paths import bin_dir
from testbed.paths import PROFILE_DIR
from testbed.profiles import ProfileSet


def run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(bin_dir() / argv[0]), *argv[1:]], capture_output=True, text=True, timeout=30)


def test_client_table_matches_workloads_toml() -> None:
    built_in = json.loads(run("squall-http", "--list-workloads").stdout)
    every = [workload_profiles.load(name) for name in ProfileSet.load("workloads", PROFILE_DIR).names()]
    pages = {w.label: list(w.sizes) for w in every if isinstance(w, workload_profiles.HttpPage)}
    assert built_in == pages


def test_study_labels_have_the_study_sizes() -> None:
    # Saarto 2003 workloads slide / IIP report tables 5 and 6.
    assert workload_profiles.load("s+2s").sizes == (6288, 2096, 2096)
    assert workload_profiles.load("l+8m").sizes == (71788,) + (8384,) * 8
    bulk = workload_profiles.load("bulk-90")
    assert (bulk.count, bulk.length) == (90, 2096)
    cbr = workload_profiles.load("cbr-32k")
    assert (cbr.size, cbr.rate_bps, cbr.rate_counts) == (132, 32000, "payload")
    # IIP table 31: 720 kB in 180 s = 25 datagrams/s of 160 B at IP level
    mix = workload_profiles.load("cbr-32k-ip")
    assert (mix.size, mix.rate_bps, mix.rate_counts, mix.ip_rate_bps) == (132, 26400, "ip", 32000)
    assert 132 * 8 / mix.rate_bps == 0.04


def test_a_rate_counted_at_ip_level_becomes_the_payload_rate_of_the_flow() -> None:
    from testbed.scenario.flows import parse_flow
    flow = parse_flow("u", {"kind": "udp", "size": "100B", "rate": "64kbit", "rate_counts": "ip",
                            "count": 5}, "x.toml: flows.u")
    assert flow.stream.rate_bps == 50000     # 64000 x 100 / 128
    argv = flow.active_argv(lambda name: name, "198.18.40.2:6001", offset_us=0, log=Path("udp.log"),
                            timeout_us=1_000_000)
    assert argv[argv.index("--rate") + 1] == "50000bit"
    with pytest.raises(ConfigError) as err:
        parse_flow("u", {"kind": "udp", "workload": "cbr-32k", "rate_counts": "ip", "count": 5},
                   "x.toml: flows.u")
    assert err.value.where == "x.toml: flows.u.rate_counts"


def test_unknown_label_is_refused_by_loader_and_client() -> None:
    with pytest.raises(ConfigError, match="unknown workloads profile 'x\\+9z'.*s\\+2s"):
        workload_profiles.load("x+9z")
    r = run("squall-http", "--connect", "198.18.40.1:80", "--workload", "x+9z")
    assert r.returncode == 2
    assert "--workload: unknown label 'x+9z'" in r.stderr and "s+2s" in r.stderr


@pytest.mark.parametrize("table, key", [
    ({"kind": "http", "main": "0B"}, "main"),
    ({"kind": "http", "main": "6288B", "inline": ["-5B"]}, "inline[0]"),
    ({"kind": "bulk", "count": 0, "length": "2096B"}, "count"),
    ({"kind": "cbr", "size": "132B", "rate": "0kbit"}, "rate"),
    ({"kind": "cbr", "size": "10B", "rate": "32kbit"}, "size"),
    ({"kind": "cbr", "size": "132B", "rate": "32kbit", "rate_counts": "udp"}, "rate_counts"),
    ({"kind": "video"}, "kind"),
    ({"kind": "bulk", "count": 3, "length": "1B", "colour": 1}, "colour"),
])
def test_bad_profiles_name_the_key(table: dict, key: str) -> None:
    with pytest.raises(ConfigError) as err:
        workload_profiles.from_table("w", table, "workloads.toml: w")
    assert err.value.where == f"workloads.toml: w.{key}"


@pytest.mark.parametrize("argv, flag", [
    (["squall-bulk", "send", "--connect", "198.18.40.1:5001", "--count", "0"], "--count"),
    (["squall-bulk", "send", "--connect", "198.18.40.1:5001", "--length", "-2096"], "--length"),
    (["squall-bulk", "send", "--connect", "198.18.40.300:5001"], "--connect"),
    (["squall-bulk", "recv", "--listen", "198.18.40.1"], "--listen"),
    (["squall-bulk", "send", "--connect", "198.18.40.1:5001", "--tos", "256"], "--tos"),
    (["squall-bulk", "send", "--connect", "198.18.40.1:5001", "--start-offset", "-5s"], "--start-offset"),
    (["squall-udp", "send", "--connect", "198.18.40.1:6001", "--size", "0", "--rate", "32kbit", "--count", "1"], "--size"),
    (["squall-udp", "send", "--connect", "198.18.40.1:6001", "--size", "132", "--rate", "-32kbit", "--count", "1"], "--rate"),
    (["squall-udp", "send", "--connect", "198.18.40.1:6001", "--size", "132", "--rate", "0pps", "--count", "1"], "--rate"),
    (["squall-udp", "send", "--connect", "198.18.40.1:6001", "--size", "132", "--rate", "32kbit"], "--duration DUR or --count N"),
    (["squall-udp", "recv", "--listen", "[::1:6001"], "--listen"),
    (["squall-udp", "recv", "--listen", "198.18.40.1:6001", "--idle-timeout", "0"], "--idle-timeout"),
    (["squall-http", "--connect", "198.18.40.1:80", "--objects", "6288,0"], "--objects"),
    (["squall-http", "--connect", "198.18.40.1:80", "--objects", "6288", "--http", "2"], "--http"),
    (["squall-http", "--connect", "198.18.40.1:80", "--workload", "s+2s", "--parallel", "0"], "--parallel"),
    (["squall-http", "--connect", "198.18.40.1:80", "--workload", "s+2s", "--http", "1.1", "--persistent", "3"], "--persistent"),
    (["squall-http", "--connect", "198.18.40.1:80", "--workload", "s+2s", "--pipeline"], "--pipeline"),
    (["squall-http", "--connect", "198.18.40.1:80", "--workload", "s+2s", "--timeout", "0"], "--timeout"),
    (["squall-udp", "fly"], "'send' or 'recv'"),
])
def test_bad_arguments_exit_2_naming_the_flag(argv: list[str], flag: str) -> None:
    r = run(*argv)
    assert r.returncode == 2, r
    assert flag in r.stderr


def test_request_size_too_small_is_an_error() -> None:
    r = run("squall-http", "--connect", "198.18.40.1:80", "--objects", "100", "--request-size", "40")
    assert r.returncode == 2
    assert "--request-size: 40 bytes cannot hold the request for /obj/0-100" in r.stderr
