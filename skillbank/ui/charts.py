"""Small inline SVG charts drawn on the server: no chart library, no script, works offline.

Every label is escaped; shapes use presentation attributes (not `style`), so the page's strict
Content-Security-Policy needs no `unsafe-inline`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from html import escape

from markupsafe import Markup

PALETTE = ("#2563eb", "#16a34a", "#d97706", "#9333ea", "#dc2626")


@dataclass
class Series:
    """One line of a growth chart: a running total per day."""

    name: str
    points: list[tuple[date, int]]


def _nice_max(value: float) -> float:
    """The smallest 4 x (1, 2, 2.5 or 5 x 10^k) holding `value`: four whole-number grid steps."""
    if value <= 0:
        return 4.0
    magnitude = 1.0
    while True:
        for base in ((1, 2, 5) if magnitude < 10 else (1, 2, 2.5, 5)):
            step = base * magnitude
            if 4 * step >= value:
                return 4 * step
        magnitude *= 10


def line_chart(series: list[Series], *, width: int = 1040, height: int = 280,
               title: str = "") -> Markup:
    """Running totals over time, one polyline per series, with a legend and date axis."""
    left, right, top, bottom = 56, 16, 28, 40
    starts = [min(d for d, _ in s.points) for s in series if s.points]
    if starts:  # every line starts from zero the day before anything was recorded
        # (or on that day when it is the first day there is: a hand-written `created:
        # 0001-01-01` made this an OverflowError and the Stats page a 500, hunt-time #2)
        zero = min(starts) - timedelta(days=1) if min(starts) > date.min else date.min
        series = [Series(s.name, [(zero, 0)] + s.points) if s.points else s for s in series]
    days = sorted({d for s in series for d, _ in s.points})
    top_value = _nice_max(max((v for s in series for _, v in s.points), default=0))
    parts = [f'<svg class="chart" role="img" viewBox="0 0 {width} {height}" '
             f'width="100%" xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>']
    plot_w, plot_h = width - left - right, height - top - bottom
    for i in range(5):  # grid and value axis
        y = top + plot_h - plot_h * i / 4
        parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{width - right}" y2="{y:.1f}" '
                     'stroke="#e5e7eb" stroke-width="1"/>')
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11" '
                     f'fill="#6b7280">{int(top_value * i / 4)}</text>')
    if not days:
        parts.append(f'<text x="{width / 2}" y="{height / 2}" text-anchor="middle" '
                     'font-size="13" fill="#6b7280">nothing recorded yet</text></svg>')
        return Markup("".join(parts))
    first, last = days[0], days[-1]
    span = max((last - first).days, 1)

    def xy(day: date, value: int) -> tuple[float, float]:
        x = left + plot_w * ((day - first).days / span if len(days) > 1 else 0.5)
        return x, top + plot_h - plot_h * value / top_value

    for label_day in (first, last) if first != last else (first,):
        x, _ = xy(label_day, 0)
        anchor = "start" if label_day == first and first != last else "end"
        if first == last:
            anchor = "middle"
        parts.append(f'<text x="{x:.1f}" y="{height - bottom + 18}" text-anchor="{anchor}" '
                     f'font-size="11" fill="#6b7280">{label_day.isoformat()}</text>')
    for n, line in enumerate(series):
        colour = PALETTE[n % len(PALETTE)]
        points = sorted(line.points)
        if points:
            coords = " ".join(f"{x:.1f},{y:.1f}" for x, y in (xy(d, v) for d, v in points))
            if len(points) == 1:
                x, y = xy(*points[0])
                parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{colour}"/>')
            else:
                parts.append(f'<polyline points="{coords}" fill="none" stroke="{colour}" '
                             'stroke-width="2.5" stroke-linejoin="round"/>')
        lx = left + n * 170
        total = points[-1][1] if points else 0
        parts.append(f'<rect x="{lx}" y="8" width="12" height="12" rx="2" fill="{colour}"/>')
        parts.append(f'<text x="{lx + 18}" y="18" font-size="12" fill="#111827">'
                     f'{escape(line.name)} ({total})</text>')
    parts.append("</svg>")
    return Markup("".join(parts))


def bar_chart(rows: list[tuple[str, float, str]], *, width: int = 540, max_value: float | None = None,
              title: str = "", colour: str = PALETTE[0]) -> Markup:
    """Horizontal bars: (label, value, text shown after the bar), one row each."""
    row_h, label_w, text_w = 26, 170, 150
    height = max(len(rows), 1) * row_h + 10
    top_value = max_value if max_value is not None else max((v for _, v, _ in rows), default=0)
    top_value = top_value or 1.0
    bar_space = width - label_w - text_w
    parts = [f'<svg class="chart" role="img" viewBox="0 0 {width} {height}" width="100%" '
             f'xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>']
    if not rows:
        parts.append(f'<text x="{width / 2}" y="18" text-anchor="middle" font-size="13" '
                     'fill="#6b7280">nothing to show yet</text>')
    for i, (label, value, shown) in enumerate(rows):
        y = 5 + i * row_h
        short = label if len(label) <= 24 else label[:23] + "…"
        bar = max(bar_space * max(value, 0) / top_value, 1.5)
        parts.append(f'<text x="{label_w - 8}" y="{y + 16}" text-anchor="end" font-size="12" '
                     f'fill="#111827">{escape(short)}</text>')
        parts.append(f'<rect x="{label_w}" y="{y + 4}" width="{bar:.1f}" height="16" rx="3" '
                     f'fill="{colour}"/>')
        parts.append(f'<text x="{label_w + bar + 6:.1f}" y="{y + 16}" font-size="12" '
                     f'fill="#374151">{escape(shown)}</text>')
    parts.append("</svg>")
    return Markup("".join(parts))
