"""The `squall` command."""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from pathlib import Path

from analysis.report.printable import escaped
from testbed.run import calibrate, meta, runner
from testbed.run import status, worker
from testbed.run import drain_bound
from testbed.run.lint import scenario_warnings
from testbed.run.slurm import SlurmError, SlurmOptions, recorded_options
from testbed.scenario import describe
from testbed.scenario import loader as scenario_mod
from testbed.scenario.tolerances import share_text
from testbed.units import format_time_us, parse_time_us
from testbed.errors import ConfigError
from testbed.lanes import link_demo
from testbed.lanes.lane import LaneBusy
from testbed.link.session import npa_priority_for, realtime_priority


def _show(args: argparse.Namespace) -> int:
    sc = scenario_mod.load(Path(args.scenario))
    for warning in scenario_warnings(sc):
        print(f"squall show: warning: {warning}", file=sys.stderr)
    if args.json:
        print(json.dumps(runner.expanded(sc)["cells"], indent=2))
        return 0
    print(f"scenario {sc.name}: {len(sc.cells)} cells x {sc.replications} replications, "
          f"seed {sc.seed}, timeout {format_time_us(sc.timeout_us)}, "
          f"timing tolerance {format_time_us(sc.tolerances.timing_us)}, "
          f"CPU wait tolerance {share_text(sc.tolerances.cpu_wait_share)}")
    if sc.description:
        print(f"  {escaped(sc.description)}")
    for cell in sc.cells:
        print()
        print("\n".join(describe.cell_lines(cell)))
        print(drain_bound.bound_text(cell, sc.timeout_us))
    return 0


def _run(args: argparse.Namespace) -> int:
    if args.scenario is None and args.resume is None:
        print("squall run: give a SCENARIO file, or --resume RUN_DIR", file=sys.stderr)
        return 2
    if args.scenario is not None and args.resume is not None:
        print("squall run: give either a SCENARIO or --resume RUN_DIR, not both "
              "(a resumed run uses the scenario.toml stored in its directory)", file=sys.stderr)
        return 2
    redo = tuple(status for status, asked in (("degraded", args.redo_degraded), ("timeout", args.redo_timeouts))
                 if asked)
    if redo and args.resume is None:
        print("squall run: --redo-degraded and --redo-timeouts go with --resume RUN_DIR (a new run has "
              "nothing to redo)", file=sys.stderr)
        return 2
    if args.slurm and args.resume is not None:
        _take_recorded_slurm_options(args)
    if args.resume is not None and (args.title or args.note):
        print("squall run: --title and --note describe a new run (its meta.json); a resumed run keeps "
              "its own", file=sys.stderr)
        return 2
    lane_base = runner.default_lane_base() if args.lane_base is None else args.lane_base
    npa_priority_for(realtime_priority())        # a bad $SQUALL_*_PRIORITY: refused before anything is made
    options = runner.RunOptions(parallel=1 if args.parallel is None else args.parallel, replications=args.replications,
                                first_replication=args.first_replication, cells=args.cells,
                                results=Path(args.results), lane_base=lane_base,
                                analyse=not args.no_analysis, redo=redo,
                                prepare_ahead=args.prepare_ahead, title=args.title, note=args.note,
                                testbed_file=None if args.testbed is None else Path(args.testbed),
                                slurm=_slurm_options(args, lane_base))
    return runner.run_command(None if args.scenario is None else Path(args.scenario), options,
                              None if args.resume is None else Path(args.resume))


def _take_recorded_slurm_options(args: argparse.Namespace) -> None:
    """--resume RUN --slurm: every Slurm option not given now is the run's own (its newest
    submission's); those given now override them."""
    number, recorded = recorded_options(Path(args.resume))
    taken = {dest: value for dest, value in recorded.items() if getattr(args, dest) in (None, False)}
    for dest, value in taken.items():
        setattr(args, dest, value)
    if taken:
        words = []
        for dest, value in taken.items():
            flag = "--" + dest.replace("_", "-")
            words += [flag] if value is True else [f"{flag}={v}" for v in value] if isinstance(value, list) \
                else [flag, str(value)]
        given = sorted(set(recorded) - set(taken))
        print(f"squall run: resuming with the run's own Slurm settings (submission {number}): {' '.join(words)}"
              + (f"; given now instead: {', '.join('--' + d.replace('_', '-') for d in given)}" if given else ""),
              file=sys.stderr)


