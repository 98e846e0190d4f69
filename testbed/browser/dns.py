"""The replay's DNS server: Debian's dnsmasq (dnsmasq-base), answering each host name of the page
with its origin's address and nothing else, logging every query.

dnsmasq because it is one process that takes its whole zone on the command line (`--host-record`),
needs no configuration file, zone file or service to disable, and logs each query with its name
and type. A name of the page has only an IPv4 address, so an AAAA query gets an empty answer; any
other name NXDOMAIN (`--address=/#/`); records carry a TTL of 300 s (dnsmasq's default for its
own records is 0, which would make every connection look the name up again)."""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

DNSMASQ = "/usr/sbin/dnsmasq"
TTL_S = 300


def argv(listen: str, records: Mapping[str, str], log: Path, port: int = 53) -> list[str]:
    """dnsmasq in the foreground on `listen`:`port`; `records`: name -> IPv4 address."""
    return [DNSMASQ, "--keep-in-foreground", "--conf-file=/dev/null", "--no-resolv", "--no-hosts", "--no-poll",
            "--bind-interfaces", f"--listen-address={listen}", f"--port={port}", "--except-interface=lo",
            "--pid-file=", "--user=root", "--group=root", f"--local-ttl={TTL_S}", "--address=/#/",
            "--log-queries=extra", f"--log-facility={log}",
            *(f"--host-record={name},{address}" for name, address in records.items())]


def resolv_conf(server: str) -> str:
    """The client's resolver configuration: only the replay's server, one attempt at a time."""
    return f"# squall: the browser flow's replay DNS server (docs/browser.md)\nnameserver {server}\n"
