"""Reading the queue monitor's TSV (format in router-tc/README.md)."""
from __future__ import annotations

import pytest

from testbed.router.monitor import QueueSample, read_queue_samples

HEADER = (
    "# squall-queue-monitor samples\n"
    "# format 1\n"
    "# device wl0\n"
    "# interval_us 1000\n"
    "# t0_realtime_us 1795312345678901\n"
    "# columns time_us object handle parent kind backlog_bytes backlog_pkts drops overlimits requeues marks\n"
)
ROWS = (
    "-20\tqdisc\t1:\troot\thtb\t1084\t2\t0\t31\t0\t-\n"
    "-20\tqdisc\t10:\t1:10\tred\t1084\t2\t5\t0\t1\t3\n"
    "-20\tclass\t1:10\t1:1\thtb\t1084\t2\t0\t31\t0\t-\n"
)


def test_rows_header_and_trailer(tmp_path):
    path = tmp_path / "router-queue.tsv"
    path.write_text(HEADER + ROWS + "# end samples 1 missed 0\n")
    samples = read_queue_samples(path)
    assert (samples.device, samples.interval_us, samples.t0_realtime_us) == ("wl0", 1000, 1795312345678901)
    assert (samples.samples, samples.missed) == (1, 0)
    assert samples.of("qdisc", "10:") == [QueueSample(-20, "qdisc", "10:", "1:10", "red", 1084, 2, 5, 0, 1, 3)]
    assert samples.of("class", "1:10")[0].marks is None
    assert len(samples.rows) == 3


def test_a_file_cut_short_has_no_trailer_counts(tmp_path):
    path = tmp_path / "router-queue.tsv"
    path.write_text(HEADER + ROWS)
    samples = read_queue_samples(path)
    assert samples.samples is None and samples.missed is None
    assert len(samples.rows) == 3


def test_other_formats_and_broken_rows_are_refused(tmp_path):
    path = tmp_path / "router-queue.tsv"
    path.write_text(HEADER.replace("# format 1", "# format 2") + ROWS)
    with pytest.raises(ValueError, match="format 1"):
        read_queue_samples(path)
    path.write_text(HEADER + "-20\tqdisc\t1:\troot\thtb\tmany\t2\t0\t31\t0\t-\n")
    with pytest.raises(ValueError, match=r"router-queue.tsv:7: malformed queue sample row"):
        read_queue_samples(path)
