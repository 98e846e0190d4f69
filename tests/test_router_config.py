"""parse_router: the [router] section of a scenario, good and bad."""
from __future__ import annotations

import copy

import pytest

from testbed.errors import ConfigError
from testbed.router.disciplines.bfifo import BfifoQueue
from testbed.router.disciplines.codel import CodelQueue
from testbed.router.disciplines.dualpi2 import DualPi2Queue
from testbed.router.disciplines.fq_codel import FqCodelQueue
from testbed.router.disciplines.head_drop import HeadDropQueue
from testbed.router.disciplines.pie import PieQueue
from testbed.router.disciplines.pfifo import PfifoQueue
from testbed.router.disciplines.red import RedQueue, burst_for_wlog, red_wlog
from testbed.router.parse import parse_router
from testbed.router.plan import RouterClass, RouterFilter

WHERE = "scenarios/x.toml: router"
LINK = 64_000


def diffserv() -> dict:
    return {
        "engine": "tc",
        "default": "BE",
        "classes": {
            "EF": {"rate": "32kbit", "priority": 0, "queue": {"discipline": "pfifo", "limit": 10}},
            "AF": {"rate": "16kbit", "ceil": "48kbit", "priority": 1,
                   "queue": {"discipline": "bfifo", "limit": "6000B"}},
            "BE": {"rate": "16kbit", "priority": 2, "quantum": "3000B",
                   "queue": {"discipline": "red", "limit": "11000B", "min": "2000B", "max": "6000B",
                             "avpkt": "500B", "ecn": True}},
        },
        "filters": [
            {"class": "EF", "dscp": "EF"},
            {"class": "AF", "protocol": "tcp", "sport": 80},
            {"class": "EF", "protocol": "udp", "dport": 5004, "dst": "198.18.2.0/24"},
        ],
    }


def test_single_class_takes_the_whole_link_rate():
    config = parse_router({"queue": {"discipline": "pfifo", "limit": 20}}, WHERE, LINK)
    assert config.engine == "tc"
    assert not config.diffserv
    assert config.rate_bps == 64_000
    assert config.classes == (RouterClass("all", 64_000, 64_000, 0, 1500, PfifoQueue(20)),)
    assert config.default_class == "all"
    assert config.filters == ()


def test_router_rate_may_differ_from_the_link_rate():
    # IIP report table 31: one 1 Mbit/s HTB class in front of a 64 kbit/s link.
    config = parse_router({"rate": "1Mbit", "queue": {"discipline": "pfifo", "limit": 22}}, WHERE, LINK)
    assert config.rate_bps == 1_000_000
    assert config.classes[0].rate_bps == 1_000_000
    assert config.classes[0].quantum_bytes == 12_500  # rate / 8 / r2q


def test_diffserv_classes_queues_and_filters():
    config = parse_router(diffserv(), WHERE, LINK)
    assert config.diffserv
    assert [c.name for c in config.classes] == ["EF", "AF", "BE"]
    ef, af, be = config.classes
    assert ef == RouterClass("EF", 32_000, 64_000, 0, 1500, PfifoQueue(10))
    assert af == RouterClass("AF", 16_000, 48_000, 1, 1500, BfifoQueue(6000))
    assert be == RouterClass(
        "BE", 16_000, 64_000, 2, 3000, RedQueue(11000, 2000, 6000, 500, 41, 9, 0.1, 64_000, True))
    assert config.default_class == "BE"
    assert config.filters == (
        RouterFilter("EF", dscp=46),
        RouterFilter("AF", protocol=6, sport=80),
        RouterFilter("EF", protocol=17, dport=5004, dst="198.18.2.0/24"),
    )
    assert config.disciplines() == ("pfifo", "bfifo", "red")


def test_codel_without_parameters_has_linux_sch_codels_defaults():
    config = parse_router({"queue": {"discipline": "codel"}}, WHERE, LINK)
    assert config.classes[0].queue == CodelQueue(limit=1000, target_us=5_000, interval_us=100_000, ecn=False)
    assert config.disciplines() == ("codel",)
    assert config.classes[0].queue.describe() == "CoDel limit 1000 packets, target 5 ms, interval 100 ms"


