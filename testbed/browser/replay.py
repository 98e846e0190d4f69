"""`python -m testbed.browser.replay`: the server side of a `browser` flow (docs/browser.md).

On the fixed host: gives each host name of the HAR's page its own address (ORIGIN_FIRST_HOST on in
the fixed host's /24, testbed/addresses.py), makes the CA, writes the origin servers' nginx
configuration and document tree, starts nginx and the DNS server (on the fixed host's own address),
prints `listening ...` and serves until SIGTERM; then stops both, removes the addresses and prints
its summary (one JSON line). `<dir>/names.json` records which name had which address."""
from __future__ import annotations

import argparse
import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

from testbed.addresses import origin_addresses
from testbed.browser import ca, dns, har, origins

NGINX = "/usr/sbin/nginx"
READY_TIMEOUT_S = 10.0
STOP_GRACE_S = 3.0


def main(args: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m testbed.browser.replay", description=__doc__)
    p.add_argument("--har", type=Path, required=True)
    p.add_argument("--dir", type=Path, required=True, help="where nginx, dnsmasq and the CA keep their files")
    p.add_argument("--listen", required=True, help="the fixed host's address (the DNS server listens on it)")
    p.add_argument("--http", choices=("1.1", "2"), default="2")
    a = p.parse_args(args)
    try:
        page = har.read(a.har)
    except har.HarError as e:
        return _fail(str(e))
    run = a.dir.resolve()
    (run / "tmp").mkdir(parents=True, exist_ok=True)
    addresses = dict(zip(page.hosts, origin_addresses(a.listen, len(page.hosts))))
    (run / "names.json").write_text(json.dumps(addresses, indent=1) + "\n")
    device = _device_of(a.listen)
    added: list[str] = []
    stopped = {"term": False}
    signal.signal(signal.SIGTERM, lambda *_: stopped.update(term=True))
    programs: list[tuple[subprocess.Popen, int]] = []
    try:
        for address in addresses.values():
            _ip("address", "add", f"{address}/32", "dev", device)
            added.append(address)
        authority = ca.make(run / "ca", page.hosts)
        served = origins.write(page, addresses, run, authority, a.http == "2")
        nginx = subprocess.Popen([NGINX, "-p", str(run), "-e", str(run / "error.log"), "-c", str(run / "nginx.conf")],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        programs.append((nginx, signal.SIGQUIT))
        _wait(lambda: (run / "nginx.pid").exists(), nginx, "nginx")
        resolver = subprocess.Popen(dns.argv(a.listen, addresses, run / "dns.log"), stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        programs.append((resolver, signal.SIGTERM))
        _wait(lambda: _bound(53), resolver, "dnsmasq")
        print(f"listening {len(addresses)} host names, {len(page.origins)} origins, DNS at {a.listen}:53", flush=True)
        while not stopped["term"] and all(proc.poll() is None for proc, _ in programs):
            time.sleep(0.1)
        dead = [f"{proc.args[0]} exited with code {proc.returncode}" for proc, _ in programs if proc.poll() is not None]
        summary = {"ok": not dead, "page": page.url, "hosts": len(addresses), "origins": len(page.origins),
                   "entries": len(page.entries), "served": served.entries, "generated_bodies": served.generated,
                   "duplicates": served.duplicates, "http": a.http, "bytes": page.bytes}
        if dead:
            summary["error"] = "; ".join(dead)
        print(json.dumps(summary), flush=True)
        return 0 if not dead else 1
    except (OSError, RuntimeError, ValueError) as e:
        return _fail(str(e))
    finally:
        for proc, sig in programs:
            _stop(proc, sig)
        for address in added:
            _ip("address", "del", f"{address}/32", "dev", device, check=False)
        for bulky in ("docroot", "tmp"):        # the page is the HAR's; the logs and the CA stay
            shutil.rmtree(run / bulky, ignore_errors=True)


def _fail(error: str) -> int:
    print(f"replay: {error}", file=sys.stderr)
    print(json.dumps({"ok": False, "error": error}), flush=True)
    return 1


def _device_of(address: str) -> str:
    found = subprocess.run(["ip", "-o", "-4", "address", "show", "to", address], capture_output=True, text=True)
    words = found.stdout.split()
    if len(words) < 2:
        raise RuntimeError(f"no interface of this host has the address {address}")
    return words[1]


def _ip(*args: str, check: bool = True) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True)
    if check and done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")


def _bound(port: int) -> bool:
    found = subprocess.run(["ss", "-H", "-l", "-n", "-u", f"sport = :{port}"], capture_output=True, text=True)
    return bool(found.stdout.strip())


def _wait(ready: Callable[[], bool], proc: subprocess.Popen, name: str) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while not ready():
        if proc.poll() is not None:
            err = proc.stderr.read().decode(errors="replace").strip() if proc.stderr else ""
            raise RuntimeError(f"{name} exited with code {proc.returncode} at start: {err}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{name} was not ready within {READY_TIMEOUT_S:g} s")
        time.sleep(0.02)


def _stop(proc: subprocess.Popen, sig: int) -> None:
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


if __name__ == "__main__":
    raise SystemExit(main())
