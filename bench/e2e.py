#!/usr/bin/env python3
"""Each example end to end: whole-process and steady-state time with the
default lowering, tuned from a cold and from a warm cache, and vendor-only
(issue 9, "e2e").

Per example (examples/*.mlir) the program gets a timing loop at the end of
its @main (bench/stcbench.py add_steady_loop: it repeats @main's calls of
the model functions until --min-time seconds, and runs only when
STC_BENCH_STEADY is set, so the same executable gives both figures). Three
AOT builds (the steps of test/e2e/aot-build.sh):
  default  --hot-path-profile=<empty profile> --default-lowering=fast: no
           region is hot, no site, no tuning: every op gets the default
           lowering (bench/model_speed.sh's "reference")
  tuned    --tune-hot-paths with no profile (hot sites by static cost), the
           default tuning policy; run with a fresh STC_CACHE_DIR ("cold":
           the first call of each site tunes) and again with that cache
           ("warm": each process checks each disk decision once, on the
           site's second call by default, STC_TUNE_CHECK_AT_CALL; the first
           runs the reference, docs/aot.md "The deferred check")
  vendor   the same sites with only the vendor-BLAS schedules
           (stc-hot-path-schedule + stc-multi-variant{schedules=<*_blas>}
           first, then --tune-hot-paths): the tuner chooses between the
           default lowering and BLAS; run from a cold cache
whole_s: median wall time of --runs processes of the plain program (each
cold run gets its own fresh cache). steady_ms: the model calls' time per
iteration of the loop (median over --runs processes), excluding each
process's first call. Every output is compared with the upstream route
(test/e2e/run-reference.sh, test/e2e/compare-outputs.py): a mismatch prints
WRONG and the exit status is 1; timings never fail the script.

usage: bench/e2e.sh [--quick] [--runs N] [--min-time S] [--keep DIR] [--csv FILE] [model.mlir ...]
  --quick      examples/mlp.mlir only, 1 run, short loop (CI smoke test)
  --runs N     processes per figure (default 3)
  --min-time S seconds of steady-state loop per process (default 0.5)
  --keep DIR   keep the programs, executables, outputs and each run's stderr
               (with the tuning reports: STC_TUNE_REPORT=1 is set) in DIR
Last line: RESULT e2e <example>_tuned_warm_speedup=... (default steady / tuned steady) ...
"""
import argparse
import atexit
import glob
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stcbench as sb  # noqa: E402

EMPTY_PROFILE = ('stc-profile: 1\nproducer: "bench/e2e.py"\nenvironment: "cpu:bench"\n'
                 'created: "2026-01-01T00:00:00Z"\nregions: []\n')


def blas_schedules():
    return sorted(os.path.basename(p)[:-5] for p in
                  glob.glob(os.path.join(sb.ROOT, "passes", "schedules", "*_blas.mlir")))


