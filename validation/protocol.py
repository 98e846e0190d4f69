"""The protocol's values fitted to the tables (validation/PROTOCOL.md, "Sensitivity variants"):
each is reported beside the main comparison, labelled with the commit that introduced it,
never in its place.

A variant is a set of squall values under the reference keys that the protocol's definitions
do not give: another definition of a metric (receive spacing for the tables' jitter, the
connection's throughput for Med_thro), or cells run with a fitted parameter (the mixtures' UDP
stream every 34.6 ms). A cell run with a fitted workload gives no main value at all: its
reference rows are pending the protocol's run.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Sensitivity:
    name: str         # the report's label
    fitted: str       # what was fitted to what
    commit: str       # the commit that introduced it


UDP_FITTED = Sensitivity(
    "UDP every 34.6 ms",
    "the mixtures' UDP spacing chosen from tables 34-36's outputs (TCP elapsed times at e0, UDP "
    "drops against throughput, the e0 jitter column) instead of the text's 32 kbit/s",
    "5449c12")
JITTER_SPACING = Sensitivity(
    "jitter as squall's mean receive spacing",
    "the tables' jitter compared with squall's mean receive spacing of consecutive datagrams "
    "(`spacing_mean_ms`) instead of section 6's change of spacing, chosen because the tables' "
    "e0 values equal the (fitted) send spacing",
    "6a1b966")
CONNECTION_THROUGHPUT = Sensitivity(
    "Med_thro as connection throughput",
    "IIP HTTP Med_thro and Saarto's Med_th_m as the main object's bytes / (first SYN -> ACK of "
    "the FIN) instead of section 6's response-only elapsed time, chosen because it matched "
    "table 9's e0 values",
    "b5c39df")
VARIANTS = (UDP_FITTED, JITTER_SPACING, CONNECTION_THROUGHPUT)

# Workload profiles whose parameters were fitted to the tables, and the variant a cell that
# ran one belongs to (validation/data/*/cells.json records every flow's workload).
FITTED_WORKLOADS = {"cbr-iip-mixture": UDP_FITTED}

# The protocol's run of the mixtures: the committed rows (run with the fitted stream) move to the
# sensitivity data, where the report still reads their fitted cells, and the study runs afresh.
SENSITIVITY_DATA = "validation/sensitivity/data"
PENDING_COMMAND = (f"git mv validation/data/iip-mixture {SENSITIVITY_DATA}/iip-mixture && "
                   "python -m validation.full --study iip-mixture --rounds 10 --parallel 4 --commit")
