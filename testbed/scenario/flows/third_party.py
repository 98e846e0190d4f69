"""How a third-party program's end is judged (command, probe and flent flows): it has no
generator summary, so its exit status says whether it did its job; a server that ran until squall
stopped it after the flow did."""
from __future__ import annotations


def third_party_problem(server_stopped: bool, code: int | None, stderr: str) -> str | None:
    """FlowBase.problem's answer for such a program; `server_stopped`: it is the flow's server
    and squall stopped it."""
    if server_stopped:
        return None
    if code is None:
        return "had not ended"
    return None if code == 0 else f"exited with code {code}: {stderr}"
