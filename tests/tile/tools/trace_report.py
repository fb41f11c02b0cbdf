#!/usr/bin/env python3
"""Summarises per-CTA traces written by tile_smoke for kernels patched by trace_patch.py:
   trace_report.py FILE.traceN.tsv [...]
Times are ns of the GPU's global timer, from the first CTA's start. Per kernel:
the span, how CTAs start and end, and per unit position (first, second, ...):
its k-iterations, its main loop's ns per k-iteration, the share of that spent
waiting for TMA loads (SM cycles at the clock given by --ghz), what followed
the main loop (fix-up and epilogue) until the next unit began, and the
phases of the stream-K fix-ups. --svg draws each timeline as well."""
import argparse
import statistics as st
from collections import Counter


def load(path):
    ctas = []
    for line in open(path):
        v = [int(x) for x in line.split()]
        b, r = v[0], v[1:]
        if r[1] == 0:
            continue  # the CTA did not record (past the table)
        units = []
        for u in range(min(r[3], 7)):
            x = r[8 + u * 8: 16 + u * 8]
            units.append(dict(start=x[0], loop_end=x[1], epi=x[2], kb=(x[3], x[4]), peers=x[5], wait=x[6], tile=x[7]))
        fixups = [r[56 + 4 * n: 60 + 4 * n] for n in range(min(r[54], 2))]
        ctas.append(dict(cta=b, sm=r[0], start=r[1], end=r[2], units=units, fixups=fixups))
    return ctas


def q(xs):
    xs = sorted(xs)
    if not xs:
        return "-"
    return f"{xs[0]:.0f} / {st.median(xs):.0f} / {xs[-1]:.0f}"


def report(path, ghz):
    ctas = load(path)
    t0 = min(c["start"] for c in ctas)
    span = max(c["end"] for c in ctas) - t0
    print(f"== {path}: {len(ctas)} CTAs on {len(set(c['sm'] for c in ctas))} SMs, span {span / 1e3:.2f} us")
    per_sm = Counter(c["sm"] for c in ctas)
    print(f"   CTAs per SM: {dict(Counter(per_sm.values()))}")
    print(f"   start after the first (min / median / max ns): {q([c['start'] - t0 for c in ctas])}")
    print(f"   end (ns): {q([c['end'] - t0 for c in ctas])}")
    for pos in range(max(len(c["units"]) for c in ctas)):
        us = [(c, c["units"][pos]) for c in ctas if len(c["units"]) > pos]
        its = [u["kb"][1] - u["kb"][0] for _, u in us]
        per_it = [(u["loop_end"] - u["start"]) / max(1, u["kb"][1] - u["kb"][0]) for _, u in us]
        wait = [u["wait"] / ghz / max(1, u["loop_end"] - u["start"]) for _, u in us]
        after = []
        for c, u in us:
            nxt = c["units"][pos + 1]["start"] if pos + 1 < len(c["units"]) else c["end"]
            after.append(nxt - u["loop_end"])
        owners = sum(1 for _, u in us if u["epi"])
        print(f"   unit {pos}: {len(us)} CTAs, k-its {q(its)}, peers {dict(Counter(u['peers'] for _, u in us))}, "
              f"owners {owners}")
        print(f"      begins at (ns) {q([u['start'] - t0 for _, u in us])}")
        print(f"      main loop ns per k-it {q(per_it)}; waiting for loads {q([100 * w for w in wait])} %")
        print(f"      after the main loop until the next unit (ns) {q(after)}")
    for n in range(2):
        fx = [c["fixups"][n] for c in ctas if len(c["fixups"]) > n and c["fixups"][n][2]]
        if not fx:
            continue
        owners = [f for f in fx if f[3]]
        print(f"   fix-up {n}: {len(fx)} CTAs ({len(owners)} owners): peers store their partial (ns) "
              f"{q([f[1] - f[0] for f in fx if not f[3]])}; count in {q([f[2] - f[1] for f in fx if not f[3]])}; "
              f"owners wait {q([f[2] - f[1] for f in owners])}, read peers {q([f[3] - f[2] for f in owners])}")
    slow = sorted(ctas, key=lambda c: c["end"])[-5:]
    for c in slow:
        parts = ", ".join(f"[{u['kb'][0]},{u['kb'][1]}) tile {u['tile']} x{u['peers']} "
                          f"{(u['start'] - t0) / 1e3:.1f}-{(u['loop_end'] - t0) / 1e3:.1f}us"
                          + (" owner" if u["epi"] else "") for u in c["units"])
        print(f"   late CTA {c['cta']} (SM {c['sm']}): ends {(c['end'] - t0) / 1e3:.2f} us: {parts}")


# Unit colours by position in the CTA's walk; the time after a main loop
# (fix-up, epilogue) is grey, an owner's fix-up or epilogue darker.
COLOURS = ["#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#edc948", "#76b7b2", "#ff9da7"]


def svg(path, out, title):
    """One row per CTA (in launch order): each unit's main loop as a bar, then
    what followed it until the next unit (or the CTA's end) in grey."""
    ctas = sorted(load(path), key=lambda c: c["cta"])
    t0 = min(c["start"] for c in ctas)
    span = max(c["end"] for c in ctas) - t0
    w, left, top, row = 900, 60, 40, 4
    h = top + row * len(ctas) + 40
    x = lambda t: left + (t - t0) / span * w
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + w + 20}" height="{h}" '
             f'font-family="sans-serif" font-size="12">',
             f'<rect width="100%" height="100%" fill="white"/>',
             f'<text x="{left}" y="20">{title}: {len(ctas)} CTAs, {span / 1e3:.1f} us</text>']
    for i, c in enumerate(ctas):
        y = top + i * row
        for n, u in enumerate(c["units"]):
            nxt = c["units"][n + 1]["start"] if n + 1 < len(c["units"]) else c["end"]
            parts.append(f'<rect x="{x(u["start"]):.1f}" y="{y}" width="{max(0.5, x(u["loop_end"]) - x(u["start"])):.1f}" '
                         f'height="{row - 1}" fill="{COLOURS[n % len(COLOURS)]}"/>')
            parts.append(f'<rect x="{x(u["loop_end"]):.1f}" y="{y}" width="{max(0.5, x(nxt) - x(u["loop_end"])):.1f}" '
                         f'height="{row - 1}" fill="{"#555" if u["epi"] else "#bbb"}"/>')
    for us in range(0, int(span / 1e3) + 1, max(1, int(span / 1e3 / 10))):
        xx = x(t0 + us * 1e3)
        parts.append(f'<line x1="{xx:.1f}" y1="{top - 4}" x2="{xx:.1f}" y2="{h - 30}" stroke="#ddd"/>')
        parts.append(f'<text x="{xx:.1f}" y="{h - 14}" text-anchor="middle">{us} us</text>')
    parts.append(f'<text x="4" y="{top + 10}">CTA 0</text>')
    parts.append("</svg>")
    open(out, "w").write("\n".join(parts) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--ghz", type=float, default=1.98, help="SM clock for the wait cycles")
    ap.add_argument("--svg", action="store_true", help="also draw each trace's timeline next to it (TRACE.svg)")
    ap.add_argument("--title", help="the drawing's title (default: the trace's file name)")
    a = ap.parse_args()
    for p in a.traces:
        report(p, a.ghz)
        if a.svg:
            svg(p, p + ".svg", a.title or p.rsplit("/", 1)[-1])


if __name__ == "__main__":
    main()
