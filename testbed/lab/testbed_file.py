"""The testbed file: which lab hosts play fixed, emu and mobile, and how to reach them.

    lab = testbed_file.load(Path("scenarios/testbeds/example-lab.toml"))
    lab.fixed.ssh.destination, lab.mobile.address, lab.emu.emulator_port, ...

Format and meaning: docs/lab-hosts.md. Every mistake is a ConfigError naming the file
and the key, e.g. `lab.toml: mobile.emulator: '10.0.0.1' has no port; expected ADDRESS:PORT`.
"""
from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Mapping

from testbed.addresses import EMULATOR_PORT, WIRELESS_DEV
from testbed.errors import ConfigError
from testbed.lab.ssh import SshTarget
from testbed.profiles import parse_toml, read_text

ROLES = ("fixed", "emu", "mobile")
TOP_KEYS = {"name", "description", "work_dir", "bin_dir", "nginx", *ROLES}
HOST_KEYS = {"ssh", "port", "identity", "ssh_options", "work_dir", "bin_dir", "nginx"}
ROLE_KEYS = {
    "fixed": {"address", "capture_dev"},
    "emu": {"wireless_dev", "wireless_address", "emulator_port"},
    "mobile": {"address", "wireless_dev", "emulator", "fixed_net"},
}
DEFAULT_NGINX = "/usr/sbin/nginx"
# What reaches a command on a host, checked here so a mistake is named by file and key.
ABSOLUTE_PATH = re.compile(r"/[A-Za-z0-9_.+/-]*")                  # absolute, no spaces or shell characters
DEVICE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,14}")  # a Linux interface name (at most 15)
DESTINATION = re.compile(r"([A-Za-z0-9_.-]+@)?[A-Za-z0-9_][A-Za-z0-9_.:-]*")   # user@host or an alias
SSH_OPTION = re.compile(r"[A-Za-z]+=\S.*")                                      # Key=Value
# The ssh options a testbed file may set: host keys, authentication, algorithms and keepalives.
# An allow-list because ssh runs local commands or loads libraries for many others (ProxyCommand,
# ProxyJump, LocalCommand, KnownHostsCommand, PermitLocalCommand, PKCS11Provider, ...), and squall
# runs ssh as root; the master connection's own options (Control*) and forwarding stay squall's.
# A jump host belongs in root's ssh_config under the alias named by `ssh`.
SSH_OPTIONS_ALLOWED = frozenset(key.lower() for key in (
    "AddressFamily", "BindAddress", "BindInterface", "CASignatureAlgorithms", "CertificateFile", "CheckHostIP",
    "Ciphers", "Compression", "ConnectionAttempts", "ConnectTimeout", "FingerprintHash", "GlobalKnownHostsFile",
    "GSSAPIAuthentication", "HostbasedAcceptedAlgorithms", "HostKeyAlgorithms", "HostKeyAlias", "HostName",
    "IdentitiesOnly", "IdentityFile", "IPQoS", "KbdInteractiveAuthentication", "KexAlgorithms", "LogLevel", "MACs",
    "NumberOfPasswordPrompts", "PasswordAuthentication", "Port", "PreferredAuthentications",
    "PubkeyAcceptedAlgorithms", "PubkeyAcceptedKeyTypes", "PubkeyAuthentication", "RekeyLimit",
    "RequiredRSASize", "ServerAliveCountMax", "ServerAliveInterval", "StrictHostKeyChecking", "TCPKeepAlive",
    "UpdateHostKeys", "User", "UserKnownHostsFile", "VerifyHostKeyDNS"))


@dataclass(frozen=True)
class LabHost:
    role: str
    ssh: SshTarget
    work_dir: PurePosixPath        # where this host writes a run's files (a subdirectory per run)
    bin_dir: PurePosixPath         # squall's C programs on this host
    nginx: str


@dataclass(frozen=True)
class FixedHost(LabHost):
    address: str                   # testbed address of the servers and senders
    capture_dev: str               # fixed.pcap is captured here (the LAN towards emu)


@dataclass(frozen=True)
class EmuHost(LabHost):
    wireless_dev: str              # the router NPA's TUN (also where a tc router goes)
    wireless_address: str          # its address (the mobile host's peer)
    emulator_port: int


@dataclass(frozen=True)
class MobileHost(LabHost):
    address: str                   # its TUN's address: the mobile testbed address
    wireless_dev: str
    emulator: tuple[str, int]      # the emulator as the mobile NPA reaches it
    fixed_net: str                 # routed through the TUN by the mobile NPA


