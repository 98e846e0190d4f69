"""The timing benchmark's arithmetic: cyclictest's output, ratios and targets (no root needed)."""
import pytest

from bench.cyclictest import command, parse, quantile
from bench.emulator import _command, ratios, targets

CYCLICTEST_OUTPUT = """# /dev/cpu_dma_latency set to 0us
# Histogram
000000 000000
000017 000090
000018 000005
000040 000004
000300 000001
# Total: 000000101
# Min Latencies: 00017
# Avg Latencies: 00020
# Max Latencies: 25000
# Histogram Overflows: 00001
# Histogram Overflow at cycle number:
# Thread 0:
"""


def test_parse_counts_the_histogram_and_its_overflows():
    out = parse(CYCLICTEST_OUTPUT)
    assert out["n"] == 101                   # 100 in the histogram and one beyond it
    assert out["p50"] == 17
    assert out["p99"] == 300                 # rank ceil(0.99 * 101) = 100
    assert out["max"] == 25000 and out["overflows"] == 1 and out["avg"] == 20
    assert out["p999"] == 25000              # the overflow: only the maximum is known


# Two threads (-S: one per CPU) as cyclictest prints them: a column each.
TWO_CPUS_OUTPUT = """# Histogram
000010 000060\t000090
000011 000039\t000008
000900 000001\t000000
# Total: 000000100 000000100
# Min Latencies: 00010 00010
# Avg Latencies: 00011 00013
# Max Latencies: 00900 09000
# Histogram Overflows: 00000 00002
# Histogram Overflow at cycle number:
# Thread 0:
# Thread 1: 00017 00018
"""


def test_parse_merges_the_cpus_and_keeps_each():
    out = parse(TWO_CPUS_OUTPUT)
    assert out["n"] == 200 and out["overflows"] == 2
    assert out["max"] == 9000                            # the worst CPU's stall is the machine's
    assert out["p50"] == 10 and out["p99"] == 900        # rank 198: 197 up to 11 µs, then the 900
    assert out["p999"] == 9000                           # rank 200: an overflow, only the max is known
    assert out["avg"] == 12
    cpu0, cpu1 = out["per_cpu"]
    assert (cpu0["n"], cpu0["max"], cpu0["p99"], cpu0["p50"]) == (100, 900, 11, 10)
    assert (cpu1["n"], cpu1["max"], cpu1["p99"], cpu1["overflows"]) == (100, 9000, 9000, 2)


def test_cyclictest_runs_until_what_it_runs_beside_ends(tmp_path, monkeypatch):
    """Stopped with SIGINT when the context ends (its histogram then printed), not at its limit."""
    import time

    from bench.cyclictest import Cyclictest

    import sys

    # Python, not sh: a shell cannot trap a signal ignored when it started (a job started in the
    # background, as CI's may be), and cyclictest, like this, sets its own handler.
    fake = tmp_path / "cyclictest"
    fake.write_text(f"#!{sys.executable}\n"
                    "import signal, sys, time\n"
                    "def stop(*_):\n"
                    "    print('# Histogram\\n000012 000007\\n# Max Latencies: 00012')\n"
                    "    sys.exit(0)\n"
                    "signal.signal(signal.SIGINT, stop)\n"
                    "while True:\n"
                    "    time.sleep(0.05)\n")
    fake.chmod(0o755)
    monkeypatch.setattr("shutil.which", lambda name: str(fake))
    started = time.monotonic()
    with Cyclictest(10, 300, tmp_path / "ct") as ct:
        time.sleep(0.2)
    assert time.monotonic() - started < 20
    out = ct.result()
    assert (out["n"], out["max"], out["p50"]) == (7, 12, 12)


def test_quantile_rank_is_the_emulators():
    # The emulator's rule (lateness.h): the smallest value with at least ceil(q * n) samples at or below.
    assert quantile({1: 99, 7: 1}, 0, 0.99, 7) == 1
    assert quantile({1: 98, 7: 2}, 0, 0.99, 7) == 7
    assert quantile({}, 0, 0.5, None) is None


def test_command_uses_the_priority_or_normal_scheduling(monkeypatch):
    monkeypatch.setattr("shutil.which", lambda name: "/usr/bin/" + name)
    assert command(10, 8, 1000)[1:] == ["-m", "-S", "-p", "10", "-i", "1000", "-D", "8", "-q", "-h", "20000"]
    assert command(0, 8)[1:6] == ["-m", "-S", "--policy", "other", "-i"]


