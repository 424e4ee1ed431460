#!/usr/bin/env python3
"""Turn the JSON lines of `make bench` into docs/benchmarks.md.

    report.py RESULTS.jsonl [--out FILE] [--seconds S] [--versions FILE]
              [--failed "REL ..."] [--plots DIR]

Every ratio compares two configurations measured in the same guest boot;
see the text this writes (METHOD below) for how each figure is formed.
The performance targets are checked against the results (TARGETS below).
With matplotlib importable, PNG plots go to DIR (default: the directory
of --out; none with --out -) and the document links them.
"""
import argparse
import datetime
import json
import re
import os
import statistics
import sys
from collections import defaultdict

CONFIGS = ["stock", "loaded", "off", "renumber", "transplant", "both"]
CFG_DESC = {
    "stock": "module not loaded: the Debian kernel as it is",
    "loaded": "module loaded (features renumber and transplant, mode "
              "`optin`), process not opted in: what every other process "
              "pays for the module's hooks",
    "off": "opted in, no feature: the module's hooks, decision points and "
           "counters, every merge decision the stock one",
    "renumber": "opted in, renumber only: an `mremap()` move, and "
                "mprotect & co. on an existing range, rewrite page "
                "offsets where that buys a merge with a neighbour of the "
                "same anon_vma; no anon_vma changes anywhere",
    "transplant": "opted in, transplant only: the in-place paths (mprotect "
                  "& co., 6.1's mmap, the expansion) make anon_vmas agree; "
                  "the decision inside a move needs renumber, so moves stay "
                  "stock",
    "both": "opted in, renumber + transplant: moves merge across offsets "
            "and anon_vmas, the in-place paths across anon_vmas",
}
MERGE_KEYS = [("merge_renumber", "ren"), ("merge_transplant", "tra"),
              ("merge_both", "both"), ("merge_adopt", "adopt"),
              ("merge_expand", "exp"),
              ("av_merge_same", "same"), ("av_merge_null", "null"),
              ("av_merge_different", "diff")]
# merges the module made (a rewrite or an adoption before the stock merge)
MODULE_MERGES = ("merge_renumber", "merge_transplant", "merge_both",
                 "merge_adopt")


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt_ratio(r):
    return "–" if r is None else f"{r:.3f}"


def fmt_spread(rs):
    rs = [r for r in rs if r is not None]
    if not rs:
        return "–"
    if len(rs) == 1:
        return f"{rs[0]:.3f} (n=1)"
    return f"{statistics.median(rs):.3f} [{min(rs):.3f}–{max(rs):.3f}]"


def merges(c):
    if c is None:
        return "–"
    parts = [f"{short} {c[k]}" for k, short in MERGE_KEYS if c.get(k)]
    return ", ".join(parts) if parts else "0"


def refusals(c):
    if c is None:
        return "–"
    parts = [f"{k[8:]} {v}" for k, v in sorted(c.items())
             if k.startswith("refused_") and v]
    if c.get("rehomed_unmerged"):
        parts.append(f"**rehomed_unmerged {c['rehomed_unmerged']}**")
    return ", ".join(parts) if parts else "0"


def noise(lines, key):
    """The median of a spacing noise field, or – for results without it."""
    vs = [o[key] for o in lines if key in o]
    return "–" if not vs else f"{med(vs):g}"


def med_counters(lines):
    """Counters of several runs: the median of each counter."""
    keys = set()
    for o in lines:
        keys |= set(o.get("counters", {}))
    return {k: int(med([o.get("counters", {}).get(k, 0) for o in lines]))
            for k in keys}


def ascii_plot(series, width=64, height=14, xlabel="", ylabel=""):
    """series: list of (label, mark, xs, ys). Returns lines."""
    pts = [(x, y) for _, _, xs, ys in series for x, y in zip(xs, ys)]
    if not pts:
        return []
    x0, x1 = min(p[0] for p in pts), max(p[0] for p in pts)
    y0, y1 = 0, max(p[1] for p in pts)
    if x1 == x0:
        x1 = x0 + 1
    if y1 == y0:
        y1 = y0 + 1
    grid = [[" "] * width for _ in range(height)]
    for _, mark, xs, ys in series:
        for x, y in zip(xs, ys):
            c = round((x - x0) / (x1 - x0) * (width - 1))
            r = height - 1 - round((y - y0) / (y1 - y0) * (height - 1))
            grid[r][c] = mark if grid[r][c] in (" ", mark) else "#"
    out = []
    lw = max(len(str(y1)), len(str(y0)))
    for i, row in enumerate(grid):
        if i == 0:
            lab = str(y1)
        elif i == height - 1:
            lab = str(y0)
        else:
            lab = ""
        out.append(f"{lab:>{lw}} |" + "".join(row))
    out.append(" " * lw + " +" + "-" * width)
    out.append(" " * lw + f"  {x0}{' ' * (width - len(str(x0)) - len(str(x1)))}{x1}")
    out.append(" " * lw + f"  x: {xlabel}; y: {ylabel}")
    out.append(" " * lw + "  " + "   ".join(f"{m} {lab}" for lab, m, _, _ in series)
               + ("   # several" if len(series) > 1 else ""))
    return out


DEBUG_SUFFIX = "-vmamerge-debug"


def series_of(kernel):
    """6.12.117+deb12-amd64, 6.12.117-vmamerge-debug -> 6.12"""
    return ".".join(kernel.split("-")[0].split("+")[0].split(".")[:2])


