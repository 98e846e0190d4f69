"""squall's per-replication values recomputed with tools squall did not write, for
validation/crosscheck.py: tshark reads the captures, the emulator log is read as plain text,
and nothing of analysis/ or testbed/ computes anything here.

- `capture`: one tshark pass over a capture -> TCP segments and UDP datagrams.
- `emulator_log`: the log's packets that entered the link and its drop events.
- `tcp`: connections, a sender's transfer (times, bytes, retransmissions), the page time.
- `udp`: a stream's throughput and mean jitter at its receiver.
- `drops`: a sender's packets dropped by the link, by cause.
- `run_dir`: a run's replications, their status and squall's runs.csv rows.
- `recompute`: one replication -> the runs.csv columns it can recompute.
"""
