"""The testbed file (testbed/lab/testbed_file.py): what it means and the mistakes it refuses,
each naming the file and the key. No root, no SSH."""
from __future__ import annotations

from pathlib import Path, PurePosixPath

import pytest

from testbed.lab import testbed_file
from testbed.errors import ConfigError
from testbed.lab.ssh import SshClient, SshTarget, quote

REPO = Path(__file__).resolve().parents[1]
GOOD = """
name = "lab-a"
work_dir = "/var/tmp/squall"
bin_dir = "/opt/squall/bin"

[fixed]
ssh = "root@192.0.2.10"
identity = "/etc/squall/lab_key"
ssh_options = ["StrictHostKeyChecking=yes"]
address = "198.18.40.1"

[emu]
ssh = "root@192.0.2.11"
port = 2222
wireless_address = "198.19.40.1"

[mobile]
ssh = "root@192.0.2.12"
bin_dir = "/usr/local/squall/bin"
address = "198.19.40.2"
emulator = "198.19.168.1:5300"
fixed_net = "198.18.40.0/24"
"""


def load(tmp_path: Path, text: str) -> testbed_file.LabTestbed:
    path = tmp_path / "lab.toml"
    path.write_text(text)
    return testbed_file.load(path)


def refused(tmp_path: Path, text: str) -> str:
    with pytest.raises(ConfigError) as e:
        load(tmp_path, text)
    return str(e.value)


def test_a_complete_file_with_defaults(tmp_path: Path) -> None:
    lab = load(tmp_path, GOOD)
    assert lab.name == "lab-a"
    assert lab.fixed.ssh == SshTarget("root@192.0.2.10", None, "/etc/squall/lab_key", ("StrictHostKeyChecking=yes",))
    assert lab.fixed.capture_dev == "eth0" and lab.fixed.address == "198.18.40.1"
    assert lab.emu.ssh.port == 2222 and lab.emu.wireless_dev == "wl0" and lab.emu.emulator_port == 5300
    assert lab.mobile.emulator == ("198.19.168.1", 5300) and lab.mobile.fixed_net == "198.18.40.0/24"
    assert lab.mobile.bin_dir == PurePosixPath("/usr/local/squall/bin")
    assert lab.fixed.bin_dir == PurePosixPath("/opt/squall/bin") and lab.emu.work_dir == PurePosixPath("/var/tmp/squall")
    assert lab.fixed.nginx == "/usr/sbin/nginx"


def test_the_shipped_example_is_valid() -> None:
    lab = testbed_file.load(REPO / "scenarios" / "testbeds" / "example-lab.toml")
    assert {h.role for h in lab.hosts()} == {"fixed", "emu", "mobile"}


@pytest.mark.parametrize("change, where, expected", [
    (("[mobile]\n", "[mobile]\ncolour = 1\n"), "mobile.colour", "unknown key"),
    (('emulator = "198.19.168.1:5300"', 'emulator = "198.19.168.1"'), "mobile.emulator", "has no port; expected ADDRESS:PORT"),
    (('emulator = "198.19.168.1:5300"', 'emulator = "lab-emu:5300"'), "mobile.emulator", "is not an IPv4 address"),
    (('address = "198.18.40.1"', 'address = "198.18.40.1/24"'), "fixed.address", "is not an IPv4 address (without prefix"),
    (('fixed_net = "198.18.40.0/24"', 'fixed_net = "198.18.41.0/24"'), "mobile.fixed_net", "does not contain the fixed host's address"),
    (("port = 2222", "port = 70000"), "emu.port", "is not a port number"),
    (('ssh = "root@192.0.2.12"', 'ssh = "-oProxyCommand=x"'), "mobile.ssh", "is not an SSH destination"),
    (('work_dir = "/var/tmp/squall"', 'work_dir = "tmp"'), "fixed.work_dir", "is not an absolute path"),
    (('ssh_options = ["StrictHostKeyChecking=yes"]', 'ssh_options = ["-v"]'), "fixed.ssh_options", "Key=Value"),
    (('wireless_address = "198.19.40.1"\n', ''), "emu.wireless_address", "missing"),
])
def test_mistakes_name_the_file_and_key(tmp_path: Path, change: tuple[str, str], where: str, expected: str) -> None:
    assert change[0] in GOOD
    message = refused(tmp_path, GOOD.replace(change[0], change[1], 1))
    assert message.startswith(f"{tmp_path / 'lab.toml'}: {where}: ") and expected in message, message


