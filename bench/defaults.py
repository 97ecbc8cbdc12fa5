#!/usr/bin/env python3
"""GFLOP/s per op kind: the default lowering, the scalar-loop oracle, every
variant, the tuner's pick and OpenBLAS, side by side in one run (issue 9).

Per op kind (KINDS below) a one-op program (bench/stcbench.py) is built
ahead of time three ways and its steady state timed (STC_BENCH_STEADY: the
first call excluded, then calls until --min-time seconds):
  default   stc-opt --tune-hot-paths --default-lowering=fast with an empty
            profile: no region is hot, so no variants: what cold code runs
  loops     the same with --default-lowering=loops, the scalar-loop oracle
            (one thread; at least one timed call even past --min-time:
            1024^3 takes seconds per call);
            before stc-opt had --default-lowering the default lowering WAS
            the loops: the column then repeats 'default'
  variants  every schedule (--hot-path-options='variants-per-hot=64 ...'),
            linked with the forced-variant stand-in of forced-variants.test
            (test/tune-hot-paths/Inputs/site_enter_stub.c, STC_STUB_VARIANT=k
            STC_STUB_PUBLISH=1): each variant's own steady state. 'best' is
            the fastest variant, 'best gen' the fastest that is not vendor
            BLAS, 'blas' the *_blas variant
  tuned     the same object linked with libstc_rt, default policy, cold
            cache: the tuner's pick in steady state
  OpenBLAS  cblas_sgemm / cblas_sgemv called directly on the same shapes
            (bench/openblas_bench.c, dlopen of libopenblas.so.0)
GFLOP/s counts 2 per multiply-add, 1 per pooling/reduction element, 3 per
element of the elementwise chain (mul, add, max), 5 per softmax element
(max, sub, exp, add, div). Each figure is measured with all threads and with
one (OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1; the '1t' rows). Ratios:
default/loops, default/best, best/OpenBLAS, best gen/OpenBLAS,
tuned/OpenBLAS. Every run's printed output is checked against the default
build's; a mismatch prints WRONG and the exit status is 1; timings never
fail the script.

usage: bench/defaults.sh [--quick] [--only REGEX] [--min-time S] [--threads all|1|both]
                         [--repeat N] [--keep DIR] [--csv FILE]
  --quick     small shapes of four kinds (CI smoke test)
  --min-time  seconds of steady-state calls per figure (default 0.5; quick 0.1)
  --threads   which thread settings to measure (default both)
  --repeat N  runs per figure, the best kept (default 2; quick 1): other work
              on a shared machine only ever slows a run down (the scalar-loop
              oracle runs once)
Last line: RESULT defaults mm1024_default_1t_gflops=... ...
"""
import argparse
import atexit
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stcbench as sb  # noqa: E402

