"""The studies' result tables in scenarios/reference/: every CSV is well formed, uses the
shared vocabularies, has unique keys, and its values are those printed in the seeds text.

The source checks read the seeds text (../shared/seeds relative to the repository root)
and find each cell there independently of how the CSVs were written: a spot list of
literal values per source table, and for the regular table families every row.
"""
from __future__ import annotations

import csv
import re
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Callable

import pytest

REPO = Path(__file__).resolve().parents[1]
REFERENCE = REPO / "scenarios" / "reference"
SEEDS = REPO.parent / "shared" / "seeds"
IIP_SOURCE = "003_4986907118dd467f.txt"
SAARTO_SOURCE = "000_c020baefed7797c0.txt"

HTTP_COLUMNS = ["study", "table", "http", "link", "variant", "source_label", "workload",
                "metric", "value", "unit", "relative_to"]
MIX_COLUMNS = ["study", "table", "workload", "diffserv", "link", "variant", "queue",
               "source_label", "flow_role", "metric", "value", "unit", "corrupt"]
WORKLOAD_COLUMNS = ["study", "table", "workload", "diffserv", "source_label", "flow",
                    "parameter", "value", "unit"]
PARAM_COLUMNS = ["study", "table", "subject", "parameter", "value", "unit", "source_label"]

IIP_LINKS = {"e0", "r0", "r2", "r4"}
SAARTO_LINKS = {"optimal", "arq-low", "arq-medium", "arq-high"}
VARIANTS_NOT_IN_TCP_TOML: set[str] = set()
MIX_WORKLOADS = {"3tcp-0s-0s-0s", "3tcp-0s-0s-5s", "2tcp+1udp-0s-0s-0s", "2tcp+1udp-0s-0s-5s"}
FLOW_ROLES = {"fastest", "medium", "slowest", "faster", "slower", "third", "udp"}
ELAPSED = ["Elapsed_min", "Elapsed_perc25", "Elapsed_median", "Elapsed_perc75", "Elapsed_max",
           "Elapsed_avg"]
UNIT_OF_METRIC = {
    "Time": "s", "Med_thro": "B/s", "Min_thro": "B/s", "Max_thro": "B/s",
    "Drops_c": "packets", "Drops_e": "packets",
    "response_time": "s", "response_time_diff": "%", "Med_th_m": "B/s", "Slowest_th_i": "B/s",
    "Fastest_th_i": "B/s", "Sum_max_drops": "packets",
    **{m: "s" for m in ELAPSED}, "Rext_pkts": "packets", "Jitter_min": "ms", "Jitter_max": "ms",
}
IIP_HTTP_METRICS = {"Time", "Med_thro", "Min_thro", "Max_thro", "Drops_c", "Drops_e"}
SAARTO_HTTP_METRICS = {"response_time", "response_time_diff", "Med_th_m", "Slowest_th_i",
                       "Fastest_th_i", "Drops_c", "Drops_e", "Sum_max_drops"}
MIX_METRICS = set(ELAPSED) | {"Med_thro", "Rext_pkts", "Drops_c", "Drops_e", "Jitter_min", "Jitter_max"}


@dataclass(frozen=True)
class Kind:
    """A family of reference files sharing columns and key."""
    columns: list[str]
    key: list[str]


HTTP = Kind(HTTP_COLUMNS, ["study", "table", "http", "link", "variant", "workload", "metric", "relative_to"])
MIX = Kind(MIX_COLUMNS, ["study", "table", "workload", "diffserv", "link", "variant", "queue",
                         "flow_role", "metric"])
WORKLOADS = Kind(WORKLOAD_COLUMNS, ["study", "table", "workload", "diffserv", "flow", "parameter"])
PARAMS = Kind(PARAM_COLUMNS, ["study", "table", "subject", "parameter"])


def kind_of(name: str) -> Kind:
    if m := re.fullmatch(r"iip-table(\d\d)-.*\.csv", name):
        number = int(m.group(1))
        if 9 <= number <= 30:
            return HTTP
        return WORKLOADS if number == 31 else MIX
    if re.fullmatch(r"saarto-arq-(low|medium|high)-(baseline-ts|response-time-diff)\.csv", name):
        return HTTP
    return PARAMS


@dataclass(frozen=True)
class RefFile:
    name: str
    comments: list[str]
    header: list[str]
    rows: list[dict[str, str]]

    def comment(self, key: str) -> str:
        """The value of a `# key: value` header line."""
        for line in self.comments:
            if line.startswith(f"{key}:"):
                return line[len(key) + 1:].strip()
        raise AssertionError(f"{self.name}: no '# {key}:' header line")


def read_ref(path: Path) -> RefFile:
    lines = path.read_text(encoding="utf-8").splitlines()
    comments = [line[1:].strip() for line in lines if line.startswith("#")]
    data = [line for line in lines if not line.startswith("#")]
    assert lines[0].startswith("#"), f"{path.name}: must start with # comment lines"
    assert all(not line.startswith("#") for line in lines[len(comments):]), \
        f"{path.name}: comment lines must all come before the header row"
    reader = csv.reader(data)
    header = next(reader)
    rows = []
    for number, cells in enumerate(reader, start=2):
        assert len(cells) == len(header), f"{path.name}: data row {number} has {len(cells)} cells"
        rows.append(dict(zip(header, cells)))
    return RefFile(path.name, comments, header, rows)


def ref_files() -> list[Path]:
    return sorted(REFERENCE.glob("*.csv"))


@cache
def ref(name: str) -> RefFile:
    return read_ref(REFERENCE / name)


@cache
def tcp_profiles() -> set[str]:
    with open(REPO / "scenarios" / "profiles" / "tcp.toml", "rb") as f:
        return set(tomllib.load(f))


@cache
def page_workloads() -> set[str]:
    with open(REPO / "scenarios" / "profiles" / "workloads.toml", "rb") as f:
        return {name for name, p in tomllib.load(f).items() if p.get("kind") == "http"}


