"""The tc router on the router-side TUN of a host: probe, apply, collect statistics, tear down.

Every step is a command on a `Host` (testbed/hosts.py): a lane's emulation namespace or the
lab's emulation host over SSH alike. `apply_router` returns the batch text it applied (the
runner stores it as `router.tc`); `collect_stats` returns the final `tc -s -j` statistics
(stored as `tc-stats.json`).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

from testbed.hosts import Host
from testbed.router.plan import RouterConfig
from testbed.router.tc_render import render_tc_batch

DEFAULT_DEVICE = "wl0"
_PROBE_DEVICE = "sqprobe0"
# The router's own kinds, as tc commands (after `tc`, device as {dev}) that succeed only if the
# kernel has the kind; options minimal and valid. A discipline is probed with its own options.
_HTB_ROOT = ("qdisc", "add", "dev", "{dev}", "root", "handle", "1:", "htb")
_U32_FILTER = ("filter", "add", "dev", "{dev}", "parent", "1:", "protocol", "ip", "prio", "1", "u32",
               "match", "ip", "protocol", "6", "0xff", "flowid", "1:1")
_BATCH_FAILURE = re.compile(r"Command failed -:(\d+)")


class RouterError(RuntimeError):
    """The router could not be applied; the message says what, why and what to do."""


# Probe outcomes per (host, kind): None when the kind works, else tc's complaint.
_probed: dict[tuple[str, str], str | None] = {}


@dataclass(frozen=True)
class _Kind:
    """A kind the kernel must have: a qdisc or classifier, how to ask for it, its module."""
    name: str
    probes: tuple[tuple[str, ...], ...]
    module: str
    discipline: bool


def needed_kinds(config: RouterConfig) -> tuple[_Kind, ...]:
    """Every qdisc and classifier kind the configuration's batch uses."""
    kinds = [_Kind("htb", (_HTB_ROOT,), "sch_htb", False)]
    queues = {c.queue.discipline: c.queue for c in reversed(config.classes)}
    for name in config.disciplines():
        root = ("qdisc", "add", "dev", "{dev}", "root", "handle", "1:", *queues[name].tc_options().split())
        kinds.append(_Kind(name, (root,), queues[name].kernel_module, True))
    if config.filters:
        kinds.append(_Kind("u32", (_HTB_ROOT, _U32_FILTER), "cls_u32", False))
    return tuple(kinds)


def _probe_once(host: Host, kind: _Kind) -> str | None:
    """None when the host's kernel can create `kind`, else tc's complaint; tried once per host
    on a scratch veth created and removed there."""
    key = (host.label, kind.name)
    if key not in _probed:
        _probed[key] = _probe(host, kind)
    return _probed[key]


def _probe(host: Host, kind: _Kind) -> str | None:
    peer = f"{_PROBE_DEVICE}p"
    made = host.run(["ip", "link", "add", _PROBE_DEVICE, "type", "veth", "peer", "name", peer], check=False)
    if made.returncode != 0:
        raise RouterError(f"cannot check which qdiscs the kernel has: creating the scratch veth "
                          f"{_PROBE_DEVICE} in {host.label} failed: {made.stderr.strip()}")
    try:
        for argv in kind.probes:
            proc = host.run(["tc", *(a.format(dev=_PROBE_DEVICE) for a in argv)], check=False)
            if proc.returncode != 0:
                return " ".join(proc.stderr.split()) or f"tc exited {proc.returncode}"
        return None
    finally:
        host.run(["ip", "link", "del", _PROBE_DEVICE], check=False)


def check_kernel_support(host: Host, config: RouterConfig) -> None:
    for kind in needed_kinds(config):
        complaint = _probe_once(host, kind)
        if complaint is not None:
            raise RouterError(_missing_kind_message(host.label, kind, complaint))


def _missing_kind_message(where: str, kind: _Kind, complaint: str) -> str:
    what = "classifier" if kind.name == "u32" else "qdisc"
    hint = (" Set `engine = \"emulator\"` in the scenario's [router] section to run the same router "
            "in the emulator's router stage instead." if kind.discipline else "")
    return (f"the router configuration needs a `{kind.name}` {what}, and the kernel of {where} cannot "
            f"create one (tc: \"{complaint}\"; the kernel probably lacks {kind.module}).{hint}")


