"""The scenario's router as the emulator's router stage: exact sections, refusals, notes, and
the real emulator accepting every rendered example (no root needed)."""
from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import require_programs

from testbed.scenario.emulator_config import EmulatorRun, render
from testbed.router.emulator_stage import EmulatorRouter, emulator_router
from testbed.errors import ConfigError
from testbed.paths import bin_dir
from testbed.router.parse import parse_router
from testbed.router.directions import Routers
from testbed.router.plan import RouterConfig
from testbed.router.emulator_engine import emulator_note
from testbed.router.disciplines.registry import DISCIPLINES
from testbed.router.emulator_stats import RouterStatsError, read_router_stats
from testbed.link.simple import direction, error_free

WHERE = "scenarios/x.toml: router"
RATE = 64_000
MTU = 576
SMALL_BUFFER = direction(RATE, 0, MTU, send_buffer=MTU)

PFIFO_20 = {"queue": {"discipline": "pfifo", "limit": 20}}

EF_AF_BE = {
    "default": "BE",
    "classes": {
        "EF": {"rate": "32kbit", "priority": 0, "queue": {"discipline": "pfifo", "limit": 10}},
        "AF": {"rate": "16kbit", "priority": 1, "queue": {"discipline": "bfifo", "limit": "6000B"}},
        "BE": {"rate": "16kbit", "priority": 2, "queue": {"discipline": "pfifo", "limit": 20}},
    },
    "filters": [{"class": "EF", "dscp": "EF"}, {"class": "AF", "dscp": "AF11"}, {"class": "AF", "dscp": 18}],
}

# IIP table 31 with DiffServ, the classes at one priority: weighted by their rates.
PORTS = {
    "rate": "64kbit",
    "default": "TCP",
    "classes": {
        "UDP": {"rate": "48kbit", "priority": 1, "queue": {"discipline": "pfifo", "limit": 22}},
        "TCP": {"rate": "16kbit", "priority": 1, "queue": {"discipline": "pfifo", "limit": 22}},
    },
    "filters": [{"class": "UDP", "protocol": "udp", "dport": 6001},
                {"class": "TCP", "protocol": "tcp", "sport": 80},
                {"class": "UDP", "protocol": "udp"}],
}

RED_ECN = {"queue": {"discipline": "red", "limit": "11000B", "min": "2000B", "max": "6000B",
                     "avpkt": "500B", "ecn": True}}


def parsed(section: dict) -> RouterConfig:
    return parse_router({**section, "engine": "emulator"}, WHERE, RATE)


def rendered(section: dict, **kw) -> EmulatorRouter:
    return emulator_router(parsed(section), where=WHERE, **kw)


def test_one_pfifo_class_of_20_packets():
    router = rendered(PFIFO_20, link=SMALL_BUFFER)
    assert router.sections == (
        "[down.router]\n"
        "scheduler = priority\n"
        "default = all\n"
        "\n"
        "[down.router.class.all]\n"
        "priority = 0\n"
        "discipline = pfifo\n"
        "limit = 20\n"
    )
    assert router.warnings == ()
    assert router.text == router.sections


def test_ef_af_be_by_dscp_with_priorities_is_strict_priority():
    router = rendered(EF_AF_BE, link=SMALL_BUFFER)
    assert router.scheduler == "priority"
    assert router.sections == (
        "[down.router]\n"
        "scheduler = priority\n"
        "default = BE\n"
        "\n"
        "[down.router.class.EF]\n"
        "priority = 0\n"
        "discipline = pfifo\n"
        "limit = 10\n"
        "\n"
        "[down.router.class.AF]\n"
        "priority = 1\n"
        "discipline = bfifo\n"
        "limit = 6000B\n"
        "\n"
        "[down.router.class.BE]\n"
        "priority = 2\n"
        "discipline = pfifo\n"
        "limit = 20\n"
        "\n"
        "[down.router.filter.filter0]\n"
        "class = EF\n"
        "dscp = 46\n"
        "\n"
        "[down.router.filter.filter1]\n"
        "class = AF\n"
        "dscp = 10\n"
        "\n"
        "[down.router.filter.filter2]\n"
        "class = AF\n"
        "dscp = 18\n"
    )
    assert router.warnings == (
        f"{WHERE}.classes: the priorities differ, so the classes are served by strict priority (a class "
        "only when every class of a lower priority number is empty, equal priorities in arrival order); "
        "their rates are not guaranteed as HTB guarantees them",)


