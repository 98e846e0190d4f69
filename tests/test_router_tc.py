"""The exact tc batch text rendered for router configurations (no root needed)."""
from __future__ import annotations

import pytest

from testbed.router.tc_apply import parse_class_stats
from testbed.router.parse import parse_router
from testbed.router.tc_render import render_tc_batch

WHERE = "scenarios/x.toml: router"


def test_no_diffserv_pfifo_20():
    config = parse_router({"queue": {"discipline": "pfifo", "limit": 20}}, WHERE, 64_000)
    assert render_tc_batch(config, "wl0") == (
        "qdisc add dev wl0 root handle 1: htb default 10\n"
        "class add dev wl0 parent 1: classid 1:1 htb rate 64000bit ceil 64000bit quantum 1500\n"
        "class add dev wl0 parent 1:1 classid 1:10 htb rate 64000bit ceil 64000bit prio 0 quantum 1500\n"
        "qdisc add dev wl0 parent 1:10 handle 10: pfifo limit 20\n"
    )


def test_diffserv_ef_af_be_with_dscp_filters():
    section = {
        "default": "BE",
        "classes": {
            "EF": {"rate": "32kbit", "priority": 0, "queue": {"discipline": "pfifo", "limit": 10}},
            "AF": {"rate": "16kbit", "priority": 1, "queue": {"discipline": "pfifo", "limit": 20}},
            "BE": {"rate": "16kbit", "priority": 2, "queue": {"discipline": "bfifo", "limit": "9600B"}},
        },
        "filters": [{"class": "EF", "dscp": "EF"}, {"class": "AF", "dscp": "AF11"},
                    {"class": "AF", "dscp": "AF21"}],
    }
    assert render_tc_batch(parse_router(section, WHERE, 64_000), "wl0") == (
        "qdisc add dev wl0 root handle 1: htb default 30\n"
        "class add dev wl0 parent 1: classid 1:1 htb rate 64000bit ceil 64000bit quantum 1500\n"
        "class add dev wl0 parent 1:1 classid 1:10 htb rate 32000bit ceil 64000bit prio 0 quantum 1500\n"
        "qdisc add dev wl0 parent 1:10 handle 10: pfifo limit 10\n"
        "class add dev wl0 parent 1:1 classid 1:20 htb rate 16000bit ceil 64000bit prio 1 quantum 1500\n"
        "qdisc add dev wl0 parent 1:20 handle 20: pfifo limit 20\n"
        "class add dev wl0 parent 1:1 classid 1:30 htb rate 16000bit ceil 64000bit prio 2 quantum 1500\n"
        "qdisc add dev wl0 parent 1:30 handle 30: bfifo limit 9600\n"
        "filter add dev wl0 parent 1: protocol ip prio 1 u32 match ip dsfield 0xb8 0xfc flowid 1:10\n"
        "filter add dev wl0 parent 1: protocol ip prio 2 u32 match ip dsfield 0x28 0xfc flowid 1:20\n"
        "filter add dev wl0 parent 1: protocol ip prio 3 u32 match ip dsfield 0x48 0xfc flowid 1:20\n"
    )