@dataclass(frozen=True)
class LabTestbed:
    path: Path
    name: str
    description: str
    fixed: FixedHost
    emu: EmuHost
    mobile: MobileHost
    source: str                    # the file's text, kept in meta.json

    def hosts(self) -> tuple[LabHost, LabHost, LabHost]:
        return (self.fixed, self.emu, self.mobile)


def load(path: Path) -> LabTestbed:
    path = Path(path)
    source = read_text(path)          # the scenario's reader: the same refusals, the same words
    return parse(parse_toml(source, path), path, source)


def parse(data: Mapping[str, Any], path: Path, source: str = "") -> LabTestbed:
    where = _Where(str(path))
    _refuse_unknown(data, TOP_KEYS, where, "")
    for role in ROLES:
        if not isinstance(data.get(role), Mapping):
            raise ConfigError(where(role), "missing table; expected [fixed], [emu] and [mobile], one per lab host")
    defaults = {k: data[k] for k in ("work_dir", "bin_dir", "nginx") if k in data}
    fixed = FixedHost(**_common("fixed", data["fixed"], defaults, where),
                      address=_address(data["fixed"], "address", where("fixed.address")),
                      capture_dev=_name(data["fixed"], "capture_dev", where("fixed.capture_dev"), "eth0"))
    emu_table = data["emu"]
    if "control" in emu_table:
        raise ConfigError(where("emu.control"), "no longer used: squall sends START and STOP through its SSH "
                          "connection to the emulator's control socket, never over the network "
                          "(docs/lab-hosts.md); remove the key")
    port = _port(emu_table.get("emulator_port", EMULATOR_PORT), where("emu.emulator_port"))
    emu_common = _common("emu", emu_table, defaults, where)
    emu = EmuHost(**emu_common,
                  wireless_dev=_name(emu_table, "wireless_dev", where("emu.wireless_dev"), WIRELESS_DEV),
                  wireless_address=_address(emu_table, "wireless_address", where("emu.wireless_address")),
                  emulator_port=port)
    mobile_table = data["mobile"]
    mobile = MobileHost(**_common("mobile", mobile_table, defaults, where),
                        address=_address(mobile_table, "address", where("mobile.address")),
                        wireless_dev=_name(mobile_table, "wireless_dev", where("mobile.wireless_dev"), WIRELESS_DEV),
                        emulator=_endpoint(_required(mobile_table, "emulator", where("mobile.emulator")),
                                           where("mobile.emulator")),
                        fixed_net=_network(mobile_table, "fixed_net", where("mobile.fixed_net")))
    addresses = {"fixed.address": fixed.address, "emu.wireless_address": emu.wireless_address,
                 "mobile.address": mobile.address}
    for key, address in addresses.items():
        other = next((k for k, a in addresses.items() if a == address and k != key), None)
        if other is not None:
            raise ConfigError(where(other), f"{address} is also {key}; each host needs its own testbed address")
    if ipaddress.ip_address(mobile.address) in ipaddress.ip_network(mobile.fixed_net):
        raise ConfigError(where("mobile.address"), f"{mobile.address} is inside mobile.fixed_net {mobile.fixed_net}, "
                          "which the mobile host routes through the link; expected its TUN's own address outside it")
    if ipaddress.ip_address(fixed.address) not in ipaddress.ip_network(mobile.fixed_net):
        raise ConfigError(where("mobile.fixed_net"), f"{mobile.fixed_net} does not contain the fixed host's "
                          f"address {fixed.address} (fixed.address); the mobile host routes it through the link")
    name = data.get("name", path.stem)
    if not isinstance(name, str) or not name:
        raise ConfigError(where("name"), f"{name!r} is not a name; expected a non-empty string")
    return LabTestbed(path, name, str(data.get("description", "")), fixed, emu, mobile, source)


class _Where:
    def __init__(self, file: str):
        self.file = file

    def __call__(self, key: str) -> str:
        return f"{self.file}: {key}" if key else self.file


def _refuse_unknown(table: Mapping[str, Any], allowed: set[str], where: _Where, prefix: str) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise ConfigError(where(prefix + unknown[0]), f"unknown key; expected one of {', '.join(sorted(allowed))}")


