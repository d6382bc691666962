"""The report as one self-contained HTML page: inline SVG charts and tables, no script, no external file."""

from __future__ import annotations

import re
from html import escape
from typing import Any
from urllib.parse import urlsplit

from rag_agent.reporting.report import OUTCOMES

COLORS = {"answered": "#2e7d32", "flagged": "#f9a825", "not_found": "#5c6bc0", "error": "#c62828", "other": "#9e9e9e"}
LABELS = {"answered": "answered", "flagged": "flagged (low confidence)", "not_found": "not found", "error": "error",
          "other": "chit-chat / reset"}
STYLE = """body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:1080px;color:#222;padding:0 1rem}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{margin-top:2.2rem;border-bottom:1px solid #ddd;padding-bottom:.3rem}
.cards{display:flex;gap:1rem;flex-wrap:wrap}.card{border:1px solid #ddd;border-radius:8px;padding:.7rem 1rem;
min-width:130px}.card b{display:block;font-size:1.5rem}.muted{color:#666}table{border-collapse:collapse;width:100%}
td,th{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #eee;vertical-align:top}.gap{border:1px solid #ddd;
border-radius:8px;padding:.6rem 1rem;margin:.8rem 0}.gap h3{margin:.2rem 0}.legend span{margin-right:1rem}
.sw{display:inline-block;width:.8rem;height:.8rem;border-radius:2px;margin-right:.3rem;vertical-align:middle}
:root{color-scheme:light dark}
@media (prefers-color-scheme:dark){body{background:#0d1117;color:#e6edf3}a{color:#4493f8}.muted{color:#9198a1}
h2,td,th,.card,.gap{border-color:#3d444d}svg text{fill:#e6edf3}}"""


def safe_href(url: Any) -> str | None:
    """Return the URL escaped for an href when it is http(s) or relative; None for any other scheme (javascript:…)."""
    text = str(url or "").strip()
    # Browsers ignore tabs, newlines and control characters inside a scheme ("java\tscript:"): judge it without them.
    try:
        scheme = urlsplit(re.sub(r"[\x00-\x20\x7f]", "", text)).scheme.lower()
    except ValueError:  # e.g. an unbalanced IPv6 bracket: not a URL to link to
        return None
    if not text or scheme not in {"", "http", "https"}:
        return None
    return escape(text, quote=True)


def _link(url: Any, title: Any) -> str:
    """Render a link, or only its escaped title when the URL is not one a reader may follow."""
    href = safe_href(url)
    label = escape(str(title or url or ""))
    if href is None:
        return f'{label} <span class="muted">(link not shown: not an http(s) URL)</span>'
    return f'<a href="{href}" rel="noopener noreferrer">{label}</a>'


def _legend() -> str:
    """Return the colour key of the outcomes."""
    return '<p class="legend">' + "".join(
        f'<span><i class="sw" style="background:{COLORS[o]}"></i>{LABELS[o]}</span>' for o in OUTCOMES) + "</p>"


def outcome_bar(counts: dict[str, int], width: int = 1000) -> str:
    """Draw one bar split by outcome, each part labelled with its share."""
    total = sum(counts.values()) or 1
    parts, x = [], 0.0
    for name in OUTCOMES:
        w = counts[name] / total * width
        if w > 0:
            parts.append(f'<rect x="{x:.1f}" y="0" width="{w:.1f}" height="34" fill="{COLORS[name]}">'
                         f"<title>{LABELS[name]}: {counts[name]}</title></rect>")
            if w > 40:
                parts.append(f'<text x="{x + w / 2:.1f}" y="22" fill="#fff" font-size="13" text-anchor="middle">'
                             f"{counts[name] / total:.0%}</text>")
        x += w
    return f'<svg viewBox="0 0 {width} 34" width="100%" role="img" aria-label="outcomes">{"".join(parts)}</svg>'


def trend_chart(trend: list[dict[str, Any]], width: int = 1000, height: int = 220) -> str:
    """Draw stacked bars of outcomes per time bucket, with the first and last bucket's dates."""
    if not trend:
        return ""
    top = max(sum(b[o] for o in OUTCOMES) for b in trend) or 1
    slot = width / len(trend)
    bars = []
    for i, bucket in enumerate(trend):
        y = float(height - 20)
        for name in OUTCOMES:
            h = bucket[name] / top * (height - 40)
            if h > 0:
                y -= h
                bars.append(f'<rect x="{i * slot + 1:.1f}" y="{y:.1f}" width="{max(slot - 2, 1):.1f}" height="{h:.1f}" '
                            f'fill="{COLORS[name]}"><title>{bucket["start"]}: {bucket[name]} {LABELS[name]}</title>'
                            "</rect>")
    axis = (f'<line x1="0" y1="{height - 20}" x2="{width}" y2="{height - 20}" stroke="#999"/>'
            f'<text x="0" y="{height - 4}" font-size="12">{escape(trend[0]["start"][:13])}</text>'
            f'<text x="{width}" y="{height - 4}" font-size="12" text-anchor="end">'
            f'{escape(trend[-1]["start"][:13])}</text>'
            f'<text x="0" y="12" font-size="12" fill="#666">max {top} turns</text>')
    return f'<svg viewBox="0 0 {width} {height}" width="100%" role="img" aria-label="trend">{"".join(bars)}{axis}</svg>'