def test_protocol_port_filters():
    # IIP report table 31 with DiffServ: a UDP class and a TCP class, 500 kbit/s each.
    section = {
        "rate": "1Mbit",
        "default": "TCP",
        "classes": {
            "UDP": {"rate": "500kbit", "priority": 0, "queue": {"discipline": "pfifo", "limit": 22}},
            "TCP": {"rate": "500kbit", "priority": 1, "queue": {"discipline": "pfifo", "limit": 22}},
        },
        "filters": [
            {"class": "UDP", "protocol": "udp", "dport": 5004},
            {"class": "TCP", "protocol": "tcp", "sport": 5001, "src": "198.18.1.2", "dst": "198.18.2.0/24"},
        ],
    }
    assert render_tc_batch(parse_router(section, WHERE, 64_000), "wl0") == (
        "qdisc add dev wl0 root handle 1: htb default 20\n"
        "class add dev wl0 parent 1: classid 1:1 htb rate 1000000bit ceil 1000000bit quantum 6250\n"
        "class add dev wl0 parent 1:1 classid 1:10 htb rate 500000bit ceil 1000000bit prio 0 quantum 6250\n"
        "qdisc add dev wl0 parent 1:10 handle 10: pfifo limit 22\n"
        "class add dev wl0 parent 1:1 classid 1:20 htb rate 500000bit ceil 1000000bit prio 1 quantum 6250\n"
        "qdisc add dev wl0 parent 1:20 handle 20: pfifo limit 22\n"
        "filter add dev wl0 parent 1: protocol ip prio 1 u32"
        " match ip protocol 17 0xff match ip dport 5004 0xffff flowid 1:10\n"
        "filter add dev wl0 parent 1: protocol ip prio 2 u32"
        " match ip protocol 6 0xff match ip src 198.18.1.2/32 match ip dst 198.18.2.0/24"
        " match ip sport 5001 0xffff flowid 1:20\n"
    )


def test_red_with_ecn():
    # IIP report section 7.3: limit 11000, min 2000, max 6000, avpkt 500, with ECN; table 1:
    # w_q 0.002, max_p 0.1 (defaults). Burst 41 makes tc set w_q = 2^-9.
    section = {"queue": {"discipline": "red", "limit": "11000B", "min": "2000B", "max": "6000B",
                         "avpkt": "500B", "ecn": True}}
    assert render_tc_batch(parse_router(section, WHERE, 64_000), "wl0") == (
        "qdisc add dev wl0 root handle 1: htb default 10\n"
        "class add dev wl0 parent 1: classid 1:1 htb rate 64000bit ceil 64000bit quantum 1500\n"
        "class add dev wl0 parent 1:1 classid 1:10 htb rate 64000bit ceil 64000bit prio 0 quantum 1500\n"
        "qdisc add dev wl0 parent 1:10 handle 10: red limit 11000 min 2000 max 6000 avpkt 500"
        " burst 41 probability 0.1 bandwidth 64000bit ecn\n"
    )


def test_fq_codel_is_linux_fq_codel_with_its_defaults_spelled_out():
    section = {"queue": {"discipline": "fq_codel"}}
    assert render_tc_batch(parse_router(section, WHERE, 64_000), "wl0").splitlines()[-1] == (
        "qdisc add dev wl0 parent 1:10 handle 10: fq_codel limit 10240 flows 1024 quantum 1514 "
        "target 5000us interval 100000us ecn")


def test_codel_is_linux_codel_with_its_defaults_spelled_out():
    section = {"queue": {"discipline": "codel"}}
    assert render_tc_batch(parse_router(section, WHERE, 64_000), "wl0").splitlines()[-1] == (
        "qdisc add dev wl0 parent 1:10 handle 10: codel limit 1000 target 5000us interval 100000us noecn")
    section = {"queue": {"discipline": "codel", "target": "2ms", "ecn": True, "ce_threshold": "1ms"}}
    assert render_tc_batch(parse_router(section, WHERE, 64_000), "wl0").splitlines()[-1].endswith(
        "codel limit 1000 target 2000us interval 100000us ecn ce_threshold 1000us")


def test_head_drop_is_linux_pfifo_head_drop():
    section = {"queue": {"discipline": "head_drop", "limit": 20}}
    assert render_tc_batch(parse_router(section, WHERE, 64_000), "wl0").splitlines()[-1] == (
        "qdisc add dev wl0 parent 1:10 handle 10: pfifo_head_drop limit 20")