def test_codel_takes_its_keys_as_tc_names_them():
    queue = parse_router({"queue": {"discipline": "codel", "limit": 200, "target": "2ms", "interval": "40ms",
                                    "ecn": True, "ce_threshold": "1ms"}}, WHERE, LINK).classes[0].queue
    assert queue == CodelQueue(200, 2_000, 40_000, True, 1_000)
    assert queue.describe().endswith(", ECN marking, CE above 1 ms")


@pytest.mark.parametrize("key, value, message", [
    ("limit", 0, "limit: 0 is not a positive whole number of packets"),
    ("limit", "1000B", "limit: '1000B' is not a positive whole number of packets"),
    ("target", "0ms", "target: must be greater than zero"),
    ("target", 5, "target: 5 is not a time with a unit"),
    ("interval", "100", "interval: \"100\" is not a time"),
    ("target", "100ms", "target: 100 ms is not below interval 100 ms"),
    ("ecn", "yes", "ecn: 'yes' is not true or false"),
    ("ce_threshold", "0ms", "ce_threshold: must be greater than zero"),
    ("quantum", 1514, "quantum: unknown key; expected one of ce_threshold, discipline, ecn, interval, limit, target"),
])
def test_codel_refuses_bad_values_naming_the_key(key, value, message):
    with pytest.raises(ConfigError) as info:
        parse_router({"queue": {"discipline": "codel", key: value}}, WHERE, LINK)
    assert str(info.value).startswith(f"{WHERE}.queue.{message}")


def test_fq_codel_without_parameters_has_linux_sch_fq_codels_defaults():
    config = parse_router({"queue": {"discipline": "fq_codel"}}, WHERE, LINK)
    assert config.classes[0].queue == FqCodelQueue(limit=10240, flows=1024, quantum=1514, target_us=5_000,
                                                   interval_us=100_000, ecn=True)
    queue = parse_router({"queue": {"discipline": "fq_codel", "limit": 100, "flows": 8, "quantum": 300,
                                    "target": "2ms", "interval": "30ms", "ecn": False}}, WHERE, LINK).classes[0].queue
    assert queue == FqCodelQueue(100, 8, 300, 2_000, 30_000, False)


@pytest.mark.parametrize("key, value, message", [
    ("flows", 0, "flows: 0 is not a number of flows; expected a whole number 1-65536"),
    ("quantum", 100, "quantum: 100 is not a quantum in bytes; expected a whole number 256-1048576"),
    ("target", "100ms", "target: 100 ms is not below interval 100 ms"),
    ("ecn", "yes", "ecn: 'yes' is not true or false"),
    ("ce_threshold", "1ms", "ce_threshold: unknown key"),
])
def test_fq_codel_refuses_bad_values_naming_the_key(key, value, message):
    with pytest.raises(ConfigError) as info:
        parse_router({"queue": {"discipline": "fq_codel", key: value}}, WHERE, LINK)
    assert str(info.value).startswith(f"{WHERE}.queue.{message}")


def test_head_drop_takes_a_limit_in_packets():
    config = parse_router({"queue": {"discipline": "head_drop", "limit": 20}}, WHERE, LINK)
    assert config.classes[0].queue == HeadDropQueue(20)
    assert config.disciplines() == ("head_drop",)
    assert HeadDropQueue(20).describe() == "head drop (head_drop) at 20 packets"
    with pytest.raises(ConfigError, match=r"router.queue.limit: '6000B' is not a positive whole number of packets"):
        parse_router({"queue": {"discipline": "head_drop", "limit": "6000B"}}, WHERE, LINK)


def test_pie_without_parameters_has_rfc_8033_and_linux_defaults():
    config = parse_router({"queue": {"discipline": "pie"}}, WHERE, LINK)
    pie = config.classes[0].queue
    assert pie == PieQueue(limit=1000, target_us=15_000, tupdate_us=15_000, alpha=0.125, beta=1.25,
                           ecn=False, bytemode=False)
    assert pie.describe() == "PIE limit 1000 packets, target 15 ms, tupdate 15 ms, alpha 0.125, beta 1.25"
    assert pie.most_bytes(1500) == 1_500_000
    section = {"queue": {"discipline": "pie", "limit": 100, "target": "20ms", "tupdate": "32ms", "alpha": 0.25,
                         "beta": 2, "ecn": True, "bytemode": True}}
    assert parse_router(section, WHERE, LINK).classes[0].queue == PieQueue(100, 20_000, 32_000, 0.25, 2.0, True, True)