def apply_router(host: Host, config: RouterConfig, dev: str = DEFAULT_DEVICE, *, probe_kernel: bool = True) -> str:
    """Replaces whatever root qdisc `dev` has on the host with the configured router.

    `probe_kernel`: first check on a scratch veth that the kernel has every kind the batch
    needs (a clear message naming the missing module); without it a missing kind fails in
    the batch, whose message names the line."""
    batch = render_tc_batch(config, dev)
    if probe_kernel:
        check_kernel_support(host, config)
    teardown_router(host, dev)
    proc = host.run(["tc", "-batch", "-"], input=batch, check=False)
    if proc.returncode != 0:
        teardown_router(host, dev)
        raise RouterError(_batch_failure_message(host.label, dev, batch, proc.stderr))
    if proc.stderr.strip():
        # e.g. "Warning: sch_htb: quantum of class 10010 is small": not the router asked for.
        teardown_router(host, dev)
        raise RouterError(f"tc applied the router on {dev} in {host.label} but warned: "
                          f"{' '.join(proc.stderr.split())}; the router was removed again")
    return batch


def _batch_failure_message(where: str, dev: str, batch: str, stderr: str) -> str:
    lines = batch.splitlines()
    m = _BATCH_FAILURE.search(stderr)
    detail = " ".join(stderr.split())
    if m and 1 <= int(m.group(1)) <= len(lines):
        n = int(m.group(1))
        return (f"applying the router on {dev} in {where} failed at tc batch line {n} "
                f"`{lines[n - 1]}`: {detail}")
    return f"applying the router on {dev} in {where} with tc -batch failed: {detail}"


def teardown_router(host: Host, dev: str = DEFAULT_DEVICE) -> None:
    """Removes the root qdisc (and with it every class, leaf and filter). Absent is fine."""
    host.run(["tc", "qdisc", "del", "dev", dev, "root"], check=False)


def collect_stats(host: Host, dev: str = DEFAULT_DEVICE) -> dict:
    """Final statistics: {"device", "qdisc": [...], "class": [...], "class_text": str}.

    "qdisc" is `tc -s -j qdisc show` as tc prints it. iproute2 before 6.x ignores `-j` for
    classes, so "class" is parsed from the text output (kept verbatim in "class_text").
    """
    class_text = host.run(["tc", "-s", "class", "show", "dev", dev]).stdout
    return {
        "device": dev,
        "qdisc": _tc_json(host, ["qdisc", "show", "dev", dev]),
        "class": parse_class_stats(class_text),
        "class_text": class_text,
    }


_CLASS_HEAD = re.compile(r"^class (\S+) (\S+) (?:parent (\S+)|root)")
_CLASS_SENT = re.compile(r"Sent (\d+) bytes (\d+) pkt \(dropped (\d+), overlimits (\d+) requeues (\d+)\)")
_CLASS_BACKLOG = re.compile(r"backlog (\d+)b (\d+)p")
_CLASS_HTB = re.compile(r"lended: (\d+) borrowed: (\d+) giants: (\d+)")


def parse_class_stats(text: str) -> list[dict]:
    """`tc -s class show` text as dicts with the counters the analysis uses."""
    classes: list[dict] = []
    for line in text.splitlines():
        head = _CLASS_HEAD.match(line)
        if head:
            classes.append({"class": head.group(1), "handle": head.group(2), "parent": head.group(3)})
            continue
        if not classes:
            continue
        current = classes[-1]
        if m := _CLASS_SENT.search(line):
            for key, value in zip(("bytes", "packets", "drops", "overlimits", "requeues"), m.groups()):
                current[key] = int(value)
        elif m := _CLASS_BACKLOG.search(line):
            current["backlog"], current["qlen"] = int(m.group(1)), int(m.group(2))
        elif m := _CLASS_HTB.search(line):
            for key, value in zip(("lended", "borrowed", "giants"), m.groups()):
                current[key] = int(value)
    return classes


def _tc_json(host: Host, args: list[str]) -> list:
    out = host.run(["tc", "-s", "-j", *args]).stdout
    try:
        return json.loads(out) if out.strip() else []
    except json.JSONDecodeError as e:
        raise RouterError(f"`tc -s -j {' '.join(args)}` in {host.label} printed no valid JSON: {e}") from None