def _required(table: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in table:
        raise ConfigError(where, "missing; see docs/lab-hosts.md")
    return table[key]


def _common(role: str, table: Mapping[str, Any], defaults: Mapping[str, Any], where: _Where) -> dict[str, Any]:
    _refuse_unknown(table, HOST_KEYS | ROLE_KEYS[role], where, f"{role}.")
    destination = _required(table, "ssh", where(f"{role}.ssh"))
    if not isinstance(destination, str) or not DESTINATION.fullmatch(destination):
        raise ConfigError(where(f"{role}.ssh"), f"{destination!r} is not an SSH destination; expected user@host "
                          "or an ssh_config alias (letters, digits, . _ - :)")
    port = table.get("port")
    identity = table.get("identity")
    if identity is not None and (not isinstance(identity, str) or not identity):
        raise ConfigError(where(f"{role}.identity"), f"{identity!r} is not a key file path")
    options = table.get("ssh_options", [])
    if not isinstance(options, list) or not all(isinstance(o, str) and SSH_OPTION.fullmatch(o) for o in options):
        raise ConfigError(where(f"{role}.ssh_options"), f"{options!r}: expected a list of \"Key=Value\" strings")
    for option in options:
        _allowed_ssh_option(option, where(f"{role}.ssh_options"))
    target = SshTarget(destination, None if port is None else _port(port, where(f"{role}.port")),
                       None if identity is None else str(Path(identity).expanduser()), tuple(options))
    merged = {**defaults, **{k: table[k] for k in ("work_dir", "bin_dir", "nginx") if k in table}}
    paths = {key: _absolute(merged, key, where(f"{role}.{key}")) for key in ("work_dir", "bin_dir")}
    nginx = merged.get("nginx", DEFAULT_NGINX)
    if not isinstance(nginx, str) or not ABSOLUTE_PATH.fullmatch(nginx):
        raise ConfigError(where(f"{role}.nginx"), f"{nginx!r} is not an absolute path of letters, digits "
                          "and . _ + - /")
    return {"role": role, "ssh": target, "work_dir": paths["work_dir"], "bin_dir": paths["bin_dir"], "nginx": nginx}


def _allowed_ssh_option(option: str, where: str) -> None:
    key = option.split("=", 1)[0]
    if key.lower() not in SSH_OPTIONS_ALLOWED:
        raise ConfigError(where, f"{key} is not an option squall passes to ssh (it may run a local command as root "
                          "or is squall's own); allowed: host keys, authentication, algorithms, timeouts and "
                          "keepalives (see docs/lab-hosts.md); put anything else, such as a jump host, in root's "
                          "ssh_config under the alias named by `ssh`")


def _absolute(table: Mapping[str, Any], key: str, where: str) -> PurePosixPath:
    if key not in table:
        raise ConfigError(where, "missing (here or at the top of the file); expected an absolute path on the host")
    value = table[key]
    if not isinstance(value, str) or not ABSOLUTE_PATH.fullmatch(value) or value.rstrip("/") == "":
        raise ConfigError(where, f"{value!r} is not an absolute path other than / of letters, digits and . _ + - /")
    return PurePosixPath(value)


def _port(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 65535:
        raise ConfigError(where, f"{value!r} is not a port number 1..65535")
    return value


def _address(table: Mapping[str, Any], key: str, where: str) -> str:
    return _ip(table, key, where, ipaddress.IPv4Address, "an IPv4 address (without prefix length)")


def _network(table: Mapping[str, Any], key: str, where: str) -> str:
    return _ip(table, key, where, ipaddress.IPv4Network, "an IPv4 network such as \"198.18.40.0/24\"")


def _ip(table: Mapping[str, Any], key: str, where: str, kind: Callable[[Any], object], expected: str) -> str:
    """The required key as `kind` writes it; ConfigError "... is not <expected>" else."""
    value = _required(table, key, where)
    try:
        return str(kind(value))
    except (ValueError, TypeError):
        raise ConfigError(where, f"{value!r} is not {expected}") from None


def _name(table: Mapping[str, Any], key: str, where: str, default: str) -> str:
    value = table.get(key, default)
    if not isinstance(value, str) or not DEVICE.fullmatch(value):
        raise ConfigError(where, f"{value!r} is not a network device name (letters, digits, _ . -, at most 15)")
    return value


def _endpoint(value: Any, where: str) -> tuple[str, int]:
    if not isinstance(value, str) or ":" not in value:
        raise ConfigError(where, f"{value!r} has no port; expected ADDRESS:PORT")
    host, _, port = value.rpartition(":")
    if not port.isdigit():
        raise ConfigError(where, f"{value!r}: {port!r} is not a port; expected ADDRESS:PORT")
    try:
        address = str(ipaddress.IPv4Address(host))
    except ValueError:
        raise ConfigError(where, f"{value!r}: {host!r} is not an IPv4 address; expected ADDRESS:PORT") from None
    return address, _port(int(port), where)