def strip_steady(out):
    lines = out.rstrip("\n").split("\n")
    if lines and lines[-1].count(",") == 1 and lines[-1].split(",")[0].strip().isdigit():
        lines = lines[:-1]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--runs", type=int)
    ap.add_argument("--min-time", type=float)
    ap.add_argument("--keep")
    ap.add_argument("--csv")
    ap.add_argument("-h", "--help", action="store_true")
    ap.add_argument("models", nargs="*")
    a = ap.parse_args()
    if a.help:
        print(__doc__.strip())
        return 0
    sb.check_tools()
    models = a.models or ([os.path.join(sb.ROOT, "examples", "mlp.mlir")] if a.quick else
                          sorted(glob.glob(os.path.join(sb.ROOT, "examples", "*.mlir"))))
    runs = a.runs or (1 if a.quick else 3)
    min_time = a.min_time or (0.2 if a.quick else 0.5)
    csv = a.csv or os.path.join(sb.ROOT, "bench", "results", "e2e-quick.csv" if a.quick else "e2e.csv")
    work = a.keep or tempfile.mkdtemp(prefix="stc-e2e.")
    if not a.keep:
        atexit.register(shutil.rmtree, work, True)
    os.makedirs(work, exist_ok=True)
    empty = os.path.join(work, "empty.yaml")
    with open(empty, "w") as f:
        f.write(EMPTY_PROFILE)
    compare = os.path.join(sb.ROOT, "test", "e2e", "compare-outputs.py")
    vendor_pipe = ("builtin.module(stc-hot-path-schedule,stc-multi-variant{schedules=%s})"
                   % ",".join(blas_schedules()))
    t_start = time.time()
    print("e2e: %d examples, stc %s, default lowering %s, %s, %d cores, load %s, %d runs, loop %.2f s, "
          "work dir %s"
          % (len(models), sb.git_head(),
             "fast" if sb.supports_default_lowering() else "= scalar loops (no --default-lowering yet)",
             sb.cpu_model(), os.cpu_count() or 0, sb.loadavg(), runs, min_time, work))
    hdr = ("%-12s %5s | %8s %9s | %8s %9s %8s %9s | %8s %9s | %9s %9s %9s  %s"
           % ("example", "sites", "def_s", "def_ms", "cold_s", "cold_ms", "warm_s", "warm_ms",
              "vend_s", "vend_ms", "def/cold", "def/warm", "def/vend", "check"))
    print("%-18s | %-18s | %-37s | %-18s | steady-state speedup over default" %
          ("", "default lowering", "tuned: cold cache        warm cache", "vendor-only"))
    print(hdr)
    rows, failures, result = [], 0, []
    for model in models:
        base = os.path.splitext(os.path.basename(model))[0]
        d = os.path.join(work, base)
        notes = []
        try:
            text, _ = sb.add_steady_loop(open(model).read())
        except ValueError as e:
            print("%-12s skipped: %s" % (base, e))
            continue
        src = d + ".steady.mlir"
        with open(src, "w") as f:
            f.write(text)
        exp = subprocess.run([os.path.join(sb.ROOT, "test", "e2e", "run-reference.sh"), model],
                             capture_output=True, text=True)
        expected = d + ".expected"
        with open(expected, "w") as f:
            f.write(exp.stdout)
        if exp.returncode != 0:
            notes.append("upstream reference failed")
        log = d + ".log"
        try:
            sb.build(src, d + ".default", profile=empty, default_lowering="fast", log=log)
            sb.build(src, d + ".tuned", default_lowering="fast", log=log)
            sb.build(src, d + ".vendor", default_lowering="fast", pre_pipeline=vendor_pipe, log=log)
        except sb.BuildError as e:
            print("%-12s BUILD FAILED: %s" % (base, e))
            failures += 1
            continue
        sites = subprocess.run(["nm", d + ".tuned.o"], capture_output=True, text=True).stdout.count("__rt_site\n")
        count = [0]

        def check(r, label):
            if r.rc != 0:
                notes.append("%s failed (rc %d)" % (label, r.rc))
                return
            count[0] += 1
            actual = "%s.%s.out%d" % (d, label.replace(" ", "_"), count[0])
            with open(actual, "w") as f:
                f.write(strip_steady(r.out))
            with open(actual + ".stderr", "w") as f:
                f.write(r.err)
            if exp.returncode == 0 and subprocess.run(["python3", compare, expected, actual],
                                                      capture_output=True).returncode != 0:
                notes.append("%s WRONG" % label)

        def steady_ms(r):
            st = r.steady() if r.rc == 0 else None
            return 1000 * st[1] / st[0] if st else None

        env = {"STC_BENCH_MIN_TIME": str(min_time), "STC_TUNE_REPORT": "1"}
        fig = {}
        for cfg in ("default", "cold", "warm", "vendor"):
            exe = d + (".tuned" if cfg in ("cold", "warm") else "." + cfg)
            whole, steady = [], []
            for i in range(runs):
                cache = os.path.join(work, "%s.%s.cache%d" % (base, cfg, i))
                if cfg == "warm":
                    cache = os.path.join(work, "%s.cold.cache0" % base)  # filled by the cold runs
                r = sb.run(exe, env, cache=cache)
                check(r, cfg)
                whole.append(r.wall)
                cache_s = os.path.join(work, "%s.%s.scache%d" % (base, cfg, i))
                if cfg == "warm":
                    cache_s = cache
                r = sb.run(exe, env, steady=True, cache=cache_s)
                check(r, cfg + " loop")
                steady.append(steady_ms(r))
            fig[cfg] = (statistics.median(whole), sb.median(steady))

        def sp(cfg):
            a_, b_ = fig["default"][1], fig[cfg][1]
            return a_ / b_ if a_ and b_ else None
        bad = [n for n in notes if "WRONG" in n or "failed" in n]
        failures += bool(bad)
        chk = "; ".join(sorted(set(notes))) if notes else "ok"
        print("%-12s %5d | %8.3f %9s | %8.3f %9s %8.3f %9s | %8.3f %9s | %9s %9s %9s  %s"
              % (base, sites, fig["default"][0], sb.fmt(fig["default"][1], "%.3f"),
                 fig["cold"][0], sb.fmt(fig["cold"][1], "%.3f"), fig["warm"][0],
                 sb.fmt(fig["warm"][1], "%.3f"), fig["vendor"][0], sb.fmt(fig["vendor"][1], "%.3f"),
                 sb.fmt(sp("cold"), "%.2fx"), sb.fmt(sp("warm"), "%.2fx"), sb.fmt(sp("vendor"), "%.2fx"),
                 chk), flush=True)
        rows.append([base, sites] + [v for cfg in ("default", "cold", "warm", "vendor") for v in fig[cfg]]
                    + [sp("cold"), sp("warm"), sp("vendor"), chk])
        result.append("%s_warm_speedup=%s" % (base, sb.fmt(sp("warm"), "%.2f")))
        result.append("%s_warm_whole_over_default=%s"
                      % (base, sb.fmt(fig["warm"][0] / fig["default"][0] if fig["default"][0] else None, "%.2f")))
    sb.write_csv(csv, ["example", "sites", "default_whole_s", "default_steady_ms", "cold_whole_s",
                       "cold_steady_ms", "warm_whole_s", "warm_steady_ms", "vendor_whole_s",
                       "vendor_steady_ms", "steady_speedup_cold", "steady_speedup_warm",
                       "steady_speedup_vendor", "check"], rows)
    print("(whole_s: median wall time of a process that runs the model once; steady_ms: model "
          "time per iteration after the first call; %.0f s in all; CSV %s)" % (time.time() - t_start, csv))
    print("RESULT e2e " + " ".join(result) + " default_lowering=%s examples=%d load=%s failures=%d"
          % ("fast" if sb.supports_default_lowering() else "loops", len(rows), sb.loadavg(), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
