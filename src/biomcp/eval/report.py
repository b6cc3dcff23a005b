"""The reports of `eval` as people read them: markdown tables and an SVG bar chart."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from xml.sax.saxutils import escape

__all__ = ["METRICS", "bar_chart_svg", "beir_markdown", "gold_markdown"]

METRICS: tuple[tuple[str, str], ...] = (
    ("ndcg@10", "nDCG@10"),
    ("recall@10", "Recall@10"),
    ("recall@100", "Recall@100"),
    ("mrr@10", "MRR@10"),
)
_COLORS = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1")


# --- rendering ---------------------------------------------------------------------------------


def _f(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _md_table(headers: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[int]) -> str:
    """A markdown table; the columns in `numeric` are right-aligned."""
    align = ["---:" if i in numeric else "---" for i in range(len(headers))]
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def beir_markdown(report: dict[str, Any]) -> str:
    """A short markdown summary of a BEIR report (`BeirReport.as_dict()`)."""
    modes = report["modes"]
    queries = modes[0]["queries"] if modes else 0
    index = report["index"]
    chunking = report["chunking"]
    head = (
        f"# BEIR {report['dataset']} ({report['split']}): {queries} queries, "
        f"{index['documents']} documents"
    )
    setup = (
        f"Embedder `{report['embedder']}`; chunks of at most {chunking['max_tokens']} tokens "
        f"(target {chunking['target_tokens']}, overlap {chunking['overlap_tokens']}): "
        f"{index['chunks']} chunks; each query ranks {report['depth_chunks']} chunks "
        f"(oversample {report['oversample']}), aggregated to documents by their best chunk."
    )
    rows = [
        [
            f"{m['mode']}",
            f"{m['alpha']:g}",
            m["fusion"],
            *(_f(m["metrics"][key]) for key, _ in METRICS),
            f"{m['queries_per_s']:.1f}",
        ]
        for m in modes
    ]
    table = _md_table(
        ["mode", "alpha", "fusion", *(label for _, label in METRICS), "queries/s"],
        rows,
        range(3, 4 + len(METRICS)),
    )
    timings = ", ".join(f"{k} {v:.1f} s" for k, v in index["timings"].items())
    foot = f"Indexing {index['seconds']:.1f} s ({timings}); query embedding "
    foot += f"{report['query_embedding_seconds']:.1f} s."
    cache = report.get("embedding_cache")
    if cache:
        foot += (
            f" Embedding cache: {cache['misses']} texts (chunks and queries) computed by the "
            f"model, {cache['hits']} answered from the cache."
        )
    parts = [head, "", setup, "", table, "", foot]
    if report.get("warnings"):
        parts += ["", *(f"- warning: {w}" for w in report["warnings"])]
    return "\n".join(parts) + "\n"


def gold_markdown(report: dict[str, Any], source: str) -> str:
    """A short markdown summary of a gold report (`GoldReport.as_dict()`)."""
    k = report["top_k"]
    bias = "quality-biased" if report["quality_bias"] else "no quality bias"
    headers = [
        "topic",
        "questions",
        f"Recall@{k}",
        "numeric share (efficacy)",
        "numeric found (required)",
        "clinical",
        "preclinical+basic",
        "mixed",
    ]

    def row(name: str, s: dict[str, Any]) -> list[str]:
        return [
            name,
            str(s["questions"]),
            _f(s["recall"]),
            _f(s["numeric_share_efficacy"]),
            _f(s["numeric_found"]),
            _f(s["clinical_share"]),
            _f(s["basic_share"]),
            _f(s["mixed_share"]),
        ]

    rows = [row(t, s) for t, s in report["topics"].items()] + [row("**all**", report["overall"])]
    kinds = [row(i, s) for i, s in report.get("intents", {}).items()]
    details = [
        [
            q["id"],
            q["topic"],
            q["intent"],
            _f(q["recall"]),
            ", ".join(q["missing"]) or "-",
            ", ".join(f"{kind} {n}" for kind, n in q["evidence"].items()) or "-",
        ]
        for q in report["questions"]
    ]
    return (
        "\n".join(
            [
                f"# Gold questions: {source} (top {k}, {bias})",
                "",
                _md_table(headers, rows, range(1, len(headers))),
                "",
                _md_table(["question kind", *headers[1:]], kinds, range(1, len(headers))),
                "",
                _md_table(
                    ["id", "topic", "intent", f"Recall@{k}", "missing", "top documents"],
                    details,
                    [3],
                ),
            ]
        )
        + "\n"
    )


def bar_chart_svg(
    title: str, groups: Sequence[str], series: Sequence[tuple[str, Sequence[float | None]]]
) -> str:
    """A grouped bar chart (values in [0, 1]) as a standalone SVG document: one group of bars
    per entry of `groups`, one bar per series in each, a legend and value labels."""
    width, height = 760, 380
    left, right, top, bottom = 48, 16, 40, 70
    plot_w, plot_h = width - left - right, height - top - bottom
    n = max(1, len(series))
    group_w = plot_w / max(1, len(groups))
    bar_w = min(48.0, group_w * 0.8 / n)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{width / 2:.1f}" y="22" text-anchor="middle" font-size="14" '
        f'font-weight="bold">{escape(title)}</text>',
    ]
    for tick in range(6):
        value = tick / 5
        y = top + plot_h * (1 - value)
        out.append(
            f'<line x1="{left}" y1="{y:.1f}" x2="{width - right}" y2="{y:.1f}" '
            f'stroke="#ddd"/><text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">'
            f"{value:.1f}</text>"
        )
    for g, group in enumerate(groups):
        x0 = left + g * group_w + (group_w - bar_w * n) / 2
        for s, (_, values) in enumerate(series):
            found = values[g] if g < len(values) else None
            if found is None:
                continue
            value = float(found)
            clipped = min(1.0, max(0.0, value))
            x, h = x0 + s * bar_w, plot_h * clipped
            out.append(
                f'<rect x="{x:.1f}" y="{top + plot_h - h:.1f}" width="{bar_w - 2:.1f}" '
                f'height="{h:.1f}" fill="{_COLORS[s % len(_COLORS)]}"/>'
                f'<text x="{x + (bar_w - 2) / 2:.1f}" y="{top + plot_h - h - 3:.1f}" '
                f'text-anchor="middle" font-size="9">{value:.3f}</text>'
            )
        out.append(
            f'<text x="{left + (g + 0.5) * group_w:.1f}" y="{top + plot_h + 16}" '
            f'text-anchor="middle">{escape(group)}</text>'
        )
    out.append(
        f'<line x1="{left}" y1="{top + plot_h}" x2="{width - right}" y2="{top + plot_h}" '
        f'stroke="#333"/>'
    )
    legend_y = height - 22
    step = plot_w / n
    for s, (name, _) in enumerate(series):
        x = left + s * step
        out.append(
            f'<rect x="{x:.1f}" y="{legend_y - 9}" width="12" height="12" '
            f'fill="{_COLORS[s % len(_COLORS)]}"/><text x="{x + 16:.1f}" y="{legend_y + 1}">'
            f"{escape(name)}</text>"
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"
