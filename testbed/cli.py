"""The `squall` command."""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from . import runner      # also registers the [flows], [router] and [tcp] parsers
from . import scenario as scenario_mod
from .errors import ConfigError


def _show(args: argparse.Namespace) -> int:
    sc = scenario_mod.load(Path(args.scenario))
    if args.json:
        print(json.dumps(runner.expanded(sc)["cells"], indent=2))
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
            print(f"  {name}: {runner.plain(value)}")
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


def _run(args: argparse.Namespace) -> int:
    if args.scenario is None and args.resume is None:
        print("squall run: give a SCENARIO file, or --resume RUN_DIR", file=sys.stderr)
        return 2
    if args.scenario is not None and args.resume is not None:
        print("squall run: give either a SCENARIO or --resume RUN_DIR, not both "
              "(a resumed run uses the scenario.toml stored in its directory)", file=sys.stderr)
        return 2
    if os.geteuid() != 0 and args.testbed is None:
        print("squall run: needs root (network namespaces, TUN devices, tc)", file=sys.stderr)
        return 2
    options = runner.RunOptions(parallel=args.parallel, replications=args.replications, cells=args.cells,
                                results=Path(args.results), lane_base=args.lane_base,
                                analyse=not args.no_analysis,
                                testbed_file=None if args.testbed is None else Path(args.testbed))
    return runner.run_command(None if args.scenario is None else Path(args.scenario), options,
                              None if args.resume is None else Path(args.resume))


def _demo_link(args: argparse.Namespace) -> int:
    from . import demo

    return demo.main(args.args)


def _status(args: argparse.Namespace) -> int:
    return runner.status_command(Path(args.run_dir))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="squall", description="Seawind-style wireless link emulator testbed")
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("show", help="print a scenario's fully expanded matrix")
    show.add_argument("scenario")
    show.add_argument("--json", action="store_true", help="machine-readable output")
    show.set_defaults(func=_show)

    run = sub.add_parser("run", help="run every cell and replication of a scenario (docs/runner.md)")
    run.add_argument("scenario", nargs="?", help="scenario file (omit with --resume)")
    run.add_argument("--parallel", type=int, default=1, metavar="K", help="replications at once, one lane each")
    run.add_argument("--replications", type=int, metavar="N", help="replications per cell (default: the scenario's)")
    run.add_argument("--cells", metavar="GLOB", help="only the cells whose id matches, e.g. 'link-r2_*'")
    run.add_argument("--results", default="results", metavar="DIR", help="where run directories go (default results)")
    run.add_argument("--resume", metavar="RUN_DIR", help="redo only the missing or failed replications of a run")
    run.add_argument("--lane-base", type=int, default=runner.DEFAULT_LANE_BASE, metavar="N",
                     help="first lane number; lanes N..N+K-1 are used (default $SQUALL_LANE_BASE or 0)")
    run.add_argument("--testbed", metavar="FILE",
                     help="run on the three lab hosts of this testbed file over SSH, serially (docs/lab-hosts.md)")
    run.add_argument("--no-analysis", action="store_true",
                     help="skip the analysis at the end (squall report RUN_DIR does it later)")
    run.set_defaults(func=_run)

    status = sub.add_parser("status", help="what a run directory holds: per cell ok/failed/timeout/missing")
    status.add_argument("run_dir")
    status.set_defaults(func=_status)

    demo_link = sub.add_parser("demo-link", add_help=False,
                               help="one lane, one link: ping and bulk TCP against the prediction "
                                    "(python -m testbed.demo; --help for its options)")
    demo_link.add_argument("args", nargs=argparse.REMAINDER)
    demo_link.set_defaults(func=_demo_link)

    from analysis.cli import add_commands as add_analysis_commands
    add_analysis_commands(sub)   # analyze, report, plot
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["demo-link"]:      # its own options, --help included
        return _demo_link(argparse.Namespace(args=argv[1:]))
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ConfigError as e:
        print(f"squall: {e}", file=sys.stderr)
        return 2
    except FileNotFoundError as e:
        print(f"squall: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