class Report:
    def __init__(self, recs):
        self.recs = recs
        self.kernels = []
        for o in recs:
            if o.get("kernel") and o["kernel"] not in self.kernels:
                self.kernels.append(o["kernel"])
        # the builds users run, and the debug twins (BENCH_DEBUG=1)
        self.prod = [k for k in self.kernels if not k.endswith(DEBUG_SUFFIX)]
        self.debug = [k for k in self.kernels if k.endswith(DEBUG_SUFFIX)]
        self.out = []

    def p(self, s=""):
        self.out.append(s)

    def sel(self, kernel, bench, **kw):
        r = []
        for o in self.recs:
            if o.get("kernel") != kernel or o.get("bench") != bench:
                continue
            # the tables are of the thesis's shape: moves into the holes
            # (other BENCH_SPACING destinations are read from the JSON)
            if bench == "spacing" and o.get("dest", "inside") != "inside":
                continue
            if all(o.get(k) == v for k, v in kw.items()):
                r.append(o)
        return r

    def configs(self, lines):
        have = {o["config"] for o in lines}
        return [c for c in CONFIGS + ["stock2"] if c in have]

    def meta(self, kernel):
        m = self.sel(kernel, "meta")
        return m[0] if m else {}

    # ---- ratios against stock of the same repetition / round -------------
    def spacing_ratios(self, k, variant, c):
        """([config ÷ stock per repetition], [VMAs after per repetition])"""
        sp = [o for o in self.sel(k, "spacing", variant=variant)
              if not o.get("traced")]
        st = {o["rep"]: o["move_ns"] for o in sp if o["config"] == "stock"}
        cl = [o for o in sp if o["config"] == c]
        return ([o["move_ns"] / st[o["rep"]] for o in cl if o["rep"] in st],
                [o["vmas_after"] for o in cl])

    def micro_ratios(self, k, c, base="stock"):
        """{op: [config ÷ base per round]}"""
        mi = self.sel(k, "micro")
        out = {}
        for o in mi:
            out.setdefault(o["op"], [])
        for op in out:
            ol = [o for o in mi if o["op"] == op]
            b = {o["rep"]: o["median_ns"] for o in ol if o["config"] == base}
            out[op] = [o["median_ns"] / b[o["rep"]] for o in ol
                       if o["config"] == c and o["rep"] in b and b[o["rep"]]]
        return {op: rs for op, rs in out.items() if rs}

    def bigmove_ratios(self, k, c, nxt="none"):
        """{(MiB, align, thp): [config ÷ stock per round]}, moves next to
        @nxt ("none": nothing merges; "merge": a larger neighbour)"""
        bl = [o for o in self.sel(k, "bigmove")
              if o.get("next", "none") == nxt]
        out = {}
        for o in bl:
            out.setdefault((o["mib"], o["align"], o["thp"]), [])
        for key in out:
            kl = [o for o in bl if (o["mib"], o["align"], o["thp"]) == key]
            st = {o["rep"]: o["ns_per_gib"] for o in kl if o["config"] == "stock"}
            out[key] = [o["ns_per_gib"] / st[o["rep"]] for o in kl
                        if o["config"] == c and o["rep"] in st and st[o["rep"]]]
        return {key: rs for key, rs in out.items() if rs}

    def module_merges(self, lines):
        """merges the module made, summed over lines' counters"""
        return sum(o.get("counters", {}).get(m, 0) for o in lines
                   for m in MODULE_MERGES)

    # ---- the performance targets ----------------------------------------------
    def targets(self):
        self.p("## The performance targets against this run")
        self.p()
        self.p("Computed by the generator from the results below; a target is "
               "*met* when the median ratio is within it (the range in "
               "brackets is [min–max] over repetitions or rounds). `both` is "
               "the configuration a user gets (opted in, both features).")
        self.p()
        self.p("| target | kernel | measured | verdict |")
        self.p("|---|---|---|---|")
        yes, no = "met", "**NOT met**"

        def spread(rs):
            if len(rs) == 1:
                return f"{rs[0]:.3f}× (n=1)"
            return (f"{statistics.median(rs):.3f}× "
                    f"[{min(rs):.3f}–{max(rs):.3f}]")

        for variant, what in (("diff", "different anon_vmas"),
                              ("same", "same anon_vma")):
            for k in self.prod:
                rs, after = self.spacing_ratios(k, variant, "both")
                name = (f"spacing move phase ≤ 0.9× stock, ending with 1 "
                        f"VMA ({what})")
                if not rs:
                    self.p(f"| {name} | {k} | not run | – |")
                    continue
                ok = statistics.median(rs) <= 0.9 and all(a == 1 for a in after)
                self.p(f"| {name} | {k} | {spread(rs)}, VMAs after "
                       f"{', '.join(str(a) for a in after)} | "
                       f"{yes if ok else no} |")
        for k in self.prod:
            br = self.bigmove_ratios(k, "both")
            nz = self.bigmove_ratios(k, "stock2")
            cnt = self.module_merges([o for o in self.sel(k, "bigmove")
                                      if o["config"] == "both" and
                                      o.get("next", "none") == "none"])
            if not br:
                self.p(f"| large move, nothing to merge, ≤ 1.02× | {k} | "
                       "not run | – |")
                continue
            for mib in sorted({key[0] for key in br}):
                keys = [key for key in br if key[0] == mib]
                worst = max(keys, key=lambda x: statistics.median(br[x]))
                m = statistics.median(br[worst])
                note = (f"; **the module merged {cnt} times**" if cnt else "")
                nzs = [abs(x - 1) for key in keys for x in nz.get(key, [])]
                if nzs:
                    note += (f"; noise (stock2 ÷ stock, same size) up to "
                             f"±{max(nzs) * 100:.1f} %")
                self.p(f"| large move, nothing to merge, ≤ 1.02× ({mib} MiB) "
                       f"| {k} | worst of {len(keys)} shapes: {worst[1]} "
                       f"{worst[2]} {spread(br[worst])}{note} | "
                       f"{yes if m <= 1.02 else no} |")
        for k in self.prod:
            mr = self.bigmove_ratios(k, "both", "merge")
            name = ("a move that must rewrite ≤ 2× a stock move of the same "
                    "pages")
            if not mr:
                self.p(f"| {name} | {k} | not run | – |")
                continue
            for key in sorted(mr):
                m = statistics.median(mr[key])
                self.p(f"| {name} ({key[0]} MiB {key[1]} {key[2]}) | {k} | "
                       f"{spread(mr[key])} | {yes if m <= 2 else no} |")
        for c, lim, name in (("loaded", 1.003,
                              "system calls not opted in within 0.3 % of stock"),
                             ("both", 1.02,
                              "system calls opted in that merge nothing "
                              "≤ 1.02×")):
            for k in self.prod:
                mr = self.micro_ratios(k, c)
                if not mr:
                    self.p(f"| {name} | {k} | not run | – |")
                    continue
                med_op = {op: statistics.median(rs) for op, rs in mr.items()}
                over = [op for op in mr if med_op[op] > lim]
                worst = max(med_op, key=med_op.get)
                txt = (f"worst {worst} {spread(mr[worst])}; over the target: "
                       + (", ".join(f"{op} {med_op[op]:.3f}×" for op in over)
                          if over else "none"))
                if c == "both":
                    cnt = self.module_merges(
                        [o for o in self.sel(k, "micro") if o["config"] == c])
                    if cnt:
                        txt += f"; **the module merged {cnt} times**"
                    sp = self.micro_ratios(k, c, base="loaded")
                    if sp:
                        w = max(sp, key=lambda op: statistics.median(sp[op]))
                        txt += (f"; against `loaded` in the same process: worst "
                                f"{w} {spread(sp[w])}")
                else:
                    nz = self.micro_ratios(k, "stock2")
                    if nz:
                        dev = max(abs(statistics.median(v) - 1)
                                  for v in nz.values())
                        txt += (f"; noise floor (stock2 ÷ stock, same process) "
                                f"±{dev * 100:.1f} %")
                self.p(f"| {name} | {k} | {txt} | {yes if not over else no} |")
        self.p()
        wins = ("what merging buys after the fact (fork, exit, smaps, "
                "mlockall, slab); ")
        anchor = ("" if self.debug else
                  "spacing on the debug twins (the thesis anchor; "
                  "`BENCH_DEBUG`: none was built); ")
        rewrite = ("" if any(o.get("next") == "merge" for o in self.recs) else
                   "a move that must renumber ≤ 2× the cost of a stock "
                   "PTE-level move per 4 KiB page and O(PMDs) for PMD-mapped "
                   "THPs (bigmove moves a region next to nothing, so nothing "
                   "is rewritten); ")
        profiled = any(o.get("bench") == "profile" for o in self.recs)
        missing = (f"{rewrite}{anchor}{'' if self.has_after() else wins}"
                   + ("" if profiled else
                      "the per-function attribution under ftrace; "))
        if missing:
            self.p("Not checked by `make bench` (no benchmark measures them "
                   f"yet): {missing.rstrip('; ')}. See \"Not measured\" at "
                   "the end.")
            self.p()

    def has_after(self):
        """Did spacing measure what the end state costs (fork_ns ...)?"""
        return any("fork_ns" in o for o in self.recs
                   if o.get("bench") == "spacing")

    # ---- the thesis anchor: spacing on the debug twins --------------------
    def anchor(self):
        if not self.debug:
            return
        self.p("## The thesis anchor: spacing on the debug twins")
        self.p()
        self.p("The thesis measured its patched kernel 2.1× faster than stock "
               "at spacing, with 170–276 µs per stock one-page move; one suspect "
               "is an O(#VMAs) debug check (DEBUG_VM_MAPLE_TREE, "
               "DEBUG_VM_RB) behind it. Each debug twin (`BENCH_DEBUG`) "
               "against the production build of its series: stock "
               "µs per move (median over repetitions) and `both` ÷ stock of "
               "the same repetition, median [min–max].")
        self.p()
        self.p("| variant | kernel | N | stock µs per move | both ÷ stock | "
               "VMAs after (stock → both) |")
        self.p("|---|---|---:|---:|---:|---:|")
        for variant in ("diff", "same"):
            for k in self.prod + self.debug:
                if not any(series_of(d) == series_of(k) for d in self.debug):
                    continue
                sp = [o for o in self.sel(k, "spacing", variant=variant)
                      if not o.get("traced")]
                st = [o for o in sp if o["config"] == "stock"]
                bo = [o for o in sp if o["config"] == "both"]
                if not st:
                    continue
                rs, _ = self.spacing_ratios(k, variant, "both")
                self.p(f"| {variant} | {k} | {st[0]['n']} | "
                       f"{med([o['ns_per_move'] for o in st]) / 1e3:.1f} | "
                       f"{fmt_spread(rs) if rs else '–'} | "
                       f"{med([o['vmas_after'] for o in st]):.0f} → "
                       + (f"{med([o['vmas_after'] for o in bo]):.0f} |"
                          if bo else "– |"))
        self.p()

    # ---- summary ---------------------------------------------------------
    def summary(self):
        self.p("## Summary")
        self.p()
        for k in self.kernels:
            bits = []
            sp = [o for o in self.sel(k, "spacing", variant="diff") if not o.get("traced")]
            st = {o["rep"]: o for o in sp if o["config"] == "stock"}
            for c in ("loaded", "both"):
                rs = [o["move_ns"] / st[o["rep"]]["move_ns"] for o in sp
                      if o["config"] == c and o["rep"] in st]
                if rs:
                    after = med([o["vmas_after"] for o in sp if o["config"] == c])
                    bits.append(f"spacing (different anon_vmas) {c} ÷ stock "
                                f"{statistics.median(rs):.3f}, VMAs after {after:.0f} "
                                f"(stock {med([o['vmas_after'] for o in st.values()]):.0f})")
            mi = self.sel(k, "micro")
            if mi:
                def ratios(c):
                    out = {}
                    for op in {o["op"] for o in mi}:
                        ol = [o for o in mi if o["op"] == op]
                        s0 = {o["rep"]: o["median_ns"] for o in ol if o["config"] == "stock"}
                        rs = [o["median_ns"] / s0[o["rep"]] for o in ol
                              if o["config"] == c and o["rep"] in s0]
                        if rs:
                            out[op] = statistics.median(rs)
                    return out
                for c in ("loaded", "both"):
                    r = ratios(c)
                    if r:
                        lo = min(r, key=r.get)
                        hi = max(r, key=r.get)
                        bits.append(f"system calls {c} ÷ stock {r[lo]:.3f} ({lo}) to "
                                    f"{r[hi]:.3f} ({hi})")
                r = ratios("stock2")
                if r:
                    dev = max(abs(v - 1) for v in r.values())
                    bits.append(f"noise (stock2 ÷ stock) within ±{dev * 100:.1f} %")
                # the disabled path: is loaded ÷ stock outside the noise?
                # (all its rounds above, or all below, every stock2 round)
                out = []
                for op in sorted({o["op"] for o in mi}):
                    ol = [o for o in mi if o["op"] == op]
                    s0 = {o["rep"]: o["median_ns"] for o in ol if o["config"] == "stock"}
                    def rr(c):
                        return [o["median_ns"] / s0[o["rep"]] for o in ol
                                if o["config"] == c and o["rep"] in s0]
                    ld, nz = rr("loaded"), rr("stock2")
                    if ld and nz and (min(ld) > max(nz) or max(ld) < min(nz)):
                        out.append(f"{op} {(statistics.median(ld) - 1) * 100:+.1f} %")
                if out:
                    bits.append("not opted in, distinguishable from stock beyond "
                                "the noise: " + ", ".join(out))
                else:
                    bits.append("not opted in, no system call distinguishable "
                                "from stock beyond the noise")
            wl = [o for o in self.recs if o.get("kernel") == k and
                  o.get("bench") in ("alloc", "workload") and not o.get("traced")]
            for c in ("loaded", "both"):
                worst = None
                for nm in {(o["bench"], o["variant"]) for o in wl}:
                    ol = [o for o in wl if (o["bench"], o["variant"]) == nm]
                    s0 = {o["rep"]: o["run_ns"] for o in ol if o["config"] == "stock"}
                    rs = [o["run_ns"] / s0[o["rep"]] for o in ol
                          if o["config"] == c and o["rep"] in s0]
                    if rs:
                        m = statistics.median(rs)
                        if worst is None or m > worst[0]:
                            worst = (m, nm[1])
                if worst:
                    bits.append(f"workloads {c} ÷ stock at most {worst[0]:.3f} ({worst[1]})")
            self.p(f"- **{k}**: " + "; ".join(bits) + ".")
        self.p()

    # ---- spacing ---------------------------------------------------------
    def spacing(self, k):
        lines = [o for o in self.sel(k, "spacing") if not o.get("traced")]
        if not lines:
            return
        n = lines[0]["n"]
        self.p(f"#### Spacing (N = {n}, thesis §4.3.2)")
        self.p()
        self.p("Move phase only (N−1 `mremap` calls that move the mappings "
               "together). Time: median over repetitions; ratio: config ÷ "
               "stock of the same repetition, median [min–max]; counters: "
               "the process's own, median over repetitions; rewriting: "
               "the module's `time_ns` counter, the time spent rewriting "
               "pages and VMAs inside the moves. The guest has "
               "one vCPU: whatever kernel threads run during the phase "
               "(e.g. deferred frees of emptied anon_vmas, RCU callbacks) "
               "is in its time, and under `-icount sleep=off` a wait "
               "costs until the next timer; collapses: khugepaged's "
               "THP collapses during the phase (global), sleeps and "
               "preempted: the process's voluntary and involuntary "
               "context switches (all median).")
        self.p()
        for variant in ("diff", "same"):
            vl = [o for o in lines if o["variant"] == variant]
            if not vl:
                continue
            label = ("different anon_vmas (one mmap per mapping)"
                     if variant == "diff" else
                     "same anon_vma (one mmap, every second page unmapped)")
            self.p(f"*{label}*")
            self.p()
            self.p("| config | move phase ms | vs stock | VMAs before → after "
                   "| merges by cause | failed | refusals | rewriting ms "
                   "| collapses | sleeps | preempted |")
            self.p("|---|---:|---:|---:|---|---:|---|---:|---:|---:|---:|")
            wild = []
            stock = {o["rep"]: o["move_ns"] for o in vl if o["config"] == "stock"}
            for c in self.configs(vl):
                cl = [o for o in vl if o["config"] == c]
                t = med([o["move_ns"] for o in cl])
                rs = [o["move_ns"] / stock[o["rep"]] for o in cl
                      if o["rep"] in stock]
                cnt = med_counters(cl) if c not in ("stock", "loaded") else None
                rw = ("–" if cnt is None else
                      f"{cnt.get('time_ns', 0) / 1e6:.0f}")
                self.p(f"| {c} | {t / 1e6:.0f} | {fmt_spread(rs)} | "
                       f"{int(med([o['vmas_before'] for o in cl]))} → "
                       f"{int(med([o['vmas_after'] for o in cl]))} | "
                       f"{merges(cnt)} | "
                       f"{'–' if cnt is None else cnt.get('merge_failed', 0)} | "
                       f"{refusals(cnt)} | {rw} | {noise(cl, 'collapses')} | "
                       f"{noise(cl, 'sleeps')} | {noise(cl, 'preempted')} |")
                if len(rs) > 1 and max(rs) > 1.2 * min(rs):
                    wild.append(c)
            if wild:
                self.p()
                self.p(f"The repetitions of {', '.join(wild)} differ by more "
                       "than 20 % (move phase ms, collapses, sleeps, "
                       "preempted per repetition: " + "; ".join(
                           f"{c} " + ", ".join(
                               f"{o['move_ns'] / 1e6:.0f} "
                               f"({o.get('collapses', '?')}, "
                               f"{o.get('sleeps', '?')}, "
                               f"{o.get('preempted', '?')})"
                               for o in vl if o["config"] == c)
                           for c in wild) + ").")
            bad = sum(o.get("bad_pages", 0) for o in vl)
            if bad:
                self.p()
                self.p(f"**{bad} pages read back wrong.**")
            self.p()
            self.after_merge(vl)

    def after_merge(self, vl):
        """What the end state of one spacing variant costs afterwards."""
        al = [o for o in vl if "fork_ns" in o]
        if not al:
            return
        self.p("What the end state costs afterwards (same process, after the "
               "move phase; µs: median over repetitions of each run's median "
               "of 5; ratio: ÷ stock of the same repetition): fork() + the "
               "child's exit + waitpid(), a read of /proc/self/smaps, "
               "mlockall() + munlockall(); slab: growth of the memory map's "
               "caches (" + (al[0].get("slab_caches") or "none found") +
               ") since before the first mmap, a global count in a quiet "
               "guest.")
        self.p()
        self.p("| config | VMAs after | fork+exit µs | smaps µs | mlockall µs "
               "| slab KiB |")
        self.p("|---|---:|---:|---:|---:|---:|")
        stock = {o["rep"]: o for o in al if o["config"] == "stock"}
        for c in self.configs(al):
            cl = [o for o in al if o["config"] == c]
            cells = []
            for f in ("fork_ns", "smaps_ns", "mlock_ns"):
                t = med([o[f] for o in cl]) / 1e3
                rs = [o[f] / stock[o["rep"]][f] for o in cl
                      if o["rep"] in stock and stock[o["rep"]][f]]
                cells.append(f"{t:.0f}" + ("" if c == "stock" or not rs
                                            else f" ({fmt_spread(rs)})"))
            self.p(f"| {c} | {int(med([o['vmas_after'] for o in cl]))} | "
                   + " | ".join(cells) +
                   f" | {med([o['slab_kb'] for o in cl]):.0f} |")
        self.p()

    # ---- micro -----------------------------------------------------------
    def micro(self, k):
        lines = self.sel(k, "micro")
        if not lines:
            return
        rounds = sorted({o["rep"] for o in lines})
        m = lines[0]
        self.p(f"#### System-call costs ({len(rounds)} rounds × "
               f"{m['batches']} batches × {m['iters']} iterations)")
        self.p()
        self.p("ns per call on the stock kernel, then each configuration's "
               "time ÷ stock's: median over rounds [min–max] of the ratio of "
               "the two processes of one round (each process's figure is the "
               "median of its batches). `stock2 ÷ stock` is an identical "
               "twin series interleaved batch by batch with stock: the noise "
               "floor of batch-level comparisons; the spread of `loaded` "
               "shows the noise between processes.")
        self.p()
        cfgs = [c for c in self.configs(lines) if c != "stock"]
        head = "| op | stock ns | " + " | ".join(
            ("stock2 ÷ stock (noise)" if c == "stock2" else c) for c in cfgs) + " |"
        self.p(head)
        self.p("|---|---:|" + "---:|" * len(cfgs))
        ops = []
        for o in lines:
            if o["op"] not in ops:
                ops.append(o["op"])
        for op in ops:
            ol = [o for o in lines if o["op"] == op]
            st = {o["rep"]: o["median_ns"] for o in ol if o["config"] == "stock"}
            row = f"| {op} | {med(list(st.values())):.0f} |"
            for c in cfgs:
                rs = [o["median_ns"] / st[o["rep"]] for o in ol
                      if o["config"] == c and o["rep"] in st and st[o["rep"]]]
                row += f" {fmt_spread(rs)} |"
            self.p(row)
        self.p()
        # counters of the opted-in configurations (sum over rounds)
        cl = [o for o in lines if o["op"] == "mmap" and o.get("counters")]
        if cl:
            self.p("Merge counters over all micro rounds (global deltas): " +
                   "; ".join(f"{c}: {merges(med_counters([o for o in cl if o['config'] == c]))}, "
                             f"failed {med_counters([o for o in cl if o['config'] == c]).get('merge_failed', 0)}"
                             for c in cfgs if any(o["config"] == c for o in cl)) + " (median per round).")
            self.p()

    # ---- bigmove ---------------------------------------------------------
    def bigmove(self, k):
        lines = self.sel(k, "bigmove")
        if not lines:
            return
        rounds = sorted({o["rep"] for o in lines})
        moves = len(lines[0]["move_ns"])
        self.p(f"#### Large moves ({len(rounds)} rounds, {moves} timed moves per "
               "configuration and round)")
        self.p()
        self.p("One faulted region moved back and forth with "
               "`mremap(MREMAP_FIXED)`; the configurations take turns move by "
               "move inside one process (stock and stock2 in another process "
               "of the same round). Stock: ms per GiB moved (median); others: "
               "time ÷ stock, median over rounds [min–max]. THP: share of the "
               "region in huge pages after faulting. unaligned = source 4 KiB "
               "off a 2 MiB boundary, destination on one. next to: `none` - "
               "nothing at either place, nothing merges; `merge` - at each "
               "place a faulted region of another mapping, 2 MiB larger, ends "
               "where the moved one goes, so that with both features every "
               "move rewrites the moved region (offsets and anon_vma: the "
               "cheaper side) and merges it (up to 128 MiB, the default "
               "rewrite budget).")
        self.p()
        cfgs = [c for c in self.configs(lines) if c != "stock"]
        self.p("| MiB | next to | align | THP | stock ms/GiB | " + " | ".join(
            ("stock2 (noise)" if c == "stock2" else c) for c in cfgs) + " |")
        self.p("|---:|---|---|---|---:|" + "---:|" * len(cfgs))

        def key_of(o):
            return (o["mib"], o.get("next", "none"), o["align"], o["thp"])
        keys = []
        for o in lines:
            if key_of(o) not in keys:
                keys.append(key_of(o))
        keys.sort()
        for key in keys:
            kl = [o for o in lines if key_of(o) == key]
            st = {o["rep"]: o["ns_per_gib"] for o in kl if o["config"] == "stock"}
            huge = med([100.0 * o["anon_huge_kb"] / (o["mib"] * 1024)
                        for o in kl if o.get("anon_huge_kb", -1) >= 0])
            row = (f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} ({huge:.0f}%) | "
                   f"{med(list(st.values())) / 1e6:.2f} |")
            for c in cfgs:
                rs = [o["ns_per_gib"] / st[o["rep"]] for o in kl
                      if o["config"] == c and o["rep"] in st and st[o["rep"]]]
                row += f" {fmt_spread(rs)} |"
            self.p(row)
        bad = sum(o.get("bad_pages", 0) for o in lines)
        self.p()
        if bad:
            self.p(f"**{bad} sampled pages read back wrong.**")
            self.p()
        cl = [o for o in lines if o.get("counters")]
        if cl:
            tot = defaultdict(lambda: defaultdict(int))
            for o in cl:
                for kk, v in o["counters"].items():
                    tot[o["config"]][kk] += v
            self.p("Counters over all large moves: " + "; ".join(
                f"{c}: {merges(tot[c])}, failed {tot[c].get('merge_failed', 0)}, "
                f"refusals {refusals(tot[c])}" for c in cfgs if c in tot) + ".")
            self.p()

    # ---- workloads -------------------------------------------------------
    def profile(self, k):
        lines = self.sel(k, "profile")
        if not lines:
            return
        progs = []
        for o in lines:
            if o["program"] not in progs:
                progs.append(o["program"])
        cal = [o for o in lines if o.get("calibration") and o["calls"]]
        cal_us = med([o["ns"] / o["calls"] for o in cal]) / 1000 if cal else None
        self.p("#### Where a move's time goes (function profile)")
        self.p()
        self.p("Each function traced alone (`function_graph` with only it in "
               "`set_ftrace_filter`), the program run once per function: "
               "its duration includes its callees and one round trip of the "
               "tracer" + (f" ({cal_us:.2f} µs per call, measured on an "
                           "almost empty function, "
                           "`mremap_userfaultfd_prep()`)" if cal_us else "")
               + ". Under `-icount` 1 µs is 1000 instructions. Per move: "
               "the function's total ÷ the program's `mremap()` calls "
               "(`__x64_sys_mremap`); per page: ÷ the region's 4 KiB "
               "pages as well. Functions of one series only, or inlined, "
               "are missing on the other. The `copy_vma()` mirror merges "
               "through the module's own mirror of the merge "
               "(`vmamerge_612_merge_new_range`, `vmamerge_61_vma_merge`), "
               "called directly: under both, the stock "
               "`vma_merge_new_range`/`vma_merge` rows count only their "
               "other callers (mmap in the setup). Generic callees (the "
               "interval tree) are counted for the whole program, setup "
               "included; the difference both − stock is the moves'.")
        self.p()
        for prog in progs:
            pl = [o for o in lines if o["program"] == prog
                  and not o.get("calibration")]
            by = {(o["config"], o["func"]): o for o in pl}
            funcs = []
            for o in pl:
                if o["func"] not in funcs and o["calls"]:
                    funcs.append(o["func"])
            moves = {c: (by.get((c, "__x64_sys_mremap")) or {}).get("calls")
                     for c in ("stock", "both")}
            pages = None
            m = re.search(r"-s (\d+)", prog)
            if m and prog.startswith("bigmove"):
                pages = int(m.group(1)) * 256
            self.p(f"`{prog}`" + (f" ({pages} pages)" if pages else "") + ":")
            self.p()
            unit = "ns per call and page" if pages else "µs per move"
            self.p(f"| function | stock calls | stock µs/call | both calls | "
                   f"both µs/call | stock {unit} | both {unit} | "
                   f"both − stock |")
            self.p("|---|---:|---:|---:|---:|---:|---:|---:|")

            def cell(c, f):
                o = by.get((c, f))
                if not o or not o["calls"]:
                    return "–", "–", None
                per = o["ns"] / 1000 / (moves[c] or 1)
                if pages:
                    per = o["ns"] / o["calls"] / pages
                return (str(o["calls"]), f"{o['ns'] / o['calls'] / 1000:.2f}",
                        per)
            for f in funcs:
                sc, sp, sm = cell("stock", f)
                bc, bp, bm = cell("both", f)
                d = f"{(bm or 0) - (sm or 0):+.2f}"
                fmt = "{:.2f}"
                self.p(f"| `{f}` | {sc} | {sp} | {bc} | {bp} | "
                       f"{fmt.format(sm) if sm is not None else '–'} | "
                       f"{fmt.format(bm) if bm is not None else '–'} | {d} |")
            self.p()

    def workloads(self, k):
        lines = [o for o in self.recs if o.get("kernel") == k and
                 o.get("bench") in ("alloc", "workload")]
        if not lines:
            return
        self.p("#### Workloads")
        self.p()
        self.p("Run time: median over repetitions (runs without VMA sampling); "
               "ratio: config ÷ stock of the same repetition, median "
               "[min–max]. VMAs: peak and end of the sampled run of "
               "repetition 1 (alloc: its own count; tcc, lua: sampled by "
               "vmawatch every 20 and 50 ms); merges and refusals: counter deltas, "
               "median over the timed runs.")
        self.p()
        names = []
        for o in lines:
            nm = (o["bench"], o["variant"])
            if nm not in names:
                names.append(nm)
        cfgs_all = self.configs(lines)
        self.p("| workload | stock s | " + " | ".join(c for c in cfgs_all if c != "stock") + " |")
        self.p("|---|---:|" + "---:|" * (len(cfgs_all) - 1))
        for nm in names:
            wl = [o for o in lines if (o["bench"], o["variant"]) == nm
                  and not o.get("traced")]
            st = {o["rep"]: o["run_ns"] for o in wl if o["config"] == "stock"}
            lab = f"{nm[0]} {nm[1]}" if nm[0] == "alloc" else nm[1]
            sm = med(list(st.values()))
            row = f"| {lab} | {'–' if sm is None else f'{sm / 1e9:.2f}'} |"
            for c in cfgs_all:
                if c == "stock":
                    continue
                rs = [o["run_ns"] / st[o["rep"]] for o in wl
                      if o["config"] == c and o["rep"] in st]
                row += f" {fmt_spread(rs)} |"
            self.p(row)
        self.p()
        self.p("| workload | config | VMAs peak / end | merges by cause | failed | refusals |")
        self.p("|---|---|---:|---|---:|---|")
        for nm in names:
            lab = f"{nm[0]} {nm[1]}" if nm[0] == "alloc" else nm[1]
            for c in cfgs_all:
                allc = [o for o in lines if (o["bench"], o["variant"]) == nm and o["config"] == c]
                tr = [o for o in allc if o.get("traced")]
                un = [o for o in allc if not o.get("traced")]
                if not allc:
                    continue
                pk = tr[0].get("vmas_peak") if tr else None
                en = tr[0].get("vmas_end") if tr else (un[0].get("vmas_end") if un else None)
                cnt = med_counters(un) if c not in ("stock", "loaded") else None
                self.p(f"| {lab} | {c} | {'–' if pk is None else pk} / {'–' if en is None else en} | "
                       f"{merges(cnt)} | {'–' if cnt is None else cnt.get('merge_failed', 0)} | "
                       f"{refusals(cnt)} |")
        ex = [o for o in lines if o.get("exit", 0) or o.get("bad", 0)]
        if ex:
            self.p()
            self.p(f"**{len(ex)} workload runs failed or read back wrong data.**")
        self.p()

    # ---- PNG plots (matplotlib) -------------------------------------------
    def png_plots(self, outdir):
        """Writes the PNGs into outdir; returns [(caption, file name)], or
        a string saying why there are none."""
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            return (f"matplotlib is not importable by {sys.executable} "
                    "(Debian: python3-matplotlib)")
        made = []

        def save(fig, title, name, caption):
            fig.suptitle(title, fontsize=11)
            fig.tight_layout()
            fig.savefig(os.path.join(outdir, name), dpi=90,
                        metadata={"Software": None})
            plt.close(fig)
            made.append((caption, name))

        ks = [k for k in self.kernels if any(
            o.get("traced") for o in self.sel(k, "spacing", variant="diff"))]
        if ks:
            fig, axs = plt.subplots(1, len(ks), figsize=(5.5 * len(ks), 4),
                                    squeeze=False)
            for ax, k in zip(axs[0], ks):
                tr = [o for o in self.sel(k, "spacing", variant="diff")
                      if o.get("traced")]
                for c, style in (("stock", "-"), ("renumber", "--"),
                                 ("both", "-")):
                    t = [o for o in tr if o["config"] == c]
                    if t:
                        ax.plot(t[0]["s_moves"], t[0]["s_vmas"], style,
                                label=("vmamerge (both)" if c == "both" else
                                       c), marker=".", markersize=3)
                ax.set_title(k, fontsize=10)
                ax.set_xlabel("mappings moved")
                ax.set_ylabel("VMAs in the test range")
                ax.set_ylim(bottom=0)
                ax.legend(fontsize=8)
            save(fig, f"spacing, different anon_vmas, N = {tr[0]['n']}: "
                 "VMA count during the move phase", "bench-spacing-vmas.png",
                 "VMA count over the move phase of spacing (different "
                 "anon_vmas), stock against vmamerge (`both`); the traced "
                 "run of repetition 1 of each configuration")
        ks = [k for k in self.kernels if self.sel(k, "bigmove")]
        if ks:
            fig, axs = plt.subplots(1, len(ks), figsize=(5.5 * len(ks), 4),
                                    squeeze=False)
            for ax, k in zip(axs[0], ks):
                bl = self.sel(k, "bigmove")
                shapes = sorted({(o["align"], o["thp"]) for o in bl})
                for i, (al, thp) in enumerate(shapes):
                    for c, style, mk in (("stock", "-", "o"),
                                         ("both", "--", "x")):
                        pts = defaultdict(list)
                        for o in bl:
                            if (o["align"], o["thp"], o["config"]) == (al, thp, c):
                                pts[o["mib"]].append(
                                    o["median_ns"] / (o["mib"] * 256))
                        if not pts:
                            continue
                        xs = sorted(pts)
                        ax.plot(xs, [statistics.median(pts[x]) for x in xs],
                                style, color=f"C{i}", marker=mk,
                                label=f"{c}, {al}, {thp}")
                ax.set_xscale("log", base=2)
                ax.set_yscale("log")
                ax.set_title(k, fontsize=10)
                ax.set_xlabel("region moved, MiB")
                ax.set_ylabel("ns (guest instructions) per 4 KiB page")
                ax.legend(fontsize=7)
            save(fig, "large moves with nothing to merge: cost per page "
                 "against size", "bench-bigmove-cost.png",
                 "Cost per 4 KiB page of one large move against the region's "
                 "size, stock (solid) and vmamerge `both` (dashed), per "
                 "alignment and THP")
        return made

    # ---- plots -----------------------------------------------------------
    def plots(self, spacing=True):
        """Text plots; spacing=False: the spacing one is a PNG already."""
        self.p("### VMA count over time")
        self.p()
        done = 0
        for k in self.kernels:
            tr = [o for o in self.sel(k, "alloc", variant="glibc-mmap") if o.get("traced")]
            if tr:
                ser = []
                for c, mark in (("stock", "s"), ("renumber", "r"), ("both", "b")):
                    t = [o for o in tr if o["config"] == c]
                    if t:
                        ser.append((c, mark, t[0]["s_ops"], t[0]["s_vmas"]))
                self.p(f"alloc-stress, glibc with a fixed mmap threshold "
                       f"(every large chunk a VMA, grown by mremap), {k}:")
                self.p()
                self.p("```")
                for line in ascii_plot(ser, xlabel="operations",
                                       ylabel="VMAs of the process"):
                    self.p(line)
                self.p("```")
                self.p()
                done += 1
            tr = [o for o in self.sel(k, "spacing", variant="diff")
                  if o.get("traced") and spacing]
            if tr:
                ser = []
                for c, mark in (("stock", "s"), ("renumber", "r"), ("both", "b")):
                    t = [o for o in tr if o["config"] == c]
                    if t:
                        ser.append((c, mark, t[0]["s_moves"], t[0]["s_vmas"]))
                self.p(f"Spacing, different anon_vmas, N = {tr[0]['n']}, {k} "
                       "(a run of its own: counting VMAs is not free):")
                self.p()
                self.p("```")
                for line in ascii_plot(ser, xlabel="mappings moved",
                                       ylabel="VMAs in the test range"):
                    self.p(line)
                self.p("```")
                self.p()
                done += 1
            tr = [o for o in self.recs if o.get("kernel") == k and
                  o.get("bench") == "workload" and o.get("variant") == "tcc-lua"
                  and o.get("traced")]
            if tr:
                ser = []
                for c, mark in (("stock", "s"), ("both", "b")):
                    t = [o for o in tr if o["config"] == c]
                    if t:
                        ser.append((c, mark, t[0]["s_ms"], t[0]["s_vmas"]))
                self.p(f"tcc building Lua, {k}:")
                self.p()
                self.p("```")
                for line in ascii_plot(ser, xlabel="ms since start",
                                       ylabel="VMAs of tcc"):
                    self.p(line)
                self.p("```")
                self.p()
            if done:
                break      # one kernel is enough for the plots
        if not done:
            self.p("(no sampled run in the results)")
            self.p()


