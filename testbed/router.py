"""The tc router on the router-side TUN: probe, apply, collect statistics, tear down.

`apply_router` returns the batch text it applied (the runner stores it as `router.tc`);
`collect_stats` returns the final `tc -s -j` statistics (stored as `tc-stats.json`).
"""
from __future__ import annotations

import json
import re
import subprocess

from . import netns
from .router_config import RouterConfig
from .router_tc import render_tc_batch

DEFAULT_DEVICE = "wl0"
_PROBE_DEVICE = "sqprobe0"
# Minimal valid options per kind: only the kind's existence is being asked.
_PROBE_OPTIONS = {
    "htb": "htb",
    "pfifo": "pfifo limit 1",
    "bfifo": "bfifo limit 1500",
    "red": "red limit 3000 min 500 max 1500 avpkt 500 burst 1 probability 0.1 bandwidth 64kbit",
}
_BATCH_FAILURE = re.compile(r"Command failed -:(\d+)")


class RouterError(RuntimeError):
    """The router could not be applied; the message says what, why and what to do."""


# qdisc kinds known present per namespace: the probe runs once per namespace and kind.
_available: dict[tuple[str, str], bool] = {}


def qdisc_available(ns: str, kind: str) -> bool:
    """Whether the kernel behind `ns` can create qdisc `kind` (tried on a scratch veth in `ns`)."""
    key = (ns, kind)
    if key not in _available:
        _available[key] = _probe(ns, kind)
    return _available[key]


def _probe(ns: str, kind: str) -> bool:
    peer = f"{_PROBE_DEVICE}p"
    netns.run_in(ns, ["ip", "link", "add", _PROBE_DEVICE, "type", "veth", "peer", "name", peer])
    try:
        proc = netns.run_in(ns, ["tc", "qdisc", "add", "dev", _PROBE_DEVICE, "root", "handle", "1:",
                                 *_PROBE_OPTIONS[kind].split()], check=False)
        return proc.returncode == 0
    finally:
        netns.run_in(ns, ["ip", "link", "del", _PROBE_DEVICE], check=False)


def check_kernel_support(ns: str, config: RouterConfig) -> None:
    for kind in ("htb", *config.disciplines()):
        if not qdisc_available(ns, kind):
            raise RouterError(_missing_kind_message(kind))


def _missing_kind_message(kind: str) -> str:
    module = f"sch_{kind}" if kind not in ("pfifo", "bfifo") else "sch_fifo"
    hint = (" Set `engine = \"emulator\"` in the scenario's [router] section to run the same router "
            "in the emulator's router stage instead." if kind == "red" else "")
    return (f"the kernel cannot create a `{kind}` qdisc (tc reports the kind unknown: the kernel was "
            f"built without {module}); the router configuration needs it.{hint}")


def apply_router(ns: str, config: RouterConfig, dev: str = DEFAULT_DEVICE) -> str:
    """Replaces whatever root qdisc `dev` has in `ns` with the configured router."""
    batch = render_tc_batch(config, dev)
    check_kernel_support(ns, config)
    teardown_router(ns, dev)
    proc = _run_batch(ns, batch)
    if proc.returncode != 0:
        teardown_router(ns, dev)
        raise RouterError(_batch_failure_message(ns, dev, batch, proc.stderr))
    return batch


def _run_batch(ns: str, batch: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(netns.in_ns(ns, ["tc", "-batch", "-"]), input=batch, capture_output=True,
                          text=True, timeout=30)


def _batch_failure_message(ns: str, dev: str, batch: str, stderr: str) -> str:
    lines = batch.splitlines()
    m = _BATCH_FAILURE.search(stderr)
    detail = " ".join(stderr.split())
    if m and 1 <= int(m.group(1)) <= len(lines):
        n = int(m.group(1))
        return (f"applying the router on {dev} in namespace {ns} failed at tc batch line {n} "
                f"`{lines[n - 1]}`: {detail}")
    return f"applying the router on {dev} in namespace {ns} with tc -batch failed: {detail}"


def teardown_router(ns: str, dev: str = DEFAULT_DEVICE) -> None:
    """Removes the root qdisc (and with it every class, leaf and filter). Absent is fine."""
    netns.run_in(ns, ["tc", "qdisc", "del", "dev", dev, "root"], check=False)


def collect_stats(ns: str, dev: str = DEFAULT_DEVICE) -> dict:
    """Final statistics: {"device", "qdisc": [...], "class": [...], "class_text": str}.

    "qdisc" is `tc -s -j qdisc show` as tc prints it. iproute2 before 6.x ignores `-j` for
    classes, so "class" is parsed from the text output (kept verbatim in "class_text").
    """
    class_text = netns.run_in(ns, ["tc", "-s", "class", "show", "dev", dev]).stdout
    return {
        "device": dev,
        "qdisc": _tc_json(ns, ["qdisc", "show", "dev", dev]),
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


def _tc_json(ns: str, args: list[str]) -> list:
    out = netns.run_in(ns, ["tc", "-s", "-j", *args]).stdout
    try:
        return json.loads(out) if out.strip() else []
    except json.JSONDecodeError as e:
        raise RouterError(f"`tc -s -j {' '.join(args)}` in namespace {ns} printed no valid JSON: {e}") from None
