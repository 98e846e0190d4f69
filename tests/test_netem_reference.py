"""The emulator's netem stage decides packet for packet what netem's documented models decide
for the same draws: loss (random with correlation, Gilbert-Elliott, 4-state), duplication,
corruption (which bit), delay jitter with netem's distributions and correlation, reordering
with a gap. The emulator's own link model runs (`squall-emulator --print-packets`) on a link
that adds nothing of its own (unlimited rate, no errors, out of order), and every packet's
fate, corruption and out time must equal tests/support_netem.py's."""
from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import require_programs
from support_netem import Netem, NetemReference, loss_params, percent
from testbed.paths import bin_dir

SEED, REPLICATION, MTU, DELAY_US, SPACING_US = 4711, 3, 1000, 10_000, 1000

CASES = {
    "gemodel-normal-reorder": {
        "netem_loss": "gemodel 1% 10% 70% 0.1%", "netem_delay": "100ms 10ms 25%",
        "netem_distribution": "normal", "netem_reorder": "25% 50%", "netem_gap": "5",
        "netem_duplicate": "1% 10%", "netem_corrupt": "0.1%"},
    "state-pareto": {
        "netem_loss": "state 1% 30% 20% 40% 2%", "netem_delay": "50ms 20ms",
        "netem_distribution": "pareto", "netem_duplicate": "5%", "netem_corrupt": "5% 25%"},
    "random-paretonormal": {
        "netem_loss": "random 5% 25%", "netem_delay": "20ms 5ms 50%",
        "netem_distribution": "paretonormal", "netem_reorder": "10%"},
    "gemodel-defaults-uniform": {
        "netem_loss": "gemodel 3%", "netem_delay": "10ms 10ms", "netem_duplicate": "10%",
        "netem_corrupt": "2%"},
    "state-default-correlated-uniform": {
        "netem_loss": "state 2%", "netem_delay": "30ms 30ms 75%", "netem_reorder": "50% 25%",
        "netem_gap": "3"},
}


def reference_config(keys: dict[str, str]) -> Netem:
    cfg = Netem()
    if "netem_loss" in keys:
        model, *params = keys["netem_loss"].split()
        cfg.loss = (model, loss_params(model, [percent(p) for p in params]))
    delay = keys.get("netem_delay", "0ms").split()
    cfg.latency_us = _us(delay[0])
    cfg.jitter_us = _us(delay[1]) if len(delay) > 1 else 0
    cfg.delay_corr = percent(delay[2]) if len(delay) > 2 else 0.0
    cfg.distribution = keys.get("netem_distribution", "uniform")
    cfg.gap = int(keys.get("netem_gap", "0"))
    for name in ("reorder", "duplicate", "corrupt"):
        words = [percent(w) for w in keys.get(f"netem_{name}", "0%").split()]
        setattr(cfg, name, (words[0], words[1] if len(words) > 1 else 0.0))
    return cfg


def _us(text: str) -> int:
    return int(text.removesuffix("ms")) * 1000


def emulator_config(keys: dict[str, str]) -> str:
    direction = [f"mtu = {MTU}B", "bandwidth = unlimited", f"delay = {DELAY_US}us",
                 "send_buffer = 100000000B", "in_order = false"]
    return "\n".join([
        "token = 0123456789abcdef", "log = /dev/null", f"seed = {SEED}", f"replication = {REPLICATION}",
        "[channel]", "good = fixed(1000s)", "bad = fixed(1s)",
        "[down]", *direction, *(f"{k} = {v}" for k, v in keys.items()),
        "[up]", *direction, ""])


@dataclass
class Fate:
    t_in: int                      # entered the link (a copy: with its original)
    end: str                       # out | drop_loss
    t: int                         # of the end
    corrupt_bit: int | None = None
    copy_of: int | None = None


def emulator_fates(conf: Path, count: int) -> dict[int, Fate]:
    """The down packets' fates in the emulator's link model, by packet id."""
    done = subprocess.run([str(bin_dir() / "squall-emulator"), "--print-packets", str(count), str(conf)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    fates: dict[int, Fate] = {}
    notes: dict[int, dict[str, int]] = {}
    for line in done.stdout.splitlines():
        t, direction, event, pkt, _, _, note = line.split("\t")
        if direction != "down":
            continue
        n = notes.setdefault(int(pkt), {})
        if event in ("in", "duplicate"):
            n["in"] = int(t)
        if event in ("corrupt", "duplicate"):
            key, _, value = note.partition("=")
            n[key] = int(value)
        elif event in ("out", "drop_loss"):
            fates[int(pkt)] = Fate(n["in"], event, int(t), n.get("bit"), n.get("of"))
    return fates


def reference_fates(cfg: Netem, count: int) -> dict[int, Fate]:
    """Down packet i enters at i ms with the next id, its copy (if any) right after it; an up
    packet takes the next id. The link adds DELAY_US; netem's delay line, in the order
    packets leave, adds its own."""
    ref = NetemReference(cfg, SEED, REPLICATION, direction=0)
    fates: dict[int, Fate] = {}
    next_id = 1
    for i in range(count):
        t = i * SPACING_US
        original = next_id
        next_id += 1
        entry = ref.enter(MTU, copy=False)
        packets = [(original, entry, None)]
        if entry.duplicate:
            packets.append((next_id, ref.enter(MTU, copy=True), original))
            next_id += 1
        for pkt, e, copy_of in packets:
            if e.lost:
                fates[pkt] = Fate(t, "drop_loss", t, None, copy_of)
            else:
                fates[pkt] = Fate(t, "out", t + DELAY_US + ref.leave(), e.corrupt_bit, copy_of)
        next_id += 1       # the up packet at the same time
    return fates


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_packet_meets_the_fate_netems_model_gives_it(case: str, tmp_path: Path) -> None:
    require_programs("squall-emulator")
    keys, count = CASES[case], 4000
    conf = tmp_path / "netem.conf"
    conf.write_text(emulator_config(keys))
    got, expected = emulator_fates(conf, count), reference_fates(reference_config(keys), count)
    assert len(got) == len(expected)
    differ = [(pkt, got.get(pkt), want) for pkt, want in expected.items() if got.get(pkt) != want]
    assert not differ, f"{len(differ)} packets differ, first: {differ[:3]}"
    # the case exercises what it names
    ends = [f.end for f in got.values()]
    assert 0 < ends.count("drop_loss") < count
    assert (sum(f.copy_of is not None for f in got.values()) > 0) == ("netem_duplicate" in keys)
    assert (sum(f.corrupt_bit is not None for f in got.values()) > 0) == ("netem_corrupt" in keys)
    delays = [f.t - f.t_in - DELAY_US for f in got.values() if f.end == "out"]
    assert len(set(delays)) > count / 10
    assert (0 in delays) == ("netem_reorder" in keys)


def test_without_netem_keys_the_link_is_untouched(tmp_path: Path) -> None:
    require_programs("squall-emulator")
    conf = tmp_path / "plain.conf"
    conf.write_text(emulator_config({}))
    got = emulator_fates(conf, 500)
    assert all(f.end == "out" and f.corrupt_bit is None and f.copy_of is None for f in got.values())
    assert sorted(got) == [2 * i + 1 for i in range(500)]
    assert all(f.t == f.t_in + DELAY_US == (pkt // 2) * SPACING_US + DELAY_US for pkt, f in got.items())
