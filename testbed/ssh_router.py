"""The tc router on the lab's emulation host (its TUN), over SSH: RouterRun's files and steps.

Same batch (router_tc.render_tc_batch), same files (router.tc, router-queue.tsv,
tc-stats.json) as on a lane; the queue monitor runs on the emulation host and its samples
are fetched when it has stopped. Leaving removes the root qdisc again, also after a failure
(the TUN and with it the qdisc also go when the router NPA ends).
"""
from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from .router import RouterError, parse_class_stats
from .router_config import RouterConfig
from .router_monitor import MONITOR_PROGRAM, QueueMonitorError
from .router_session import BATCH_FILE, SAMPLES_FILE, STATS_FILE, RouterRun, write_complete
from .router_tc import render_tc_batch

READY_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 10.0


class SshRouterRun(RouterRun):
    def __init__(self, host: Any, config: RouterConfig, rep_dir: Path, dev: str, interval_us: int = 10_000):
        """`host`: the emulation host (ssh_hosts.SshHost)."""
        super().__init__(host.role, config, rep_dir, bin_dir=Path(str(host.lab.bin_dir)), dev=dev,
                         interval_us=interval_us)
        self.host = host
        self._remote_monitor: Any = None
        self._remote_samples: Path | None = None

    def __enter__(self) -> "SshRouterRun":
        if self.engine == "emulator":
            super().__enter__()
            return self
        self.batch = self._apply()
        try:
            write_complete(self.rep_dir / BATCH_FILE, self.batch)
        except BaseException:
            self._teardown()
            raise
        return self

    def _apply(self) -> str:
        batch = render_tc_batch(self.config, self.dev)
        self._teardown()
        proc = self.host.client.run_shell("tc -batch -", input=batch.encode(), check=False)
        problem = " ".join(proc.stderr.split())
        if proc.returncode != 0 or problem:
            self._teardown()
            what = "failed" if proc.returncode != 0 else "warned (the router was removed again)"
            raise RouterError(f"applying the router on {self.dev} of the emu host with `tc -batch -` {what}: "
                              f"{problem or f'exit {proc.returncode}'}; the batch was:\n{batch}")
        return batch

    def _teardown(self) -> None:
        self.host.run(["tc", "qdisc", "del", "dev", self.dev, "root"], check=False)

    def start_monitor(self, t0_realtime_us: int | None = None) -> None:
        if self.engine == "emulator":
            return
        remote_dir = self.host.files(self.rep_dir)
        self._remote_samples = remote_dir / SAMPLES_FILE
        argv = [self.host.program(MONITOR_PROGRAM), "--dev", self.dev, "--output", str(self._remote_samples),
                "--interval", f"{self.interval_us}us"]
        if t0_realtime_us is not None:
            argv += ["--t0-realtime-us", str(t0_realtime_us)]
        program = self.host.start("queue-monitor", argv, self.rep_dir)
        self._remote_monitor = program
        deadline = time.monotonic() + READY_TIMEOUT_S
        while "ready" not in program.stdout().split():
            if program.proc.poll() is not None or time.monotonic() > deadline:
                self._kill_monitor()
                raise QueueMonitorError(f"{MONITOR_PROGRAM} on the emu host did not become ready within "
                                        f"{READY_TIMEOUT_S:g} s: {program.stderr().strip() or 'no message'}")
            time.sleep(0.02)

    def _kill_monitor(self) -> None:
        program, self._remote_monitor = self._remote_monitor, None
        if program is None:
            return
        if program.proc.poll() is None:
            program.proc.kill()
        program.proc.wait()
        for name in ("stdout", "stderr"):
            (self.rep_dir / f"queue-monitor.{name}").unlink(missing_ok=True)

    def _stop_monitor(self) -> None:
        program = self._remote_monitor
        if program.proc.poll() is None:
            program.proc.send_signal(signal.SIGTERM)
        try:
            code = program.proc.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self._kill_monitor()
            raise QueueMonitorError(f"{MONITOR_PROGRAM} on the emu host did not exit within "
                                    f"{STOP_TIMEOUT_S:g} s of SIGTERM; killed") from None
        if code != 0:
            err = program.stderr().strip()
            self._kill_monitor()
            raise QueueMonitorError(f"{MONITOR_PROGRAM} on the emu host exited {code}: {err or 'no message'}")
        assert self._remote_samples is not None
        partial = self.rep_dir / (SAMPLES_FILE + ".partial")
        self.host.fetch(self._remote_samples, partial)
        partial.replace(self.rep_dir / SAMPLES_FILE)
        self._kill_monitor()

    def finish(self) -> dict:
        if self.engine == "emulator":
            return super().finish()
        if self._remote_monitor is not None:
            self._stop_monitor()
        class_text = self.host.run(["tc", "-s", "class", "show", "dev", self.dev]).stdout
        qdisc_text = self.host.run(["tc", "-s", "-j", "qdisc", "show", "dev", self.dev]).stdout
        try:
            qdiscs = json.loads(qdisc_text) if qdisc_text.strip() else []
        except json.JSONDecodeError as e:
            raise RouterError(f"`tc -s -j qdisc show dev {self.dev}` on the emu host printed no valid JSON: {e}") \
                from None
        stats = {"device": self.dev, "qdisc": qdiscs, "class": parse_class_stats(class_text), "class_text": class_text}
        write_complete(self.rep_dir / STATS_FILE, json.dumps(stats, indent=1) + "\n")
        return stats

    def __exit__(self, *exc: object) -> None:
        try:
            self._kill_monitor()
        finally:
            if self.engine == "tc":
                self._teardown()
