"""The emulator engine: the router is the emulator's router stage (emulator/LINK_MODEL.md).

The link session writes the stage into the emulator's configuration (emulator_stage.py);
nothing is applied on a host, router.tc holds the rendered sections instead, nothing is
sampled (the emulator log has every router event), and finish() reads the per-class trailer
of the emulator log into router-stats.json: the log ends when the emulator stops, so the
link is closed before finish().
"""
from __future__ import annotations

import json
from typing import ClassVar

from testbed.router.directions import Routers, as_routers
from testbed.router.emulator_stage import emulator_router
from testbed.router.emulator_stats import read_router_stats
from testbed.router.engine import LinkDirection, RouterPlace
from testbed.router.files import EMULATOR_STATS_FILE, write_complete
from testbed.router.plan import RouterConfig


def emulator_note(routers: Routers | RouterConfig) -> str:
    """router.tc of an emulator-engine run: no tc commands, the router stages' sections instead."""
    stages = [emulator_router(config, direction=direction) for direction, config in as_routers(routers).items()]
    links = " and ".join(f"{s.direction}link" for s in stages)
    return ("# router engine = \"emulator\": nothing was applied with tc; the emulator's router stage\n"
            f"# on the {links} ran this router (these sections are in emulator.conf,\n"
            "# with the notes on what the emulator engine ignores):\n" + "\n".join(s.sections for s in stages))


class EmulatorEngine:
    name: ClassVar[str] = "emulator"
    summary: ClassVar[str] = "the SP's router stage"
    in_emulator: ClassVar[bool] = True
    on_host_path: ClassVar[bool] = False
    needs_tc: ClassVar[bool] = False
    finishes_after_link: ClassVar[bool] = True
    device_queue_refusal: ClassVar[str] = ""

    @classmethod
    def check(cls, config: RouterConfig, link: LinkDirection, where: str, direction: str = "down") -> None:
        """What the router stage cannot express is refused at parse time, not when the link opens."""
        emulator_router(config, link=link, direction=direction, where=where)

    def __init__(self, routers: Routers, place: RouterPlace) -> None:
        self.routers, self.place = routers, place

    def apply(self) -> str:
        return emulator_note(self.routers)

    def start_monitor(self, t0_realtime_us: int | None) -> None:
        """Nothing to sample: the emulator log has every router event."""

    def finish(self) -> dict:
        stats = read_router_stats(self.place.emulator_log)
        write_complete(self.place.rep_dir / EMULATOR_STATS_FILE, json.dumps(stats, indent=1) + "\n")
        return stats

    def tear_down(self) -> None:
        """Nothing was set up on a host; the stage ends with the emulator."""
