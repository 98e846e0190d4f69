"""The lane itself: addresses, reachability, offloads, idempotent creation, cleanup."""
from __future__ import annotations

import subprocess

import pytest

from conftest import lane_base, leftovers, namespace_inodes
from testbed.lanes import lane as lanes
from testbed import netns
from testbed.addresses import lane_addresses, lane_of_namespace


def test_addresses_follow_the_layout() -> None:
    a = lane_addresses(7)
    assert a.ns.all() == ("sq7-fixed", "sq7-emu", "sq7-mobile")
    assert (a.fixed_eth.cidr, a.emu_fixed.cidr) == ("198.18.7.1/24", "198.18.7.2/24")
    assert (a.emu_carrier.cidr, a.mobile_carrier.cidr) == ("198.19.135.1/24", "198.19.135.2/24")
    assert (a.emu_wireless.address, a.mobile_wireless.address) == ("198.19.7.1", "198.19.7.2")
    assert a.emulator_for_router == "198.19.135.1:5300"
    assert a.emulator_for_mobile == "198.19.135.1:5300"
    assert a.private_prefix == "squall-sq7-emu-"      # not a prefix of lane 70's
    assert (a.fixed_net, a.wireless_net) == ("198.18.7.0/24", "198.19.7.0/24")


@pytest.mark.parametrize("bad", [-1, 128, True, "3"])
def test_lane_numbers_outside_0_to_127_are_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="out of range"):
        lane_addresses(bad)  # type: ignore[arg-type]


def test_lane_of_namespace_recognises_only_testbed_names() -> None:
    assert lane_of_namespace("sq12-emu") == 12
    assert lane_of_namespace("sq12-router") is None
    assert lane_of_namespace("squall") is None


@pytest.mark.netns
def test_hosts_reach_the_emulation_host_and_offloads_are_off(lane) -> None:
    netns.run_in(lane.ns.fixed, ["ping", "-c", "1", "-W", "2", lane.emu_fixed.address])
    netns.run_in(lane.ns.mobile, ["ping", "-c", "1", "-W", "2", lane.emu_carrier.address])
    for end in (lane.fixed_eth, lane.emu_fixed, lane.emu_carrier, lane.mobile_carrier):
        features = netns.run_in(end.ns, ["ethtool", "-k", end.dev]).stdout
        for feature in ("tcp-segmentation-offload", "generic-segmentation-offload", "generic-receive-offload"):
            assert f"{feature}: off" in features, f"{feature} is on for {end.ns}/{end.dev}"
    assert netns.run_in(lane.ns.emu, ["sysctl", "-n", "net.ipv4.ip_forward"]).stdout.strip() == "1"
    routes = netns.run_in(lane.ns.fixed, ["ip", "route", "show", lane.wireless_net]).stdout
    assert f"via {lane.emu_fixed.address}" in routes
    # Without the wireless link the mobile host is unreachable: nothing bypasses the emulator.
    ping = netns.run_in(lane.ns.fixed, ["ping", "-c", "1", "-W", "1", lane.mobile_host], check=False)
    assert ping.returncode != 0


@pytest.mark.netns
def test_creating_a_lane_again_replaces_the_leftover_of_a_crashed_run() -> None:
    number = lane_base() + 1
    addr = lanes.create(number)
    sleeper = netns.popen_in(addr.ns.mobile, ["sleep", "600"])
    inodes = namespace_inodes(addr)
    try:
        again = lanes.create(number)
        assert sleeper.wait(5) is not None, "the old lane's process survived the re-creation"
        netns.run_in(again.ns.fixed, ["ping", "-c", "1", "-W", "2", again.emu_fixed.address])
    finally:
        lanes.teardown(number)
        sleeper.kill()
        sleeper.wait()
    assert not leftovers(number, inodes)


@pytest.mark.netns
def test_cleanup_leftovers_removes_lanes_of_dead_runs_only() -> None:
    dead, alive = lane_base() + 2, lane_base() + 3
    try:
        lanes.create(dead)
        lanes.create(alive)
        # Make `dead` look like the lane of a process that has exited.
        finished = subprocess.Popen(["true"])
        finished.wait()
        lanes._owner_path(dead).write_text(f'{{"pid": {finished.pid}, "start_ticks": 1}}\n')
        removed = lanes.cleanup_leftovers()
        assert dead in removed and alive not in removed
        assert not any(netns.exists(ns) for ns in lane_addresses(dead).ns.all())
        assert all(netns.exists(ns) for ns in lane_addresses(alive).ns.all())
    finally:
        lanes.teardown(dead)
        lanes.teardown(alive)


@pytest.mark.netns
def test_a_lane_of_a_live_process_is_not_taken_over() -> None:
    number = lane_base() + 1
    try:
        lanes.create(number)
        other = subprocess.Popen(["sleep", "30"])
        try:
            ticks = lanes.process_start_ticks(other.pid)
            lanes._owner_path(number).write_text(f'{{"pid": {other.pid}, "start_ticks": {ticks}}}\n')
            with pytest.raises(lanes.LaneBusy, match=f"lane {number} .* in use by process {other.pid}"):
                lanes.create(number)
            assert number not in lanes.cleanup_leftovers()
            assert all(netns.exists(ns) for ns in lane_addresses(number).ns.all())
        finally:
            other.kill()
            other.wait()
    finally:
        lanes.teardown(number)


@pytest.mark.netns
def test_namespaces_without_an_owner_record_are_refused_by_name_never_torn_down() -> None:
    """cleanup_leftovers()'s rule holds for create() too: what squall did not make, it leaves alone."""
    number = lane_base() + 4
    lanes.teardown(number)
    foreign = lane_addresses(number).ns.fixed
    subprocess.run(["ip", "netns", "add", foreign], check=True)
    sleeper = netns.popen_in(foreign, ["sleep", "600"])
    try:
        with pytest.raises(lanes.LaneBusy, match=f"lane {number}: namespaces {foreign} exist without squall's "
                                                 "owner record"):
            lanes.create(number)
        assert sleeper.poll() is None and netns.exists(foreign)
        assert not any(netns.exists(ns) for ns in lane_addresses(number).ns.all() if ns != foreign)
        assert number not in lanes.cleanup_leftovers() and netns.exists(foreign)
    finally:
        sleeper.kill()
        sleeper.wait()
        subprocess.run(["ip", "netns", "delete", foreign], check=False)