@pytest.mark.parametrize("key,value,message", [
    ("limit", 0, "limit: 0 is not a positive whole number of packets"),
    ("limit", "6000B", "limit: '6000B' is not a positive whole number of packets"),
    ("target", 15, "target: 15 is not a time with a unit"),
    ("target", "0ms", "target: must be greater than zero"),
    ("tupdate", "11s", "tupdate: \"11s\" is above 10 s"),
    ("alpha", 0.1, "alpha: 0.1 is not a multiple of 1/16 in [0, 2]"),
    ("beta", 2.0625, "beta: 2.0625 is not a multiple of 1/16 in [0, 2]"),
    ("beta", "1.25", "beta: '1.25' is not a number"),
    ("ecn", 1, "ecn: 1 is not true or false"),
    ("bytemode", "no", "bytemode: 'no' is not true or false"),
    ("interval", "100ms", "interval: unknown key"),
])
def test_bad_pie_values_name_the_key(key, value, message):
    with pytest.raises(ConfigError) as info:
        parse_router({"queue": {"discipline": "pie", key: value}}, WHERE, LINK)
    assert str(info.value).startswith(f"scenarios/x.toml: router.queue.{message}"), str(info.value)


def test_dualpi2_without_parameters_has_linuxs_defaults():
    queue = parse_router({"queue": {"discipline": "dualpi2"}}, WHERE, LINK).classes[0].queue
    assert queue == DualPi2Queue(limit=10_000, target_us=15_000, tupdate_us=16_000, alpha=41 / 256, beta=819 / 256,
                                 coupling=2, step_thresh_us=1000, c_protection=10, drop_on_overload=True)
    section = {"queue": {"discipline": "dualpi2", "limit": 500, "target": "5ms", "tupdate": "10ms", "alpha": 0.3,
                         "beta": 5, "coupling": 3, "step_thresh": "2ms", "c_protection": 25,
                         "drop_on_overload": False}}
    queue = parse_router(section, WHERE, LINK).classes[0].queue
    assert queue == DualPi2Queue(500, 5000, 10_000, 77 / 256, 5.0, 3, 2000, 25, False)   # 0.3 Hz as Linux holds it


@pytest.mark.parametrize("key,value,message", [
    ("limit", 0, "limit: 0 is not a positive whole number of packets"),
    ("target", "0ms", "target: must be greater than zero"),
    ("step_thresh", 1, "step_thresh: 1 is not a time with a unit"),
    ("alpha", 0.001, "alpha: 0.001 is outside [1/256, 32768) Hz"),
    ("beta", "3.2", "beta: '3.2' is not a number"),
    ("coupling", 0, "coupling: 0 is not a coupling factor; expected a whole number 1-255"),
    ("c_protection", 101, "c_protection: 101 is not a percentage; expected a whole number 0-100"),
    ("drop_on_overload", "yes", "drop_on_overload: 'yes' is not true or false"),
    ("ecn", True, "ecn: unknown key"),
])
def test_bad_dualpi2_values_name_the_key(key, value, message):
    with pytest.raises(ConfigError) as info:
        parse_router({"queue": {"discipline": "dualpi2", key: value}}, WHERE, LINK)
    assert str(info.value).startswith(f"scenarios/x.toml: router.queue.{message}"), str(info.value)


def test_red_explicit_burst_probability_bandwidth_and_engine():
    section = {"engine": "emulator", "queue": {
        "discipline": "red", "limit": "11000B", "min": "2000B", "max": "6000B", "avpkt": "500B",
        "burst": 10, "probability": 0.02, "bandwidth": "128kbit"}}
    config = parse_router(section, WHERE, LINK)
    assert config.engine == "emulator"
    assert config.classes[0].queue == RedQueue(11000, 2000, 6000, 500, 10, 4, 0.02, 128_000, False)


def test_red_weight_defaults_to_the_reports_w_q_as_linux_can_hold_it():
    # IIP table 1: w_q 0.002. Linux keeps 2^-wlog; 2^-9 = 0.00195 is the nearest, and 41
    # packets is the smallest burst from which tc derives it.
    section = {"queue": {"discipline": "red", "limit": "11000B", "min": "2000B", "max": "6000B",
                         "avpkt": "500B"}}
    red = parse_router(section, WHERE, LINK).classes[0].queue
    assert (red.burst, red.wlog, red.w_q) == (41, 9, 2.0 ** -9)
    section["queue"]["w_q"] = 0.25
    red = parse_router(section, WHERE, LINK).classes[0].queue
    assert (red.burst, red.wlog) == (5, 2)