# name, kind, dims, what
KINDS = [
    ("matmul_1024", "matmul", (1024, 1024, 1024), "1024^3 matmul (issue 9)"),
    ("matmul_bert", "matmul", (128, 768, 3072), "BERT-base FFN 128x768x3072"),
    ("batch_matmul", "batch_matmul", (12, 128, 64, 128), "GPT-2 scores 12x128x64x128"),
    ("conv_nhwc", "conv", (1, 58, 58, 64, 3, 3, 64, 1), "ResNet-50 3x3 56x56x64->64"),
    ("depthwise", "depthwise", (1, 58, 58, 128, 3, 3, 1), "MobileNet dw 3x3 56x56x128"),
    ("conv_dyn", "conv_dyn", (1, 30, 30, 64, 3, 3, 64, 1), "3x3 28x28x64->64, tensor<?x?x?x?xf32>"),
    ("conv_dyn_odd", "conv_dyn", (1, 19, 17, 5, 3, 3, 7, 1),
     "3x3 17x15 5->7, tensor<?x?x?x?xf32> (every tile partial)"),
    ("conv_dyn_mid", "conv_dyn", (1, 23, 23, 12, 3, 3, 40, 1),
     "3x3 21x21 12->40, tensor<?x?x?x?xf32> (full and partial tiles)"),
    ("conv_nchw_dyn", "conv_nchw_dyn", (1, 30, 30, 64, 3, 3, 64, 1),
     "NCHW 3x3 28x28x64->64, tensor<?x?x?x?xf32>"),
    ("depthwise_dyn", "depthwise_dyn", (1, 30, 30, 256, 3, 3, 1), "dw 3x3 28x28x256, tensor<?x?x?x?xf32>"),
    ("pool_max", "pool_max", (1, 113, 113, 64, 3, 3, 2), "ResNet-50 max pool 3x3/2 ->56x56x64"),
    ("matvec", "matvec", (4096, 4096), "4096x4096 matvec"),
    ("reduction", "reduction", (1024, 4096), "row sums 1024x4096"),
    ("eltwise", "eltwise", (1024, 1024), "relu(a*b+bias) 1024x1024, 3 generics"),
    ("softmax", "softmax", (1536, 128), "softmax rows 12x128 x 128"),
]
QUICK = [
    ("q_matmul", "matmul", (128, 128, 128), "small matmul"),
    ("q_conv", "conv", (1, 18, 18, 16, 3, 3, 16, 1), "small conv"),
    ("q_eltwise", "eltwise", (256, 256), "small elementwise chain"),
    ("q_softmax", "softmax", (64, 128), "small softmax"),
]
HOT = "variants-per-hot=64 variants-per-warm=64 budget=1000"
EMPTY_PROFILE = ('stc-profile: 1\nproducer: "bench/defaults.py"\nenvironment: "cpu:bench"\n'
                 'created: "2026-01-01T00:00:00Z"\nregions: []\n')