def test_port_filters_at_equal_priorities_share_by_rate():
    router = rendered(PORTS, link=SMALL_BUFFER)
    assert router.scheduler == "weighted"
    assert router.sections == (
        "[down.router]\n"
        "scheduler = weighted\n"
        "default = TCP\n"
        "\n"
        "[down.router.class.UDP]\n"
        "share = 48000bit\n"
        "discipline = pfifo\n"
        "limit = 22\n"
        "\n"
        "[down.router.class.TCP]\n"
        "share = 16000bit\n"
        "discipline = pfifo\n"
        "limit = 22\n"
        "\n"
        "[down.router.filter.filter0]\n"
        "class = UDP\n"
        "protocol = udp\n"
        "dport = 6001\n"
        "\n"
        "[down.router.filter.filter1]\n"
        "class = TCP\n"
        "protocol = tcp\n"
        "sport = 80\n"
        "\n"
        "[down.router.filter.filter2]\n"
        "class = UDP\n"
        "protocol = udp\n"
    )
    assert router.warnings == ()


def test_red_with_ecn_takes_the_configs_weight_and_probability():
    router = rendered(RED_ECN, link=SMALL_BUFFER)
    assert router.sections == (
        "[down.router]\n"
        "scheduler = priority\n"
        "default = all\n"
        "\n"
        "[down.router.class.all]\n"
        "priority = 0\n"
        "discipline = red\n"
        "limit = 11000B\n"
        "red.min = 2000B\n"
        "red.max = 6000B\n"
        "red.avpkt = 500B\n"
        "red.max_p = 0.1\n"
        "red.w_q = 0.001953125\n"       # 0.002 as Linux holds it (2^-9): both engines alike
        "red.ecn = true\n"
    )
    other = {"queue": {**RED_ECN["queue"], "ecn": False, "probability": 0.02, "burst": 10}}
    sections = rendered(other).sections
    assert "red.max_p = 0.02\nred.w_q = 0.0625\nred.ecn = false\n" in sections


def test_head_drop_is_the_emulators_head_drop():
    router = emulator_router(parsed({"queue": {"discipline": "head_drop", "limit": 20}}), link=SMALL_BUFFER)
    assert router.sections.endswith("[down.router.class.all]\npriority = 0\ndiscipline = head_drop\nlimit = 20\n")


def test_codel_is_the_emulators_codel_with_every_key_written():
    router = emulator_router(parsed({"queue": {"discipline": "codel", "ecn": True}}), link=SMALL_BUFFER)
    assert router.sections.endswith(
        "[down.router.class.all]\npriority = 0\ndiscipline = codel\nlimit = 1000\n"
        "codel.target = 5000us\ncodel.interval = 100000us\ncodel.ecn = true\ncodel.ce_threshold = 0us\n")


def test_fq_codel_is_the_emulators_fq_codel_with_every_key_written():
    router = emulator_router(parsed({"queue": {"discipline": "fq_codel"}}), link=SMALL_BUFFER)
    assert router.sections.endswith(
        "[down.router.class.all]\npriority = 0\ndiscipline = fq_codel\nlimit = 10240\n"
        "fq_codel.target = 5000us\nfq_codel.interval = 100000us\nfq_codel.ecn = true\nfq_codel.quantum = 1514\n"
        "fq_codel.flows = 1024\n")


def test_pie_without_parameters_has_linuxs_defaults():
    router = emulator_router(parsed({"queue": {"discipline": "pie"}}), link=SMALL_BUFFER)
    assert router.sections.endswith(
        "[down.router.class.all]\npriority = 0\ndiscipline = pie\nlimit = 1000\n"
        "pie.target = 15000us\npie.tupdate = 15000us\npie.alpha = 0.125\npie.beta = 1.25\n"
        "pie.ecn = false\npie.bytemode = false\n")