def test_targets_compare_with_cyclictest_of_the_same_round():
    rounds = [
        {"lanes": 1, "rate_pps": 10_000, "lateness_us": {"p50": 2, "p99": 80, "max": 900},
         "cyclictest_us": {"p50": 20, "p99": 45, "max": 1000}},
        {"lanes": 4, "rate_pps": 1_000, "lateness_us": {"p50": 2, "p99": 120, "max": 3000},
         "cyclictest_us": {"p50": 20, "p99": 90, "max": 1000}},
    ]
    out = targets(rounds)
    assert out["rounds"][0] == {"lanes": 1, "rate_pps": 10_000, "max_le_2x_cyclictest": True,
                                "p99_le_2x_cyclictest": True, "p99_le_100us": True}
    # At 1 000 packets/s only the max and (cyclictest p99 > 50 µs here) nothing else applies.
    assert out["rounds"][1] == {"lanes": 4, "rate_pps": 1_000, "max_le_2x_cyclictest": False}
    assert out["all_met"] is False
    assert ratios({"p50": 2, "p99": 80, "max": 900}, {"p50": 20, "p99": 40, "max": 0}) == \
        {"p50": 0.1, "p99": 2.0, "max": None}


def test_timing_ab_variants_and_summary(tmp_path):
    import argparse
    import pytest
    from bench.timing_ab import parse_variant, summarise
    (tmp_path / "squall-emulator").write_text("")
    assert parse_variant(f"old={tmp_path}:npa=10") == {"name": "old", "bin_dir": str(tmp_path), "npa_priority": 10}
    assert parse_variant(f"new={tmp_path}") == {"name": "new", "bin_dir": str(tmp_path)}
    with pytest.raises(argparse.ArgumentTypeError):
        parse_variant(str(tmp_path))
    with pytest.raises(argparse.ArgumentTypeError):
        parse_variant(f"x={tmp_path / 'nowhere'}")

    def variant(p99):
        return {"lateness_us": {"p50": 1, "p99": p99, "max": 10 * p99}, "emulator_cpu_s": 1.0}
    rounds = [{"cyclictest_us": {"p50": 20, "p99": 100, "max": 1000}, "variants": {"a": variant(150), "b": variant(90)}},
              {"cyclictest_us": {"p50": 20, "p99": 50, "max": 900}, "variants": {"a": variant(80), "b": variant(95)}}]
    s = summarise(rounds, ["a", "b"])
    assert s["a"]["p99"] == [80, 150] and s["b"]["p99"] == [90, 95]
    assert s["b"]["rounds_p99_below_a"] == 1
    assert s["b"]["p99_over_cyclictest"] == [0.9, 1.9]
    assert s["cyclictest"]["max"] == [900, 1000]


def test_end_to_end_target_judges_ingress_and_egress_with_four_lanes():
    cyclic = {"p50": 20, "p99": 100, "max": 1000}
    late = {"p50": 2, "p99": 80, "max": 900}

    def round_(lanes, ingress_p99, egress_p99):
        return {"lanes": lanes, "rate_pps": 1_000, "lateness_us": late, "cyclictest_us": cyclic,
                "end_to_end_us": {"ingress": {"p50": 40, "p99": ingress_p99, "max": 900},
                                  "egress": {"p50": 40, "p99": egress_p99, "max": 900}}}
    out = targets([round_(4, 300, 120), round_(4, 120, 301), round_(2, 900, 900)])
    assert out["rounds"][0]["end_to_end_p99_le_3x_cyclictest"] is True
    assert out["rounds"][1]["end_to_end_p99_le_3x_cyclictest"] is False
    assert "end_to_end_p99_le_3x_cyclictest" not in out["rounds"][2]      # judged with 4 lanes only


def test_committed_timing_results_record_what_the_ratios_need():
    """bench/results/emulator.json as `make bench` writes it: the machine and its load, and per
    round cyclictest beside the emulator's and the end-to-end figures; every packet sent was in
    the log (the ring writer lost no line) and in both captures."""
    import json
    from pathlib import Path
    numbers = json.loads((Path(__file__).resolve().parent.parent / "bench/results/emulator.json").read_text())
    assert {"nproc", "kernel", "cpu", "loadavg_at_start", "git_rev", "virtualised"} <= set(numbers["machine"])
    assert {(t["lanes"], t["rate_pps"]) for t in numbers["timing"]} == {(n, r) for n in (1, 2, 4) for r in (1000, 10000)}
    for t in numbers["timing"]:
        assert {"p50", "p99", "max"} <= set(t["cyclictest_us"]) and "loadavg_1min_after" in t
        assert set(t["end_to_end_ratio"]) == {"ingress", "egress"}
        for lane in t["per_lane"]:
            assert lane["lateness_us"]["n"] == lane["sent"] == lane["received"]
            assert lane["end_to_end"]["ingress"]["n"] == lane["end_to_end"]["egress"]["n"] == lane["sent"]
    assert "end_to_end_p99_le_3x_cyclictest" in numbers["timing_targets"]["rounds"][-1]


