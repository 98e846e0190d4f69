"""Names and addresses of a lane's further mobile hosts of a wireless cell (docs/cell.md,
docs/testbed.md "A wireless cell of several mobile hosts"): host 1 is the lane's own mobile
host; host K >= 2 of lane N:

  namespace        sqN-mobileK
  tunnel carrier   mobile eth0 198.19.(128+N).(K+1)/24  <->  emu eth-mobileK (no address; a /32
                   route to the host: the emulator's carrier address 198.19.(128+N).1 answers)
  wireless link    mobile wl0 198.19.N.(K+1), peer 198.19.N.1 (the router NPA's TUN, which
                   routes 198.19.N.(K+1)/32 to itself)

testbed/lanes/cell_hosts.py builds them.
"""
from __future__ import annotations

from dataclasses import dataclass

from testbed.addresses import WIRELESS_DEV, Interface, LaneAddresses

MAX_HOSTS = 16   # the emulator's cell (emulator/CONFIG.md `[cell] hosts`)


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
