"""Server-rendered SVG charts and number formats for the admin dashboard: no JS, no CDN."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _

# Room around the plot for the axis labels, in viewBox units.
LEFT, RIGHT, TOP, BOTTOM = 48, 28, 26, 30


def format_ms(value: float | None) -> str:
    """Return a duration for people: '—', '38.5 ms', '1.24 s', '18.4 s' or '3 min 4 s'
    ('38.5 毫秒', '1.24 秒', '3 分 4 秒')."""
    # The chat panel's units (the same messages): the Chinese admin read "ms" beside "毫秒".
    if value is None:
        return "—"
    if value < 1000:
        return _("%(ms)s ms") % {"ms": f"{value:.1f}".removesuffix(".0")}
    if value < 10_000:
        return _("%(seconds)s s") % {"seconds": f"{value / 1000:.2f}"}
    if value < 60_000:
        return _("%(seconds)s s") % {"seconds": f"{value / 1000:.1f}"}
    # "184.00 s" had to be worked out; a turn that long was stuck somewhere.
    minutes, seconds = divmod(round(value / 1000), 60)
    return _("%(minutes)s min %(seconds)s s") % {"minutes": f"{minutes:,}", "seconds": seconds}


def format_count(value: float | None) -> str:
    """Return a count with thousands separators, or '—'."""
    return "—" if value is None else f"{value:,.0f}"


def format_compact(value: float | None) -> str:
    """Return an axis tick people read at a glance: '0', '500', '1k', '2.5k', '10k', '1.2M'."""
    if value is None:
        return "—"
    for size, suffix in ((1_000_000, "M"), (1_000, "k")):
        if abs(value) >= size:
            return f"{value / size:.1f}".removesuffix(".0") + suffix
    return f"{value:.1f}".removesuffix(".0")


def format_percent(value: float | None) -> str:
    """Return a ratio as a percentage with one decimal, or '—': '12.5%', as English and
    Chinese both write it (it read '12.5 %')."""
    return "—" if value is None else f"{value * 100:.1f}".removesuffix(".0") + "%"


def _nice_ceiling(value: float, whole: bool = False) -> float:
    # Round the axis up to 1, 2 or 5 times a power of ten so the grid lines read well. The
    # middle line is labelled too: for whole counts it must be a whole number (an axis of 5
    # turns had its 2.5 line labelled "2"), so 4 joins the steps and 1 and 5 drop out.
    if value <= 0:
        return 2.0 if whole else 1.0
    power = 10 ** math.floor(math.log10(value))
    steps = (1, 2, 4, 5, 10) if whole else (1, 2, 5, 10)
    tops = (step * power for step in steps)
    return next(t for t in tops if t >= value and (not whole or (t / 2).is_integer()))


def _join(template: str, rows: Sequence[tuple]) -> SafeString:
    # format_html escapes its arguments into strings first, so coordinates are rounded here.
    rounded = [tuple(f"{v:.1f}" if isinstance(v, float) else v for v in row) for row in rows]
    return format_html_join("", template, rounded)


def _frame(chart_id: str, title: str, desc: str, width: int, height: int, body: SafeString) -> str:
    return format_html(
        '<svg class="dc-chart" viewBox="0 0 {w} {h}" role="img" '
        'aria-labelledby="{id}-title {id}-desc" xmlns="http://www.w3.org/2000/svg">'
        '<title id="{id}-title">{title}</title><desc id="{id}-desc">{desc}</desc>{body}</svg>',
        w=width,
        h=height,
        id=chart_id,
        title=title,
        desc=desc,
        body=body,
    )


def _grid(
    top: float, width: int, height: int, fmt: Callable[[float], str], end_axis: bool = False
) -> SafeString:
    plot_h = height - TOP - BOTTOM
    lines = []
    for fraction in (0, 0.5, 1):
        y = TOP + plot_h * (1 - fraction)
        lines.append((LEFT, y, width - RIGHT, y, LEFT - 6, y + 4, fmt(top * fraction)))
    grid = _join(
        '<line class="dc-chart__grid" x1="{}" y1="{}" x2="{}" y2="{}" stroke="#ccc"/>'
        '<text class="dc-chart__axis" x="{}" y="{}" text-anchor="end">{}</text>',
        lines,
    )
    if not end_axis:
        return grid
    # The scale again at the right end, for a phone, whose chart scrolls and opens on its
    # newest days with the left axis out of view (the admin's CSS shows it there only).
    ends = [(width - RIGHT + 3, y, label) for _x1, y, *_rest, label in lines]
    return format_html(
        "{}{}",
        grid,
        _join('<text class="dc-chart__axis dc-chart__axis--end" x="{}" y="{}">{}</text>', ends),
    )


def legend(series: Sequence[tuple[str, Sequence[float], str]]) -> SafeString:
    """Return a line chart's legend as HTML, to stand above the chart: outside the SVG it stays
    in view when the chart scrolls sideways on a phone (it was scrolled out with the left edge)."""
    return format_html(
        '<ul class="dc-legend">{}</ul>',
        format_html_join(
            "",
            '<li class="dc-tone--{}">'
            '<span class="dc-legend__swatch" aria-hidden="true"></span>{}</li>',
            [(tone, name) for name, _values, tone in series],
        ),
    )


def _x_labels(labels: Sequence[str], centres: Sequence[float], height: int) -> SafeString:
    # At most ~10 labels fit under a 640-wide chart; count the stride back from the newest.
    stride = max(1, math.ceil(len(labels) / 10))
    shown = [
        (x, height - BOTTOM + 16, label)
        for i, (x, label) in enumerate(zip(centres, labels, strict=True))
        if (len(labels) - 1 - i) % stride == 0
    ]
    return _join('<text class="dc-chart__axis" x="{}" y="{}" text-anchor="middle">{}</text>', shown)


def bar_chart(
    *,
    chart_id: str,
    title: str,
    desc: str,
    points: Sequence[tuple[str, float]],
    count_text: Callable[[float], str] | None = None,
    width: int = 640,
    height: int = 220,
    gap: float = 0.25,
    fmt: Callable[[float], str] = format_count,
    end_axis: bool = False,
) -> SafeString:
    """Return a vertical bar chart of counts; gap=0 makes it a histogram.

    `count_text` words a bar's value for its tooltip ("1 turn", "3 turns"): a unit needs the
    count's plural form, so it is a function of the count rather than a fixed word.
    """
    top = _nice_ceiling(max((value for _, value in points), default=0), whole=True)
    plot_w, plot_h = width - LEFT - RIGHT, height - TOP - BOTTOM
    slot = plot_w / max(len(points), 1)
    bars, centres = [], []
    for i, (label, value) in enumerate(points):
        bar_h = plot_h * value / top
        x = LEFT + i * slot + slot * gap / 2
        centres.append(x + slot * (1 - gap) / 2)
        tip = f"{label}: {count_text(value) if count_text else fmt(value)}"
        bars.append((x, TOP + plot_h - bar_h, max(slot * (1 - gap) - 1, 1), bar_h, tip))
    body = format_html(
        "{}{}{}",
        _grid(top, width, height, fmt, end_axis),
        _join(
            '<rect class="dc-chart__bar" x="{}" y="{}" width="{}" height="{}" '
            'fill="#417690"><title>{}</title></rect>',
            bars,
        ),
        _x_labels([label for label, _ in points], centres, height),
    )
    return _frame(chart_id, title, desc, width, height, body)


def histogram(
    *,
    chart_id: str,
    title: str,
    desc: str,
    bins: Sequence[tuple[str, float]],
    count_text: Callable[[float], str] | None = None,
    width: int = 640,
    height: int = 220,
) -> SafeString:
    """Return a histogram: touching bars, one per bin."""
    return bar_chart(
        chart_id=chart_id, title=title, desc=desc, points=bins, count_text=count_text, gap=0.04,
        width=width, height=height,
    )  # fmt: skip


def hbar_chart(
    *,
    chart_id: str,
    title: str,
    desc: str,
    points: Sequence[tuple[str, float, str]],
    width: int = 640,
    row: int = 30,
) -> SafeString:
    """Return horizontal bars, one row per (label, value, tone); tone picks a CSS colour."""
    label_w, value_w = 130, 56
    top = max((value for _, value, _ in points), default=0) or 1
    plot_w = width - label_w - value_w
    rows = []
    for i, (label, value, tone) in enumerate(points):
        middle, bar_w = 6 + i * row + row / 2, plot_w * value / top
        text = format_count(value)
        rows.append(
            (label_w - 10, middle + 4, label)
            + (tone, label_w, middle - row / 2 + 6, max(bar_w, 1), row - 12, f"{label}: {text}")
            + (label_w + bar_w + 8, middle + 4, text)
        )
    body = _join(
        '<text class="dc-chart__label" x="{}" y="{}" text-anchor="end">{}</text>'
        '<rect class="dc-chart__bar dc-tone--{}" x="{}" y="{}" width="{}" height="{}" '
        'rx="3" fill="#417690"><title>{}</title></rect>'
        '<text class="dc-chart__value" x="{}" y="{}">{}</text>',
        rows,
    )
    return _frame(chart_id, title, desc, width, 12 + len(points) * row, body)


def line_chart(
    *,
    chart_id: str,
    title: str,
    desc: str,
    labels: Sequence[str],
    series: Sequence[tuple[str, Sequence[float], str]],
    width: int = 640,
    height: int = 220,
    fmt: Callable[[float], str] = format_count,
    floor: float = 1.0,
    end_axis: bool = False,
) -> SafeString:
    """Return a small line chart: one polyline per (name, values, tone) series; its legend is
    `legend(series)`, placed above it.

    `floor` is the least the axis reaches, so a quiet week does not label its grid "1, 0, 0".
    `end_axis` labels the scale at the right end too.
    """
    peak = max((max(values, default=0) for _, values, _ in series), default=0)
    top = _nice_ceiling(max(peak, floor))
    plot_w, plot_h = width - LEFT - RIGHT, height - TOP - BOTTOM
    step = plot_w / max(len(labels) - 1, 1)
    xs = [LEFT + i * step for i in range(len(labels))]
    lines = []
    for name, values, tone in series:
        coords = " ".join(
            f"{x:.1f},{TOP + plot_h * (1 - v / top):.1f}" for x, v in zip(xs, values, strict=True)
        )
        lines.append((tone, coords, name))
    body = format_html(
        "{}{}{}",
        _grid(top, width, height, fmt, end_axis),
        _join(
            '<polyline class="dc-chart__line dc-tone--{}" points="{}" fill="none" '
            'stroke="#417690" stroke-width="2"><title>{}</title></polyline>',
            lines,
        ),
        _x_labels(labels, xs, height),
    )
    return _frame(chart_id, title, desc, width, height, body)