HEAD = """# Benchmarks

What vmamerge costs and what it saves, measured by `make bench` (never part
of `make check`). **This file is generated** by `tests/bench/report.py` from
the results of one `make bench` run ("Last run" below); edit the
generator, not the file.

**What is measured.** For an opted-in process the module merges where the
stock kernel refuses because of page offsets or anon_vmas only
(docs/design.md):
- an `mremap()` move decides inside the stock `copy_vma()` (a merge hook
  takes its calls over, `module/move_merge.c`), from metadata alone, whether the
  moved range would merge with its new neighbours; if so it rewrites the
  cheaper side (offsets, and with the transplant feature the anon_vma)
  before the stock merge and the page-table move. A moved VMA that would
  merge with nothing is left as the stock kernel leaves it;
- the in-place paths (mprotect and the other vma_merge()/vma_modify()
  callers, 6.1's mmap(), the expansion) transplant or adopt anon_vmas
  where only they keep a merge from happening; an existing range whose
  neighbour differs in page offset as well (mprotect & co.) goes through
  the move's decision and rewrites the cheaper side; a new range (mmap,
  the expansion) is never renumbered.

So the spacing tables show the merges a move buys and their price, the
large moves what a move pays when nothing merges, the system-call table
what processes pay that are not opted in (`loaded`) and opted-in calls
that merge nothing but what the stock kernel merges, and the workloads
real programs. Thesis anchor for the spacing test: its patched kernel
moved 20000 mappings 2.1× faster than stock (one suspect is an
O(#VMAs) debug check in its test kernel behind that; `make bench` runs
spacing on our debug twins too when `make check` has built them - "The
thesis anchor" below).

## How it is measured

- Everything runs inside the QEMU guests of the test suite (TCG, no KVM, one
  vCPU - bench.sh sets `VMAMERGE_GUEST_CPUS=1`: `-icount` needs
  single-threaded TCG -, 3 GiB in two NUMA nodes, zram swap, THP `always`),
  one boot per kernel, and **every figure is a ratio between configurations measured in
  the same boot**.
- **Time is virtual**: QEMU runs with `-icount shift=0,sleep=off`, so the
  guest's clock advances by 1 ns per executed guest instruction. The
  figures are instruction counts, immune to the load of the shared host
  (an identical twin series, `stock2`, lands within a fraction of a percent
  of `stock`), but blind to cache, TLB and memory-bandwidth effects: they
  say how much more work a path does, not how long it takes on a given
  CPU. `BENCH_ICOUNT=off` measures wall-clock time instead (noisy here: the
  host is shared and 2-core).
- The configurations, taking turns:
"""

