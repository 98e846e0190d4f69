"""Long runs of the emulator's netem loss models against their closed forms: the loss rate of
Gilbert-Elliott and of the 4-state model within a confidence interval of the stationary one,
and Gilbert's burst lengths geometric with parameter r (a chi-square test)."""
from __future__ import annotations

import math
import subprocess
from pathlib import Path

import numpy as np
import pytest

from conftest import require_programs
from testbed.paths import bin_dir

PACKETS, BATCHES = 200_000, 100


def losses(tmp_path: Path, loss: str, seed: int = 11) -> np.ndarray:
    """Per down packet (in arrival order), whether the netem stage lost it."""
    direction = ["mtu = 100B", "bandwidth = unlimited", "delay = 0us", "send_buffer = 100000000B",
                 "in_order = false"]
    conf = tmp_path / "loss.conf"
    conf.write_text("\n".join(["token = 0123456789abcdef", "log = /dev/null", f"seed = {seed}",
                               "[channel]", "good = fixed(1000s)", "bad = fixed(1s)",
                               "[down]", *direction, f"netem_loss = {loss}",
                               "[up]", *direction, "netem_loss = random 100%", ""]))
    done = subprocess.run([str(bin_dir() / "squall-emulator"), "--print-packets", str(PACKETS), str(conf)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    fate: dict[int, bool] = {}
    for line in done.stdout.splitlines():
        _, direction, event, pkt, *_ = line.split("\t")
        if direction == "down" and event in ("out", "drop_loss"):
            fate[int(pkt)] = event == "drop_loss"
    assert len(fate) == PACKETS
    return np.array([fate[k] for k in sorted(fate)])


def assert_rate_near(lost: np.ndarray, expected: float) -> None:
    """Batch means: the losses are correlated, the means of long batches nearly independent."""
    means = lost.reshape(BATCHES, -1).mean(axis=1)
    se = means.std(ddof=1) / math.sqrt(BATCHES)
    assert abs(lost.mean() - expected) < 4 * se, \
        f"loss rate {lost.mean():.5f}, closed form {expected:.5f}, standard error {se:.5f}"
    assert se < expected / 5, "the run is too short to say anything"


def bursts(lost: np.ndarray) -> np.ndarray:
    """Lengths of the runs of consecutive losses."""
    edges = np.diff(np.concatenate(([0], lost.astype(int), [0])))
    return np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)


def chi_square_critical(df: int, z: float = 3.09) -> float:
    """The upper 0.1% point of chi-square(df) (Wilson-Hilferty)."""
    return df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3


@pytest.mark.parametrize("p, r", [(0.01, 0.1), (0.05, 0.3), (0.002, 0.5)])
def test_gilbert_loss_rate_and_burst_lengths_follow_the_closed_forms(tmp_path: Path, p: float, r: float) -> None:
    # gemodel p r (1-h = 100%, 1-k = 0): a packet is lost exactly when it finds the bad state,
    # whose share is p / (p + r); a burst lasts as long as bad does: P(n) = (1 - r)^(n-1) r
    require_programs("squall-emulator")
    lost = losses(tmp_path, f"gemodel {p * 100:g}% {r * 100:g}%")
    assert_rate_near(lost, p / (p + r))
    lengths = bursts(lost)
    assert abs(lengths.mean() - 1 / r) < 4 * lengths.std(ddof=1) / math.sqrt(len(lengths))
    top = max(n for n in range(1, 60) if len(lengths) * (1 - r) ** (n - 1) * r >= 5)
    observed = [np.sum(lengths == n) for n in range(1, top)] + [np.sum(lengths >= top)]
    expected = [len(lengths) * (1 - r) ** (n - 1) * r for n in range(1, top)] + [len(lengths) * (1 - r) ** (top - 1)]
    chi2 = sum((o - e) ** 2 / e for o, e in zip(observed, expected))
    assert chi2 < chi_square_critical(len(observed) - 1), f"chi-square {chi2:.1f} over {len(observed)} bins"


def test_gilbert_elliott_loss_rate_mixes_the_states_loss_probabilities(tmp_path: Path) -> None:
    require_programs("squall-emulator")
    p, r, bad_loss, good_loss = 0.02, 0.2, 0.7, 0.01
    lost = losses(tmp_path, f"gemodel {p * 100:g}% {r * 100:g}% {bad_loss * 100:g}% {good_loss * 100:g}%")
    assert_rate_near(lost, (r * good_loss + p * bad_loss) / (p + r))


def four_state_loss_rate(p13: float, p31: float, p32: float, p23: float, p14: float) -> float:
    """Stationary share of states 3 and 4 of tc-netem(8)'s 4-state Markov chain."""
    P = np.array([[1 - p13 - p14, 0, p13, p14],
                  [0, 1 - p23, p23, 0],
                  [p31, p32, 1 - p31 - p32, 0],
                  [1, 0, 0, 0]])
    A = np.vstack([P.T - np.eye(4), np.ones(4)])
    pi = np.linalg.lstsq(A, np.array([0, 0, 0, 0, 1.0]), rcond=None)[0]
    return float(pi[2] + pi[3])


def test_four_state_loss_rate_is_the_stationary_share_of_the_loss_states(tmp_path: Path) -> None:
    require_programs("squall-emulator")
    params = (0.01, 0.3, 0.2, 0.4, 0.02)
    lost = losses(tmp_path, "state " + " ".join(f"{x * 100:g}%" for x in params))
    assert_rate_near(lost, four_state_loss_rate(*params))
