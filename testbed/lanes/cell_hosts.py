"""A lane's further mobile hosts for a cell (docs/cell.md, docs/testbed.md "A cell of several
mobile hosts"): host 1 is the lane's own mobile host; host K >= 2 gets a namespace of its own,
a carrier to the emulation host and, once a link session runs, its own TUN and mobile NPA
(`squall-npa --host K`) registered with the lane's one emulator.

Lane N, host K >= 2:
  namespace        sqN-mobileK
  tunnel carrier   mobile eth0 198.19.(128+N).(K+1)/24  <->  emu eth-mobileK (no address; a /32
                   route to the host: the emulator's carrier address 198.19.(128+N).1 answers)
  wireless link    mobile wl0 198.19.N.(K+1), peer 198.19.N.1 (the router NPA's TUN, which
                   routes 198.19.N.(K+1)/32 to itself)
"""
from __future__ import annotations

from dataclasses import dataclass

from testbed import netns
from testbed.addresses import WIRELESS_DEV, Interface, LaneAddresses

MAX_HOSTS = 16   # the emulator's cell (emulator/CONFIG.md `[cell] hosts`)
OFFLOADS = ("tso", "gso", "gro")


@dataclass(frozen=True)
class CellHost:
    """Mobile host K of a lane's cell (K >= 2; host 1 is the lane's own mobile host)."""
    index: int
    ns: str
    carrier: Interface        # the host's end of its carrier veth
    emu_carrier_dev: str      # the emulation host's end (no address of its own)
    wireless: Interface       # its TUN, made by its mobile NPA

    @property
    def address(self) -> str:
        return self.wireless.address


def cell_host(addr: LaneAddresses, index: int) -> CellHost:
    """The names and addresses of host `index` (2 .. MAX_HOSTS) of lane `addr`."""
    if not 2 <= index <= MAX_HOSTS:
        raise ValueError(f"cell host {index!r}: expected 2..{MAX_HOSTS} (host 1 is the lane's mobile host)")
    ns = f"{addr.ns.mobile}{index}"
    carrier_net = addr.mobile_carrier.address.rsplit(".", 1)[0]
    wireless_net = addr.mobile_wireless.address.rsplit(".", 1)[0]
    return CellHost(index=index, ns=ns,
                    carrier=Interface(ns, "eth0", f"{carrier_net}.{index + 1}", 24),
                    emu_carrier_dev=f"eth-mobile{index}",
                    wireless=Interface(ns, WIRELESS_DEV, f"{wireless_net}.{index + 1}", 32))


def cell_hosts(addr: LaneAddresses, hosts: int) -> list[CellHost]:
    """Hosts 2 .. `hosts` of the lane's cell (empty for one host)."""
    return [cell_host(addr, k) for k in range(2, hosts + 1)]


def add(addr: LaneAddresses, hosts: int) -> list[CellHost]:
    """Builds hosts 2 .. `hosts` in lane `addr` (made by testbed.lanes.lane.create); the lane's
    teardown removes them with it."""
    made = cell_hosts(addr, hosts)
    for host in made:
        netns.create(host.ns)
        netns.run_in(addr.ns.emu, ["ip", "link", "add", host.emu_carrier_dev, "type", "veth", "peer", "name",
                                   host.carrier.dev, "netns", host.ns])
        netns.run_in(host.ns, ["ip", "address", "add", host.carrier.cidr, "dev", host.carrier.dev])
        for ns, dev in ((addr.ns.emu, host.emu_carrier_dev), (host.ns, host.carrier.dev)):
            # Offloads off, as on the lane's own veths (lane.py): captures show what crossed.
            netns.run_in(ns, ["ethtool", "-K", dev, *[w for o in OFFLOADS for w in (o, "off")]])
            netns.run_in(ns, ["ip", "link", "set", dev, "up"])
        netns.run_in(addr.ns.emu, ["ip", "route", "add", f"{host.carrier.address}/32", "dev",
                                   host.emu_carrier_dev, "src", addr.emu_carrier.address])
    return made