def is_number(value: str) -> bool:
    return re.fullmatch(r"-?\d+(\.\d+)?", value) is not None


# ---------------------------------------------------------------- form of every file

def test_every_source_table_has_a_file() -> None:
    numbers = sorted(int(m.group(1)) for p in ref_files()
                     if (m := re.fullmatch(r"iip-table(\d\d)-.*\.csv", p.name)))
    assert numbers == list(range(9, 37))
    saarto = {p.name for p in ref_files() if p.name.startswith("saarto-")}
    for level in ("low", "medium", "high"):
        assert f"saarto-arq-{level}-baseline-ts.csv" in saarto
        assert f"saarto-arq-{level}-response-time-diff.csv" in saarto
    assert {"saarto-seawind-parameters.csv", "saarto-state-properties.csv", "saarto-link-types.csv",
            "saarto-workload-objects.csv", "saarto-workload-labels.csv"} <= saarto


@pytest.mark.parametrize("path", ref_files(), ids=lambda p: p.name)
def test_header_comments_name_source_and_table(path: Path) -> None:
    f = read_ref(path)
    source = f.comment("source")
    assert source.startswith(f"seeds/{IIP_SOURCE}") or source.startswith(f"seeds/{SAARTO_SOURCE}")
    table = f.comment("table")
    title = f.comment("title")
    if m := re.fullmatch(r"iip-table(\d\d)-.*\.csv", path.name):
        number = int(m.group(1))
        assert source.startswith(f"seeds/{IIP_SOURCE}")
        assert table == str(number)
        assert title.startswith(f"Table {number}. ")
        assert {r["table"] for r in f.rows} == {str(number)}
    else:
        assert source.startswith(f"seeds/{SAARTO_SOURCE}")
        assert table.startswith("none (slides have no table numbers")
        assert {r["table"] for r in f.rows} == {path.name.removeprefix("saarto-").removesuffix(".csv")}
    assert f.rows, f"{path.name}: no data rows"


@pytest.mark.parametrize("path", ref_files(), ids=lambda p: p.name)
def test_declared_columns_and_unique_keys(path: Path) -> None:
    f = read_ref(path)
    kind = kind_of(path.name)
    assert f.header == kind.columns
    keys = [tuple(r[c] for c in kind.key) for r in f.rows]
    duplicates = {k for k in keys if keys.count(k) > 1}
    assert not duplicates, f"{path.name}: duplicate keys {sorted(duplicates)[:3]}"


@pytest.mark.parametrize("path", ref_files(), ids=lambda p: p.name)
def test_vocabularies(path: Path) -> None:
    f = read_ref(path)
    kind = kind_of(path.name)
    variants = tcp_profiles() | VARIANTS_NOT_IN_TCP_TOML
    for r in f.rows:
        where = f"{path.name}: {r}"
        assert r["study"] in {"iip", "saarto"}, where
        if kind in (HTTP, MIX):
            assert r["variant"] in variants, where
            assert r["link"] in (IIP_LINKS if r["study"] == "iip" else SAARTO_LINKS), where
            assert r["unit"] == UNIT_OF_METRIC[r["metric"]], where
            assert is_number(r["value"]), where
            assert r["source_label"], where
        if kind is HTTP:
            assert r["http"] in {"1.0", "1.1"}, where
            assert r["workload"] in page_workloads(), where
            assert r["metric"] in (IIP_HTTP_METRICS if r["study"] == "iip" else SAARTO_HTTP_METRICS), where
            if r["metric"] == "response_time_diff":
                assert r["relative_to"] in variants, where
            else:
                assert r["relative_to"] == "", where
        if kind is MIX:
            assert r["workload"] in MIX_WORKLOADS and r["diffserv"] in {"yes", "no"}, where
            assert r["queue"] in {"fifo", "red"} and r["flow_role"] in FLOW_ROLES, where
            assert r["metric"] in MIX_METRICS, where
        if kind is WORKLOADS:
            assert r["workload"] in MIX_WORKLOADS and r["diffserv"] in {"yes", "no"}, where
            assert r["flow"] in {"tcp", "udp", "all"}, where


@pytest.mark.parametrize("path", ref_files(), ids=lambda p: p.name)
def test_empty_values_are_explained(path: Path) -> None:
    f = read_ref(path)
    if any(r["value"] == "" for r in f.rows):
        notes = " ".join(f.comments)
        assert "recorded empty" in notes or "left empty" in notes, \
            f"{path.name} has empty values but no note saying why"


def test_exactly_the_copied_rows_are_marked_corrupt() -> None:
    """Table 32: Baseline r4's elapsed times and throughputs repeat the baseline+RED e0 ones (the
    prose gives RED at e0 the 99.16 s and Baseline r4 an increase over r2's 102.77 s); table
    36: the Baseline r0 slowest row repeats Baseline r2's. Those values, and no others, are
    marked, each with its reason, and equal the rows they copy."""
    marked: dict[str, list[dict[str, str]]] = {}
    for path in ref_files():
        if kind_of(path.name) is MIX:
            for r in ref(path.name).rows:
                if r["corrupt"]:
                    assert r["corrupt"].startswith("corrupt: ") and len(r["corrupt"]) > 40, r
                    marked.setdefault(r["table"], []).append(r)
    assert sorted(marked) == ["32", "36"]
    assert len(marked["32"]) == 3 * 7 and len(marked["36"]) == 10

    def value(name: str, **match: str) -> str:
        (row,) = [r for r in ref(name).rows if all(r[k] == v for k, v in match.items())]
        return row["value"]
    t32, t36 = "iip-table32-mix-3tcp-0s-0s-0s.csv", "iip-table36-mix-2tcp1udp-0s-0s-5s-ds.csv"
    for r in marked["32"]:
        assert (r["link"], r["variant"], r["queue"]) == ("r4", "baseline", "fifo")
        assert "99.16" in r["corrupt"] and "102.77" in r["corrupt"]
        assert r["value"] == value(t32, link="e0", variant="baseline", queue="red",
                                   flow_role=r["flow_role"], metric=r["metric"])
    for r in marked["36"]:
        assert (r["link"], r["variant"], r["queue"], r["flow_role"]) == ("r0", "baseline", "fifo", "slowest")
        assert r["value"] == value(t36, link="r2", variant="baseline", queue="fifo",
                                   flow_role="slowest", metric=r["metric"])