def test_dualpi2_without_parameters_has_linuxs_defaults():
    router = emulator_router(parsed({"queue": {"discipline": "dualpi2"}}), link=SMALL_BUFFER)
    assert router.sections.endswith(
        "discipline = dualpi2\nlimit = 10000\ndualpi2.target = 15000us\ndualpi2.tupdate = 16000us\n"
        "dualpi2.alpha = 0.16015625\ndualpi2.beta = 3.19921875\ndualpi2.coupling = 2\ndualpi2.step_thresh = 1000us\n"
        "dualpi2.c_protection = 10\ndualpi2.overflow = false\n")


def test_the_up_direction_gets_its_own_section_names():
    assert rendered(PFIFO_20, direction="up").sections.startswith("[up.router]\n")


@pytest.mark.parametrize("extra,key,message", [
    ({"src": "198.18.1.0/24"}, "filters[0].src", "address prefix filters are not supported by the emulator engine"),
    ({"dst": "198.18.2.7"}, "filters[0].dst", "address prefix filters are not supported"),
    ({"protocol": "sctp", "dport": 9}, "filters[0].dport", "port filters on sctp are not supported"),
    ({"protocol": "sctp", "sport": 9}, "filters[0].sport", "port filters on sctp are not supported"),
])
def test_what_the_emulator_cannot_classify_is_refused_by_key(extra, key, message):
    section = {**EF_AF_BE, "filters": [{"class": "EF", **extra}]}
    with pytest.raises(ConfigError, match=message) as caught:
        rendered(section)
    assert caught.value.where == f"{WHERE}.{key}"


def test_sctp_without_ports_is_fine():
    section = {**EF_AF_BE, "filters": [{"class": "EF", "protocol": "sctp"}]}
    assert "protocol = sctp\n" in rendered(section).sections


def test_more_classes_than_the_emulator_holds_are_refused():
    classes = {f"C{i}": {"rate": "1kbit", "priority": i % 8, "queue": {"discipline": "pfifo", "limit": 5}}
               for i in range(17)}
    with pytest.raises(ConfigError, match="has 17 classes; the emulator engine holds at most 16") as caught:
        rendered({"default": "C0", "classes": classes})
    assert caught.value.where == f"{WHERE}.classes"


def test_a_class_name_longer_than_the_emulator_takes_is_refused():
    name = "B" * 32
    section = {"default": name, "classes": {name: {"rate": "8kbit", "queue": {"discipline": "pfifo", "limit": 5}}}}
    with pytest.raises(ConfigError, match="class names of at most 31 characters") as caught:
        rendered(section)
    assert caught.value.where == f"{WHERE}.classes.{name}"


def test_a_send_buffer_below_the_mtu_is_refused():
    with pytest.raises(ConfigError, match=r"500 B is below the MTU 576 B") as caught:
        rendered(PFIFO_20, link=direction(RATE, 0, MTU, send_buffer=500))
    assert caught.value.where == "scenarios/x.toml: link.down.send_buffer"   # in the file the router is in


def test_ignored_keys_are_named_in_notes_not_errors():
    section = {
        "rate": "1Mbit",
        "default": "BE",
        "classes": {
            "EF": {"rate": "32kbit", "ceil": "64kbit", "quantum": "3000B", "priority": 0,
                   "queue": {"discipline": "pfifo", "limit": 10}},
            "BE": {"rate": "32kbit", "priority": 1,
                   "queue": {**RED_ECN["queue"], "bandwidth": "128kbit"}},
        },
    }
    link = direction(RATE, 0, MTU, send_buffer=9600)
    notes = rendered(section, link=link).warnings
    keys = [f"{WHERE}.rate: ", f"{WHERE}.classes.EF.ceil: ", f"{WHERE}.classes.EF.quantum: ",
            f"{WHERE}.classes.BE.queue.bandwidth: ", f"{WHERE}.classes: "]
    assert len(notes) == len(keys)
    assert all(note.startswith(key) for note, key in zip(notes, keys)), notes
    assert notes[0] == (f"{WHERE}.rate: 1000000 bit/s is ignored; the router stage drains into the link's "
                        "send buffer at the link's rate (64000 bit/s)")


def test_defaults_taken_from_the_link_are_not_noted():
    # RED's bandwidth and the router's rate default to the link's rate: nothing was ignored;
    # a send buffer of the study's size behind the router is Seawind's structure, no note.
    assert rendered(RED_ECN, link=SMALL_BUFFER).warnings == ()
    study = direction(RATE, 0, MTU, send_buffer=12000)
    assert rendered(PFIFO_20, link=study).warnings == ()


