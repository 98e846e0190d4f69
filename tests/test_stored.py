"""A finished replication's log and captures are stored gzip-compressed; every reader (squall's
C and Python readers, scapy, tshark) reads them as it reads the plain files, and a failed
compression keeps the plain file."""
from __future__ import annotations

import errno
import gzip
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from analysis.results import stored as stored_mod
from analysis.read.emulog import read_emulator_log
from analysis.errors import CaptureError
from analysis.read.pcap import read_capture, read_packets
from analysis.results.stored import compress, compress_replication, open_text, stored
from test_analysis_readers import frames_with_times, sample_link
from test_analysis_support import write_pcap


def gzipped(path: Path) -> Path:
    target = path.with_name(path.name + ".gz")
    target.write_bytes(gzip.compress(path.read_bytes()))
    return target


def test_compressed_captures_read_as_the_plain_ones(tmp_path: Path) -> None:
    write_pcap(tmp_path / "fixed.pcap", frames_with_times(sample_link()), linktype=1)
    packed = gzipped(tmp_path / "fixed.pcap")
    plain = read_capture(tmp_path / "fixed.pcap").records
    assert len(plain) == 4 and np.array_equal(read_capture(packed).records, plain)
    assert [p.frame_no for p in read_packets(packed)] == [p.frame_no for p in read_packets(tmp_path / "fixed.pcap")]


def test_a_cut_compressed_capture_names_its_decompressed_offset(tmp_path: Path) -> None:
    write_pcap(tmp_path / "c.pcap", frames_with_times(sample_link()), linktype=1)
    data = (tmp_path / "c.pcap").read_bytes()
    (tmp_path / "c.pcap").write_bytes(data[:-7])                 # inside the last frame
    packed = gzipped(tmp_path / "c.pcap")
    with pytest.raises(CaptureError, match=r"c\.pcap\.gz: frame 4 at decompressed byte offset \d+"):
        read_capture(packed)


def test_compressed_logs_read_as_the_plain_ones_in_c_and_python(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    _, _, log_path = sample_link().write(tmp_path)
    packed = gzipped(log_path)
    plain = read_emulator_log(log_path)
    fast = read_emulator_log(packed)
    assert fast.events == plain.events and fast.trailer == plain.trailer and fast.events
    monkeypatch.setenv("SQUALL_BIN_DIR", str(tmp_path / "no-such-dir"))   # the Python parser
    slow = read_emulator_log(packed)
    assert slow.events == plain.events and slow.trailer == plain.trailer


def test_compress_replaces_the_file_and_stored_finds_either_form(tmp_path: Path) -> None:
    log = tmp_path / "emulator.log"
    log.write_text("# format 1\n")
    assert stored(tmp_path, "emulator.log") == log
    packed = compress(log)
    assert packed.name == "emulator.log.gz" and not log.exists()
    assert stored(tmp_path, "emulator.log") == packed
    with open_text(packed) as f:
        assert f.read() == "# format 1\n"
    assert stored(tmp_path, "fixed.pcap") == tmp_path / "fixed.pcap"     # neither: the plain name


def test_a_full_disk_keeps_the_plain_file_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "emulator.log").write_text("events\n" * 1000)
    (tmp_path / "fixed.pcap").write_bytes(b"\xd4\xc3\xb2\xa1" + bytes(20))
    (tmp_path / "notes.txt").write_text("left alone")

    def full(*args: object, **kw: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(stored_mod.shutil, "copyfileobj", full)
    problems = compress_replication(tmp_path)
    assert problems == ["emulator.log kept uncompressed: No space left on device",
                        "fixed.pcap kept uncompressed: No space left on device"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["emulator.log", "fixed.pcap", "notes.txt"]
    assert (tmp_path / "emulator.log").read_text() == "events\n" * 1000


@pytest.mark.skipif(shutil.which("tshark") is None, reason="needs tshark")
def test_tshark_reads_a_compressed_capture(tmp_path: Path) -> None:
    write_pcap(tmp_path / "fixed.pcap", frames_with_times(sample_link()), linktype=1)
    packed = compress(tmp_path / "fixed.pcap")
    out = subprocess.run(["tshark", "-r", str(packed), "-T", "fields", "-e", "frame.number"],
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == ["1", "2", "3", "4"]
