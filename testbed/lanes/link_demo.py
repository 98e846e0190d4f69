"""`make demo`: one lane, one emulated GPRS-like link, real ping and bulk TCP through it.

Prints the measured round-trip time and goodput beside what the link parameters
predict. Needs root (namespaces, TUN devices) and `make build`.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from testbed.lanes import lane as lanes
from testbed.link.session import LinkSession
from testbed.lanes.link_measure import (PING_IP_LEN, bulk_transfer, ping_rtts_us, predicted_goodput_bps, predicted_ping_rtt_us,
                      set_congestion_control, tcp_options_len)
from testbed.link.simple import error_free

RATE_BPS, DELAY_US, MTU = 64_000, 300_000, 576
DEFAULT_LANE = 39


def progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The demo's options, on `squall demo-link`'s parser or on its own (python -m)."""
    p.add_argument("--lane", type=int, default=int(os.environ.get("SQUALL_DEMO_LANE", DEFAULT_LANE)),
                   help=f"lane number 0-127 (default $SQUALL_DEMO_LANE or {DEFAULT_LANE})")
    p.add_argument("--pings", type=int, default=5)
    p.add_argument("--buffers", type=int, default=100, help="bulk transfer: buffers of 2096 B (default 100)")
    p.add_argument("--keep", type=Path, help="keep the emulator log, captures and program output here")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m testbed.lanes.link_demo", description=__doc__)
    add_arguments(p)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    return demo_command(parse_args(argv))


def demo_command(args: argparse.Namespace) -> int:
    if os.geteuid() != 0:
        print("demo: needs root (network namespaces, TUN devices); run it with sudo", file=sys.stderr)
        return 2
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        return run(args, args.keep)
    with tempfile.TemporaryDirectory(prefix="squall-demo-") as tmp:
        return run(args, Path(tmp))


def run(args: argparse.Namespace, workdir: Path) -> int:
    link = error_free(RATE_BPS, DELAY_US, MTU, send_buffer=1_000_000)
    progress(f"link: {RATE_BPS // 1000} kbit/s, {DELAY_US // 1000} ms delay, MTU {MTU} B, error-free, both ways")
    removed = lanes.cleanup_leftovers()
    if removed:
        progress(f"removed leftover lanes of dead runs: {removed}")
    progress(f"building lane {args.lane} (namespaces sq{args.lane}-fixed, -emu, -mobile)")
    try:
        with lanes.lane_up(args.lane) as addr:
            with LinkSession(addr, link, workdir / "link") as session:
                progress(f"emulator and NPAs up ({', '.join(session.ready_lines.values())}); t = 0 sent")
                progress(f"ping {addr.mobile_host} from the fixed host, {args.pings} times")
                rtts = ping_rtts_us(addr, workdir, count=args.pings)
                set_congestion_control(addr.ns.fixed, "reno")
                options = tcp_options_len(addr.ns.fixed)
                progress(f"bulk TCP (reno): {args.buffers} x 2096 B from the fixed host to the mobile host "
                         f"(about {args.buffers * 2096 * 8 / predicted_goodput_bps(RATE_BPS, MTU, options):.0f} s)")
                bulk = bulk_transfer(addr, workdir / "bulk", count=args.buffers, length=2096)
            progress(f"emulator stopped (exit {session.result.exit_codes.get('emulator')}); lane torn down")
    except Exception as e:  # a clear one-line reason, not a traceback, for a demo
        print(f"demo failed: {e}", file=sys.stderr)
        return 1
    print_table(rtts, args.pings, bulk.goodput_bps, bulk.bytes, options)
    if args.keep:
        print(f"\nemulator log, captures and program output: {workdir}")
    return 0 if len(rtts) == args.pings else 1


def print_table(rtts: list[float], pings: int, goodput: float, nbytes: int, options: int) -> None:
    rtt_pred = predicted_ping_rtt_us(RATE_BPS, DELAY_US) / 1000
    put_pred = predicted_goodput_bps(RATE_BPS, MTU, options) / 1000
    rtt = statistics.median(rtts) / 1000 if rtts else float("nan")
    rows = [
        ("ping RTT (median)", f"{rtt:.2f} ms", f"{rtt_pred:.2f} ms",
         f"2 x ({PING_IP_LEN} B x 8 / {RATE_BPS // 1000} kbit/s + {DELAY_US // 1000} ms); {len(rtts)}/{pings} replies"),
        ("bulk TCP goodput", f"{goodput / 1000:.2f} kbit/s", f"{put_pred:.2f} kbit/s",
         f"{RATE_BPS // 1000} kbit/s x ({MTU} - 40 - {options}) / {MTU}; {nbytes} B at the receiver"),
    ]
    header = ("", "measured", "predicted", "how predicted")
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(4)]
    print()
    for row in [header, tuple("-" * w for w in widths), *rows]:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())


if __name__ == "__main__":
    sys.exit(main())