METHOD = """- Spacing and the workloads need a fresh process per measurement: each
  repetition runs every configuration once, the order rotating from one
  repetition to the next. System-call costs and large moves switch the
  configuration *inside* one process (opt-in by `ADVISE`, features by
  `SET_CONFIG`, between batches or moves); only stock vs loaded needs two
  processes, one with the module unloaded and one with it loaded in every
  round, the order alternating. `stock2` is an identical twin of `stock`
  interleaved with it: its ratio is the noise floor. Address-space
  randomisation is off in the benchmark guest (`randomize_va_space` 0):
  every process gets the same layout, so two processes of one
  configuration walk trees of the same shape.
- Counters are the module's (`VMAMERGE_IOC_QUERY`): merges by cause
  (the module's: `ren`umber, `tra`nsplant, `both`, `adopt`ion; the stock
  decision's: `exp`ansion, `same` anon_vma, `null` = one side had none),
  failed merge attempts, refusals by reason (and `rehomed_unmerged`, an
  anon_vma changed without the merge following, in bold: it should never
  appear). Stock and `loaded` (not opted in) have no counters.
- Raw data: `$VMAMERGE_CACHE/bench/<timestamp>/results.jsonl`, one JSON
  object per measurement; guest logs next to it.

Programs (tests/bench/): `spacing.c` (thesis §4.3.2), `micro.c` (mmap,
munmap, mprotect, madvise, mremap move and grow, brk), `bigmove.c`,
`alloc-stress.c` (linked with glibc and with Debian's static jemalloc),
`vmawatch.c` (runs and samples a command), `workload.sh` (tcc building
Lua 5.4 from Debian's source package; that Lua running an
allocation-heavy script), `bench-guest.sh` (the guest side), `bench.sh`
(`make bench`), `prepare-workloads.sh` (tcc, libc, Lua source and jemalloc
from Debian's archive, unpacked, never installed), `report.py` (writes
this file and its PNG plots).

Knobs: `BENCH_KERNELS` (series, e.g. `6.12`), `BENCH_N` (spacing mappings,
20000), `BENCH_REPS` (repetitions of spacing and workloads, 2),
`BENCH_MICRO_ROUNDS` (4), `BENCH_BIGMOVE_ROUNDS` (1), `BENCH_SIZES` (MiB,
`4,64,1024`), `BENCH_SUITES` (`spacing,micro,bigmove,workload,profile`),
`BENCH_PROFILE_N` (the profile's spacing mappings, 2000),
`BENCH_SPACING` (spacing's shapes `MODE[:DEST]`, `diff,same`; also `split`,
`:above`, which the tables leave out), `BENCH_ASLR` (0),
`BENCH_ICOUNT`, `BENCH_GUEST_TIMEOUT`, `BENCH_DOC`, `BENCH_DEBUG` (each
build's debug twin too: spacing only, stock and both, N = `BENCH_DEBUG_N`,
500 - the thesis anchor; not in the targets; `auto`, the default: the
twins `make check` has built, `1`: all, `0`: none). bench.sh records the
settings it was given and each guest the parameters it applied; "Last
run" lists both.
"""

