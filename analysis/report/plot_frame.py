"""What every plot of a run shares: the time axis, the bad channel states shaded behind it,
and how a figure is written (PNG at PNG_DPI and SVG beside it, atomically)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from analysis.results.atomic_file import refuse_symlinks, write_atomically  # noqa: E402
from analysis.results.stored import open_text  # noqa: E402

BAD_COLOUR = "#d9d9d9"
PNG_DPI = 150
TIME_AXIS = "time since the emulator's t = 0 (s)"


def bad_periods(log_path: Path) -> tuple[list[tuple[float, float]], float]:
    """Bad-state periods (s) and the log's end (s), scanning only the lines needed."""
    periods: list[tuple[float, float]] = []
    state, since, end = "good", 0.0, 0.0
    with open_text(log_path) as f:
        for line in f:
            if line.startswith("#"):
                if line.startswith("# end time_us "):
                    end = max(end, int(line.split()[3]) / 1e6)
                continue
            cols = line.split("\t", 6)
            if len(cols) < 6:
                continue
            t = int(cols[0]) / 1e6
            end = max(end, t)
            if cols[1] == "start" and cols[5] in ("good", "bad"):
                state, since = cols[5], t
            elif cols[1] == "state":
                if state == "bad":
                    periods.append((since, t))
                state, since = cols[5], t
    if state == "bad":
        periods.append((since, end))
    return periods, end


def shade(ax, periods: list[tuple[float, float]]) -> None:
    for i, (a, b) in enumerate(periods):
        ax.axvspan(a, b, color=BAD_COLOUR, zorder=0, label="bad channel state" if i == 0 else None)


def save(fig, out: Path, bottom: float = 0.0) -> Path:
    """out (a .png) at PNG_DPI and the same plot as SVG beside it; returns out."""
    refuse_symlinks(out)          # before mkdir: plots/ must not be made behind a link either
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout(rect=(0, bottom, 1, 1))
    write_atomically(out, lambda tmp: fig.savefig(tmp, dpi=PNG_DPI, format="png"))
    write_atomically(out.with_suffix(".svg"), lambda tmp: fig.savefig(tmp, format="svg"))
    plt.close(fig)
    return out