def threads_env(t):
    return {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"} if t == "1t" else {}


def gflops(flops, run):
    st = run.steady() if run and run.rc == 0 else None
    return flops * st[0] / st[1] / 1e9 if st and st[1] > 0 else None


def openblas(tool, blas, t, min_time):
    if not blas or not tool:
        return None
    args = ([tool, "gemm"] + [str(x) for x in blas[1:]] if blas[0] == "gemm"
            else [tool, "gemv", str(blas[2]), str(blas[3])]) + [str(min_time)]
    env = dict(os.environ)
    env.update(threads_env(t))
    p = subprocess.run(args, capture_output=True, text=True, env=env)
    m = re.match(r"^(\d+) ([0-9.]+) ([0-9.]+)", p.stdout)
    return float(m.group(3)) if p.returncode == 0 and m else None


def main():
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only")
    ap.add_argument("--min-time", type=float)
    ap.add_argument("--threads", default="both", choices=["all", "1", "both"])
    ap.add_argument("--repeat", type=int)
    ap.add_argument("--keep")
    ap.add_argument("--csv")
    ap.add_argument("-h", "--help", action="store_true")
    a = ap.parse_args()
    if a.help:
        print(__doc__.strip())
        return 0
    sb.check_tools()
    kinds = QUICK if a.quick else KINDS
    if a.only:
        kinds = [k for k in kinds if re.search(a.only, k[0])]
    if not kinds:
        sb.die("no kind matches")
    min_time = a.min_time or (0.1 if a.quick else 0.5)
    a.repeat = max(1, a.repeat or (1 if a.quick else 2))
    tsets = {"all": ["all"], "1": ["1t"], "both": ["all", "1t"]}[a.threads]
    csv = a.csv or os.path.join(sb.ROOT, "bench", "results",
                                "defaults-quick.csv" if a.quick else "defaults.csv")
    work = a.keep or tempfile.mkdtemp(prefix="stc-defaults.")
    if not a.keep:
        atexit.register(shutil.rmtree, work, True)
    os.makedirs(work, exist_ok=True)
    has_dl = sb.supports_default_lowering()
    t_start = time.time()
    print("defaults: stc %s, default lowering %s, %s, %d cores, load %s, min time %.2f s, work dir %s"
          % (sb.git_head(), "fast (--default-lowering=fast)" if has_dl else
             "= scalar loops (stc-opt has no --default-lowering yet)", sb.cpu_model(),
             os.cpu_count() or 0, sb.loadavg(), min_time, work))
    empty = os.path.join(work, "empty.yaml")
    with open(empty, "w") as f:
        f.write(EMPTY_PROFILE)
    stub = sb.stub_library(work)
    obb = os.path.join(work, "openblas_bench")
    p = subprocess.run(["cc", "-O2", "-o", obb, os.path.join(sb.ROOT, "bench", "openblas_bench.c"),
                        "-ldl"], capture_output=True, text=True)
    if p.returncode != 0:
        print("warning: openblas_bench did not build: " + p.stderr.strip()[:200])
        obb = None

    print("%-13s %-3s %9s %9s %9s %-30s %9s %9s %9s %-28s %8s %8s %8s %8s %8s  %s"
          % ("kind", "thr", "default", "loops", "best", "(best variant)", "best_gen", "blas_var",
             "tuned", "(tuned pick)", "OpenBLAS", "def/loop", "def/best", "best/OB", "tuned/OB",
             "check"))
    rows, failures, result = [], 0, {}
    for name, kind, dims, what in kinds:
        k = sb.kernel_for(kind, dims)
        src = os.path.join(work, name + ".mlir")
        with open(src, "w") as f:
            f.write(sb.program(k))
        d = os.path.join(work, name)
        log = d + ".log"
        try:
            sb.build(src, d + ".default", profile=empty, default_lowering="fast", log=log)
            if has_dl:
                sb.build(src, d + ".loops", profile=empty, default_lowering="loops", log=log)
            sb.build(src, d + ".all", hot_options=HOT, default_lowering="fast", log=log)
            sb.link(d + ".all.o", d + ".forced", rt=stub, log=log)
        except sb.BuildError as e:
            print("%-13s BUILD FAILED: %s" % (name, e))
            failures += 1
            continue
        base = {"STC_BENCH_MIN_TIME": str(min_time)}
        loops_g = None
        expect = None
        notes = []
        # The scalar-loop oracle: sequential code, timed once, one thread.
        lr = sb.run((d + ".loops") if has_dl else (d + ".default"),
                    dict(base, STC_BENCH_MIN_CALLS="1", **threads_env("1t")),
                    steady=True, cache=d + ".cl")
        loops_g = gflops(k.flops, lr)
        expect = lr.values() if lr.rc == 0 else None
        if lr.rc != 0:
            notes.append("loops run failed")
        for t in tsets:
            env = dict(base, **threads_env(t))

            def checked(r, label):
                if r.rc != 0:
                    notes.append("%s failed (rc %d)" % (label, r.rc))
                elif expect is not None and not sb.same_values(r.values(), expect):
                    notes.append("%s WRONG" % label)
                return r
            def measure(exe, env_, label, cache=None):
                """The best GFLOP/s of --repeat steady runs (other load on
                the machine only ever slows a run down) and the first run."""
                first, best_ = None, None
                for _ in range(a.repeat):
                    r = checked(sb.run(exe, env_, steady=True, cache=cache), label)
                    first = first or r
                    g = gflops(k.flops, r)
                    if g and (best_ is None or g > best_):
                        best_ = g
                return best_, first
            def_g, dr = measure(d + ".default", env, "default", cache=d + ".cd")
            # Every variant, forced; k wraps to the reference at each site's count.
            var = {}
            for v in range(1, 65):
                fenv = dict(env, STC_STUB_VARIANT=str(v), STC_STUB_PUBLISH="1",
                            STC_STUB_TRACE="1", STC_BENCH_MIN_CALLS="1")
                r = sb.run(d + ".forced", fenv, steady=True)
                names = sorted({m.group(1) for m in re.finditer(r"stub: \S+ -> (\S+)", r.err)})
                if not names or names == ["reference"]:
                    break
                label = "+".join(n for n in names if n != "reference") or "reference"
                checked(r, label)
                g = gflops(k.flops, r)
                if a.repeat > 1:
                    g2, _ = measure(d + ".forced", fenv, label)
                    g = max(x for x in (g, g2, 0) if x is not None) or None
                var[label] = g
            ok = {n: g for n, g in var.items() if g}
            best = max(ok, key=ok.get) if ok else None
            gen = {n: g for n, g in ok.items() if "_blas" not in n}
            best_gen = max(gen, key=gen.get) if gen else None
            blas_v = max((g for n, g in ok.items() if "_blas" in n), default=None)
            # The first run tunes from a cold cache; repeats use its decision.
            tuned_g, tr = measure(d + ".all", dict(env, STC_TUNE_REPORT="1"), "tuned",
                                  cache=os.path.join(work, "%s.ct.%s" % (name, t)))
            picks = [r["winner"] for r in tr.reports] if tr.reports else []
            pick = "+".join(sorted(set(picks))) if picks else ("no site" if not var else "?")
            ob = max((x for x in (openblas(obb, k.blas, t, min_time) for _ in range(a.repeat)) if x),
                     default=None)
            best_g = ok.get(best) if best else None

            def ratio(x, y):
                return x / y if x and y else None
            r_dl, r_db = ratio(def_g, loops_g), ratio(def_g, best_g)
            r_bo, r_to = ratio(best_g, ob), ratio(tuned_g, ob)
            r_go = ratio(gen.get(best_gen) if best_gen else None, ob)
            check = "; ".join(sorted(set(notes))) if notes else "ok"
            print("%-13s %-3s %9s %9s %9s %-30s %9s %9s %9s %-28s %8s %8s %8s %8s %8s  %s"
                  % (name, t, sb.fmt(def_g, "%.2f"), sb.fmt(loops_g, "%.3f"), sb.fmt(best_g, "%.2f"),
                     (best or "-")[:30], sb.fmt(gen.get(best_gen) if best_gen else None, "%.2f"),
                     sb.fmt(blas_v, "%.2f"), sb.fmt(tuned_g, "%.2f"), pick[:28], sb.fmt(ob, "%.2f"),
                     sb.fmt(r_dl, "%.1fx"), sb.fmt(r_db, "%.2fx"), sb.fmt(r_bo, "%.2fx"),
                     sb.fmt(r_to, "%.2fx"), check), flush=True)
            rows.append([name, kind, "x".join(map(str, dims)), t, def_g, loops_g, best_g, best,
                         gen.get(best_gen) if best_gen else None, best_gen, blas_v, tuned_g, pick, ob,
                         r_dl, r_db, r_bo, r_go, r_to, check,
                         " ".join("%s=%.3f" % (n, g) for n, g in sorted(ok.items()))])
            if name in ("matmul_1024", "matmul_bert", "q_matmul"):
                tag = {"matmul_1024": "mm1024", "matmul_bert": "mmbert", "q_matmul": "mmq"}[name]
                sfx = "_1t" if t == "1t" else ""
                result["%s_default%s_gflops" % (tag, sfx)] = sb.fmt(def_g, "%.2f")
                result["%s_bestgen_over_openblas%s" % (tag, sfx)] = sb.fmt(r_go, "%.2f")
                result["%s_tuned_over_openblas%s" % (tag, sfx)] = sb.fmt(r_to, "%.2f")
        if any("WRONG" in n or "failed" in n for n in notes):
            failures += 1
    sb.write_csv(csv, ["kind", "op", "sizes", "threads", "default_gflops", "loops_gflops",
                       "best_gflops", "best_variant", "best_generated_gflops", "best_generated",
                       "blas_variant_gflops", "tuned_gflops", "tuned_pick", "openblas_gflops",
                       "default_over_loops", "default_over_best", "best_over_openblas",
                       "best_generated_over_openblas", "tuned_over_openblas", "check",
                       "variants_gflops"], rows)
    dl = [r[14] for r in rows if r[14]]
    db = [r[15] for r in rows if r[15]]
    print("summary: default/loops geomean %s (min %s); default/best geomean %s (min %s); "
          "%.0f s in all; CSV %s"
          % (sb.fmt(sb.geomean(dl), "%.1f"), sb.fmt(min(dl) if dl else None, "%.1f"),
             sb.fmt(sb.geomean(db), "%.2f"), sb.fmt(min(db) if db else None, "%.2f"),
             time.time() - t_start, csv))
    print("RESULT defaults " + " ".join("%s=%s" % kv for kv in result.items()) +
          " default_over_loops_geomean=%s default_over_best_geomean=%s default_lowering=%s kinds=%d"
          " load=%s failures=%d"
          % (sb.fmt(sb.geomean(dl), "%.2f"), sb.fmt(sb.geomean(db), "%.3f"),
             "fast" if has_dl else "loops", len(kinds), sb.loadavg(), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