DEFERRED = """## Not measured (yet)

- Measured: {measure}retries (the rewrite retries a
  busy folio or a migration entry a bounded number of times; only the
  refusals after the last try are counted); khugepaged during the large
  moves' and the system calls' timed phases (spacing counts it: the
  `collapses` column).
- jemalloc's own test suite (the thesis's §4.3.3) and a kernel build
  (kcbench, §4.3.5): the guest has no compiler toolchain beyond tcc and no
  make; the allocator figures come from our own driver linked with Debian's
  jemalloc 5.3 and glibc, the build figure from tcc compiling Lua.
- Redis (§4.3.4).
- The 0.5 % slowdown goal for real workloads cannot be confirmed or refuted
  with single runs: compare it with the spread of the ratios above.
- Fork-heavy patterns (COW-shared pages, refusals `shared`) and swap-out
  between the moves: no benchmark exercises them yet.
- Large moves run 4, 64 and 1024 MiB by default (16 and 256 MiB with
  `BENCH_SIZES=4,16,64,256,1024`), one round: with the virtual clock the
  moves repeat to within a few percent, but `BENCH_BIGMOVE_ROUNDS` gives
  more rounds for a spread.
- Wall-clock cost on real hardware (cache and TLB effects): the virtual
  clock counts instructions only; run `BENCH_ICOUNT=off` on a quiet
  machine for that.
"""


