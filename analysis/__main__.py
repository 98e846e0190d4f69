"""python -m analysis REPLICATION_DIR: per-connection and per-flow metrics as JSON."""

from __future__ import annotations

import argparse
import json
import sys

from analysis.errors import AnalysisInputError
from analysis.metrics.per_connection import analyse_replication
from analysis.metrics.rows import tcp_row, udp_row
from analysis.metrics.tcp import RTO_FLOOR_US


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m analysis", description=__doc__)
    parser.add_argument("replication_dir", help="a cells/<cell>/rep-NN directory")
    parser.add_argument("--rto-floor-us", type=int, default=RTO_FLOOR_US,
                        help="silence after which a retransmission of the oldest "
                             "outstanding data counts as a timeout (default %(default)s)")
    args = parser.parse_args(argv)
    try:
        r = analyse_replication(args.replication_dir, args.rto_floor_us)
    except AnalysisInputError as e:
        print(f"analysis: {e}", file=sys.stderr)
        return 1
    json.dump({"directory": str(r.directory), "log_cut_short": r.log_cut_short,
               "tcp": [tcp_row(side, m) for side, m in r.tcp],
               "udp": [udp_row(side, m) for side, m in r.udp],
               "warnings": r.warnings}, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
