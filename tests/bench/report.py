#!/usr/bin/env python3
"""Turn the JSON lines of `make bench` into docs/benchmarks.md.

    report.py RESULTS.jsonl [--out FILE] [--seconds S] [--versions FILE]
              [--failed "REL ..."]

Every ratio compares two configurations measured in the same guest boot;
see the text this writes (METHOD below) for how each figure is formed.
"""
import argparse
import datetime
import json
import statistics
import sys
from collections import defaultdict

CONFIGS = ["stock", "loaded", "off", "renumber", "transplant", "both"]
CFG_DESC = {
    "stock": "module not loaded",
    "loaded": "module loaded, process not opted in",
    "off": "opted in, features off",
    "renumber": "opted in, renumber only",
    "transplant": "opted in, transplant only",
    "both": "opted in, renumber + transplant",
}
MERGE_KEYS = [("merge_renumber", "ren"), ("merge_transplant", "tra"),
              ("merge_both", "both"), ("merge_expand", "exp"),
              ("av_merge_same", "same"), ("av_merge_null", "null"),
              ("av_merge_different", "diff")]


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
    return ", ".join(parts) if parts else "0"


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


class Report:
    def __init__(self, recs):
        self.recs = recs
        self.kernels = []
        for o in recs:
            if o.get("kernel") and o["kernel"] not in self.kernels:
                self.kernels.append(o["kernel"])
        self.out = []

    def p(self, s=""):
        self.out.append(s)

    def sel(self, kernel, bench, **kw):
        r = []
        for o in self.recs:
            if o.get("kernel") != kernel or o.get("bench") != bench:
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
               "the process's own, median over repetitions.")
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
                   "| merges by cause | failed | refusals |")
            self.p("|---|---:|---:|---:|---|---:|---|")
            stock = {o["rep"]: o["move_ns"] for o in vl if o["config"] == "stock"}
            for c in self.configs(vl):
                cl = [o for o in vl if o["config"] == c]
                t = med([o["move_ns"] for o in cl])
                rs = [o["move_ns"] / stock[o["rep"]] for o in cl
                      if o["rep"] in stock]
                cnt = med_counters(cl) if c not in ("stock", "loaded") else None
                self.p(f"| {c} | {t / 1e6:.0f} | {fmt_spread(rs)} | "
                       f"{int(med([o['vmas_before'] for o in cl]))} → "
                       f"{int(med([o['vmas_after'] for o in cl]))} | "
                       f"{merges(cnt)} | "
                       f"{'–' if cnt is None else cnt.get('merge_failed', 0)} | "
                       f"{refusals(cnt)} |")
            bad = sum(o.get("bad_pages", 0) for o in vl)
            if bad:
                self.p()
                self.p(f"**{bad} pages read back wrong.**")
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
               "off a 2 MiB boundary, destination on one.")
        self.p()
        cfgs = [c for c in self.configs(lines) if c != "stock"]
        self.p("| MiB | align | THP | stock ms/GiB | " + " | ".join(
            ("stock2 (noise)" if c == "stock2" else c) for c in cfgs) + " |")
        self.p("|---:|---|---|---:|" + "---:|" * len(cfgs))
        keys = []
        for o in lines:
            key = (o["mib"], o["align"], o["thp"])
            if key not in keys:
                keys.append(key)
        keys.sort(key=lambda x: (x[0], x[1], x[2]))
        for key in keys:
            kl = [o for o in lines if (o["mib"], o["align"], o["thp"]) == key]
            st = {o["rep"]: o["ns_per_gib"] for o in kl if o["config"] == "stock"}
            huge = med([100.0 * o["anon_huge_kb"] / (o["mib"] * 1024)
                        for o in kl if o.get("anon_huge_kb", -1) >= 0])
            row = (f"| {key[0]} | {key[1]} | {key[2]} ({huge:.0f}%) | "
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

    # ---- plots -----------------------------------------------------------
    def plots(self):
        self.p("## VMA count over time")
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
            tr = [o for o in self.sel(k, "spacing", variant="diff") if o.get("traced")]
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
the results of the last `make bench`; edit the generator, not the file.

**Read this first.** Renumber and transplant act after `mremap()` moves
only (the in-place paths are issue 4), so the spacing and large-move
tables show their effect and the syscall and workload tables mostly the
cost of the hooks (thesis anchor for the spacing test: the patched kernel
moved 20000 mappings 2.1× faster than stock, with 20000 different-anon_vma
merges and about 19990 page-offset merges).

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
  interleaved with it: its ratio is the noise floor.
- Counters are the module's (`VMAMERGE_IOC_QUERY`): merges by cause
  (`ren`umber, `tra`nsplant, `both`, `exp`ansion; stock causes `same`
  anon_vma and `null` = one side had none), failed merge attempts, refusals
  by reason. Stock and `loaded` (not opted in) have no counters.
- Raw data: `$VMAMERGE_CACHE/bench/<timestamp>/results.jsonl`, one JSON
  object per measurement; guest logs next to it.

Programs (tests/bench/): `spacing.c` (thesis §4.3.2), `micro.c` (mmap,
munmap, mprotect, madvise, mremap move and grow, brk), `bigmove.c`,
`alloc-stress.c` (linked with glibc and with Debian's static jemalloc),
`vmawatch.c` (runs and samples a command), `workload.sh` (tcc building
Lua 5.4 from Debian's source package; that Lua running an
allocation-heavy script), `bench-guest.sh` (the guest side), `bench.sh`
(`make bench`), `prepare-workloads.sh` (tcc, libc, Lua source and jemalloc
from Debian's archive, unpacked, never installed), `report.py` (this file).

Knobs: `BENCH_KERNELS` (series, e.g. `6.12`), `BENCH_N` (spacing mappings,
20000), `BENCH_REPS` (repetitions of spacing and workloads, 2),
`BENCH_MICRO_ROUNDS` (4), `BENCH_BIGMOVE_ROUNDS` (1), `BENCH_SIZES` (MiB,
`4,64,1024`), `BENCH_SUITES` (`spacing,micro,bigmove,workload`),
`BENCH_ICOUNT`, `BENCH_GUEST_TIMEOUT`, `BENCH_DOC`. The defaults are sized
so that both kernels take well under an hour on the 2-core shared host.
"""

DEFERRED = """## Not measured (yet)

- jemalloc's own test suite (the thesis's §4.3.3) and a kernel build
  (kcbench, §4.3.5): the guest has no compiler toolchain beyond tcc and no
  make; the allocator figures come from our own driver linked with Debian's
  jemalloc 5.3 and glibc, the build figure from tcc compiling Lua.
- Redis (§4.3.4).
- The 0.5 % slowdown goal for real workloads cannot be confirmed or refuted
  under TCG on a shared host: compare it with the spread of the ratios
  above (the noise of a single run is larger than 0.5 %).
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--out", default="-")
    ap.add_argument("--seconds", default="")
    ap.add_argument("--versions", default="")
    ap.add_argument("--failed", default="")
    a = ap.parse_args()
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
    r.p(HEAD.rstrip("\n"))
    for c in CONFIGS:
        r.p(f"  - `{c}`: {CFG_DESC[c]}")
    r.p(METHOD.rstrip("\n"))
    r.p()
    r.p("## Last run")
    r.p()
    r.p(f"- date: {datetime.date.today().isoformat()}; command: `make bench`"
        + (f"; {int(float(a.seconds)) // 60} min {int(float(a.seconds)) % 60} s in all"
           if a.seconds else ""))
    for k in r.kernels:
        m = r.meta(k)
        done = [o for o in r.sel(k, "done")]
        r.p(f"- {k}: N = {m.get('n')}, repetitions {m.get('reps')}, sizes "
            f"{m.get('sizes')} MiB, THP `{m.get('thp')}`"
            + (f", guest benchmarks {done[0]['seconds']:.0f} s" if done else
               ", **guest did not finish**"))
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
    r.summary()
    for k in r.kernels:
        r.p(f"## {k}")
        r.p()
        r.spacing(k)
        r.micro(k)
        r.bigmove(k)
        r.workloads(k)
    r.plots()
    r.p(DEFERRED.rstrip("\n"))
    text = "\n".join(r.out) + "\n"
    if a.out == "-":
        sys.stdout.write(text)
    else:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