@pytest.mark.parametrize("burst,wlog", [(4, 1), (5, 2), (6, 2), (10, 4), (20, 6), (41, 9), (1000, 18)])
def test_burst_gives_the_weight_tc_derives(burst, wlog):
    # The RED paper's rule: burst + 1 - min/avpkt <= (1 - (1 - w)^burst) / w with w = 2^-wlog.
    assert red_wlog(2000, burst, 500) == wlog
    assert burst_for_wlog(2000, 500, wlog) <= burst


def test_dscp_names_and_numbers():
    section = diffserv()
    section["filters"] = [{"class": "AF", "dscp": "AF11"}, {"class": "AF", "dscp": 26},
                          {"class": "BE", "dscp": "CS1"}]
    config = parse_router(section, WHERE, LINK)
    assert [f.dscp for f in config.filters] == [10, 26, 8]


def _set(section: dict, path: str, value: object) -> dict:
    """A copy of section with the value at a dotted path replaced (or removed if value is DELETE)."""
    out = copy.deepcopy(section)
    node = out
    keys = path.split(".")
    for key in keys[:-1]:
        node = node[int(key)] if isinstance(node, list) else node[key]
    if value is DELETE:
        del node[keys[-1]]
    elif isinstance(node, list):
        node[int(keys[-1])] = value
    else:
        node[keys[-1]] = value
    return out


DELETE = object()
RED_BE = "classes.BE.queue"

BAD = [
    ("engine", "ns3", "router.engine: 'ns3' is not a router engine"),
    ("colour", "blue", "router.colour: unknown key"),
    ("classes.EF.queue.discipline", "sfq", "router.classes.EF.queue.discipline: unknown discipline 'sfq'"),
    ("classes.EF.queue.size", 3, "router.classes.EF.queue.size: unknown key"),
    ("classes.EF.weight", 3, "router.classes.EF.weight: unknown key"),
    ("filters.0.class", "XX", "router.filters[0].class: 'XX' names no class"),
    ("filters.1.port", 80, "router.filters[1].port: unknown key"),
    ("filters.1.protocol", DELETE, "router.filters[1].sport: needs protocol"),
    ("filters.0.dscp", 64, "router.filters[0].dscp: 64 is not a DSCP value"),
    ("filters.0.dscp", "AF5", "router.filters[0].dscp: unknown DSCP name 'AF5'"),
    ("filters.1.protocol", "gre", "router.filters[1].protocol: unknown protocol 'gre'"),
    ("filters.1.sport", 70000, "router.filters[1].sport: 70000 is not a port"),
    ("filters.2.dst", "198.18.2.1/24", "router.filters[2].dst: \"198.18.2.1/24\" is not an IPv4 address"),
    ("filters.0", {"class": "EF"}, "router.filters[0]: matches nothing"),
    ("default", DELETE, "router.default: is missing"),
    ("default", "XX", "router.default: 'XX' names no class"),
    ("classes.EF.rate", "0kbit", "router.classes.EF.rate: \"0kbit\" is not a positive rate"),
    ("classes.EF.rate", "-32kbit", "router.classes.EF.rate: \"-32kbit\" is negative"),
    ("classes.EF.rate", 32000, "router.classes.EF.rate: 32000 is not a rate with a unit"),
    ("classes.EF.rate", "128kbit", "router.classes.EF.rate: 128000 bit/s is above the router rate 64000 bit/s"),
    ("classes.AF.rate", "50kbit", "router.classes.AF.rate: 50000 bit/s is above the class ceil 48000 bit/s"),
    ("classes.AF.ceil", "65kbit", "router.classes.AF.ceil: 65000 bit/s is above the router rate"),
    ("classes.EF.rate", "40kbit", "router.classes: the class rates add up to 72000 bit/s"),
    ("classes.EF.rate", DELETE, "router.classes.EF.rate: is missing"),
    ("classes.EF.priority", 8, "router.classes.EF.priority: 8 is not an HTB priority"),
    ("classes.EF.quantum", "0B", "router.classes.EF.quantum: \"0B\" is not a positive size"),
    ("classes.EF.queue", DELETE, "router.classes.EF.queue: is missing"),
    ("classes.EF.queue.limit", 0, "router.classes.EF.queue.limit: 0 is not a positive whole number of packets"),
    ("classes.EF.queue.limit", "20", "router.classes.EF.queue.limit: '20' is not a positive whole number"),
    ("classes.AF.queue.limit", 6000, "router.classes.AF.queue.limit: 6000 is not a size with a unit"),
    (f"{RED_BE}.min", "6000B", "router.classes.BE.queue.min: 6000 B is not below max 6000 B"),
    (f"{RED_BE}.max", "12000B", "router.classes.BE.queue.max: 12000 B is above limit 11000 B"),
    (f"{RED_BE}.probability", 0, "router.classes.BE.queue.probability: 0 is outside (0, 1]"),
    (f"{RED_BE}.probability", 1.5, "router.classes.BE.queue.probability: 1.5 is outside (0, 1]"),
    (f"{RED_BE}.burst", 2, "router.classes.BE.queue.burst: 2 packets is below min/avpkt = 4"),
    (f"{RED_BE}.w_q", 0, "router.classes.BE.queue.w_q: 0 is not a weight in (0, 0.5]"),
    (f"{RED_BE}.w_q", 0.6, "router.classes.BE.queue.w_q: 0.6 is not a weight in (0, 0.5]"),
    (f"{RED_BE}.w_q", "0.002", "router.classes.BE.queue.w_q: '0.002' is not a weight"),
    (f"{RED_BE}.ecn", "yes", "router.classes.BE.queue.ecn: 'yes' is not true or false"),
    (f"{RED_BE}.avpkt", DELETE, "router.classes.BE.queue.avpkt: is missing"),
    (f"{RED_BE}.bandwidth", "0bit", "router.classes.BE.queue.bandwidth: \"0bit\" is not a positive rate"),
    ("classes.BE.queue", {"discipline": "red", "limit": "11000B", "min": "2000B", "max": "6000B",
                          "avpkt": "500B", "burst": 6, "w_q": 0.002},
     "router.classes.BE.queue: has both `burst` and `w_q`"),
    ("classes.e f", {"rate": "1kbit", "queue": {"discipline": "pfifo", "limit": 1}},
     "router.classes.e f: class names start with a letter"),
    ("classes", {}, "router.classes: is empty"),
    ("queue", {"discipline": "pfifo", "limit": 5}, "router: has both `queue`"),
    ("filters", {"class": "EF"}, "router.filters: is not an array of tables"),
]


