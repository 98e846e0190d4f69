"""How the no-flush-*.json rounds ran: `python -m bench.run` with tcpdump's `-U` (write each
captured packet at once) taken out of the captures' command line, nothing else changed.

    SQUALL_BENCH_PARTS=timing SQUALL_BENCH_RATES=1000,10000 SQUALL_BENCH_LANES_AT_ONCE=4 \\
        PYTHONPATH=. python bench/results/capture-flush-ab/run_no_flush.py emulator --results DIR

The flush-per-packet-*.json rounds are the same command through `python -m bench.run`."""
import runpy
import sys

import testbed.lanes.capture as capture

_init = capture.Capture.__init__


def _without_flush(self, *args, **kwargs):
    _init(self, *args, **kwargs)
    self.argv.remove("-U")


capture.Capture.__init__ = _without_flush
sys.argv = ["bench.run"] + sys.argv[1:]
runpy.run_module("bench.run", run_name="__main__")