def test_the_device_queue_is_written_into_the_router_section():
    router = rendered({**PFIFO_20, "device_queue": 10}, link=direction(RATE, 0, MTU, send_buffer=9600))
    assert router.sections.startswith("[down.router]\nscheduler = priority\ndefault = all\ndevice_queue = 10\n\n")
    assert parsed(PFIFO_20).device_queue == 0
    assert "device_queue" not in rendered(PFIFO_20).sections


@pytest.mark.parametrize("value, message", [
    (-1, "-1 is not a number of packets"), (65537, "65537 is not a number of packets"),
    ("10", "'10' is not a number of packets")])
def test_a_device_queue_outside_its_range_is_refused(value, message):
    with pytest.raises(ConfigError, match=message) as caught:
        parsed({**PFIFO_20, "device_queue": value})
    assert caught.value.where == f"{WHERE}.device_queue"


def test_the_tc_engine_refuses_a_device_queue():
    with pytest.raises(ConfigError, match=r"is the emulator engine's .*drops at a full ring") as caught:
        parse_router({**PFIFO_20, "device_queue": 10}, WHERE, RATE)
    assert caught.value.where == f"{WHERE}.device_queue"
    assert parse_router({**PFIFO_20, "device_queue": 0}, WHERE, RATE).device_queue == 0


def test_the_configuration_file_carries_the_router_and_its_notes():
    link = error_free(RATE, 0, MTU, send_buffer=9600)
    run = EmulatorRun(seed=1, replication=0, token="0123456789abcdef", log_path=Path("emulator.log"))
    without = render(link, run)
    section = {**PFIFO_20, "rate": "1Mbit", "device_queue": 10}
    text = render(link, run, router=parsed(section))
    router = emulator_router(parsed(section), link=link.down)
    assert text == without + "\n" + router.text
    assert f"# emulator engine: {'router'}.rate: 1000000 bit/s is ignored" in text
    assert "device_queue = 10\n" in text


def test_the_uplink_router_is_the_up_stage_after_the_downlinks():
    """[router.up] becomes [up.router...] (the emulator's stage in front of the uplink), checked
    against the uplink's own send buffer; the downlink's stays [down.router...]."""
    link = error_free(RATE, 0, MTU, send_buffer=9600)
    run = EmulatorRun(seed=1, replication=0, token="0123456789abcdef", log_path=Path("emulator.log"))
    down, up = parsed(PFIFO_20), parsed({"queue": {"discipline": "pfifo", "limit": 5}})
    text = render(link, run, router=Routers(down=down, up=up))
    assert text == (render(link, run) + "\n" + emulator_router(down, link=link.down).text
                    + "\n" + emulator_router(up, link=link.up, direction="up").text)
    assert "[up.router]\nscheduler = priority\ndefault = all\n\n[up.router.class.all]\npriority = 0\n" \
           "discipline = pfifo\nlimit = 5\n" in text
    only_up = render(link, run, router=Routers(up=up))
    assert "[up.router]" in only_up and "[down.router" not in only_up
    note = emulator_note(Routers(down=down, up=up))
    assert "on the downlink and uplink ran this router" in note
    assert note.endswith(rendered(PFIFO_20).sections + "\n" + emulator_router(up, direction="up").sections)


def test_router_tc_note_of_the_emulator_engine():
    note = emulator_note(parsed(PFIFO_20))
    assert note.startswith('# router engine = "emulator": nothing was applied with tc')
    assert note.endswith(rendered(PFIFO_20).sections)


# --- the real emulator reads every rendered example ---------------------------------------