def test_pie_renders_tcs_units():
    """tc takes alpha and beta in sixteenths (2 and 20 are RFC 8033's 0.125 and 1.25)."""
    config = parse_router({"queue": {"discipline": "pie"}}, WHERE, 64_000)
    assert render_tc_batch(config, "wl0").endswith(
        "qdisc add dev wl0 parent 1:10 handle 10: pie limit 1000 target 15000us tupdate 15000us"
        " alpha 2 beta 20 noecn nobytemode\n")
    section = {"queue": {"discipline": "pie", "limit": 50, "target": "5ms", "tupdate": "30ms", "alpha": 0.0625,
                         "beta": 2, "ecn": True, "bytemode": True}}
    assert render_tc_batch(parse_router(section, WHERE, 64_000), "wl0").endswith(
        "pie limit 50 target 5000us tupdate 30000us alpha 1 beta 32 ecn bytemode\n")


def test_dualpi2_renders_tcs_keywords():
    config = parse_router({"queue": {"discipline": "dualpi2"}}, WHERE, 64_000)
    assert render_tc_batch(config, "wl0").endswith(
        "qdisc add dev wl0 parent 1:10 handle 10: dualpi2 limit 10000 target 15000us tupdate 16000us"
        " alpha 0.16015625 beta 3.19921875 coupling_factor 2 step_thresh 1000us classic_protection 10"
        " drop_on_overload drop_dequeue l4s_ect\n")
    section = {"queue": {"discipline": "dualpi2", "c_protection": 0, "drop_on_overload": False}}
    assert render_tc_batch(parse_router(section, WHERE, 64_000), "wl0").endswith(
        " classic_protection 0 overflow drop_dequeue l4s_ect\n")


def test_the_emulator_engine_is_not_rendered_for_tc():
    config = parse_router({"engine": "emulator", "queue": {"discipline": "pfifo", "limit": 20}}, WHERE, 64_000)
    with pytest.raises(ValueError, match="engine is 'emulator'"):
        render_tc_batch(config, "wl0")


def test_class_statistics_text_is_parsed():
    text = (
        "class htb 1:1 root rate 64Kbit ceil 64Kbit burst 1600b cburst 1600b \n"
        " Sent 1520 bytes 12 pkt (dropped 0, overlimits 3 requeues 0) \n"
        " backlog 0b 0p requeues 0\n"
        " lended: 2 borrowed: 0 giants: 0\n"
        " tokens: 3125000 ctokens: 3125000\n\n"
        "class htb 1:10 parent 1:1 leaf 10: prio 0 rate 64Kbit ceil 64Kbit burst 1600b cburst 1600b \n"
        " Sent 1520 bytes 12 pkt (dropped 5, overlimits 7 requeues 1) \n"
        " backlog 2640b 20p requeues 1\n"
        " lended: 10 borrowed: 2 giants: 0\n"
    )
    assert parse_class_stats(text) == [
        {"class": "htb", "handle": "1:1", "parent": None, "bytes": 1520, "packets": 12, "drops": 0,
         "overlimits": 3, "requeues": 0, "backlog": 0, "qlen": 0, "lended": 2, "borrowed": 0, "giants": 0},
        {"class": "htb", "handle": "1:10", "parent": "1:1", "bytes": 1520, "packets": 12, "drops": 5,
         "overlimits": 7, "requeues": 1, "backlog": 2640, "qlen": 20, "lended": 10, "borrowed": 2, "giants": 0},
    ]


def test_a_batch_failure_message_names_the_line():
    from testbed.router.tc_apply import _batch_failure_message

    batch = "qdisc add dev wl0 root handle 1: htb default 10\nqdisc add dev wl0 parent 1:10 handle 10: red limit 1\n"
    message = _batch_failure_message("namespace sq3-emu", "wl0", batch, "Error: Specified qdisc kind is unknown.\n"
                                                                "Command failed -:2\n")
    assert message == ("applying the router on wl0 in namespace sq3-emu failed at tc batch line 2 "
                       "`qdisc add dev wl0 parent 1:10 handle 10: red limit 1`: "
                       "Error: Specified qdisc kind is unknown. Command failed -:2")
