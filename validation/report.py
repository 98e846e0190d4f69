"""validation/report.md: what was run, the conclusions, the tables side by side."""
from __future__ import annotations

from dataclasses import dataclass

from analysis.metrics.censoring import UNFINISHED_S, UNFINISHED_TEXT
from analysis.report.contents import markdown_table

from .bias import SignedBias
from .compare import Agreement, Comparison, Coverage, table_order
from .conclusions import Verdict
from .distributions import Spread, strip
from .outcome import Outcome
from .reference import Key
from .protocol import PENDING_COMMAND, UDP_FITTED, Sensitivity
from .stability import Stability, stability_text

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


VERDICT_RULES = (
    "The same test on both sides (validation/PROTOCOL.md, \"Verdicts\"); of the cases a side "
    "can test, the share that holds gives the verdict: **holds** ≥ 90 %, **mostly holds** ≥ 75 %, "
    "**mixed** 25–75 %, **fails** < 25 %. squall's stability: each cell's counted replications "
    "resampled with replacement (the conclusions' cells, a fixed seed), the conclusions checked "
    "again, and the share of resamples that give squall's verdict as measured.")


def conclusions_section(verdicts: list[Verdict], stable: list[Stability] | None = None,
                        sensitivity: dict[str, Verdict] | None = None) -> list[str]:
    stability = stability_text(stable or [])
    sensitivity = sensitivity or {}
    out = ["## The studies' conclusions", "", VERDICT_RULES, "",
           *markdown_table(["conclusion", "in the studies' tables", "in squall's runs", "squall's stability"],
                           [[v.title, v.reference, v.ours, stability.get(v.title, "–")] for v in verdicts]), ""]
    for v in verdicts:
        shown = [c for c in v.cases if c.ours_holds is not None or c.reference_holds is not None]
        out += [f"### {v.title}", "", v.claim, "",
                f"Studies' tables: **{v.reference}**. squall: **{v.ours}**"
                + (f" ({stability[v.title]})." if v.title in stability else "."), ""]
        if v.title in sensitivity:
            s = sensitivity[v.title]
            out += [f"Pending the protocol run (`{PENDING_COMMAND}`). With the fitted stream instead "
                    f"(sensitivity variant {UDP_FITTED.name}, {UDP_FITTED.commit}), not the main "
                    f"result: squall **{s.ours}**"
                    + "".join(f"; {link} {ours}" for link, _, ours in s.by_link()) + ".", ""]
        if len(v.by_link()) > 1:
            out += ["Per link:", "", *markdown_table(["link", "studies", "squall"],
                                                     [list(row) for row in v.by_link()]), ""]
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


def _signed(b: SignedBias | None) -> list[str]:
    """median ln r [95 % interval], and the shares above / below 0."""
    if b is None:
        return ["–", "–"]
    return [f"{_ln(b.median_ln)} [{_ln(b.low)}, {_ln(b.high)}]", f"{_share(b.above)} / {_share(b.below)}"]


def _ln(x: float) -> str:
    return "−∞" if x == float("-inf") else "+∞" if x == float("inf") else f"{x:+.3f}".replace("-", "−")


def _distance(a: Agreement) -> str:
    return (_num(a.median_abs_ln) if a.median_abs_difference is None
            else f"Δ {a.median_abs_difference:.1f} points")


def agreement_section(agreements: list[Agreement], coverage: Coverage) -> list[str]:
    """Coverage and closeness per metric family, against the issue's targets."""
    share = coverage.compared / coverage.reference_rows if coverage.reference_rows else 0.0
    rows = [[a.family, str(a.reference_values), str(a.compared), _share(a.coverage), _distance(a),
             *_signed(a.bias), _share(a.within_20), _share(a.within_50),
             "–" if a.target is None else f"≤ {a.target:.2f}", _yes(a.met)] for a in agreements]
    return ["## How close squall comes, per metric family", "",
            f"squall has a value for {coverage.compared} of the {coverage.reference_rows} reference "
            f"values ({100 * share:.1f} %; target ≥ 95 %), rows marked corrupt left out"
            + (f"; {coverage.pending} more are **pending the protocol run**: their cells ran only with "
               f"a parameter fitted to the tables ({UDP_FITTED.name}, {UDP_FITTED.commit}), whose "
               "numbers are in the sensitivity table below, not here (run: "
               f"`{PENDING_COMMAND}`, validation/PROTOCOL.md)" if coverage.pending else "") + ". "
            "|ln r| is the distance of the ratio r = squall / reference from 1 (0.15 ≈ 16 %, "
            "0.41 = a factor 1.5); the signed median ln r says to which side (below 0: squall "
            "lower, i.e. faster for times, slower for throughputs), with its bootstrap 95 % "
            "interval and the shares of values above and below the table's. Counts (drops, "
            "retransmissions) are compared as (value + 1), "
            "so that 0 against 0 agrees; the response time differences are in percentage points. "
            "The rows \"medians and means only\" leave out the minima, maxima and quartiles over a "
            "cell's replications: those move with the number of replications (the mixtures' tables "
            "are over 20), so they are fair only once squall has as many. The tables' UDP jitter is "
            "compared with squall's mean jitter by the report's definition (section 6: the change "
            "of spacing of consecutive datagrams), squall's mean receive spacing being a "
            "sensitivity variant.", "",
            *markdown_table(["family", "reference values", "compared", "coverage",
                             "median |ln r|", "median ln r [95 %]", "above / below 0",
                             "within ±20 %", "within ±50 %", "target", "met"], rows),
            ""]