def test_the_timing_rounds_release_ahead_comes_from_the_environment(monkeypatch) -> None:
    from bench import emulator

    monkeypatch.delenv("SQUALL_BENCH_RELEASE_AHEAD_US", raising=False)
    assert emulator.release_ahead_us() == 0
    monkeypatch.setenv("SQUALL_BENCH_RELEASE_AHEAD_US", "2000")
    assert emulator.release_ahead_us() == 2000
    monkeypatch.setenv("SQUALL_BENCH_RELEASE_AHEAD_US", "2ms")
    with pytest.raises(SystemExit, match="SQUALL_BENCH_RELEASE_AHEAD_US='2ms': expected microseconds"):
        emulator.release_ahead_us()


def test_the_link_programs_share_of_the_machines_cpu_time(monkeypatch) -> None:
    """What tells an over-committed round: the emulators' and NPAs' CPU seconds over the
    stream's wall time and every CPU."""
    from bench import emulator
    monkeypatch.setattr(emulator.os, "cpu_count", lambda: 2)
    lanes = [{"emulator": 0.9, "npa-router": 0.3, "npa-mobile": 0.3}, {"emulator": 1.1, "npa-router": 0.2, "npa-mobile": 0.2}]
    assert emulator.cpu_share(lanes, 1.5) == 1.0
    assert emulator.cpu_share(lanes, 0.0) is None


def test_the_capacity_rounds_whole_machine_cpu_per_delivered_packet(monkeypatch) -> None:
    """/proc/stat's busy ticks (steal left out) per received packet, and the ratio the two
    paths would have with CPU the only limit."""
    from bench import emulator
    monkeypatch.setattr(emulator.os, "sysconf", lambda name: 100)
    # guest and guest_nice (the last two) are already inside user and nice: not added again
    stat = iter(["cpu  100 5 50 1000 10 3 2 40 30 1\ncpu0 1 2 3\n",
                 "cpu  400 5 150 1010 10 3 42 90 70 1\ncpu0 1 2 3\n"])
    monkeypatch.setattr(emulator, "_read", lambda path: next(stat))
    before = emulator.machine_cpu_s()
    assert before == (1.6, 10.1)
    report = emulator.machine_report(before, emulator.machine_cpu_s(), 200_000)
    assert report == {"busy_cpu_s": 4.4, "idle_cpu_s": 0.1, "busy_us_per_packet": 22.0}
    emu, naive = {"machine": {"busy_us_per_packet": 12.0}}, {"machine": {"busy_us_per_packet": 9.0}}
    assert emulator.cpu_bound_ratio(emu, naive) == 0.75
    assert emulator.cpu_bound_ratio({"machine": {"busy_us_per_packet": None}}, naive) is None
    monkeypatch.setattr(emulator, "_read", lambda path: None)
    with pytest.raises(RuntimeError, match="/proc/stat"):
        emulator.machine_cpu_s()


@pytest.mark.parametrize("argv0, program", [("/repo/bench/run.py", "python -m bench.run"),
                                            ("bench/results/capture-flush-ab/run_no_flush.py",
                                             "bench/results/capture-flush-ab/run_no_flush.py")])
def test_the_recorded_command_hides_the_results_directory_whatever_ran_it(monkeypatch, argv0, program) -> None:
    """Result files are committed: the machine's --results path must not be in them, also
    when a wrapper script, not `python -m bench.run`, ran the benchmark."""
    monkeypatch.setattr("sys.argv", [argv0, "emulator", "--results", "/some/where/on/this/machine"])
    for name in ("SQUALL_REALTIME_PRIORITY", "SQUALL_NPA_PRIORITY", "SQUALL_BENCH_LANE", "SQUALL_BENCH_PARTS",
                 "SQUALL_BENCH_RATES", "SQUALL_BENCH_LANES_AT_ONCE", "SQUALL_BENCH_RELEASE_AHEAD_US", "SQUALL_BIN_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SQUALL_BENCH_PARTS", "timing")
    assert _command() == f"SQUALL_BENCH_PARTS=timing {program} emulator --results <dir>"
