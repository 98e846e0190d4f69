"""analysis/read/tcp_samples.py (no root): squall-tcp-sampler's files read exactly, rows on the
emulator's clock with the connection's flow, and every malformed file refused naming the file
and line."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis.errors import AnalysisInputError
from analysis.read.tcp_samples import COLUMNS, FORMAT_LINE, read_tcp_samples, tcpinfo_rows

HEADER = f"{FORMAT_LINE}\n# interval_us 50000\n# t0_realtime_us 1000000\n" + "\t".join(COLUMNS) + "\n"
ROW = "250000\t198.18.1.1\t40000\t198.19.1.2\t5001\t1\t4\t1\t{ssthresh}\t650000\t120000\t1300000\t536\t3\t1\t2\t7\t40\t20961\t0\n"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "fixed.tcpinfo.tsv"
    path.write_text(text)
    return path


def test_a_file_reads_into_rows_on_the_emulators_clock(tmp_path: Path) -> None:
    path = write(tmp_path, HEADER + ROW.format(ssthresh=2147483647) + ROW.format(ssthresh=5)
                 + "# end samples 2 missed 0 rows 2\n")
    samples = read_tcp_samples(path)
    assert (samples.t0_realtime_us, samples.interval_us, samples.complete) == (1_000_000, 50_000, True)
    flows = {(("198.18.1.1", 40000), ("198.19.1.2", 5001)): "bulk1"}
    rows = tcpinfo_rows(samples, 1_100_000, "fixed", lambda proto, a, b: flows.get((a, b)))
    assert rows[0]["t_s"] == 0.15 and rows[0]["flow"] == "bulk1" and rows[0]["host"] == "fixed"
    assert (rows[0]["cwnd"], rows[0]["ssthresh"], rows[1]["ssthresh"]) == (1, None, 5)
    assert (rows[0]["srtt_ms"], rows[0]["rttvar_ms"], rows[0]["rto_ms"]) == (650.0, 120.0, 1300.0)
    assert (rows[0]["ca_state"], rows[0]["total_retrans"], rows[0]["bytes_acked"]) == (4, 7, 20961)


def test_a_file_without_its_trailer_reads_as_cut_short(tmp_path: Path) -> None:
    assert not read_tcp_samples(write(tmp_path, HEADER + ROW.format(ssthresh=5))).complete


@pytest.mark.parametrize("text, where", [
    ("", ":1: expected"),
    ("# squall-tcp-sampler format 2\n", ":1: expected"),
    (HEADER.replace("# interval_us 50000\n", ""), "no '# interval_us' line"),
    (HEADER.replace("# interval_us 50000", "# interval_us fifty"), ":2: interval_us: expected an integer"),
    (HEADER.replace("\tcwnd\t", "\tcwin\t"), ":4: expected the columns"),
    (HEADER + "1\t2\n", ":5: 2 tab-separated columns; expected 20"),
    (HEADER + ROW.format(ssthresh="x"), ":5: ssthresh: expected an integer, got 'x'"),
])
def test_a_malformed_file_is_refused_naming_file_and_line(tmp_path: Path, text: str, where: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(AnalysisInputError, match=str(path)) as e:
        read_tcp_samples(path)
    assert where in str(e.value)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(st.sampled_from([FORMAT_LINE, "# interval_us 50000", "# t0_realtime_us 7",
                                           "\t".join(COLUMNS), ROW.format(ssthresh=5).rstrip("\n"),
                                           "# end samples 1 missed 0 rows 1"]),
                          st.text(max_size=40)), max_size=8))
def test_any_file_reads_or_is_refused_by_name(tmp_path: Path, lines: list[str]) -> None:
    """Fuzzing the reader: whatever the lines, a TcpSamples or an AnalysisInputError naming the file."""
    path = write(tmp_path, "\n".join(lines))
    try:
        read_tcp_samples(path)
    except AnalysisInputError as e:
        assert str(path) in str(e)


def test_a_dual_stack_listeners_samples_are_attributed_to_their_flow(tmp_path: Path) -> None:
    """iperf3's server listens on AF_INET6: its connections' addresses come IPv4-mapped."""
    mapped = ROW.format(ssthresh=5).replace("198.18.1.1", "::ffff:198.18.1.1").replace("198.19.1.2",
                                                                                      "::ffff:198.19.1.2")
    samples = read_tcp_samples(write(tmp_path, HEADER + mapped))
    flows = {(("198.18.1.1", 40000), ("198.19.1.2", 5001)): "bulk1"}
    (row,) = tcpinfo_rows(samples, 1_100_000, "fixed", lambda proto, a, b: flows.get((a, b)))
    assert (row["flow"], row["src"], row["dst"]) == ("bulk1", "198.18.1.1", "198.19.1.2")
    assert str(samples.rows[0]["src"]) == "198.18.1.1"
    (v6,) = read_tcp_samples(write(tmp_path, HEADER + ROW.format(ssthresh=5).replace("198.18.1.1", "2001:db8::1"))).rows
    assert v6["src"] == "2001:db8::1"


@pytest.mark.parametrize("info", ["\t".join([""] * 14), "\t".join(["0"] * 14)],
                         ids=["empty (this sampler)", "zeros (an older sampler)"])
def test_a_socket_without_tcp_info_has_no_values_not_zeros(tmp_path: Path, info: str) -> None:
    """TIME_WAIT (state 6): the kernel gives no tcp_info; an all-zero row would read as cwnd 0, RTT 0."""
    time_wait = f"300000\t198.18.1.1\t40000\t198.19.1.2\t5001\t6\t{info}\n"
    samples = read_tcp_samples(write(tmp_path, HEADER + ROW.format(ssthresh=5) + time_wait))
    rows = tcpinfo_rows(samples, 1_000_000, "fixed", lambda proto, a, b: "bulk1")
    assert rows[1]["state"] == 6 and rows[1]["flow"] == "bulk1"
    values = ("ca_state", "cwnd", "ssthresh", "srtt_ms", "rttvar_ms", "rto_ms", "mss", "unacked", "retrans", "lost",
              "total_retrans", "delivered", "bytes_acked", "bytes_received")
    assert all(rows[1][c] is None for c in values), rows[1]
    assert rows[0]["cwnd"] == 1 and rows[0]["srtt_ms"] == 650.0
    # summary/tcpinfo: an empty CSV cell and a Parquet null
    import pandas as pd

    from analysis.aggregate.summary import write_table
    from analysis.read.tcp_samples import TCPINFO_FIELDS

    write_table(tmp_path, "tcpinfo", list(TCPINFO_FIELDS), rows)
    csv_row = (tmp_path / "tcpinfo.csv").read_text().splitlines()[2].split(",")
    assert all(csv_row[TCPINFO_FIELDS.index(c)] == "" for c in values), csv_row
    frame = pd.read_parquet(tmp_path / "tcpinfo.parquet", dtype_backend="numpy_nullable")
    assert frame.loc[1, list(values)].isna().all() and frame.loc[0, "cwnd"] == 1