def per_study_section(per_study: dict[str, list[Agreement]]) -> list[str]:
    rows = [[STUDY_NAMES[study], a.family, str(a.compared), _distance(a), *_signed(a.bias)]
            for study, agreements in per_study.items() for a in agreements if a.compared]
    if not rows:
        return []
    return ["### Signed bias per study", "",
            *markdown_table(["study", "family", "compared", "median |ln r|", "median ln r [95 %]",
                             "above / below 0"], rows), ""]


def sensitivity_section(variants: list[tuple[Sensitivity, list[Agreement]]]) -> list[str]:
    rows = [[f"{v.name} ({v.commit})", a.family, str(a.compared), _distance(a), *_signed(a.bias),
             _share(a.within_20)] for v, agreements in variants for a in agreements
            if not a.family.endswith(": medians and means only")]
    if not rows:
        return []
    return ["### Sensitivity variants: values fitted to the tables (not the main comparison)", "",
            "Each was chosen by looking at the tables being validated (validation/PROTOCOL.md, "
            "\"Sensitivity variants\"), so its agreement is not evidence, only the size of the "
            "choice's effect: " + "; ".join(f"**{v.name}** ({v.commit}): {v.fitted}" for v, _ in variants)
            + ".", "",
            *markdown_table(["variant (commit)", "family", "compared", "median |ln r|",
                             "median ln r [95 %]", "above / below 0", "within ±20 %"], rows), ""]


def distributions_section(spread: list[Spread]) -> list[str]:
    if not spread:
        return []
    rows = [[f"{s.key.study} {s.key.link} {s.key.variant} {s.key.workload} {s.key.http}".rstrip(),
             _num(s.reference), f"`{strip(s.values, s.reference)}`",
             ", ".join(_num(x) for x in s.values)] for s in spread]
    return ["## Bimodal cells of the conclusions, whole", "",
            "The page times of every counted replication of the conclusions' cells whose "
            "replications split (sorted times with a gap of a factor 2 or more, at least two on "
            "each side): a median there depends on how many replications fell on each side. Strip: "
            "log scale from 1 s to 320 s, `o` a replication (`O` more than one), `R` the table's "
            "value, `>` beyond 320 s or unfinished (∞).", "",
            *markdown_table(["cell", "table (s)", "1 s … 320 s", "squall's replications (s)"], rows), ""]


def _yes(x: bool | None) -> str:
    return "–" if x is None else "yes" if x else "no"


def _ratio_text(c: Comparison) -> str:
    return _num(c.ratio) if c.difference is None else f"Δ {c.difference:+.1f}"


def _variants_text(key: Key, variant_rows: dict[Key, list[tuple[Sensitivity, Comparison]]]) -> str:
    return "; ".join(f"{v.name} ({v.commit}): {_num(c.ours)} ({_ratio_text(c)})"
                     for v, c in variant_rows.get(key, [])) or "–"