def _slurm_options(args: argparse.Namespace, lane_base: int) -> SlurmOptions | None:
    if not args.slurm:
        for option, given in (("--partition", args.partition), ("--lanes-per-node", args.lanes_per_node),
                              ("--sbatch-arg", args.sbatch_arg), ("--wait", args.wait),
                              ("--units-per-task", args.units_per_task)):
            if given:
                raise ConfigError(option, "applies to --slurm runs only")
        return None
    if args.testbed is not None:
        raise ConfigError("--slurm", "a run goes to Slurm or to the lab hosts of --testbed, not both")
    if args.parallel is not None:
        raise ConfigError("--parallel", "does not apply to --slurm runs: Slurm runs as many tasks at once as "
                          "the nodes have lanes (Gres=lane:K, or --lanes-per-node CPUs each; docs/cluster.md)")
    lanes_per_node = 1 if args.lanes_per_node is None else args.lanes_per_node
    node_lanes = lanes_per_node * (2 if args.prepare_ahead else 1)    # a spare beside each task's lane
    if not 1 <= lanes_per_node <= 128 or not 0 <= lane_base <= 128 - node_lanes:
        spares = " and as many spares (--prepare-ahead)" if args.prepare_ahead else ""
        raise ConfigError("--lanes-per-node", f"{lanes_per_node} lanes{spares} from --lane-base {lane_base}: "
                          "the lanes of a node are numbers in 0..127")
    per_task = 1 if args.units_per_task is None else args.units_per_task
    if per_task < 1:
        raise ConfigError("--units-per-task", f"{per_task} is not a number of units >= 1")
    if args.prepare_ahead and per_task < 2:
        raise ConfigError("--prepare-ahead", "with --slurm it goes with --units-per-task 2 or more: a task "
                          "sets up its next unit on a spare lane, and with one unit per task there is none")
    return SlurmOptions(partition=args.partition, lanes_per_node=lanes_per_node,
                        sbatch_args=tuple(args.sbatch_arg or ()), wait=args.wait, units_per_task=per_task,
                        prepare_ahead=args.prepare_ahead)


def _worker(args: argparse.Namespace) -> int:
    if os.geteuid() != 0:
        print("squall worker: needs root (network namespaces, TUN devices, tc)", file=sys.stderr)
        return 2
    if args.count < 1:
        raise ConfigError("--count", f"{args.count} is not a number of units >= 1")
    return worker.worker_command(Path(args.run_dir), args.unit, args.submission, count=args.count)


def _status(args: argparse.Namespace) -> int:
    return status.status_command(Path(args.run_dir), as_json=args.json)


