"""validation/report.md: what was run, the conclusions, the tables side by side."""
from __future__ import annotations

from dataclasses import dataclass

from analysis.metrics.censoring import UNFINISHED_S, UNFINISHED_TEXT
from analysis.report.contents import markdown_table

from .compare import Agreement, Comparison, Coverage
from .conclusions import Verdict

STUDY_NAMES = {"iip": "IIP report (seeds/003)", "saarto": "Saarto 2003 slides (seeds/000)"}


@dataclass(frozen=True)
class RunSummary:
    study: str
    scenario: str
    cells: str                 # the --cells glob, "" = every cell
    replications: int
    run_dir: str
    statuses: dict[str, int]   # ok / failed / timeout / missing -> replications
    seconds: float


@dataclass(frozen=True)
class ReportContext:
    title: str
    reduction: list[str]       # paragraphs: what was left out and how to run the full one
    runs: list[RunSummary]
    total_seconds: float
    environment: str           # kernel, git revision, date


def _num(x: float | None) -> str:
    if x is None:
        return "–"
    if x == UNFINISHED_S:
        return UNFINISHED_TEXT
    if abs(x) >= 100:
        return f"{x:.0f}"
    return f"{x:.3g}" if x != int(x) else f"{x:.0f}"


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min ({seconds:.0f} s)"


def runs_section(ctx: ReportContext) -> list[str]:
    rows = [[r.study, r.scenario, f"`{r.cells}`" if r.cells else "all", str(r.replications),
             ", ".join(f"{n} {s}" for s, n in sorted(r.statuses.items())) or "–",
             f"{r.seconds:.0f} s", f"`{r.run_dir}`"] for r in ctx.runs]
    paragraphs = [line for text in ctx.reduction for line in (text, "")]
    return ["## What was run", "", *paragraphs,
            *markdown_table(["study", "scenario", "cells", "replications",
                             "replications' status", "wall time", "run directory"], rows), "",
            f"Whole validation (runs, analysis, this report): {_minutes(ctx.total_seconds)}.",
            ""]


def conclusions_section(verdicts: list[Verdict]) -> list[str]:
    out = ["## The studies' conclusions", "",
           *markdown_table(["conclusion", "in the studies' tables", "in squall's runs"],
                           [[v.title, v.reference, v.ours] for v in verdicts]), ""]
    for v in verdicts:
        shown = [c for c in v.cases if c.ours_holds is not None or c.reference_holds is not None]
        out += [f"### {v.title}", "", v.claim, "",
                f"Studies' tables: **{v.reference}**. squall: **{v.ours}**.", ""]
        if not any(c.ours_holds is not None for c in v.cases):
            out += ["squall's runs measured no case of this conclusion yet"
                    + (" (the studies' cases below, squall's column empty)." if shown else "."), ""]
        if shown:
            out += markdown_table(["case", "studies", "squall", "holds (studies / squall)"],
                                  [[c.what, c.reference, c.ours,
                                    f"{_yes(c.reference_holds)} / {_yes(c.ours_holds)}"]
                                   for c in shown])
            out.append("")
        out += [f"Modern kernel: {v.kernel_note}", ""]
    return out


def _share(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.0f} %"


def agreement_section(agreements: list[Agreement], coverage: Coverage) -> list[str]:
    """Coverage and closeness per metric family, against the issue's targets."""
    share = coverage.compared / coverage.reference_rows if coverage.reference_rows else 0.0
    rows = [[a.family, str(a.reference_values), str(a.compared), _share(a.coverage),
             _num(a.median_abs_ln) if a.median_abs_difference is None
             else f"Δ {a.median_abs_difference:.1f} points",
             _share(a.within_20), _share(a.within_50),
             "–" if a.target is None else f"≤ {a.target:.2f}", _yes(a.met)] for a in agreements]
    return ["## How close squall comes, per metric family", "",
            f"squall has a value for {coverage.compared} of the {coverage.reference_rows} reference "
            f"values ({100 * share:.1f} %; target ≥ 95 %), rows marked corrupt left out. "
            "|ln r| is the distance of the ratio r = squall / reference from 1 (0.15 ≈ 16 %, "
            "0.41 = a factor 1.5); counts (drops, retransmissions) are compared as (value + 1), "
            "so that 0 against 0 agrees; the response time differences are in percentage points. "
            "The rows \"medians and means only\" leave out the minima, maxima and quartiles over a "
            "cell's replications: those move with the number of replications (the mixtures' tables "
            "are over 20), so they are fair only once squall has as many. The tables' UDP jitter is "
            "compared with squall's mean receive spacing of consecutive datagrams, which is what "
            "those tables give (their error-free values are the send spacing itself; "
            "validation/README.md, \"The mixtures' jitter\"), not with squall's jitter, the mean "
            "change of spacing.", "",
            *markdown_table(["family", "reference values", "compared", "coverage",
                             "median |ln r|", "within ±20 %", "within ±50 %", "target", "met"], rows),
            ""]