def tables_section(rows: list[Comparison], coverage: Coverage,
                   variant_rows: dict[Key, list[tuple[Sensitivity, Comparison]]] | None = None) -> list[str]:
    """Every compared value; a value pending the protocol run has "pending" as squall's, and
    the sensitivity variants' values of a key are in a column of their own."""
    variant_rows = variant_rows or {}
    compared = {c.key for c in rows}
    pending = [c for entries in variant_rows.values() for v, c in entries[:1]
               if c.key not in compared and any(x is UDP_FITTED for x, _ in entries)]
    out = ["## The tables side by side", "",
           f"{coverage.compared} of the {coverage.reference_rows} reference values with a number "
           f"have a squall value here; {coverage.pending} are pending the protocol run (above), the "
           f"other {coverage.not_run - coverage.pending} belong to cells not run (or not measurable) "
           "in these runs. ratio = squall / reference (– when the reference is "
           "0); for percentages (Saarto's response time differences) Δ = squall − reference in "
           "percentage points. Keys and metric names: scenarios/reference/README.md. \"pending\": "
           "the value waits for the protocol's run; the last column has the sensitivity variants' "
           "values (fitted to the tables: not the comparison) with their ratio.", ""]
    for study in ("iip", "saarto"):
        mine = sorted([(c, False) for c in rows if c.key.study == study]
                      + [(c, True) for c in pending if c.key.study == study],
                      key=lambda cp: (table_order(cp[0].table), cp[0].key))
        if not mine:
            continue
        out += [f"### {STUDY_NAMES[study]}", ""]
        out += markdown_table(
            ["table", "link", "variant", "workload", "HTTP", "metric", "unit", "reference",
             "squall", "ratio / Δ", "sensitivity variants"],
            [[c.table, c.key.link, c.key.variant, c.key.workload, c.key.http or "–",
              c.key.metric, c.unit, _num(c.reference), "pending" if waits else _num(c.ours),
              "–" if waits else _ratio_text(c), _variants_text(c.key, variant_rows)]
             for c, waits in mine])
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


def reproducibility_section(results: list[dict]) -> list[str]:
    """The channel's spread across a cell's replications against the hosts' across re-runs of
    one replication (validation/explanations/reproducibility/)."""
    out = ["## Replication reproducibility: the channel's spread and the hosts'", "",
           "Replication k meets the same channel every time; re-running it shows what the hosts' "
           "timing alone changes. SD of ln(value) (ln(value + 1) for counts) over the cell's "
           "committed replications (the channel and the hosts) and over re-runs of one "
           "replication (the hosts); the hosts' share is the ratio of the variances (none where "
           "the replications' SD of ln is below 0.01); ∞ = "
           "unfinished pages, counted apart (validation/explanations/reproducibility/)."
           + ("" if results else " **Pending**: no re-runs committed yet (the README there gives "
              "the commands)."), ""]
    for r in results:
        rows = [[metric, _sd(m["channel"]), _sd(m["hosts"]), _hosts_share(m),
                 ", ".join(_num(x) for x in m["hosts"]["values"])]
                for metric, m in r["metrics"].items()]
        out += [f"`{r['cell']}`, replication {r['replication']}: {r['reruns']} re-runs against "
                f"{r['replications_in_data']} committed replications.", "",
                *markdown_table(["metric", "channel + hosts: SD ln (n, ∞)", "hosts: SD ln (n, ∞)",
                                 "hosts' share", "re-runs' values"], rows), ""]
    return out


# below this SD of ln (1 %) the cell's replications hardly differ and a share says nothing
NO_SPREAD = 0.01


def _hosts_share(m: dict) -> str:
    if m["hosts_share_of_variance"] is None:
        return "–"
    if m["channel"]["sd_ln"] < NO_SPREAD:
        return "– (no spread)"
    return f"{100 * m['hosts_share_of_variance']:.0f} %"


def _sd(s: dict) -> str:
    sd = "–" if s["sd_ln"] is None else f"{s['sd_ln']:.3f}"
    return f"{sd} ({s['n']}, {s['unfinished']})"


def provenance_section(provenance: list[str]) -> list[str]:
    if not provenance:
        return []
    return ["### Which squall revision produced which rows", "",
            "Every revision that produced a counted row of the committed data, with its rows "
            "(validation/provenance.py: a row is its round's, a CBI cell's row its chains' run's).",
            "", *[f"- {p}" for p in provenance], ""]


def render(ctx: ReportContext, outcome: Outcome) -> str:
    o = outcome
    lines = [f"# {ctx.title}", "", ctx.environment, "",
             *runs_section(ctx), *provenance_section(o.provenance),
             *(agreement_section(o.agreements, o.coverage) if o.agreements else []),
             *per_study_section(o.per_study), *sensitivity_section(o.variants),
             *conclusions_section(o.verdicts, o.stability, o.sensitivity_verdicts),
             *distributions_section(o.spreads), *reproducibility_section(o.reproducibility),
             *KERNEL_DIFFERENCES, *tables_section(o.rows, o.coverage, o.variant_rows)]
    return "\n".join(lines).rstrip() + "\n"