class _Version(argparse.Action):
    """--version: "squall (squall) VERSION", the C programs' form and version (scripts/squall-version),
    and the full git revision; found only when asked (it runs git)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="print squall's version and git revision, then exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> None:
        print(f"squall (squall) {meta.squall_version()}\ngit revision {meta.git_revision()}")
        parser.exit(0)


def _calibrate(args: argparse.Namespace) -> int:
    if os.geteuid() != 0:
        print("squall calibrate: needs root (network namespaces, TUN devices)", file=sys.stderr)
        return 2
    options = calibrate.CalibrateOptions(
        max_lanes=args.max_lanes, lane_base=args.lane_base, rounds=args.rounds, results=Path(args.results),
        tolerance_us=parse_time_us(args.tolerance, "--tolerance"),
        duration_us=parse_time_us(args.duration, "--duration"), json=args.json)
    return calibrate.calibrate_command(options)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="squall", description="Seawind-style wireless link emulator testbed")
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("show", help="print a scenario's fully expanded matrix")
    show.add_argument("scenario")
    show.add_argument("--json", action="store_true", help="machine-readable output")
    show.set_defaults(func=_show)

    run = sub.add_parser("run", help="run every cell and replication of a scenario (docs/runner.md)")
    run.add_argument("scenario", nargs="?", help="scenario file (omit with --resume)")
    run.add_argument("--parallel", type=int, metavar="K",
                     help="replications at once, one lane each (default 1; not with --slurm)")
    run.add_argument("--replications", type=int, metavar="N", help="replications per cell (default: the scenario's)")
    run.add_argument("--first-replication", type=int, metavar="K",
                     help="run replications K..N only (a later sitting on another machine; default 1)")
    run.add_argument("--cells", metavar="GLOB[,GLOB...]", help="only the cells whose id matches one of the globs, e.g. 'link-r2_*' or 'link-r0_*,link-r4_*'")
    run.add_argument("--results", default="results", metavar="DIR", help="where run directories go (default results)")
    run.add_argument("--resume", metavar="RUN_DIR", help="redo only the missing or failed replications of a run")
    run.add_argument("--redo-degraded", action="store_true",
                     help="with --resume: redo the degraded replications too (timing error or CPU wait beyond "
                          "the scenario's tolerance)")
    run.add_argument("--redo-timeouts", action="store_true",
                     help="with --resume: redo the timed-out replications too (kept by default: a timeout is "
                          "a result of the link, counted as a time longer than the timeout)")
    run.add_argument("--lane-base", type=int, metavar="N",
                     help="first lane number; lanes N..N+K-1 are used, N..N+K with --prepare-ahead "
                          "(default $SQUALL_LANE_BASE or 0)")
    run.add_argument("--prepare-ahead", action="store_true",
                     help="one more lane (N..N+K) builds and sets up the next replication while K run their "
                          "flows, so lane work stops adding to the study's wall time (docs/runner.md); with "
                          "--slurm, a spare lane per task")
    run.add_argument("--testbed", metavar="FILE",
                     help="run on the three lab hosts of this testbed file over SSH, serially (docs/lab-hosts.md)")
    run.add_argument("--title", metavar="TEXT",
                     help="a short title of this run (as Flent's --title-extra): meta.json and the report")
    run.add_argument("--note", metavar="TEXT",
                     help="a free-text note on this run (as Flent's --note): meta.json and the report")
    run.add_argument("--no-analysis", action="store_true",
                     help="skip the analysis at the end (squall report RUN_DIR does it later)")
    cluster = run.add_argument_group("cluster (docs/cluster.md)")
    cluster.add_argument("--slurm", action="store_true",
                         help="hand the replications to Slurm as job arrays; the results directory must be "
                              "on the cluster's shared file system")
    cluster.add_argument("--partition", metavar="P", help="Slurm partition (default: the cluster's)")
    cluster.add_argument("--lanes-per-node", type=int, metavar="K",
                         help="lanes --lane-base..+K-1 a node's tasks share (default 1; at most the node's CPUs)")
    cluster.add_argument("--sbatch-arg", action="append", metavar="ARG",
                         help="passed to every sbatch, e.g. --sbatch-arg=--time=30 (repeatable)")
    cluster.add_argument("--wait", action="store_true", help="wait until the submitted jobs have ended")
    cluster.add_argument("--units-per-task", type=int, metavar="M",
                         help="units (replications, or CBI chains) each array task runs in turn (default 1); "
                              "fewer, longer tasks save Slurm's and Python's start-up per unit")
    run.set_defaults(func=_run)

    work = sub.add_parser("worker", help="run one planned unit of a --slurm run (what each array task runs)")
    work.add_argument("run_dir")
    work.add_argument("--unit", type=int, required=True, metavar="N", help="the unit's index in its submission")
    work.add_argument("--submission", type=int, metavar="K", help="the submission (default: the newest)")
    work.add_argument("--count", type=int, default=1, metavar="M", help="run units N .. N+M-1 in turn")
    work.set_defaults(func=_worker)

    status = sub.add_parser("status", help="what a run directory holds: per cell ok/failed/timeout/missing")
    status.add_argument("run_dir")
    status.add_argument("--json", action="store_true",
                        help="one JSON object: per cell the counts, medians and each replication's status and reason; "
                             "the Slurm jobs")
    status.set_defaults(func=_status)

    cal = sub.add_parser("calibrate", help="the end-to-end timing error against the number of lanes run at "
                                           "once: how far --parallel can go on this machine (docs/runner.md)")
    cal.add_argument("--max-lanes", type=int, default=os.cpu_count() or 1, metavar="K",
                     help="try 1, 2, 4, ... lanes up to K at once (default: the number of CPUs)")
    cal.add_argument("--tolerance", default="1ms", metavar="T", help="the timing error allowed (default 1ms)")
    cal.add_argument("--duration", default="4s", metavar="D", help="how long the load lasts (default 4s)")
    cal.add_argument("--rounds", type=int, default=1, metavar="R", help="replications per lane (default 1)")
    cal.add_argument("--lane-base", type=int, default=runner.DEFAULT_LANE_BASE, metavar="N",
                     help="first lane number; lanes N..N+K-1 are used (default $SQUALL_LANE_BASE or 0)")
    cal.add_argument("--results", default="results", metavar="DIR",
                     help="where the calibration's runs go (default results)")
    cal.add_argument("--json", action="store_true", help="machine-readable output")
    cal.set_defaults(func=_calibrate)

    demo_link = sub.add_parser("demo-link", description=link_demo.__doc__,
                               formatter_class=argparse.RawDescriptionHelpFormatter,
                               help="one lane, one link: ping and bulk TCP against the prediction")
    link_demo.add_arguments(demo_link)
    demo_link.set_defaults(func=link_demo.demo_command)

    from analysis.cli import add_commands as add_analysis_commands
    add_analysis_commands(sub)   # analyze, report, plot, compare
    for command in sub.choices.values():     # `squall COMMAND --version` as `squall --version`
        command.add_argument("--version", action=_Version)
    return parser


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parser of each subcommand, by name (the man page and the shell completion)."""
    found = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(found.choices)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser().parse_args(argv)
    # What squall creates (run directories, captures, logs, summaries) is writable by its user
    # alone, whatever the caller's umask: another user must not be able to plant links in it.
    os.umask(os.umask(0) | 0o022)
    try:
        return args.func(args)
    except ConfigError as e:
        print(f"squall: {e}", file=sys.stderr)
        return 2
    except FileNotFoundError as e:
        print(f"squall: {e}", file=sys.stderr)
        return 2
    except LaneBusy as e:           # found before anything is created (run.runner.check_lanes_free)
        print(f"squall: {e}", file=sys.stderr)
        return 2
    except SlurmError as e:
        print(f"squall: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:       # before a run started (a run handles SIGINT itself)
        print("squall: interrupted", file=sys.stderr)
        return 128 + signal.SIGINT


if __name__ == "__main__":
    sys.exit(main())
