#!/usr/bin/env python3
"""Start-up of a deployed stc-run process (issue 13, "bench/startup"): what a
process pays before and around its model, with stc-run's object cache.

Per example (examples/*.mlir), two stc-run configurations of the raw model:
  default  --tune-hot-paths --hot-path-profile=<empty profile>
           --default-lowering=fast: no region is hot, no site, no tuning
  tuned    --tune-hot-paths (hot sites by static cost), default policy
Figures (stc-run --timing's "compile" line: everything before the entry
runs, i.e. read, key, cache lookup, parse, pipeline, LLVM, link):
  compile first   first start, empty object cache (parse + pipeline + LLVM)
  compile second  second start: the object comes from the cache
  whole           median wall time of --runs processes, object cache warm,
                  no tuning reports (as deployed): tuned with a cold tuning
                  cache (every site tunes in the process); then --runs rounds
                  of default, tuned with a warm tuning cache (each disk
                  decision is checked once per process, on the site's second
                  call by default: docs/aot.md "The deferred check") and
                  tuned warm with STC_TUNE_TRUST_VERIFIED=1 (the
                  trust-verified policy), one of each per round in rotating
                  order; paired: the median of each round's warm/default
Every output is compared with the default run's (test/e2e/compare-outputs.py):
a mismatch or a failed run prints WRONG/failed and the exit status is 1;
timings never fail the script. The machine is shared: the load average is
printed at the start and in the RESULT line.

usage: bench/startup.sh [--quick] [--runs N] [--keep DIR] [--csv FILE] [model.mlir ...]
  --quick      examples/mlp.mlir only, 1 run (CI smoke test)
  --runs N     processes per whole-process figure (default 3)
  --keep DIR   keep outputs, stderr (timing, tuning reports) and caches in DIR
Last line: RESULT startup <example>_compile_first_s=... <example>_compile_second_s=...
  <example>_warm_over_default=... (tuned warm whole / default whole) ... max_compile_second_s=...
"""
import argparse
import atexit
import glob
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stcbench as sb  # noqa: E402

EMPTY_PROFILE = ('stc-profile: 1\nproducer: "bench/startup.py"\nenvironment: "cpu:bench"\n'
                 'created: "2026-01-01T00:00:00Z"\nregions: []\n')
COMPILE_RE = re.compile(r"^stc-run: timing: compile ([0-9.]+) s", re.M)
OUTCOME_RE = re.compile(r"^stc-run: object cache: (.*)$", re.M)


class Start:
    def __init__(self, rc, out, err, wall):
        self.rc, self.out, self.err, self.wall = rc, out, err, wall
        m = COMPILE_RE.search(err)
        self.compile_s = float(m.group(1)) if m else None
        m = OUTCOME_RE.search(err)
        self.outcome = m.group(1) if m else "?"


def start(args, cache, env_extra=None, timeout=1800, report=True):
    env = {k: v for k, v in os.environ.items() if not k.startswith("STC_")}
    env.update({"STC_CACHE_DIR": cache})
    if report:
        env["STC_TUNE_REPORT"] = "1"
    env.update(env_extra or {})
    rc, out, err, wall = sb.timed_process([sb.tool("stc-run"), "--timing"] + args, env, timeout)
    return Start(rc, out, err, wall)


