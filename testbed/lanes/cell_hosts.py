"""Building a lane's further mobile hosts of a wireless cell (names and addresses:
testbed/cell_addresses.py; docs/testbed.md "A wireless cell of several mobile hosts"). Once a
link session runs with them (LinkSession(cell=...)), each has its own TUN and mobile NPA
(`squall-npa --host K`) registered with the lane's one emulator."""
from __future__ import annotations

from testbed import netns
from testbed.addresses import LaneAddresses
from testbed.cell_addresses import CellHost, cell_hosts
from testbed.lanes.lane import OFFLOADS


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
