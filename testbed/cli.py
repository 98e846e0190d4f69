"""The `squall` command."""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

from . import scenario as scenario_mod
from .errors import ConfigError


def _show(args: argparse.Namespace) -> int:
    sc = scenario_mod.load(Path(args.scenario))
    if args.json:
        print(json.dumps([{"cell": c.cell_id, "axes": dict(c.labels), "link": asdict(c.link),
                           **{k: _jsonable(v) for k, v in c.sections.items()}} for c in sc.cells], indent=2))
        return 0
    print(f"scenario {sc.name}: {len(sc.cells)} cells x {sc.replications} replications, "
          f"seed {sc.seed}, timeout {sc.timeout_us / 1e6:g} s")
    if sc.description:
        print(f"  {sc.description}")
    for cell in sc.cells:
        print(f"\n[{cell.cell_id}]")
        for axis, label in cell.labels.items():
            print(f"  axis {axis} = {label}")
        print(f"  link {cell.link.name}: {_describe_link(cell.link)}")
        for name, value in cell.sections.items():
            print(f"  {name}: {_jsonable(value)}")
    return 0


def _describe_link(link) -> str:
    parts = []
    for name in ("down", "up"):
        d = link.direction(name)
        rate = "schedule" if len(d.bandwidth) > 1 else (
            "unlimited" if d.rate_bps is None else f"{d.rate_bps / 1000:g} kbit/s")
        parts.append(f"{name} {rate}, {d.delay_us / 1000:g} ms, MTU {d.mtu}, "
                     f"error {d.error_good:g}/{d.error_bad:g}, ARQ {d.arq_retransmissions} x "
                     f"{d.arq_delay_us / 1000:g} ms, buffers {d.send_buffer}/{d.recv_buffer} B"
                     f"{'' if d.in_order else ', out of order'}")
    ch = link.channel
    channel = f"trace {ch.trace}" if ch.trace else f"good {ch.good.render()}, bad {ch.bad.render()}"
    return "; ".join(parts) + f"; channel {channel}"


def _jsonable(value):
    try:
        return asdict(value)
    except TypeError:
        return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="squall", description="Seawind-style wireless link emulator testbed")
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("show", help="print a scenario's fully expanded matrix")
    show.add_argument("scenario")
    show.add_argument("--json", action="store_true", help="machine-readable output")
    show.set_defaults(func=_show)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ConfigError as e:
        print(f"squall: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