def results_date(path):
    """The day of the run: bench.sh's results directory is named
    YYYYMMDD-HHMMSS; a document regenerated later from the same results
    keeps the run's date, not the day it was written."""
    name = os.path.basename(os.path.dirname(os.path.abspath(path)))
    try:
        return datetime.datetime.strptime(name, "%Y%m%d-%H%M%S").date().isoformat()
    except ValueError:
        return datetime.date.today().isoformat()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--out", default="-")
    ap.add_argument("--seconds", default="")
    ap.add_argument("--versions", default="")
    ap.add_argument("--failed", default="")
    ap.add_argument("--plots", default=None)
    a = ap.parse_args()
    if a.plots is None and a.out != "-":
        a.plots = os.path.dirname(os.path.abspath(a.out))
    recs = []
    with open(a.results) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                try:
                    recs.append(json.loads(line))
                except ValueError:
                    pass
    r = Report(recs)
    run_date = results_date(a.results)
    r.p(HEAD.rstrip("\n"))
    for c in CONFIGS:
        r.p(f"  - `{c}`: {CFG_DESC[c]}")
    r.p(METHOD.rstrip("\n"))
    r.p()
    r.p("## Last run")
    r.p()
    params = [o for o in recs if o.get("bench") == "params"]
    if params:
        env = params[0].get("env", {})
        cmd = " ".join(f"{k}={v}" for k, v in env.items()) + " make bench"
        r.p(f"- date: {run_date}; command: "
            f"`{cmd.strip()}`"
            + ("" if any(k.startswith("BENCH_") and k != "BENCH_DOC"
                         for k in env) else " (the default parameters)")
            + ("; this document written afterwards by `report.py "
               "results.jsonl --out docs/benchmarks.md`"
               if env.get("BENCH_DOC") == "-" else ""))
    else:
        r.p(f"- date: {run_date}; command: `make "
            "bench` (its settings were not recorded)")
    tot = [o for o in recs if o.get("bench") == "total"]
    if not a.seconds and tot:
        a.seconds = str(tot[0]["seconds"])
    if a.seconds:
        r.p(f"- {int(float(a.seconds)) // 60} min {int(float(a.seconds)) % 60}"
            " s in all (wall clock, builds and boots included)")
    for k in r.kernels:
        m = r.meta(k)
        done = [o for o in r.sel(k, "done")]
        su = str(m.get("suites", "")).split()
        bits = [f"suites `{' '.join(su)}`"]
        if "spacing" in su or "workload" in su:
            bits.append(f"repetitions {m.get('reps')}")
        if "spacing" in su:
            bits.append(f"spacing N = {m.get('n')}")
        if "workload" in su:
            bits.append(f"workloads {m.get('workload_reps', '?')} per "
                        "repetition")
        if "micro" in su:
            bits.append(f"micro {m.get('micro_rounds', '?')} rounds × "
                        f"`{m.get('micro')}` (iterations, batches)")
        if "bigmove" in su:
            bits.append(f"bigmove sizes {m.get('sizes')} MiB, "
                        f"{m.get('bigmove_rounds', '?')} rounds × "
                        f"{m.get('moves')} moves")
        bits.append(f"THP `{m.get('thp')}`")
        if "aslr" in m:
            bits.append(f"`randomize_va_space` {m['aslr']}")
        bits.append(f"guest benchmarks {done[0]['seconds']:.0f} s of guest "
                    "time" if done else "**guest did not finish**")
        r.p(f"- {k}: " + "; ".join(bits))
    if a.versions:
        try:
            with open(a.versions) as f:
                r.p("- workload packages: " + ", ".join(
                    l.strip().replace(" ", " ") for l in f if l.strip()))
        except OSError:
            pass
    if a.failed.strip():
        r.p(f"- **guest run failed on {a.failed.strip()}** (splat, timeout or "
            "error: see the guest logs); its figures may be incomplete")
    host = [o for o in recs if o.get("bench") == "host"]
    if host:
        r.p(f"- QEMU clock: `{host[0].get('icount')}`; host load average at the "
            f"start {host[0].get('host_load')} on {host[0].get('host_nproc')} cores")
    errs = [o for o in recs if o.get("bench") == "error"]
    for e in errs:
        r.p(f"- **error in {e.get('kernel')}: {e.get('msg')}**")
    r.p()
    r.targets()
    r.anchor()
    r.summary()
    for k in r.kernels:
        r.p(f"## {k}")
        r.p()
        r.spacing(k)
        r.micro(k)
        r.bigmove(k)
        r.workloads(k)
        r.profile(k)
    r.p("## Plots")
    r.p()
    made = r.png_plots(a.plots) if a.plots else "no plot directory (--out -)"
    if isinstance(made, str):
        r.p(f"No PNG plots: {made}.")
        r.p()
    for cap, name in made if not isinstance(made, str) else []:
        r.p(f"{cap}:")
        r.p()
        r.p(f"![{cap}]({name})")
        r.p()
    r.plots(spacing=isinstance(made, str) or not any(
        name == "bench-spacing-vmas.png" for _, name in made))
    measure = []
    if not any(o.get("next") == "merge" for o in recs):
        measure.append("the cost of a move that must renumber (per 4 KiB "
                       "page against a stock PTE-level move; PMD-mapped "
                       "THPs)")
    if not r.debug:
        measure.append("spacing on the debug twins (DEBUG_VM_MAPLE_TREE, "
                       "DEBUG_VM_RB), to check the thesis anchor")
    if not r.has_after():
        measure.append("what merging buys after the fact (fork, exit, "
                       "`/proc/PID/smaps` read and `mlockall` time, slab "
                       "memory of the merged against the unmerged process)")
    deferred = DEFERRED.replace(
        "{measure}", "".join(m + "; " for m in measure))
    r.p(deferred.rstrip("\n"))
    text = "\n".join(r.out) + "\n"
    if a.out == "-":
        sys.stdout.write(text)
    else:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