def test_variants_outside_tcp_toml_are_documented() -> None:
    assert not VARIANTS_NOT_IN_TCP_TOML & tcp_profiles(), "now in tcp.toml: drop from the exceptions"
    readme = (REFERENCE / "README.md").read_text(encoding="utf-8")
    for variant in VARIANTS_NOT_IN_TCP_TOML:
        assert f"`{variant}`" in readme


def test_readme_lists_exactly_the_files() -> None:
    readme = (REFERENCE / "README.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"`([a-z0-9+-]+\.csv)`", readme))
    assert listed == {p.name for p in ref_files()}


def test_mixture_tables_have_every_cell() -> None:
    """3 variants × 4 links; each TCP flow role with all its metrics, one UDP flow."""
    expected_roles = {32: ["fastest", "medium", "slowest"], 33: ["faster", "slower", "third"],
                      34: ["fastest", "slowest"], 35: ["fastest", "slowest"], 36: ["fastest", "slowest"]}
    for path in ref_files():
        m = re.fullmatch(r"iip-table(3[2-6])-.*\.csv", path.name)
        if not m:
            continue
        number = int(m.group(1))
        rows = read_ref(path).rows
        tcp_metrics = ELAPSED + ["Med_thro", "Drops_c", "Drops_e"] + (["Rext_pkts"] if number >= 34 else [])
        cases = {(r["variant"], r["queue"], r["link"]) for r in rows}
        assert len(cases) == 12
        for case in cases:
            cells = {(r["flow_role"], r["metric"]) for r in rows if (r["variant"], r["queue"], r["link"]) == case}
            want = {(role, metric) for role in expected_roles[number] for metric in tcp_metrics}
            if number >= 34:
                want |= {("udp", metric) for metric in ["Drops_c", "Drops_e", "Med_thro", "Jitter_min", "Jitter_max"]}
            assert cells == want, (path.name, case)


# ---------------------------------------------------------------- values against the seeds text

@cache
def seed_lines(name: str) -> list[str]:
    path = SEEDS / name
    if not path.is_file():
        pytest.skip(f"seeds text {name} not found under ../shared/seeds (the shared study texts "
                    "are not checked out next to the repository)")
    return path.read_text(encoding="utf-8").splitlines()


def iip_table_block(number: int) -> list[list[str]]:
    """The tab-split non-empty lines of IIP table `number`, from its title or Name row to
    its caption."""
    lines = seed_lines(IIP_SOURCE)
    end = next(i for i, line in enumerate(lines) if line.startswith(f"Table {number}. "))
    start = end - 1
    while not (lines[start].startswith("Name\t") or "0s-0s" in lines[start].split("\t")[0]):
        start -= 1
    return [line.split("\t") for line in lines[start:end] if line.strip()]


def number_in(cell: str) -> str:
    """A cell's number with the source's decimal comma as a point."""
    m = re.search(r"[+-]?\d+(?:[.,]\d+)?", cell)
    assert m, f"no number in source cell {cell!r}"
    return m.group(0).replace(",", ".")


def iip_http_cell(row: dict[str, str]) -> str:
    block = iip_table_block(int(row["table"]))
    names = block[0]
    first = names.index(row["source_label"])
    workload_row = next(c for c in block[1:] if c[0] in ("", "Workload"))
    offset = [w.strip("$") for w in workload_row[first:first + 3]].index(row["workload"])
    metric_row = next(c for c in block if c[0] == row["metric"])
    return metric_row[first + offset]


MIX_FLOW_LABELS = {"fastest": {"fastest"}, "medium": {"medium"}, "slowest": {"slowest", "slow est"},
                   "faster": {"faster"}, "slower": {"slower"}, "third": {"3rd flow"}}
MIX_TCP_COLUMN_3TCP = {**{m: 4 + i for i, m in enumerate(ELAPSED)}, "Med_thro": 10, "Drops_e": 11, "Drops_c": 12}
MIX_TCP_COLUMN_UDP = {**{m: 4 + i for i, m in enumerate(ELAPSED)}, "Med_thro": 10, "Rext_pkts": 11,
                      "Drops_c": 12, "Drops_e": 13}
MIX_UDP_COLUMN = {"Drops_c": 14, "Drops_e": 15, "Med_thro": 16}


def mix_rows(number: int) -> list[tuple[str, str, list[str]]]:
    """(variant label, link, cells) of each data row, labels filled down."""
    label = link = ""
    out = []
    for cells in iip_table_block(number):
        if len(cells) < 10 or not re.search(r"\d", cells[4]):
            continue
        label = cells[0] or label
        link = cells[1] or link
        out.append((label, link, cells))
    return out


def iip_mix_cell(row: dict[str, str]) -> str:
    number = int(row["table"])
    rows = [cells for label, link, cells in mix_rows(number)
            if label == row["source_label"] and link == row["link"]]
    if row["flow_role"] == "udp":
        if row["metric"] in MIX_UDP_COLUMN:
            found = {cells[MIX_UDP_COLUMN[row["metric"]]] for cells in rows}
        else:
            jitter = {re.fullmatch(r"\((\d+,\d+)-(\d+,\d+)\)", cells[17]) for cells in rows}
            found = {m.group(1 if row["metric"] == "Jitter_min" else 2) for m in jitter if m}
        assert len(found) == 1, f"UDP cells differ between the TCP rows of {row}: {found}"
        return found.pop()
    columns = MIX_TCP_COLUMN_UDP if number >= 34 else MIX_TCP_COLUMN_3TCP
    (cells,) = [c for c in rows if c[3] in MIX_FLOW_LABELS[row["flow_role"]]]
    return cells[columns[row["metric"]]]


SAARTO_ROW_LABEL = {"response_time": "Response time (s)", "Med_th_m": "Med th. (m) B/s",
                    "Slowest_th_i": "Slowest th. (i) B/s", "Fastest_th_i": "Fastest th. (i) B/s",
                    "Drops_c": "Drops (c) median", "Drops_e": "Drops (e) median",
                    "Sum_max_drops": "\u03a3 maximum drops"}
SAARTO_WORKLOADS = ["s+2s", "s+2m", "s+8m", "m+2m", "m+8m", "l+8m"]
SAARTO_LEVEL_WORDS = {"arq-low": "low ARQ persistency", "arq-medium": "medium ARQ persistency",
                      "arq-high": "high ARQ persistency"}


def saarto_summary_cell(row: dict[str, str]) -> str:
    lines = seed_lines(SAARTO_SOURCE)
    caption = next(i for i, line in enumerate(lines) if line.startswith("Summary of")
                   and SAARTO_LEVEL_WORDS[row["link"]] in line)
    block = [line.split("\t") for line in lines[caption - 10:caption] if line.strip()]
    metric_row = next(c for c in block if c[0] == SAARTO_ROW_LABEL[row["metric"]])
    values = [c for c in metric_row[1:] if c != ""]
    assert len(values) == 6
    return values[SAARTO_WORKLOADS.index(row["workload"])]


def saarto_diff_cell(row: dict[str, str]) -> str:
    lines = seed_lines(SAARTO_SOURCE)
    heading = next(i for i, line in enumerate(lines) if "Differences in response times with" in line
                   and SAARTO_LEVEL_WORDS[row["link"]] in line)
    header_at = next(i for i in range(heading, len(lines)) if lines[i].startswith("Workload\t"))
    header = lines[header_at].split("\t")
    (cells,) = [line.split("\t") for line in lines[header_at + 1:header_at + 7]
                if line.startswith(row["workload"] + "\t")]
    return cells[header.index(row["source_label"])]


def checkable_cell(row: dict[str, str]) -> Callable[[dict[str, str]], str] | None:
    if row["study"] == "iip" and row["table"].isdigit():
        number = int(row["table"])
        if 9 <= number <= 30:
            return iip_http_cell
        if 32 <= number <= 36:
            return iip_mix_cell
    if row["table"].endswith("-baseline-ts"):
        return saarto_summary_cell
    if row["table"].endswith("-response-time-diff"):
        return saarto_diff_cell
    return None


@pytest.mark.parametrize("path", ref_files(), ids=lambda p: p.name)
def test_every_result_value_is_the_printed_one(path: Path) -> None:
    """Each row of the regular result tables against its cell in the seeds text."""
    checked = 0
    for row in read_ref(path).rows:
        cell_of = checkable_cell(row)
        if cell_of is None:
            continue
        cell = cell_of(row)
        assert float(number_in(cell)) == float(row["value"]), f"{path.name}: {row} but the source prints {cell!r}"
        checked += 1
    if kind_of(path.name) in (HTTP, MIX):
        assert checked == len(read_ref(path).rows)


# Literal spot checks, ≥ 3 per source table: (file, selecting columns, value in the CSV,
# cell as printed in the source). The source side is found with the locators above, or for
# the parameter tables by its row label and column.
SPOT: list[tuple[str, dict[str, str], str, str]] = [
    ("iip-table09-http11-e0-baseline-iw4frto.csv", {"variant": "baseline", "workload": "s+2s", "metric": "Time"}, "5.5", "5.5"),
    ("iip-table09-http11-e0-baseline-iw4frto.csv", {"variant": "baseline", "workload": "s+2s", "metric": "Med_thro"}, "2034.0", "2034.0"),
    ("iip-table09-http11-e0-baseline-iw4frto.csv", {"variant": "iw4-frto", "workload": "l+8m", "metric": "Max_thro"}, "6387.0", "6387.0"),
    ("iip-table10-http11-e0-cbifrto-frtocbiiw4.csv", {"variant": "cbi-frto", "workload": "m+8m", "metric": "Min_thro"}, "4945.0", "4945.0"),
    ("iip-table10-http11-e0-cbifrto-frtocbiiw4.csv", {"variant": "frto-cbi-iw4", "workload": "m+8m", "metric": "Drops_c"}, "9.0", "9.0"),
    ("iip-table10-http11-e0-cbifrto-frtocbiiw4.csv", {"variant": "frto-cbi-iw4", "workload": "l+8m", "metric": "Max_thro"}, "6389.0", "6389.0"),
    ("iip-table11-http10-e0-baseline-iw4frto.csv", {"variant": "baseline", "workload": "s+2s", "metric": "Time"}, "3.9", "3.9"),
    ("iip-table11-http10-e0-baseline-iw4frto.csv", {"variant": "iw4-frto", "workload": "l+8m", "metric": "Min_thro"}, "659.0", "659.0"),
    ("iip-table11-http10-e0-baseline-iw4frto.csv", {"variant": "iw4-frto", "workload": "l+8m", "metric": "Drops_c"}, "14.0", "14.0"),
    ("iip-table12-http10-e0-cbifrto-frtocbiiw4.csv", {"variant": "cbi-frto", "workload": "l+8m", "metric": "Time"}, "21.2", "21.2"),
    ("iip-table12-http10-e0-cbifrto-frtocbiiw4.csv", {"variant": "frto-cbi-iw4", "workload": "l+8m", "metric": "Min_thro"}, "834.0", "834.0"),
    ("iip-table12-http10-e0-cbifrto-frtocbiiw4.csv", {"variant": "frto-cbi-iw4", "workload": "s+2s", "metric": "Med_thro"}, "2443.0", "2443.0"),
    ("iip-table13-http11-r0-baseline-iw4frto.csv", {"variant": "baseline", "workload": "s+2s", "metric": "Time"}, "33.8", "33.8"),
    ("iip-table13-http11-r0-baseline-iw4frto.csv", {"variant": "baseline", "workload": "s+2s", "metric": "Med_thro"}, "282.0", "282.0"),
    ("iip-table13-http11-r0-baseline-iw4frto.csv", {"variant": "iw4-frto", "workload": "l+8m", "metric": "Drops_e"}, "35.0", "35.0"),
    ("iip-table14-http11-r0-cbifrto-frto.csv", {"variant": "cbi-frto", "workload": "s+2s", "metric": "Min_thro"}, "59.0", "59.0"),
    ("iip-table14-http11-r0-cbifrto-frto.csv", {"variant": "frto", "workload": "s+2s", "metric": "Time"}, "38.7", "38.7"),
    ("iip-table14-http11-r0-cbifrto-frto.csv", {"variant": "frto", "workload": "m+8m", "metric": "Max_thro"}, "4498.0", "4498.0"),
    ("iip-table15-http11-r0-dsack-frtocbiiw4.csv", {"variant": "dsack", "workload": "l+8m", "metric": "Time"}, "63.4", "63.4"),
    ("iip-table15-http11-r0-dsack-frtocbiiw4.csv", {"variant": "dsack", "workload": "s+2s", "metric": "Min_thro"}, "93.0", "93.0"),
    ("iip-table15-http11-r0-dsack-frtocbiiw4.csv", {"variant": "frto-cbi-iw4", "workload": "m+8m", "metric": "Drops_e"}, "15.0", "15.0"),
    ("iip-table16-http10-r0-baseline-iw4frto.csv", {"variant": "baseline", "workload": "s+2s", "metric": "Time"}, "11.1", "11.1"),
    ("iip-table16-http10-r0-baseline-iw4frto.csv", {"variant": "iw4-frto", "workload": "s+2s", "metric": "Max_thro"}, "2446.0", "2446.0"),
    ("iip-table16-http10-r0-baseline-iw4frto.csv", {"variant": "iw4-frto", "workload": "l+8m", "metric": "Min_thro"}, "44.0", "44.0"),
    ("iip-table17-http10-r0-cbifrto-frto.csv", {"variant": "cbi-frto", "workload": "s+2s", "metric": "Time"}, "21.9", "21.9"),
    ("iip-table17-http10-r0-cbifrto-frto.csv", {"variant": "frto", "workload": "l+8m", "metric": "Min_thro"}, "296.0", "296.0"),
    ("iip-table17-http10-r0-cbifrto-frto.csv", {"variant": "cbi-frto", "workload": "l+8m", "metric": "Drops_e"}, "13.0", "13.0"),
    ("iip-table18-http10-r0-dsack-frtocbiiw4.csv", {"variant": "dsack", "workload": "l+8m", "metric": "Time"}, "55.1", "55.1"),
    ("iip-table18-http10-r0-dsack-frtocbiiw4.csv", {"variant": "dsack", "workload": "m+8m", "metric": "Min_thro"}, "41.0", "41.0"),
    ("iip-table18-http10-r0-dsack-frtocbiiw4.csv", {"variant": "frto-cbi-iw4", "workload": "l+8m", "metric": "Med_thro"}, "2042.0", "2042.0"),
    ("iip-table19-http11-r2-baseline-iw4frto.csv", {"variant": "baseline", "workload": "s+2s", "metric": "Time"}, "10.0", "10.0"),
    ("iip-table19-http11-r2-baseline-iw4frto.csv", {"variant": "iw4-frto", "workload": "s+2s", "metric": "Min_thro"}, "339.0", "339.0"),
    ("iip-table19-http11-r2-baseline-iw4frto.csv", {"variant": "iw4-frto", "workload": "l+8m", "metric": "Drops_e"}, "11.0", "11.0"),
    ("iip-table20-http11-r2-cbifrto-frto.csv", {"variant": "cbi-frto", "workload": "l+8m", "metric": "Time"}, "45.1", "45.1"),
    ("iip-table20-http11-r2-cbifrto-frto.csv", {"variant": "frto", "workload": "l+8m", "metric": "Min_thro"}, "617.0", "617.0"),
    ("iip-table20-http11-r2-cbifrto-frto.csv", {"variant": "cbi-frto", "workload": "s+2s", "metric": "Drops_e"}, "1.0", "1.0"),
    ("iip-table21-http11-r2-dsack-frtocbiiw4.csv", {"variant": "dsack", "workload": "l+8m", "metric": "Time"}, "34.3", "34.3"),
    ("iip-table21-http11-r2-dsack-frtocbiiw4.csv", {"variant": "frto-cbi-iw4", "workload": "m+8m", "metric": "Time"}, "27.1", "27.1"),
    ("iip-table21-http11-r2-dsack-frtocbiiw4.csv", {"variant": "frto-cbi-iw4", "workload": "l+8m", "metric": "Max_thro"}, "4648.0", "4648.0"),
    ("iip-table22-http10-r2-baseline-iw4frto.csv", {"variant": "baseline", "workload": "s+2s", "metric": "Time"}, "7.6", "7.6"),
    ("iip-table22-http10-r2-baseline-iw4frto.csv", {"variant": "baseline", "workload": "l+8m", "metric": "Min_thro"}, "265.0", "265.0"),
    ("iip-table22-http10-r2-baseline-iw4frto.csv", {"variant": "iw4-frto", "workload": "l+8m", "metric": "Max_thro"}, "4353.0", "4353.0"),
    ("iip-table23-http10-r2-cbifrto-frto.csv", {"variant": "cbi-frto", "workload": "m+8m", "metric": "Time"}, "20.3", "20.3"),
    ("iip-table23-http10-r2-cbifrto-frto.csv", {"variant": "frto", "workload": "s+2s", "metric": "Med_thro"}, "987.0", "987.0"),
    ("iip-table23-http10-r2-cbifrto-frto.csv", {"variant": "frto", "workload": "l+8m", "metric": "Drops_e"}, "6.0", "6.0"),
    ("iip-table24-http10-r2-dsack-frtocbiiw4.csv", {"variant": "dsack", "workload": "s+2s", "metric": "Time"}, "11.2", "11.2"),
    ("iip-table24-http10-r2-dsack-frtocbiiw4.csv", {"variant": "frto-cbi-iw4", "workload": "l+8m", "metric": "Min_thro"}, "90.0", "90.0"),
    ("iip-table24-http10-r2-dsack-frtocbiiw4.csv", {"variant": "dsack", "workload": "l+8m", "metric": "Drops_e"}, "7.0", "7.0"),
    ("iip-table25-http11-r4-baseline-iw4frto.csv", {"variant": "baseline", "workload": "s+2s", "metric": "Time"}, "8.4", "8.4"),
    ("iip-table25-http11-r4-baseline-iw4frto.csv", {"variant": "iw4-frto", "workload": "m+8m", "metric": "Time"}, "23.9", "23.9"),
    ("iip-table25-http11-r4-baseline-iw4frto.csv", {"variant": "baseline", "workload": "m+8m", "metric": "Drops_c"}, "8.0", "8.0"),
    ("iip-table26-http11-r4-cbifrto-frto.csv", {"variant": "cbi-frto", "workload": "l+8m", "metric": "Med_thro"}, "4989.0", "4989.0"),
    ("iip-table26-http11-r4-cbifrto-frto.csv", {"variant": "frto", "workload": "m+8m", "metric": "Time"}, "25.4", "25.4"),
    ("iip-table26-http11-r4-cbifrto-frto.csv", {"variant": "cbi-frto", "workload": "l+8m", "metric": "Drops_c"}, "0.0", "0.0"),
    ("iip-table27-http11-r4-dsack-frtocbiiw4.csv", {"variant": "dsack", "workload": "l+8m", "metric": "Min_thro"}, "2570.0", "2570.0"),
    ("iip-table27-http11-r4-dsack-frtocbiiw4.csv", {"variant": "frto-cbi-iw4", "workload": "s+2s", "metric": "Time"}, "7.6", "7.6"),
    ("iip-table27-http11-r4-dsack-frtocbiiw4.csv", {"variant": "frto-cbi-iw4", "workload": "l+8m", "metric": "Max_thro"}, "6190.0", "6190.0"),
    ("iip-table28-http10-r4-baseline-iw4frto.csv", {"variant": "baseline", "workload": "l+8m", "metric": "Time"}, "29.0", "29.0"),
    ("iip-table28-http10-r4-baseline-iw4frto.csv", {"variant": "iw4-frto", "workload": "m+8m", "metric": "Min_thro"}, "795.0", "795.0"),
    ("iip-table28-http10-r4-baseline-iw4frto.csv", {"variant": "iw4-frto", "workload": "l+8m", "metric": "Drops_c"}, "13.0", "13.0"),
    ("iip-table29-http10-r4-cbifrto-frto.csv", {"variant": "cbi-frto", "workload": "m+8m", "metric": "Time"}, "20.2", "20.2"),
    ("iip-table29-http10-r4-cbifrto-frto.csv", {"variant": "frto", "workload": "s+2s", "metric": "Min_thro"}, "255.0", "255.0"),
    ("iip-table29-http10-r4-cbifrto-frto.csv", {"variant": "frto", "workload": "l+8m", "metric": "Drops_c"}, "8.0", "8.0"),
    ("iip-table30-http10-r4-dsack-frtocbiiw4.csv", {"variant": "dsack", "workload": "l+8m", "metric": "Min_thro"}, "229.0", "229.0"),
    ("iip-table30-http10-r4-dsack-frtocbiiw4.csv", {"variant": "frto-cbi-iw4", "workload": "l+8m", "metric": "Time"}, "25.4", "25.4"),
    ("iip-table30-http10-r4-dsack-frtocbiiw4.csv", {"variant": "dsack", "workload": "l+8m", "metric": "Drops_c"}, "7.0", "7.0"),
    ("iip-table32-mix-3tcp-0s-0s-0s.csv", {"variant": "baseline", "queue": "fifo", "link": "e0", "flow_role": "fastest", "metric": "Elapsed_min"}, "53.73", "53,73"),
    ("iip-table32-mix-3tcp-0s-0s-0s.csv", {"variant": "baseline", "queue": "red", "link": "r2", "flow_role": "slowest", "metric": "Drops_e"}, "17.00", "17.00"),
    ("iip-table32-mix-3tcp-0s-0s-0s.csv", {"variant": "frto-cbi-iw4", "queue": "fifo", "link": "r4", "flow_role": "medium", "metric": "Med_thro"}, "2285.50", "2285,50"),
    ("iip-table32-mix-3tcp-0s-0s-0s.csv", {"variant": "baseline", "queue": "fifo", "link": "r0", "flow_role": "slowest", "metric": "Elapsed_max"}, "162.75", "162,75"),
    ("iip-table33-mix-3tcp-0s-0s-5s.csv", {"variant": "baseline", "queue": "fifo", "link": "e0", "flow_role": "third", "metric": "Elapsed_median"}, "81.93", "81,93"),
    ("iip-table33-mix-3tcp-0s-0s-5s.csv", {"variant": "baseline", "queue": "red", "link": "r0", "flow_role": "slower", "metric": "Elapsed_max"}, "221.96", "221,96"),
    ("iip-table33-mix-3tcp-0s-0s-5s.csv", {"variant": "frto-cbi-iw4", "queue": "fifo", "link": "r4", "flow_role": "third", "metric": "Elapsed_max"}, "162.96", "162,96"),
    ("iip-table33-mix-3tcp-0s-0s-5s.csv", {"variant": "frto-cbi-iw4", "queue": "fifo", "link": "r2", "flow_role": "slower", "metric": "Drops_e"}, "17.00", "17.00"),
    ("iip-table34-mix-2tcp1udp-0s-0s-0s-ds.csv", {"variant": "baseline", "queue": "fifo", "link": "r0", "flow_role": "slowest", "metric": "Elapsed_max"}, "224.38", "224,38"),
    ("iip-table34-mix-2tcp1udp-0s-0s-0s-ds.csv", {"variant": "frto-cbi-iw4", "queue": "fifo", "link": "r2", "flow_role": "slowest", "metric": "Elapsed_max"}, "190.50", "190,50"),
    ("iip-table34-mix-2tcp1udp-0s-0s-0s-ds.csv", {"variant": "baseline", "queue": "fifo", "link": "r2", "flow_role": "fastest", "metric": "Drops_c"}, "9.00", "9,00"),
    ("iip-table34-mix-2tcp1udp-0s-0s-0s-ds.csv", {"variant": "baseline", "queue": "fifo", "link": "r0", "flow_role": "udp", "metric": "Drops_e"}, "665.00", "665,00"),
    ("iip-table34-mix-2tcp1udp-0s-0s-0s-ds.csv", {"variant": "baseline", "queue": "red", "link": "r4", "flow_role": "udp", "metric": "Jitter_min"}, "32.06", "32,06"),
    ("iip-table35-mix-2tcp1udp-0s-0s-0s-nods.csv", {"variant": "baseline", "queue": "fifo", "link": "r2", "flow_role": "udp", "metric": "Drops_c"}, "58.50", "58,50"),
    ("iip-table35-mix-2tcp1udp-0s-0s-0s-nods.csv", {"variant": "baseline", "queue": "red", "link": "r2", "flow_role": "udp", "metric": "Drops_e"}, "172.5", "172,5"),
    ("iip-table35-mix-2tcp1udp-0s-0s-0s-nods.csv", {"variant": "frto-cbi-iw4", "queue": "fifo", "link": "r0", "flow_role": "slowest", "metric": "Elapsed_max"}, "399.15", "399,15"),
    ("iip-table35-mix-2tcp1udp-0s-0s-0s-nods.csv", {"variant": "baseline", "queue": "fifo", "link": "r4", "flow_role": "udp", "metric": "Jitter_max"}, "36.62", "36,62"),
    ("iip-table36-mix-2tcp1udp-0s-0s-5s-ds.csv", {"variant": "baseline", "queue": "fifo", "link": "r4", "flow_role": "slowest", "metric": "Elapsed_max"}, "188.96", "188,96"),
    ("iip-table36-mix-2tcp1udp-0s-0s-5s-ds.csv", {"variant": "baseline", "queue": "red", "link": "e0", "flow_role": "udp", "metric": "Jitter_max"}, "34.90", "34,90"),
    ("iip-table36-mix-2tcp1udp-0s-0s-5s-ds.csv", {"variant": "frto-cbi-iw4", "queue": "fifo", "link": "e0", "flow_role": "udp", "metric": "Med_thro"}, "4016.50", "4016,50"),
    ("iip-table36-mix-2tcp1udp-0s-0s-5s-ds.csv", {"variant": "baseline", "queue": "fifo", "link": "r0", "flow_role": "fastest", "metric": "Drops_c"}, "7.50", "7,50"),
    ("saarto-arq-low-baseline-ts.csv", {"workload": "s+2s", "metric": "response_time"}, "6.45", "6.45"),
    ("saarto-arq-low-baseline-ts.csv", {"workload": "l+8m", "metric": "Sum_max_drops"}, "89", "89"),
    ("saarto-arq-low-baseline-ts.csv", {"workload": "s+8m", "metric": "Fastest_th_i"}, "1695", "1695"),
    ("saarto-arq-medium-baseline-ts.csv", {"workload": "l+8m", "metric": "Drops_c"}, "15", "15"),
    ("saarto-arq-medium-baseline-ts.csv", {"workload": "m+2m", "metric": "Med_th_m"}, "1804", "1804"),
    ("saarto-arq-medium-baseline-ts.csv", {"workload": "l+8m", "metric": "response_time"}, "29.72", "29.72"),
    ("saarto-arq-high-baseline-ts.csv", {"workload": "s+2s", "metric": "response_time"}, "5.87", "5.87"),
    ("saarto-arq-high-baseline-ts.csv", {"workload": "l+8m", "metric": "Sum_max_drops"}, "46", "46"),
    ("saarto-arq-high-baseline-ts.csv", {"workload": "s+2m", "metric": "Slowest_th_i"}, "1476", "1476"),
    ("saarto-arq-low-response-time-diff.csv", {"variant": "baseline", "workload": "s+2s", "metric": "response_time"}, "6.45", "6.45 s"),
    ("saarto-arq-low-response-time-diff.csv", {"variant": "iw4", "workload": "s+2s"}, "-28.8", "-28.8%"),
    ("saarto-arq-low-response-time-diff.csv", {"variant": "frto", "workload": "s+2m"}, "15.4", "+15.4%"),
    ("saarto-arq-medium-response-time-diff.csv", {"variant": "baseline", "workload": "m+8m"}, "20.57", "20.57 s"),
    ("saarto-arq-medium-response-time-diff.csv", {"variant": "iw4", "workload": "l+8m"}, "-10.9", "-10.9%"),
    ("saarto-arq-medium-response-time-diff.csv", {"variant": "iw4", "workload": "s+2m"}, "-18.6", "-18.6%"),
    ("saarto-arq-high-response-time-diff.csv", {"variant": "baseline-nots", "workload": "s+2s"}, "6.34", "6.34 s"),
    ("saarto-arq-high-response-time-diff.csv", {"variant": "dsack", "workload": "s+2m"}, "0.1", "+0.1%"),
    ("saarto-arq-high-response-time-diff.csv", {"variant": "baseline", "workload": "s+8m"}, "6.4", "+6.4%"),
]

# Parameter tables: (file, subject, parameter, value in the CSV, source row label, source
# column index, cell as printed).
SPOT_PARAMS: list[tuple[str, str, str, str, str, int, str]] = [
    ("saarto-seawind-parameters.csv", "link", "router_buffer", "20", "Router buffer", 1, "20 packets"),
    ("saarto-seawind-parameters.csv", "link", "propagation_delay", "300", "Propagation delay", 1, "300 ms"),
    ("saarto-seawind-parameters.csv", "link", "bandwidth", "64000", "Bandwidth", 1, "64000 bps"),
    ("saarto-state-properties.csv", "bad", "error_rate", "63", "Error rate", 2, "63 %"),
    ("saarto-state-properties.csv", "good", "length_max", "9", "Max value", 1, "9 s"),
    ("saarto-state-properties.csv", "bad", "length_min", "200", "Min value", 2, "200 ms"),
    ("saarto-link-types.csv", "arq-low", "max_retransmissions", "1", "Lossy link with low ARQ persistency", 1, "1"),
    ("saarto-link-types.csv", "arq-high", "max_retransmissions", "3", "Lossy link with high ARQ persistency", 1, "3"),
    ("saarto-link-types.csv", "optimal", "max_retransmissions", "", "Optimal", 1, "-"),
    ("saarto-workload-objects.csv", "main", "large_size", "71788", "Main object", 3, "71788 bytes"),
    ("saarto-workload-objects.csv", "inline", "medium_size", "8384", "In-line object", 2, "8384"),
    ("saarto-workload-objects.csv", "main", "small_size", "6288", "Main object", 1, "6288 bytes"),
    ("saarto-workload-labels.csv", "s+8m", "inline_count", "8", "s+8m", 3, "8"),
    ("saarto-workload-labels.csv", "l+8m", "main_size", "large", "l+8m", 1, "Large"),
    ("saarto-workload-labels.csv", "m+2m", "inline_size", "medium", "m+2m", 2, "Medium"),
]

# Table 31: (workload, diffserv, flow, parameter, value in the CSV, source row label,
# source column index, cell as printed).
SPOT_TABLE31: list[tuple[str, str, str, str, str, str, int, str]] = [
    ("3tcp-0s-0s-0s", "no", "tcp", "flow_data", "209.6", "3 x TCP", 2, "3 x 209.6"),
    ("3tcp-0s-0s-5s", "no", "all", "third_flow_delay", "5", "3 x TCP 5sec between", 4, "5 sec"),
    ("2tcp+1udp-0s-0s-0s", "yes", "udp", "flow_data", "720", "2 x TCP + 1 x UDP", 2, "2 x 188.64 1 x 720"),
    ("2tcp+1udp-0s-0s-5s", "yes", "all", "total_data", "1097.28", "2 x TCP + 1 x UDP 5sec between", 3, "1097.28"),
    ("2tcp+1udp-0s-0s-5s", "yes", "udp", "file_size", "140", "2 x TCP + 1 x UDP 5sec between", 1, "2096 140"),
]


def only_row(name: str, select: dict[str, str]) -> dict[str, str]:
    matches = [r for r in ref(name).rows if all(r[k] == v for k, v in select.items())]
    assert len(matches) == 1, f"{name}: {len(matches)} rows match {select}"
    return matches[0]


def test_spot_checks_cover_every_source_table() -> None:
    counts: dict[str, int] = {}
    for name, *_ in SPOT + SPOT_PARAMS:
        counts[name] = counts.get(name, 0) + 1
    counts["iip-table31-mix-workloads.csv"] = len(SPOT_TABLE31)
    assert set(counts) == {p.name for p in ref_files()}
    assert min(counts.values()) >= 3


@pytest.mark.parametrize("name,select,value,printed", SPOT, ids=lambda x: x if isinstance(x, str) else "")
def test_spot_value(name: str, select: dict[str, str], value: str, printed: str) -> None:
    row = only_row(name, select)
    assert row["value"] == value
    cell_of = checkable_cell(row)
    assert cell_of is not None
    assert cell_of(row) == printed


def source_table_rows(lines: list[str], header: str) -> dict[str, list[str]]:
    """The rows after the line whose first cells are `header`, by their first cell."""
    want = header.split("\t")
    start = next(i for i, line in enumerate(lines) if line.split("\t")[:len(want)] == want)
    rows: dict[str, list[str]] = {}
    for line in lines[start + 1:]:
        if not line.strip():
            break
        cells = line.split("\t")
        rows[cells[0]] = cells
    return rows


SAARTO_PARAM_HEADER = {"saarto-seawind-parameters.csv": "Parameter\tValue",
                       "saarto-state-properties.csv": "Parameter\tGood state",
                       "saarto-link-types.csv": "Link type",
                       "saarto-workload-objects.csv": "Object type",
                       "saarto-workload-labels.csv": "Label"}


@pytest.mark.parametrize("spot", SPOT_PARAMS, ids=lambda s: f"{s[0]}-{s[1]}-{s[2]}")
def test_spot_parameter(spot: tuple[str, str, str, str, str, int, str]) -> None:
    name, subject, parameter, value, label, column, printed = spot
    row = only_row(name, {"subject": subject, "parameter": parameter})
    assert row["value"] == value
    lines = seed_lines(SAARTO_SOURCE)
    rows = source_table_rows(lines, SAARTO_PARAM_HEADER[name])
    assert rows[label][column] == printed
    expected = "" if printed == "-" else printed.split()[0].lower()
    assert value == expected


@pytest.mark.parametrize("spot", SPOT_TABLE31, ids=lambda s: f"{s[0]}-{s[1]}-{s[2]}-{s[3]}")
def test_spot_table31(spot: tuple[str, str, str, str, str, str, int, str]) -> None:
    workload, diffserv, flow, parameter, value, label, column, printed = spot
    row = only_row("iip-table31-mix-workloads.csv",
                   {"workload": workload, "diffserv": diffserv, "flow": flow, "parameter": parameter})
    assert row["value"] == value and row["source_label"] == label
    rows = source_table_rows(seed_lines(IIP_SOURCE), "Workload\tFile size (bytes)")
    assert rows[label][column] == printed
    assert value in re.findall(r"\d+(?:\.\d+)?", printed)
