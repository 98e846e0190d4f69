"""Names and addresses of a lane (one independent testbed of three namespaces).

Lane N (0-127) uses only 198.18.0.0/15, the benchmarking range:
  fixed LAN        198.18.N.0/24        fixed eth0 .1  <->  emu eth-fixed .2
  tunnel carrier   198.19.(128+N).0/24  emu eth-mobile .1  <->  mobile eth0 .2
  wireless link    198.19.N.0/24        emu wl0 .1  <->  mobile wl0 .2 (TUNs of the NPAs)
The carrier carries the NPA <-> emulator UDP, like the LAN between Seawind's machines.
A browser flow's replayed origins take further addresses of the fixed host's /24, from
198.18.N.10 on (origin_addresses), one per host name, added and removed by the replay itself.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

MAX_LANE = 127
EMULATOR_PORT = 5300
WIRELESS_DEV = "wl0"
ORIGIN_FIRST_HOST, ORIGIN_LAST_HOST = 10, 254    # a replay's origins in the fixed host's /24
# sqN-mobileK: host K >= 2 of a wireless cell (testbed/cell_addresses.py)
NAMESPACE_PATTERN = re.compile(r"^sq(\d+)-(fixed|emu|mobile(?:[2-9]|1[0-6])?)$")


@dataclass(frozen=True)
class Namespaces:
    fixed: str
    emu: str
    mobile: str

    def all(self) -> tuple[str, str, str]:
        return (self.fixed, self.emu, self.mobile)


@dataclass(frozen=True)
class Interface:
    """One end of a link: device name and address inside a namespace."""
    ns: str
    dev: str
    address: str
    prefix_len: int

    @property
    def cidr(self) -> str:
        return f"{self.address}/{self.prefix_len}"


@dataclass(frozen=True)
class LaneAddresses:
    lane: int
    ns: Namespaces
    fixed_eth: Interface          # fixed host's LAN side (the servers, senders)
    emu_fixed: Interface          # emulation host, towards the fixed host
    emu_carrier: Interface        # emulation host, the NPA tunnel carrier
    mobile_carrier: Interface     # mobile host, the NPA tunnel carrier
    emu_wireless: Interface       # router-side TUN (made by the router NPA)
    mobile_wireless: Interface    # mobile-side TUN (made by the mobile NPA)
    fixed_net: str                # 198.18.N.0/24
    wireless_net: str             # 198.19.N.0/24
    emulator_port: int = EMULATOR_PORT

    @property
    def fixed_host(self) -> str:
        return self.fixed_eth.address

    @property
    def mobile_host(self) -> str:
        return self.mobile_wireless.address

    @property
    def emulator_for_router(self) -> str:
        """Where the router NPA (in the emu namespace) reaches the emulator: the carrier
        address, local to the emulation host, the only address the emulator listens on."""
        return f"{self.emu_carrier.address}:{self.emulator_port}"

    @property
    def private_prefix(self) -> str:
        """The name prefix of a link session's private directory (token file, control socket)
        in the temporary directory; a lane's teardown removes what a crashed run left."""
        return f"squall-{self.ns.emu}-"

    @property
    def emulator_for_mobile(self) -> str:
        """Where the mobile NPA reaches the emulator, over the carrier."""
        return f"{self.emu_carrier.address}:{self.emulator_port}"


def origin_addresses(fixed_host: str, count: int) -> list[str]:
    """The addresses of a replay's `count` host names: ORIGIN_FIRST_HOST on in the fixed host's /24."""
    net = fixed_host.rpartition(".")[0]
    if not 0 <= count <= ORIGIN_LAST_HOST - ORIGIN_FIRST_HOST + 1:
        raise ValueError(f"{count} host names: a replay has addresses for at most "
                         f"{ORIGIN_LAST_HOST - ORIGIN_FIRST_HOST + 1}")
    return [f"{net}.{ORIGIN_FIRST_HOST + i}" for i in range(count)]


def namespaces(lane: int) -> Namespaces:
    check_lane(lane)
    return Namespaces(f"sq{lane}-fixed", f"sq{lane}-emu", f"sq{lane}-mobile")


def check_lane(lane: int) -> None:
    if isinstance(lane, bool) or not isinstance(lane, int) or not 0 <= lane <= MAX_LANE:
        raise ValueError(f"lane {lane!r} is out of range; expected a whole number 0..{MAX_LANE}")


def lane_addresses(lane: int) -> LaneAddresses:
    ns = namespaces(lane)
    fixed_net = f"198.18.{lane}"
    carrier_net = f"198.19.{128 + lane}"
    wireless_net = f"198.19.{lane}"
    return LaneAddresses(
        lane=lane,
        ns=ns,
        fixed_eth=Interface(ns.fixed, "eth0", f"{fixed_net}.1", 24),
        emu_fixed=Interface(ns.emu, "eth-fixed", f"{fixed_net}.2", 24),
        emu_carrier=Interface(ns.emu, "eth-mobile", f"{carrier_net}.1", 24),
        mobile_carrier=Interface(ns.mobile, "eth0", f"{carrier_net}.2", 24),
        emu_wireless=Interface(ns.emu, WIRELESS_DEV, f"{wireless_net}.1", 32),
        mobile_wireless=Interface(ns.mobile, WIRELESS_DEV, f"{wireless_net}.2", 32),
        fixed_net=f"{fixed_net}.0/24",
        wireless_net=f"{wireless_net}.0/24",
    )


def lane_of_namespace(name: str) -> int | None:
    """The lane number of a testbed namespace name, None for any other name."""
    m = NAMESPACE_PATTERN.match(name)
    return int(m.group(1)) if m else None
