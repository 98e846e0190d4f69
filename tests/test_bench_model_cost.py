"""bench/model_cost.py: the model's per-packet cost with every feature on really has every
feature working (their events are there), and with every feature off none of them."""
from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import require_programs

from bench import model_cost


def test_every_feature_shows_in_the_events_of_the_on_row_and_none_in_the_off_row(tmp_path):
    require_programs("squall-model-cost")
    numbers = model_cost.measure(packets=20_000, rounds=2)
    on, off = numbers["every_feature_on"], numbers["every_feature_off"]
    # channel errors and ARQ, outages, the router stage (drops, RED's ECN marks), netem's
    # loss, duplication and corruption: each left events
    for event in ("state", "hit", "drop_err", "outage", "drop_router", "ecn_mark", "drop_loss",
                  "duplicate", "corrupt", "stall"):
        assert on["events"].get(event, 0) > 0, event
    assert on["events"]["in"] == off["events"]["in"] == 20_000
    assert set(off["events"]) == {"in", "enqueue", "tx", "recv", "out"}
    # every discipline of the model's table has its class in the bench (one row of CLASSES each)
    table = (Path(__file__).resolve().parent.parent / "emulator/src/model/router_table.def").read_text()
    assert sorted(numbers["classes"]) == sorted(re.findall(r"^SQ_DISCIPLINE\(\w+, (\w+)\)", table, re.M))
    for row in (on, off):
        assert len(row["ns_per_packet"]) == 2 and row["median_ns_per_packet"] > 0
    assert numbers["ratio_on_over_off"] == round(on["median_ns_per_packet"] / off["median_ns_per_packet"], 2)


def test_run_writes_model_cost_json_with_the_machine(tmp_path, monkeypatch):
    require_programs("squall-model-cost")
    monkeypatch.setattr(model_cost, "PACKETS", 5_000)
    monkeypatch.setattr(model_cost, "ROUNDS", 1)
    model_cost.run(tmp_path)
    written = json.loads((tmp_path / "model-cost.json").read_text())
    assert written["machine"]["nproc"] >= 1 and written["packets"] == 5_000


def test_the_docs_quote_the_committed_result():
    """README.md's and emulator/README.md's figures are bench/results/model-cost.json's."""
    root = Path(__file__).resolve().parent.parent
    numbers = json.loads((root / "bench/results/model-cost.json").read_text())
    on = f"{numbers['every_feature_on']['median_ns_per_packet']:.0f} ns"
    off = f"{numbers['every_feature_off']['median_ns_per_packet']:.0f} ns"
    ratio = f"{numbers['ratio_on_over_off']:.2f}"
    assert numbers["target_met"] and numbers["machine"]["nproc"] and numbers["rounds"] >= 5
    readme = (root / "README.md").read_text()
    assert f"| {on} (median of {numbers['rounds']} rounds" in readme and f"off {off}, on / off {ratio} |" in readme
    emulator = " ".join((root / "emulator/README.md").read_text().split())
    assert f"**{on} per packet with every feature on, {off} with every feature off ({ratio} ×)**" in emulator
