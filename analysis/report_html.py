"""summary/report.html: the report's tables and plots in one self-contained file (plots
embedded as base64 PNG data URIs; no scripts, style sheets or links outside the file)."""

from __future__ import annotations

import base64
import html
from pathlib import Path

from analysis.report import Table, fmt, overview
from analysis.run import RunAnalysis

STYLE = """
body { font-family: sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 0.3em; font-size: 0.9em; }
th, td { border: 1px solid #bbb; padding: 0.2em 0.6em; text-align: right; }
th { background: #eee; }
td:first-child, th:first-child { text-align: left; }
p.note { font-size: 0.85em; color: #555; max-width: 60em; }
img { max-width: 100%; border: 1px solid #ddd; margin: 0.5em 0; }
"""


def _table(t: Table) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in t.header)
    body = "\n".join("<tr>" + "".join(f"<td>{html.escape(fmt(v))}</td>" for v in row) + "</tr>"
                     for row in t.rows)
    note = f'<p class="note">{html.escape(t.note)}</p>' if t.note else ""
    return (f"<h2>{html.escape(t.title)}</h2>\n<table><thead><tr>{head}</tr></thead>"
            f"<tbody>\n{body}\n</tbody></table>\n{note}")


def _image(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return (f'<figure><img alt="{html.escape(path.stem)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{html.escape(path.name)}</figcaption></figure>")


def render_html(analysis: RunAnalysis, tables: list[Table], plots: list[Path]) -> str:
    title = f"squall report: {analysis.layout.name}"
    parts = [f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>"
             f"{html.escape(title)}</title><style>{STYLE}</style></head><body>",
             f"<h1>{html.escape(title)}</h1>"]
    parts += [f"<p>{html.escape(line)}</p>" for line in overview(analysis)]
    parts += [_table(t) for t in tables]
    if plots:
        parts.append("<h2>Plots</h2>")
        parts += [_image(p) for p in plots]
    parts.append("</body></html>\n")
    return "\n".join(parts)
