"""A two-namespace test network for the workloads: sq<lane>-fixed ⇄ sq<lane>-mobile over
one veth pair, optionally shaped with TBF so TCP flights are observable.

One job: build it, hand out addresses, and remove everything again on every path.
(The emulated link is built by testbed.lanes.lane; this is the plain wire the generators and
TCP profiles are tested on.)
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from testbed import netns
from testbed.lanes.capture import Capture


@dataclass(frozen=True)
class VethNet:
    lane: int
    fixed_ns: str
    mobile_ns: str
    fixed_if: str
    mobile_if: str
    fixed_addr: str
    mobile_addr: str


def addresses(lane: int) -> VethNet:
    if not 0 <= lane <= 255:
        raise ValueError(f"lane {lane} must be 0..255 (it is the third octet of 198.18.<lane>.0/24)")
    return VethNet(lane, f"sq{lane}-fixed", f"sq{lane}-mobile", "eth0", "eth0",
                   f"198.18.{lane}.1", f"198.18.{lane}.2")


def _offloads_off(ns: str, dev: str) -> None:
    # Without this a capture shows 64 KB super-packets instead of wire segments.
    netns.run_in(ns, ["ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off"], check=False)


def shape(ns: str, dev: str, rate: str, burst: str = "1600", limit: str = "200000") -> None:
    """TBF on dev's egress: rate e.g. "1mbit"; a burst of one packet keeps flights spread out."""
    netns.run_in(ns, ["tc", "qdisc", "replace", "dev", dev, "root", "tbf", "rate", rate,
                      "burst", burst, "limit", limit])


def delete(net: VethNet) -> None:
    for ns in (net.fixed_ns, net.mobile_ns):
        netns.delete(ns)


@contextmanager
def veth_net(lane: int, rate: str | None = None, limit: str = "200000") -> Iterator[VethNet]:
    """Both namespaces with 198.18.<lane>.1/24 (fixed) and .2 (mobile); rate shapes both
    directions with TBF (queue of `limit` bytes). Leftovers of an earlier crashed run on this
    lane are removed first."""
    net = addresses(lane)
    delete(net)
    try:
        netns.create(net.fixed_ns)
        netns.create(net.mobile_ns)
        netns.run(["ip", "link", "add", f"sq{lane}f", "netns", net.fixed_ns, "type", "veth",
                   "peer", "name", f"sq{lane}m", "netns", net.mobile_ns])
        for ns, old, addr in ((net.fixed_ns, f"sq{lane}f", net.fixed_addr),
                              (net.mobile_ns, f"sq{lane}m", net.mobile_addr)):
            netns.run_in(ns, ["ip", "link", "set", old, "name", "eth0"])
            netns.run_in(ns, ["ip", "addr", "add", f"{addr}/24", "dev", "eth0"])
            netns.run_in(ns, ["ip", "link", "set", "eth0", "up"])
            _offloads_off(ns, "eth0")
            if rate:
                shape(ns, "eth0", rate, limit=limit)
        yield net
    finally:
        delete(net)


def payload_capture(ns: str, dev: str, path: Path, bpf_filter: str = "") -> Capture:
    """A tcpdump capture that keeps whole packets (the testbed's captures keep headers only),
    for tests that check payload sizes and contents."""
    cap = Capture(ns, dev, path, bpf_filter)
    cap.argv[cap.argv.index("-s") + 1] = "0"
    cap.argv[1:1] = ["-B", "16384"]    # KiB: whole packets of a flood fill the default 2 MiB ring
    return cap