@pytest.mark.parametrize("path,value,message", BAD, ids=[f"{p}={v!r}" for p, v, _ in BAD])
def test_bad_diffserv_configs_name_the_key(path, value, message):
    with pytest.raises(ConfigError) as info:
        parse_router(_set(diffserv(), path, value), WHERE, LINK)
    assert str(info.value).startswith(f"scenarios/x.toml: {message}"), str(info.value)


@pytest.mark.parametrize("section,message", [
    ({}, "router: needs `queue`"),
    ({"queue": {"limit": 20}}, "router.queue.discipline: is missing"),
    ({"queue": {"discipline": "pfifo", "limit": 20}, "default": "all"}, "router.default: is only meaningful"),
    ({"queue": {"discipline": "pfifo", "limit": 20}, "rate": "0kbit"}, "router.rate: \"0kbit\" is not a positive"),
    ({"queue": "pfifo"}, "router.queue: expected a table"),
])
def test_bad_single_class_configs(section, message):
    with pytest.raises(ConfigError) as info:
        parse_router(section, WHERE, LINK)
    assert str(info.value).startswith(f"scenarios/x.toml: {message}"), str(info.value)


def test_a_router_section_that_is_not_a_table():
    with pytest.raises(ConfigError, match=r"^scenarios/x.toml: router: expected a table"):
        parse_router("tc", WHERE, LINK)  # type: ignore[arg-type]


def test_every_example_in_the_documentation_is_valid():
    import re
    import tomllib
    from pathlib import Path

    doc = (Path(__file__).resolve().parent.parent / "docs" / "router.md").read_text()
    examples = [block for block in re.findall(r"```toml\n(.*?)```", doc, re.S) if block.startswith("[router]")]
    assert len(examples) == 4
    for block in examples:
        parse_router(tomllib.loads(block)["router"], "docs/router.md: router", LINK)
