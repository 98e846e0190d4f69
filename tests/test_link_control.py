"""The runner's side of the run control and of the run token, without root: the control
socket client against a stand-in emulator, what the emulator's stderr tells the replication
(who stopped a run, a hijack refused), and the configuration naming no token."""
from __future__ import annotations

import socket
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from testbed.scenario import emulator_config
from testbed.link.control import ControlError, LinkState, SocketControl, parse_state
from testbed.link.session import SessionResult, describe_death, emulator_stopped_by, intrusions
from testbed.link.simple import error_free
from testbed.run.replication import Outcome, _check_link

HIJACK = ("squall-emulator: refused a HELLO for the mobile role from 198.19.178.2:40001: the mobile NPA at "
          "198.19.178.2:39999 is alive (counted as role_taken)\n")
UDP_STOP = ("squall-emulator: refused a STOP datagram from 198.19.178.2:40002: run control is accepted on the "
            "control socket only (counted as udp_control)\n")
STOPPED = "squall-emulator: STOP on the control socket from pid 4242 (python3, uid 0), ending the run\n"
SIGNALLED = "squall-emulator: sigterm received from pid 77 (kill, uid 1000), ending the run\n"


def stand_in(path: Path, answers: dict[str, str]) -> threading.Thread:
    """A control socket answering each command line with answers[command], one connection each."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen()

    def serve() -> None:
        with server:
            for _ in range(len(answers)):
                conn, _ = server.accept()
                with conn:
                    command = conn.recv(64).decode().strip()
                    conn.sendall(answers[command].encode())

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return thread


def test_start_and_stop_on_the_control_socket(tmp_path: Path) -> None:
    path = tmp_path / "control.sock"
    thread = stand_in(path, {"start": "started 1795312345678901\n", "stop": "stopped\n"})
    control = SocketControl(path)
    assert control.start() == 1795312345678901
    control.stop()
    thread.join(5)


def test_state_says_what_is_inside_the_link(tmp_path: Path) -> None:
    path = tmp_path / "control.sock"
    stand_in(path, {"state": "state pending 3 last_us 5212500 now_us 5400000\n"})
    state = SocketControl(path).state()
    assert (state.pending, state.last_us, state.quiet_us()) == (3, 5_212_500, 187_500)
    assert LinkState(0, -1, 1_000_000).quiet_us() == 1_000_000       # nothing went in or out yet
    with pytest.raises(ControlError, match="answered STATE with 'state pending x'; expected 'state pending N"):
        parse_state("state pending x", "here")


def test_refusals_and_silence_are_control_errors(tmp_path: Path) -> None:
    path = tmp_path / "control.sock"
    stand_in(path, {"start": "error not allowed\n", "stop": ""})
    with pytest.raises(ControlError, match="refused START on .*: error not allowed"):
        SocketControl(path).start()
    with pytest.raises(ControlError, match="closed its control socket .* without answering STOP"):
        SocketControl(path).stop()
    with pytest.raises(ControlError, match="cannot reach the emulator's control socket .* within 0.2 s"):
        SocketControl(tmp_path / "absent.sock").start(timeout_s=0.2)


def test_who_stopped_the_emulator_is_named() -> None:
    assert emulator_stopped_by(STOPPED) == "a STOP on its control socket from pid 4242 (python3, uid 0)"
    assert describe_death("emulator", 0, "squall-emulator: listening on x\n" + SIGNALLED) == \
        "the emulator was stopped by SIGTERM from pid 77 (kill, uid 1000), not by squall (exit code 0)"
    assert describe_death("emulator", -9, "") == "the emulator exited with code -9"
    assert describe_death("npa-mobile", 1, STOPPED) == "the npa-mobile exited with code 1"


def test_refused_intrusions_are_named() -> None:
    assert intrusions("squall-emulator: listening on x\n") == []
    assert intrusions(HIJACK + HIJACK.replace(":40001", ":40003") + UDP_STOP) == [
        "a second NPA tried to take the mobile role (HELLO with the run token from 198.19.178.2:40001, "
        "198.19.178.2:40003 while the mobile NPA at 198.19.178.2:39999 was up; refused)",
        "someone sent STOP datagrams to the emulator from 198.19.178.2:40002 (refused: run control is on the "
        "emulator's control socket only)"]


def result(stderr: str, acknowledged: bool = True, stopped_by: str | None = None) -> SessionResult:
    return SessionResult(Path("emulator.log"), Path("emulator.conf"), 1, {"emulator": 0}, {"emulator": stderr},
                         acknowledged, stopped_by)


def test_a_replication_with_a_refused_hijack_is_failed_and_says_why() -> None:
    outcome, details = Outcome(), {}
    _check_link(SimpleNamespace(result=result(HIJACK + STOPPED)), outcome, details)
    assert outcome.status == "failed"
    assert outcome.reasons == ["a second NPA tried to take the mobile role (HELLO with the run token from "
                               "198.19.178.2:40001 while the mobile NPA at 198.19.178.2:39999 was up; refused)"]
    outcome = Outcome()
    _check_link(SimpleNamespace(result=result(STOPPED)), outcome, {})
    assert outcome.status == "ok", "squall's own STOP is no intrusion"


def test_a_run_stopped_by_someone_else_before_squall_says_who() -> None:
    outcome = Outcome()
    _check_link(SimpleNamespace(result=result(SIGNALLED, acknowledged=False,
                                              stopped_by=emulator_stopped_by(SIGNALLED))), outcome, {})
    assert outcome.reasons[0].startswith("the emulator was stopped by SIGTERM from pid 77 (kill, uid 1000), not by "
                                         "squall, before the end of the replication"), outcome.reasons


def test_the_configuration_names_no_token_and_the_control_socket() -> None:
    run = emulator_config.EmulatorRun(seed=1, replication=2, token=None, log_path=Path("/w/emulator.log"),
                                      listen="198.19.178.1:5300", control="/tmp/p/control.sock")
    text = emulator_config.render(error_free(64_000, 300_000, 576), run)
    assert "\ntoken = <redacted>\n" in text and "\ncontrol = /tmp/p/control.sock\n" in text
    assert "\nlisten = 198.19.178.1:5300\n" in text
    assert "\nrelease_ahead = 0us\n" in text   # off unless asked for


def test_release_ahead_reaches_the_configuration() -> None:
    run = emulator_config.EmulatorRun(seed=1, replication=2, token=None, log_path=Path("/w/emulator.log"),
                                      release_ahead_us=300)
    assert "\nrelease_ahead = 300us\n" in emulator_config.render(error_free(64_000, 300_000, 576), run)
