"""Warnings for scenarios that load but likely misfire (testbed/run/lint.py), shown by `squall show`
and `squall run` on stderr; never an error."""
from __future__ import annotations

from pathlib import Path

import pytest

from testbed import cli
from testbed.run.lint import scenario_warnings
from testbed.scenario import loader

REPO = Path(__file__).resolve().parents[1]
LINK = 'seed = 1\ntimeout = "60s"\n[link]\nbandwidth = "64kbit"\ndelay = "100ms"\nmtu = "576B"\n'
DIFFSERV = """
[router]
default = "BE"
[router.classes.EF]
rate = "32kbit"
queue = { discipline = "pfifo", limit = 10 }
[router.classes.BE]
rate = "32kbit"
priority = 1
queue = { discipline = "pfifo", limit = 10 }
"""


def voice(rate: str = "32kbit", direction: str = "down", duration: str = "30s", name: str = "voice",
          dscp: str = "") -> str:
    marking = f'dscp = "{dscp}"\n' if dscp else ""
    return (f'[flows.{name}]\nkind = "udp"\nsize = "132B"\nrate = "{rate}"\nduration = "{duration}"\n'
            f'{marking}direction = "{direction}"\n')


def warnings(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "w.toml"
    path.write_text(text)
    return scenario_warnings(loader.load(path))


@pytest.mark.parametrize("name", ["demo", "iip-http", "iip-mixture", "saarto-http10", "examples/curl",
                                  "examples/iperf3", "examples/latency-under-load",
                                  "examples/flent-ping"])
def test_the_shipped_scenarios_have_no_warning(name: str) -> None:
    assert scenario_warnings(loader.load(REPO / "scenarios" / f"{name}.toml")) == []


def test_a_udp_stream_above_its_link(tmp_path: Path) -> None:
    # 64 kbit/s of 132 B payloads is 77.6 kbit/s with 28 B of IP/UDP headers on a 64 kbit/s link
    (line,) = warnings(tmp_path, LINK + voice("64kbit"))
    assert line.startswith(f"{tmp_path / 'w.toml'}: flows.voice: ") and "77.58 kbit/s" in line
    assert "above the downlink's 64 kbit/s" in line
    assert warnings(tmp_path, LINK + voice("48kbit")) == []          # 58.2 kbit/s fits


def test_udp_streams_of_one_direction_above_the_link_together(tmp_path: Path) -> None:
    (line,) = warnings(tmp_path, LINK + voice("32kbit") + voice("32kbit", name="video"))
    assert ": flows: the UDP streams voice, video together send 77.58 kbit/s on the downlink" in line
    assert warnings(tmp_path, LINK + voice("32kbit") + voice("32kbit", "up", name="video")) == []


def test_a_udp_stream_still_sending_at_the_timeout(tmp_path: Path) -> None:
    (line,) = warnings(tmp_path, LINK + voice(duration="60s"))
    assert "flows.voice: the stream sends until 60 s" in line and "end as timeout" in line


def test_uplink_router_filters_are_judged_against_what_goes_up(tmp_path: Path) -> None:
    """[router.up] shapes the uplink: a filter of the uplink's voice stream classifies, one of
    the downlink's stream's datagrams nothing."""
    up = ('[router.up]\ndefault = "BE"\n[router.up.classes.EF]\nrate = "32kbit"\n'
          'queue = { discipline = "pfifo", limit = 10 }\n[router.up.classes.BE]\nrate = "32kbit"\n'
          'queue = { discipline = "pfifo", limit = 10 }\n'
          '[[router.up.filters]]\nclass = "EF"\ndscp = "EF"\n[[router.up.filters]]\nclass = "EF"\ndscp = "CS1"\n')
    lines = warnings(tmp_path, LINK + up + voice(direction="up", dscp="EF")
                     + voice(direction="down", dscp="CS1", name="down"))
    assert lines == [f"{tmp_path / 'w.toml'}: router.up.filters[1]: matches only packets going down (down data); "
                     "this router shapes the uplink only, so it classifies nothing"]


def test_diffserv_filters_that_classify_nothing(tmp_path: Path) -> None:
    web = '[flows.web]\nkind = "http"\nworkload = "s+2s"\ndscp = "AF11"\n'
    bulk = '[flows.bulk]\nkind = "bulk"\ncount = 10\ndirection = "up"\ndscp = "CS1"\n'
    filters = ('[[router.filters]]\nclass = "EF"\ndscp = "EF"\n'          # only the uplink UDP stream
               '[[router.filters]]\nclass = "EF"\ndscp = "AF11"\n'        # the page's requests only
               '[[router.filters]]\nclass = "EF"\ndscp = "CS1"\n'         # an uplink bulk flow's ACKs
               '[[router.filters]]\nclass = "EF"\nprotocol = "tcp"\nsport = 80\n'   # no such port
               '[[router.filters]]\nclass = "EF"\nprotocol = "tcp"\nsport = 8081\n')  # the page's responses (flow 1)
    lines = warnings(tmp_path, LINK + DIFFSERV + filters + voice(direction="up", dscp="EF") + web + bulk)
    text = "\n".join(lines)
    assert "router.filters[0]: matches only packets going up (voice data); this router shapes the downlink only" in text
    assert "router.filters[1]: matches only packets going up (web requests)" in text
    assert "does not mark its responses" in text
    assert "router.filters[2]: matches only uplink flows (bulk); this router shapes the downlink only, where they " \
           "send just their ACKs" in text
    assert "router.filters[3]: matches no packet of this cell's flows" in text
    assert "command 7001 + i, probe 7301 + i, Flent 2112, browser 443 for flow i in file order" in text   # one port per kind
    assert "router.filters[4]" not in text
    assert len(lines) == 4


def test_a_marking_no_router_classifies_by(tmp_path: Path) -> None:
    (line,) = warnings(tmp_path, LINK + voice(dscp="EF"))
    assert ": flows.voice.dscp: marks its packets (TOS 184), but no router of this cell classifies by " \
           "DiffServ" in line
    assert warnings(tmp_path, LINK + DIFFSERV + '[[router.filters]]\nclass = "EF"\ndscp = "EF"\n'
                    + voice(dscp="EF")) == []
    # an ECN field alone (ECT(1): an L4S-marked flow) is for AQMs with ECN, not DiffServ
    assert warnings(tmp_path, LINK + voice().replace('kind = "udp"\n', 'kind = "udp"\ntos = 1\n')) == []


def test_a_channel_on_links_that_lose_nothing(tmp_path: Path) -> None:
    channel = '[link.channel]\ngood = "exponential(6s)"\nbad = "exponential(1s)"\n'
    (line,) = warnings(tmp_path, LINK + channel + voice())
    assert ": link.channel: no cell's link loses anything" in line
    lossy = LINK.replace('mtu = "576B"\n', 'mtu = "576B"\nerror = { good = 0.0, bad = 0.5 }\n')
    assert warnings(tmp_path, lossy + channel + voice()) == []
    # the default channel of an error-free link never turns bad: nothing to say
    assert warnings(tmp_path, LINK + voice()) == []


def test_show_prints_warnings_on_stderr_and_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "w.toml"
    path.write_text(LINK + voice("64kbit"))
    assert cli.main(["show", str(path)]) == 0
    captured = capsys.readouterr()
    assert "squall show: warning: " in captured.err and "flows.voice" in captured.err
    assert "warning" not in captured.out


def test_a_link_whose_worst_case_the_drain_cannot_wait_for(tmp_path: Path) -> None:
    """`delay = "30s"`: a packet and its ACK take a minute; the drain waits 30 s at most."""
    slow = 'seed = 1\ntimeout = "5s"\n[link]\nbandwidth = "64kbit"\ndelay = "30s"\nmtu = "576B"\n'
    (line,) = warnings(tmp_path, slow)
    assert ": link: a packet and its acknowledgement can take 62.6 s through the link" in line
    assert "(30 s): what is still inside then is cut off" in line
    assert warnings(tmp_path, slow.replace('"30s"', '"10s"')) == []


def test_a_udp_receiver_kept_past_the_timeout_for_the_send_buffer(tmp_path: Path) -> None:
    """The stream ends at 30 s of a 32 s timeout; its receiver is kept for the link's worst case
    for its last datagram: 9600 B of send buffer at 64 kbit/s (1.2 s), 100 ms, 1 s."""
    (line,) = warnings(tmp_path, LINK.replace('"60s"', '"32s"') + voice(duration="30s"))
    assert "flows.voice: the stream ends at 30 s, but its receiver is kept until 32.3 s" in line
    assert warnings(tmp_path, LINK.replace('"60s"', '"33s"') + voice(duration="30s")) == []


def test_a_bulk_or_http_flow_that_cannot_cross_the_link_before_the_timeout(tmp_path: Path) -> None:
    """60 s at 64 kbit/s carry 480 000 B: 600 000 B of bulk data cannot, neither can a 10 MB page."""
    bulk = '[flows.big]\nkind = "bulk"\ncount = 1\nlength = "600000B"\n'
    (line,) = warnings(tmp_path, LINK + bulk)
    assert line.startswith(f"{tmp_path / 'w.toml'}: flows.big: its bytes cross the downlink at 64 kbit/s")
    assert "by 75.4 s at the earliest" in line and "timeout (60 s): every replication will end as timeout" in line
    page = '[flows.web]\nkind = "http"\nobjects = [10000000]\n'
    (line,) = warnings(tmp_path, LINK + page)
    assert "flows.web: its bytes cross the downlink at 64 kbit/s" in line
    late = '[flows.late]\nkind = "bulk"\ncount = 1\nlength = "100000B"\nstart = "50s"\n'
    (line,) = warnings(tmp_path, LINK + late)
    assert "flows.late:" in line and "(start 50 s)" in line
    assert warnings(tmp_path, LINK + bulk.replace("600000B", "300000B")) == []