def test_a_missing_host_table_and_a_missing_work_dir(tmp_path: Path) -> None:
    message = refused(tmp_path, GOOD.split("[mobile]")[0])
    assert message == f"{tmp_path / 'lab.toml'}: mobile: missing table; expected [fixed], [emu] and [mobile], one per lab host"
    message = refused(tmp_path, GOOD.replace('work_dir = "/var/tmp/squall"\n', ""))
    assert f"{tmp_path / 'lab.toml'}: fixed.work_dir: missing" in message


def test_an_ssh_alias_is_enough_and_emu_control_is_refused(tmp_path: Path) -> None:
    """START/STOP go through the SSH connection: no address of the emulator for the runner."""
    text = GOOD.replace('ssh = "root@192.0.2.11"', 'ssh = "lab-emu"')
    assert load(tmp_path, text).emu.ssh.destination == "lab-emu"
    message = refused(tmp_path, text.replace("[emu]\n", '[emu]\ncontrol = "192.0.2.11:5300"\n'))
    assert message.startswith(f"{tmp_path / 'lab.toml'}: emu.control: no longer used: squall sends START and STOP "
                              "through its SSH connection"), message


@pytest.mark.parametrize("key, line", [
    ("fixed.capture_dev", 'capture_dev = "eth0;reboot"'),
    ("emu.wireless_dev", 'wireless_dev = "wl$(id)"'),
    ("mobile.wireless_dev", 'wireless_dev = "-wl0"'),
    ("mobile.bin_dir", 'bin_dir = "/opt/squall bin"'),
    ("emu.work_dir", "work_dir = \"/tmp/x'; id; '\""),
    ("fixed.nginx", 'nginx = "/usr/sbin/nginx$(id)"'),
    ("emu.ssh", 'ssh = "root@host;id"'),
    ("fixed.ssh_options", 'ssh_options = ["=x"]'),
])
def test_values_that_reach_a_command_must_be_plain(tmp_path: Path, key: str, line: str) -> None:
    assert f"lab.toml: {key}: " in refused(tmp_path, with_line(GOOD, key.split(".")[0], line))


def with_line(text: str, role: str, line: str) -> str:
    """text with `line` in the [role] table, replacing a key of the same name there."""
    name, section, lines = line.split(" =")[0], "", []
    for old in text.splitlines():
        section = old if old.startswith("[") else section
        if not (section == f"[{role}]" and old.startswith(f"{name} =")):
            lines.append(old)
        if old == f"[{role}]":
            lines.append(line)
    return "\n".join(lines) + "\n"


def test_not_toml_and_absent_files(tmp_path: Path) -> None:
    assert "not valid TOML" in refused(tmp_path, "[fixed\n")
    with pytest.raises(ConfigError, match="absent.toml: file not found"):
        testbed_file.load(tmp_path / "absent.toml")


def test_the_ssh_command_line() -> None:
    client = SshClient(SshTarget("root@192.0.2.10", 2222, "/k", ("StrictHostKeyChecking=yes",)))
    try:
        argv = client.base_argv()
    finally:
        client.close()
    assert argv[:2] == ["ssh", "-n"] and argv[-2:] == ["root@192.0.2.10", "--"]
    for option in ("BatchMode=yes", "ControlMaster=auto", f"ControlPath={client.control_path}",
                   "StrictHostKeyChecking=yes", "IdentitiesOnly=yes"):
        assert option in argv
    assert argv[argv.index("-p") + 1] == "2222" and argv[argv.index("-i") + 1] == "/k"
    assert quote(["echo", "a b", "$HOME"]) == "echo 'a b' '$HOME'"


@pytest.mark.parametrize("option", ["ProxyCommand=nc %h %p", "proxycommand=touch /tmp/owned", "LocalCommand=id",
                                    "PermitLocalCommand=yes", "KnownHostsCommand=/bin/true", "ProxyJump=jump",
                                    "SecurityKeyProvider=/tmp/x.so", "ControlPath=/tmp/x", "RemoteCommand=id"])
def test_ssh_options_that_run_a_local_command_or_are_squalls_are_refused(tmp_path: Path, option: str) -> None:
    """squall runs ssh as root: an option that runs a local command would run it as root."""
    message = refused(tmp_path, GOOD.replace('"StrictHostKeyChecking=yes"', f'"{option}"'))
    key = option.split("=")[0]
    assert message.startswith(f"{tmp_path / 'lab.toml'}: fixed.ssh_options: {key} is not an option squall passes "
                              "to ssh"), message


def test_ssh_options_for_host_keys_and_authentication_are_passed(tmp_path: Path) -> None:
    options = ["StrictHostKeyChecking=yes", "UserKnownHostsFile=/etc/squall/known_hosts", "ciphers=aes128-ctr"]
    lab = load(tmp_path, GOOD.replace('"StrictHostKeyChecking=yes"', ", ".join(f'"{o}"' for o in options)))
    assert lab.fixed.ssh.options == tuple(options)
