"""Malformed and unauthorised datagrams to a running emulator are dropped and counted.

The datagrams are crafted with scapy (a Packet class for the 24-byte SQWL header of
emulator/PROTOCOL.md) and carry a real ICMP echo request to the mobile host, so that a
forwarded one would show in the capture on the mobile host's TUN.
"""
from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest
from scapy.fields import BitField, ByteEnumField, ByteField, IntField, LongField, ShortField, XIntField
from scapy.layers.inet import ICMP, IP
from scapy.packet import Packet, Raw

from analysis.read.emulog import read_emulator_log
from analysis.read.pcap import read_packets
from conftest import require_programs
from testbed import netns
from testbed.link import wire
from testbed.lanes.capture import Capture
from testbed.link.session import LinkSession
from testbed.link.simple import error_free

pytestmark = pytest.mark.netns
TYPES = {t.value: t.name for t in wire.MsgType}
ROLES = {r.value: r.name.lower() for r in wire.Role}


class SquallWire(Packet):
    name = "SQWL"
    fields_desc = [
        XIntField("magic", wire.MAGIC),
        ByteField("version", wire.VERSION),
        ByteEnumField("type", wire.MsgType.DATA, TYPES),
        ByteEnumField("role", wire.Role.MOBILE, ROLES),
        ByteField("flags", 0),
        LongField("token", 0),
        IntField("seq", 1),
        ShortField("length", None),
        BitField("reserved", 0, 16),
    ]

    def post_build(self, pkt: bytes, pay: bytes) -> bytes:
        if self.length is None:
            pkt = pkt[:20] + len(pay).to_bytes(2, "big") + pkt[22:]
        return pkt + pay


def test_bad_datagrams_are_counted_never_forwarded_and_the_run_goes_on(lane, tmp_path: Path) -> None:
    require_programs("squall-emulator", "squall-npa")
    echo = bytes(IP(src=lane.fixed_host, dst=lane.mobile_host, id=4242) / ICMP(id=7, seq=1) / (b"x" * 56))
    pcap = tmp_path / "mobile.pcap"
    with LinkSession(lane, error_free(1_000_000, 10_000, 1500), tmp_path / "link") as session:
        token = int(session.token, 16)
        good = SquallWire(token=token)
        # Each datagram with one thing wrong, and the reason the emulator must count it under.
        crafted = [
            ("truncated", bytes(good / Raw(echo))[:10]),
            ("truncated", bytes(SquallWire(token=token, length=200) / Raw(echo[:50]))),
            ("bad_length", bytes(SquallWire(token=token, length=10) / Raw(echo))),
            ("bad_magic", bytes(SquallWire(token=token, magic=0x48545450) / Raw(echo))),
            ("bad_version", bytes(SquallWire(token=token, version=2) / Raw(echo))),
            ("bad_token", bytes(SquallWire(token=token ^ 1) / Raw(echo))),
            # The largest datagram UDP over IPv4 can carry (24 + 65535 bytes cannot be sent):
            # its length field promises more than it holds.
            ("truncated", bytes(SquallWire(token=token, length=65535) / Raw(b"\0" * (65507 - 24)))),
            # DATA before HELLO, from a socket that never registered.
            ("unknown_source", bytes(good / Raw(echo))),
            # Router DATA from an address that is not the registered router NPA.
            ("unknown_source", bytes(SquallWire(token=token, role=wire.Role.ROUTER) / Raw(echo))),
            ("unknown_source", bytes(SquallWire(token=token, type=wire.MsgType.KEEPALIVE))),
            # A HELLO with a wrong token must not take over the mobile role (the ping below
            # would then fail).
            ("bad_token", bytes(SquallWire(token=token ^ 1, type=wire.MsgType.HELLO))),
            ("bad_type", bytes(SquallWire(token=token, type=99))),
            ("bad_role", bytes(SquallWire(token=token, role=9) / Raw(echo))),
            ("unexpected_type", bytes(SquallWire(token=token, type=wire.MsgType.WELCOME, role=wire.Role.ROUTER))),
            ("unexpected_role", bytes(SquallWire(token=token, type=wire.MsgType.START, role=wire.Role.MOBILE))),
            ("bad_payload", bytes(SquallWire(token=token, type=wire.MsgType.KEEPALIVE) / Raw(b"\0" * 8))),
            # With the right token: START and STOP are the control socket's, and the mobile
            # role is held by the live mobile NPA.
            ("udp_control", bytes(SquallWire(token=token, type=wire.MsgType.START, role=wire.Role.CONTROL))),
            ("udp_control", bytes(SquallWire(token=token, type=wire.MsgType.STOP, role=wire.Role.CONTROL))),
            ("udp_control", bytes(SquallWire(token=token, type=wire.MsgType.STOP, role=wire.Role.CONTROL)
                                  / Raw(b"\0" * 8))),
            ("role_taken", bytes(SquallWire(token=token, type=wire.MsgType.HELLO))),
        ]
        with Capture(lane.ns.mobile, lane.mobile_wireless.dev, pcap):
            # The emulator listens on the carrier address only: the emu namespace reaches it there.
            for ns in (lane.ns.emu, lane.ns.mobile):
                with netns.socket_in(ns, socket.AF_INET, socket.SOCK_DGRAM) as sock:
                    for _, datagram in crafted:
                        sock.sendto(datagram, (lane.emu_carrier.address, lane.emulator_port))
            time.sleep(0.5)
        assert read_packets(pcap) == [], "a rejected datagram reached the mobile host's TUN"
        netns.run_in(lane.ns.fixed, ["ping", "-n", "-c", "2", "-i", "0.3", "-W", "2", lane.mobile_host])
        assert session.programs.exit_codes()["emulator"] is None, "the emulator ended on bad input"
    log = read_emulator_log(session.result.log_path)
    assert not log.cut_short and session.result.exit_codes["emulator"] == 0
    rejected = log.counts("rejected")
    for reason in {r for r, _ in crafted}:
        expected = 2 * sum(1 for r, _ in crafted if r == reason)   # sent from two namespaces
        assert rejected.get(reason) == expected, f"rejected {reason}: {rejected.get(reason)}; expected {expected}"
    assert sum(rejected.values()) == 2 * len(crafted), f"other rejections counted: {rejected}"
