"""summary/report.html: the report's text, tables and plots in one self-contained file
(plots embedded as base64 PNG data URIs; no scripts, style sheets or links outside the file;
the SVG of each plot is beside its PNG in summary/plots/)."""

from __future__ import annotations

import base64
import html
import re
from pathlib import Path

from analysis.report.plots import caption
from analysis.report.contents import Table, fmt, overview
from analysis.report.table_parts import parts
from analysis.aggregate.run_analysis import RunAnalysis

STYLE = """
body { font-family: sans-serif; margin: 2em; color: #222; max-width: 110em; }
h2 { margin-top: 1.6em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.5em 0 0.3em; font-size: 0.85em; }
caption { caption-side: top; text-align: left; font-size: 0.85em; color: #555; }
th, td { border: 1px solid #bbb; padding: 0.2em 0.5em; text-align: right; }
td.text { overflow-wrap: break-word; }
th { background: #eee; vertical-align: bottom; }
td:first-child, th:first-child { text-align: left; }
td.text, th.text { text-align: left; }
p.note { font-size: 0.85em; color: #555; max-width: 70em; }
nav li { font-size: 0.9em; }
figure { margin: 1.5em 0; }
img { max-width: 100%; border: 1px solid #ddd; }
figcaption { font-size: 0.85em; color: #444; max-width: 70em; }
"""


def anchor(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or "table"


def _inline(text: str) -> str:
    """A Markdown line's `code` spans as <code>, the rest as text."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))


def _cell(value) -> str:
    text = html.escape(fmt(value))
    # words (names, labels, reasons) read better left-aligned; numbers stay right-aligned
    return f'<td class="text">{text}</td>' if isinstance(value, str) else f"<td>{text}</td>"


def _table_element(t: Table, caption: str = "") -> str:
    text = [all(isinstance(row[i], str) or row[i] is None for row in t.rows)
            for i in range(len(t.header))]
    head = "".join(f'<th class="text">{html.escape(h)}</th>' if words else
                   f"<th>{html.escape(h)}</th>" for h, words in zip(t.header, text))
    body = "\n".join("<tr>" + "".join(_cell(v) for v in row) + "</tr>" for row in t.rows)
    caption = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>\n{body}\n</tbody></table>"


def table_html(t: Table, anchor: str) -> str:
    """The table under its heading; a wide one in parts that fit the page (table_parts.py)."""
    pieces = parts(t)
    tables = [_table_element(p, f"part {k} of {len(pieces)}: the same rows, the next columns"
                             if len(pieces) > 1 else "") for k, p in enumerate(pieces, start=1)]
    note = f'<p class="note">{html.escape(t.note)}</p>' if t.note else ""
    return (f'<div class="table"><h2 id="{anchor}">{html.escape(t.title)}</h2>\n'
            + "\n".join(tables) + f"\n{note}</div>")


def _image(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    svg = path.with_suffix(".svg")
    also = f" (also as plots/{svg.name})" if svg.exists() else ""
    return (f'<figure><img alt="{html.escape(path.stem)}" src="data:image/png;base64,{data}">'
            f"<figcaption><b>{html.escape(path.name)}</b>{html.escape(also)}: "
            f"{html.escape(caption(path))}</figcaption></figure>")


def render_html(analysis: RunAnalysis, tables: list[Table], plots: list[Path]) -> str:
    title = f"squall report: {analysis.layout.name}"
    anchors: list[str] = []
    for t in tables:
        a = anchor(t.title)
        anchors.append(a if a not in anchors else f"{a}-{len(anchors)}")
    contents = [f'<li><a href="#{a}">{html.escape(t.title)}</a></li>'
                for t, a in zip(tables, anchors)]
    if plots:
        contents.append('<li><a href="#plots">Plots</a></li>')
    parts = [f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>"
             f"{html.escape(title)}</title><style>{STYLE}</style></head><body>",
             f"<h1>{html.escape(title)}</h1>"]
    parts += [f"<p>{_inline(line)}</p>" for line in overview(analysis)]
    parts.append("<nav><ul>" + "".join(contents) + "</ul></nav>")
    parts += [table_html(t, a) for t, a in zip(tables, anchors)]
    if plots:
        parts.append('<h2 id="plots">Plots</h2>')
        parts += [_image(p) for p in plots]
    parts.append("</body></html>\n")
    return "\n".join(parts)