def main():
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--runs", type=int)
    ap.add_argument("--keep")
    ap.add_argument("--csv")
    ap.add_argument("-h", "--help", action="store_true")
    ap.add_argument("models", nargs="*")
    a = ap.parse_args()
    if a.help:
        print(__doc__.strip())
        return 0
    if not os.access(sb.tool("stc-run"), os.X_OK):
        sb.die("no stc-run in %s (build stc first, or set STC_BIN)" % sb.stc_bin())
    models = a.models or ([os.path.join(sb.ROOT, "examples", "mlp.mlir")] if a.quick else
                          sorted(glob.glob(os.path.join(sb.ROOT, "examples", "*.mlir"))))
    runs = a.runs or (1 if a.quick else 3)
    csv = a.csv or os.path.join(sb.ROOT, "bench", "results",
                                "startup-quick.csv" if a.quick else "startup.csv")
    work = a.keep or tempfile.mkdtemp(prefix="stc-startup.")
    if not a.keep:
        atexit.register(shutil.rmtree, work, True)
    os.makedirs(work, exist_ok=True)
    empty = os.path.join(work, "empty.yaml")
    with open(empty, "w") as f:
        f.write(EMPTY_PROFILE)
    compare = os.path.join(sb.ROOT, "test", "e2e", "compare-outputs.py")
    t_start = time.time()
    print("startup: %d examples, stc %s, %s, %d cores, load %s, %d runs, work dir %s"
          % (len(models), sb.git_head(), sb.cpu_model(), os.cpu_count() or 0, sb.loadavg(), runs,
             work))
    print("%-12s | %-27s | %-27s | %-37s | %s" % ("", "default: compile (s)", "tuned: compile (s)",
                                                 "whole process (s), object cache warm", ""))
    print("%-12s | %8s %8s %9s | %8s %8s %9s | %7s %7s %7s %7s %9s %7s  %s"
          % ("example", "first", "second", "2nd hit", "first", "second", "2nd hit", "default",
             "cold", "warm", "trust", "warm/def", "paired", "check"))
    rows, failures, result, seconds = [], 0, [], []
    for model in models:
        base = os.path.splitext(os.path.basename(model))[0]
        d = os.path.join(work, base)
        notes = []
        configs = {
            "default": ["--tune-hot-paths", "--hot-path-profile=" + empty,
                        "--default-lowering=fast", model],
            "tuned": ["--tune-hot-paths", model],
        }
        reference = [None]
        count = [0]

        def check(r, label):
            count[0] += 1
            path = "%s.%s.%d" % (d, label, count[0])
            with open(path + ".out", "w") as f:
                f.write(r.out)
            with open(path + ".stderr", "w") as f:
                f.write(r.err)
            if r.rc != 0:
                notes.append("%s failed (rc %d)" % (label, r.rc))
            elif reference[0] is None:
                reference[0] = path + ".out"
            elif subprocess.run(["python3", compare, reference[0], path + ".out"],
                                capture_output=True).returncode != 0:
                notes.append("%s WRONG" % label)

        fig = {}
        for name, args in configs.items():
            cache = os.path.join(work, "%s.%s.cache" % (base, name))
            shutil.rmtree(cache, ignore_errors=True)
            first = start(args, cache)
            check(first, name + "-first")
            second = start(args, cache)
            check(second, name + "-second")
            if second.outcome != "hit":
                notes.append("%s second start: object cache %s" % (name, second.outcome))
            fig[name] = (first.compile_s, second.compile_s, second.outcome == "hit", cache)

        # Whole processes as deployed: no tuning reports (the compile
        # starts above print them). Cold first (each with its tuning records
        # dropped, the object cache kept); then rounds of default, warm and
        # trust, one of each per round in a rotating order, so that load
        # drifts fall on all three alike, after starts that fill the tuning
        # cache and write the warm-start index, under either policy.
        default_cache, tuned_cache = fig["default"][3], fig["tuned"][3]
        cold = []
        for _ in range(runs):
            shutil.rmtree(os.path.join(tuned_cache, "v1"), ignore_errors=True)
            shutil.rmtree(os.path.join(tuned_cache, "warm-v1"), ignore_errors=True)
            r = start(configs["tuned"], tuned_cache, report=False)
            check(r, "cold")
            cold.append(r.wall)
        trust_env = {"STC_TUNE_TRUST_VERIFIED": "1"}
        for env_extra in (None, trust_env):  # trust-verified keys records apart
            start(configs["tuned"], tuned_cache, env_extra)
            start(configs["tuned"], tuned_cache, env_extra, report=False)
        rounds = [("default", configs["default"], default_cache, None),
                  ("warm", configs["tuned"], tuned_cache, None),
                  ("trust", configs["tuned"], tuned_cache, trust_env)]
        walls = {label: [] for label, _, _, _ in rounds}
        paired = []
        for i in range(runs):
            this = {}
            for label, args, cache, env_extra in rounds[i % 3:] + rounds[:i % 3]:
                r = start(args, cache, env_extra, report=False)
                check(r, label)
                walls[label].append(r.wall)
                this[label] = r.wall
            paired.append(this["warm"] / this["default"])
        w_default = statistics.median(walls["default"])
        w_cold = statistics.median(cold)
        w_warm = statistics.median(walls["warm"])
        w_trust = statistics.median(walls["trust"])
        ratio = w_warm / w_default if w_default else None
        w_paired = statistics.median(paired)
        bad = [n for n in notes if "WRONG" in n or "failed" in n or "second start" in n]
        failures += bool(bad)
        chk = "; ".join(sorted(set(notes))) if notes else "ok"
        print("%-12s | %8s %8s %9s | %8s %8s %9s | %7.4f %7.4f %7.4f %7.4f %9s %7s  %s"
              % (base, sb.fmt(fig["default"][0]), sb.fmt(fig["default"][1]),
                 "yes" if fig["default"][2] else "NO", sb.fmt(fig["tuned"][0]),
                 sb.fmt(fig["tuned"][1]), "yes" if fig["tuned"][2] else "NO", w_default, w_cold,
                 w_warm, w_trust, sb.fmt(ratio, "%.3fx"), sb.fmt(w_paired, "%.3f"), chk),
              flush=True)
        rows.append([base, fig["default"][0], fig["default"][1], fig["tuned"][0], fig["tuned"][1],
                     w_default, w_cold, w_warm, w_trust, ratio, chk, w_paired, runs])
        result.append("%s_compile_first_s=%s" % (base, sb.fmt(fig["tuned"][0])))
        result.append("%s_compile_second_s=%s" % (base, sb.fmt(fig["tuned"][1])))
        result.append("%s_warm_over_default=%s" % (base, sb.fmt(ratio, "%.3f")))
        result.append("%s_warm_over_default_paired=%s" % (base, sb.fmt(w_paired, "%.3f")))
        seconds += [s for s in (fig["default"][1], fig["tuned"][1]) if s is not None]
    sb.write_csv(csv, ["example", "default_compile_first_s", "default_compile_second_s",
                       "tuned_compile_first_s", "tuned_compile_second_s", "default_whole_s",
                       "tuned_cold_whole_s", "tuned_warm_whole_s", "tuned_trust_whole_s",
                       "warm_over_default", "check", "warm_over_default_paired_median",
                       "whole_rounds"], rows)
    print("(compile: stc-run --timing, everything before the entry runs; whole: median wall time "
          "of a process, object cache warm, no tuning reports, default/warm/trust interleaved; "
          "warm/def < 1 means the tuned process is faster; paired: median of the per-round "
          "warm/default ratios; %.0f s in all; CSV %s)" % (time.time() - t_start, csv))
    print("RESULT startup " + " ".join(result) + " max_compile_second_s=%s examples=%d load=%s "
          "failures=%d" % (sb.fmt(max(seconds) if seconds else None), len(rows), sb.loadavg(),
                           failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