EXAMPLES = {"pfifo-20": PFIFO_20, "ef-af-be": EF_AF_BE, "ports": PORTS, "red-ecn": RED_ECN,
            "seawind": {**PFIFO_20, "device_queue": 10},
            "head-drop-20": {"queue": {"discipline": "head_drop", "limit": 20}},
            "codel": {"queue": {"discipline": "codel"}},
            "fq_codel": {"queue": {"discipline": "fq_codel"}},
            "fq_codel-small": {"queue": {"discipline": "fq_codel", "limit": 100, "flows": 8, "quantum": 300,
                                         "target": "2ms", "interval": "30ms", "ecn": False}},
            "pie": {"queue": {"discipline": "pie"}},
            "pie-ecn": {"queue": {"discipline": "pie", "limit": 200, "target": "5ms", "tupdate": "30ms",
                                  "alpha": 0.25, "beta": 2, "ecn": True, "bytemode": True}},
            "dualpi2": {"queue": {"discipline": "dualpi2"}},
            "dualpi2-overflow": {"queue": {"discipline": "dualpi2", "limit": 300, "target": "5ms", "tupdate": "10ms",
                                           "alpha": 0.3, "beta": 5, "coupling": 3, "step_thresh": "2ms",
                                           "c_protection": 25, "drop_on_overload": False}}}


def test_every_discipline_has_an_example_the_emulator_runs():
    """A discipline added to the table without an example here fails: the two tests below run
    every example through the emulator."""
    used = {c.queue.discipline for section in EXAMPLES.values() for c in parsed(section).classes}
    assert used == set(DISCIPLINES)


def _config_file(tmp_path: Path, section: dict) -> Path:
    link = error_free(RATE, 10_000, MTU, send_buffer=MTU)
    run = EmulatorRun(seed=7, replication=1, token="0123456789abcdef", log_path=tmp_path / "emulator.log",
                      listen="127.0.0.1:0", control=str(tmp_path / "control.sock"))
    path = tmp_path / "emulator.conf"
    path.write_text(render(link, run, router=parsed(section)))
    return path


@pytest.mark.parametrize("name", EXAMPLES)
def test_the_emulator_parses_the_rendered_file(name, tmp_path):
    require_programs("squall-emulator")
    path = _config_file(tmp_path, EXAMPLES[name])
    done = subprocess.run([str(bin_dir() / "squall-emulator"), "--print-timeline", "1s", str(path)],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "0 good\n"


@pytest.mark.parametrize("name", EXAMPLES)
def test_the_emulator_runs_with_the_rendered_router(name, tmp_path):
    """--print-timeline stops after parsing; a real start also passes the link model's checks.
    The emulator binds 127.0.0.1 (no packet is sent) and is stopped with SIGTERM before START;
    its log header then repeats the router keys as it understood them."""
    require_programs("squall-emulator")
    path = _config_file(tmp_path, EXAMPLES[name])
    proc = subprocess.Popen([str(bin_dir() / "squall-emulator"), str(path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 5
        while proc.poll() is None and time.monotonic() < deadline and "bound" not in _bound(proc):
            time.sleep(0.05)
        assert proc.poll() is None, f"the emulator refused the file: {proc.communicate()[1]}"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    config = [line for line in (tmp_path / "emulator.log").read_text().splitlines()
              if line.startswith("# config down.router")]
    config_of = dict(line.removeprefix("# config ").split(" = ", 1) for line in config)
    router = parsed(EXAMPLES[name])
    assert config_of["down.router.default"] == router.default_class
    assert config_of["down.router.device_queue"] == str(router.device_queue)
    assert {k.split(".")[3] for k in config_of if k.startswith("down.router.class.")} == {
        c.name for c in router.classes}
    assert len({k.split(".")[3] for k in config_of if k.startswith("down.router.filter.")}) == len(router.filters)
    # The trailer of a run without packets: every class, all counters zero.
    stats = read_router_stats(tmp_path / "emulator.log")
    assert [(c["direction"], c["class"]) for c in stats["class"]] == [("down", c.name) for c in router.classes]
    assert all(c[k] == 0 for c in stats["class"] for k in c if k not in ("direction", "class"))
    assert stats["events"] == {"down": {"drop_router": 0, "ecn_mark": 0}}


def test_router_stats_need_the_trailer(tmp_path):
    log = tmp_path / "emulator.log"
    log.write_text("# squall-emulator event log\n# format 1\n")
    with pytest.raises(RouterStatsError, match=r"has no trailer .*close the link before RouterRun.finish"):
        read_router_stats(log)


def _bound(proc: subprocess.Popen) -> str:
    """Whether the process has a UDP socket yet (it binds before waiting for the NPAs)."""
    try:
        for fd in Path(f"/proc/{proc.pid}/fd").iterdir():
            if "socket:" in str(fd.readlink()):
                return "bound"
    except OSError:
        pass
    return ""
