"""A run directory built by hand for the run-level analysis tests (DESIGN.md §3.4).

Each replication is an HTTP/1.0 page scripted on `ScriptedLink` (delay 100 ms each way):
the mobile client fetches a 1000-byte main object (2 segments) and then, 80 ms after the
main object's FIN reached it, two in-line objects in parallel (500 B in 1 segment and
1000 B in 2 segments). A connection opened at t0 whose server sends its last data segment
at t0 + 300 + 10(n-1) ms sends its FIN at T_fin = t0 + 300 + 10n ms (plus 200 ms when a
segment is dropped and resent); the client receives the FIN at T_fin + 100 ms; the
server's FIN is acknowledged in its capture at T_fin + 200 ms, so the response transfer
(first data segment -> ACK of FIN) takes T_fin - t0 - 100 ms."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from test_analysis_support import FIXED, MOBILE, ScriptedLink, tcp

MS = 1000
SERVER_PORT = 8080
SEGMENT = 500


@dataclass
class Conn:
    port: int
    size: int
    drop: tuple[int, str] | None = None   # (segment index, fate) dropped once, resent
    unfinished: bool = False              # the dropped segment is never resent: no FIN


def script_connection(link: ScriptedLink, t0: int, c: Conn) -> int:
    """Scripts one HTTP/1.0 connection from t0 (ms); returns when the client got the FIN."""
    cs, ss = 1000, 5000

    def m(t: int, seq: int, ack: int, flags: str, payload: int = 0) -> None:
        link.send(t * MS, tcp(MOBILE, FIXED, c.port, SERVER_PORT, seq, ack, flags, payload))

    def f(t: int, seq: int, ack: int, flags: str, payload: int = 0, **kw: object) -> None:
        link.send(t * MS, tcp(FIXED, MOBILE, SERVER_PORT, c.port, seq, ack, flags, payload),
                  **kw)  # type: ignore[arg-type]

    m(t0, cs, 0, "S")
    f(t0 + 100, ss, cs + 1, "SA")
    m(t0 + 200, cs + 1, ss + 1, "A")
    m(t0 + 200, cs + 1, ss + 1, "PA", 350)
    n = c.size // SEGMENT
    ack = cs + 351
    for j in range(n):
        fate = c.drop[1] if c.drop and c.drop[0] == j else "out"
        f(t0 + 300 + 10 * j, ss + 1 + j * SEGMENT, ack, "PA", SEGMENT, fate=fate, hits=1
          if fate == "drop_err" else 0)
    t_fin = t0 + 300 + 10 * n
    if c.drop and c.unfinished:
        return t_fin
    if c.drop:
        j = c.drop[0]
        resend = t0 + 300 + 10 * (n - 1) + 200
        f(resend, ss + 1 + j * SEGMENT, ack, "PA", SEGMENT)
        t_fin = resend + 10
    f(t_fin, ss + 1 + c.size, ack, "FA")
    m(t_fin + 100, ack, ss + c.size + 2, "A")
    m(t_fin + 101, ack, ss + c.size + 2, "FA")
    f(t_fin + 201, ss + c.size + 2, ack + 1, "A")
    return t_fin + 100


def script_page(link: ScriptedLink, drops: dict[str, tuple[int, str]], unfinished: str | None = None) -> dict:
    """The page; `drops` by object (main, small, large); the `unfinished` object's drop is
    never resent (the page is still loading when the replication times out). Returns the
    client's summary (squall-http's when stopped unfinished: not ok, a time of 0)."""
    main = Conn(41000, 1000, drops.get("main"), unfinished == "main")
    small = Conn(41001, 500, drops.get("small"), unfinished == "small")
    large = Conn(41002, 1000, drops.get("large"), unfinished == "large")
    main_end = script_connection(link, 0, main)
    inline_start = main_end + 80
    # the in-line objects are requested once the main object is complete
    ends = [] if main.unfinished else [script_connection(link, inline_start, c) for c in (small, large)]
    page_end = max([main_end, *ends])
    done = unfinished is None
    return {"tool": "squall-http", "ok": done, "http": "1.0", "workload": "tiny",
            "remote": f"{FIXED}:{SERVER_PORT}", "page_start_us": 0,
            "page_end_us": page_end * MS if done else 0, "response_time_us": page_end * MS if done else 0,
            "retried_requests": 0,
            "objects": [{"size": c.size} for c in (main, small, large)],
            "connections": [{"conn": i, "local": f"{MOBILE}:{c.port}"}
                            for i, c in enumerate((main, small, large))]}


def write_replication(rep_dir: Path, status: str, drops: dict[str, tuple[int, str]],
                      reason: str = "", unfinished: str | None = None) -> None:
    rep_dir.mkdir(parents=True)
    link = ScriptedLink()
    summary = script_page(link, drops, unfinished)
    link.write(rep_dir)
    (rep_dir / "workloads.json").write_text(json.dumps({"web": {
        "kind": "http", "direction": "down", "start_us": 0, "tos": 0, "port": SERVER_PORT,
        "client": {"host": "mobile", "argv": ["squall-http", "--http", "1.0"], "exit_code": 0,
                   "summary": summary}}}))
    (rep_dir / "status.json").write_text(json.dumps({
        "status": status, "reason": reason, "started_utc": "20261122T030000Z",
        "duration_s": 2.0, "details": {}}))


CELLS = {"tcp-baseline": {"tcp": "baseline"}, "tcp-iw4": {"tcp": "iw4"}}


def build_run(root: Path, name: str = "fixture") -> Path:
    """2 cells x 3 replications: baseline rep 1 clean, rep 2 failed, rep 3 never run;
    iw4 rep 1 with an error drop (small in-line object), rep 2 with a truncated mobile
    capture, rep 3 with a congestion drop (main object). `name`: the scenario's (a study's
    name gets the study's tables)."""
    root.mkdir(parents=True)
    (root / "scenario.toml").write_text(f'name = "{name}"\nseed = 1\nreplications = 3\n'
                                        'link = "e0"\n')
    (root / "expanded.json").write_text(json.dumps(
        [{"cell": cell, "axes": labels, "flows": {"web": {"workload": "tiny"}}}
         for cell, labels in CELLS.items()]))
    (root / "meta.json").write_text("{}")
    cells = root / "cells"
    write_replication(cells / "tcp-baseline" / "rep-01", "ok", {})
    write_replication(cells / "tcp-baseline" / "rep-02", "failed", {},
                      reason="squall-http exited with status 1")
    write_replication(cells / "tcp-iw4" / "rep-01", "ok", {"small": (0, "drop_err")})
    write_replication(cells / "tcp-iw4" / "rep-02", "ok", {})
    write_replication(cells / "tcp-iw4" / "rep-03", "ok", {"main": (0, "drop_sbuf")})
    return root


def truncate_capture(path: Path, cut: int = 10) -> tuple[int, int]:
    """Cuts the last frame short; returns (its frame number, its record's byte offset)."""
    data = path.read_bytes()
    offset, frame = 24, 0
    last = (0, 24)
    while offset < len(data):
        frame += 1
        caplen = int.from_bytes(data[offset + 8:offset + 12], "little")
        last = (frame, offset)
        offset += 16 + caplen
    path.write_bytes(data[:-cut])
    return last