def bar_list(rows: list[tuple[str, int, str]], color: str, width: int = 1000) -> str:
    """Draw horizontal bars, one per (label, value, link) row, labelled on the left."""
    if not rows:
        return '<p class="muted">none</p>'
    top, label_w, line = max(v for _, v, _ in rows) or 1, 430, 26
    body = []
    for i, (label, value, link) in enumerate(rows):
        y, w = i * line, value / top * (width - label_w - 50)
        text = escape(label if len(label) <= 60 else label[:57] + "…")
        body.append(f'<text x="{label_w - 8}" y="{y + 17}" font-size="13" text-anchor="end"><title>{escape(link)}'
                    f"</title>{text}</text>"
                    f'<rect x="{label_w}" y="{y + 4}" width="{w:.1f}" height="18" fill="{color}" rx="2"/>'
                    f'<text x="{label_w + w + 6:.1f}" y="{y + 17}" font-size="13">{value}</text>')
    return f'<svg viewBox="0 0 {width} {len(rows) * line}" width="100%" role="img">{"".join(body)}</svg>'


def _gaps(groups: list[dict[str, Any]]) -> str:
    """Render each repeated gap as a card (questions, nearest sections); single questions as one table."""
    cards = []
    for group in (g for g in groups if g["count"] > 1):
        examples = "".join(f"<li>{escape(q)}</li>" for q in group["examples"])
        nearest = "".join(f'<li>{_link(s.get("source_url"), s.get("title"))}</li>'
                          for s in group["nearest_sections"]) or "<li class='muted'>none</li>"
        cards.append(f'<div class="gap"><h3>{escape(group["topic"])} <span class="muted">— {group["count"]} '
                     f'question(s) not answered</span>'
                     f"</h3><b>Asked</b><ul>{examples}</ul>"
                     f"<b>Nearest sections the docs have</b><ul>{nearest}</ul></div>")
    singles = "".join(
        f"<tr><td>{escape(g['examples'][0])}</td>"
        f"<td>{escape(g['nearest_sections'][0]['title']) if g['nearest_sections'] else ''}</td></tr>"
        for g in groups if g["count"] == 1)
    if singles:
        cards.append("<h3>Asked once</h3><table><tr><th>Question</th><th>Nearest section</th></tr>"
                     f"{singles}</table>")
    return "".join(cards) or '<p class="muted">No unanswered questions in this window.</p>'


def render(report: dict[str, Any], site_url: str = "") -> str:
    """Return the whole report as an HTML page; `site_url` (http(s)) resolves the docs' relative links."""
    counts, rates, window = report["counts"], report["rates"], report["window"]
    cards = "".join(f'<div class="card"><b>{counts[o]}</b>{LABELS[o]} <span class="muted">{rates[o]:.0%}</span></div>'
                    for o in OUTCOMES)
    latency = report["latency"]
    feedback = report["feedback"]
    negative = "".join(f"<tr><td>{escape(f['question'])}</td><td>{escape(f['comment'] or '')}</td>"
                       f"<td>{escape(f['status'])}</td><td>{escape(f['rated_at'][:16])}</td></tr>"
                       for f in feedback["negative"]) or '<tr><td colspan="4" class="muted">none</td></tr>'
    gaps = report["coverage_gaps"]
    far = report.get("far_off") or {"count": 0, "examples": []}
    far_list = "".join(f"<li>{escape(q)}</li>" for q in far["examples"])
    wrong = "".join(
        f"<tr><td>{escape(w['question'])}</td><td>{escape('; '.join(w['reasons']))}</td>"
        f"<td>{'' if w['confidence'] is None else format(w['confidence'], '.0%')}</td>"
        f"<td>{', '.join(_link(u, u) for u in w['sources'])}</td></tr>"
        for w in report.get("wrong_answer_candidates") or []) or '<tr><td colspan="4" class="muted">none</td></tr>'
    # An index built with a relative --base-url (/demo) links its sections relative to the docs site: a <base>
    # makes those links work from a report opened from disk or mailed around.
    base = safe_href(site_url) if urlsplit(site_url).scheme in {"http", "https"} else None
    head = f'<base href="{base.rstrip("/")}/">' if base else ""
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8">{head}<title>rag-agent report</title>
<style>{STYLE}</style></head><body>
<h1>What your users asked</h1><p class="muted">{escape(window['since'][:16])} → {escape(window['until'][:16])} UTC ·
{report['turns']} turns · {report['threads']} conversations · {report['tokens']} tokens ·
latency p50 {latency['p50_ms']} ms, p95 {latency['p95_ms']} ms</p>
<div class="cards">{cards}</div>
<h2>Outcomes</h2>{_legend()}{outcome_bar(counts)}
<h2>Trend</h2>{trend_chart(report['trend'])}
<h2>Negative feedback</h2><p>{feedback['up']} up · {feedback['down']} down</p>
<table><tr><th>Question</th><th>Comment</th><th>Outcome</th><th>Rated</th></tr>{negative}</table>
<h2>Coverage gaps</h2><p class="muted">Unanswered and low-confidence questions, grouped by topic.</p>
{bar_list([(g['topic'], g['count'], '') for g in gaps[:15]], COLORS['not_found'])}{_gaps(gaps)}
<h2>Possibly wrong answers</h2><p class="muted">Answered, but rated down, low confidence, flagged, or asked
again in other words right after: read these answers against the docs.</p>
<table><tr><th>Question</th><th>Why</th><th>Confidence</th><th>Sources cited</th></tr>{wrong}</table>
<h2>Far-off questions</h2><p class="muted">{far['count']} question(s) about something these docs are not about
(judged off-topic, or none of their words occurs in the docs): not counted as gaps.</p><ul>{far_list}</ul>
<h2>Most cited sections</h2>
{bar_list([(s['title'], s['answers'], s['source_url']) for s in report['top_cited_sections']], COLORS['answered'])}
</body></html>
"""