def _yes(x: bool | None) -> str:
    return "–" if x is None else "yes" if x else "no"


def tables_section(rows: list[Comparison], coverage: Coverage) -> list[str]:
    out = ["## The tables side by side", "",
           f"{coverage.compared} of the {coverage.reference_rows} reference values with a number "
           f"have a squall value here; the other {coverage.not_run} belong to cells not run (or "
           "not measurable) in these runs. ratio = squall / reference (– when the reference is "
           "0); for percentages (Saarto's response time differences) Δ = squall − reference in "
           "percentage points. Keys and metric names: scenarios/reference/README.md.", ""]
    for study in ("iip", "saarto"):
        mine = [c for c in rows if c.key.study == study]
        if not mine:
            continue
        out += [f"### {STUDY_NAMES[study]}", ""]
        out += markdown_table(
            ["table", "link", "variant", "workload", "HTTP", "metric", "unit", "reference",
             "squall", "ratio / Δ"],
            [[c.table, c.key.link, c.key.variant, c.key.workload, c.key.http or "–",
              c.key.metric, c.unit, _num(c.reference), _num(c.ours),
              _num(c.ratio) if c.difference is None else f"Δ {c.difference:+.1f}"]
             for c in mine])
        out.append("")
    return out


KERNEL_DIFFERENCES = [
    "## Where today's Linux TCP differs from the studies' (docs/tcp-variants.md)", "",
    "- **Slow start.** Today's Reno grows the window by every segment an ACK covers, so it "
    "doubles every round trip however the receiver ACKs; a 2004 Linux added one segment per ACK "
    "and its receivers ACKed every second segment, about 1.5× per round trip. Expect squall's "
    "HTTP/1.1 pages at e0 below the tables' times and every slow-start overshoot to drop about "
    "twice the tables' packets: two isolating experiments with a 2004 growth bring the mixtures' "
    "congestion drops to the tables' (validation/README.md, mixture-drops and slow-start), but "
    "move the long HTTP pages' drops and HTTP/1.0's m+8m page away from them, so the study "
    "scenarios keep the kernel's own growth (the decision and its reasons are there too).",
    "- **Loss recovery.** Recovery is SACK-based with Proportional Rate Reduction; rate halving "
    "cannot be turned off as the baseline had it. RACK and tail loss probes are off in every "
    "study profile (`tcp_recovery = 0`, `tcp_early_retrans = 0`), so losses are found by "
    "duplicate ACKs and timeouts as in 2004.",
    "- **Timeouts.** The RTO follows RFC 6298 with a 200 ms minimum; with timestamps a spurious "
    "timeout is detected and its window reduction undone, F-RTO is RFC 5682 and the same for "
    "`frto` and `frto2`; D-SACK also feeds the undo. Spurious RTOs and the time lost to them "
    "therefore differ from the 2.4 kernels'.",
    "- **CBI** is the per-namespace tcp_metrics cache (temporal sharing only).",
    "- **SYN retries** back off exponentially as in 2004 (`tcp_syn_linear_timeouts = 0` in every "
    "study profile); the initial RTO is 1 s instead of 3 s.",
    "- **Not TCP**: squall-http requests HTTP/1.0 in-line objects from the main object's first "
    "byte and HTTP/1.1's after the main object, as the report's times require (scenario "
    "headers); the HTTP server is nginx; the router is the emulator's router stage in front of "
    "the link's send buffer with a 10-packet device queue (Seawind's structure; RED with ECN "
    "there too).", ""]


def render(ctx: ReportContext, verdicts: list[Verdict], rows: list[Comparison],
           coverage: Coverage, agreements: list[Agreement] | None = None) -> str:
    lines = [f"# {ctx.title}", "", ctx.environment, "",
             *runs_section(ctx), *(agreement_section(agreements, coverage) if agreements else []),
             *conclusions_section(verdicts), *KERNEL_DIFFERENCES, *tables_section(rows, coverage)]
    return "\n".join(lines).rstrip() + "\n"
