#!/usr/bin/env python3
"""Regret of first-execution tuning (issue 9, "Benchmarks that prove it").

For each workload (one f32 op from a real model, the table WORKLOADS below
and bench/workloads.md) a one-op program is generated (bench/stcbench.py),
compiled once with `stc-opt --tune-hot-paths --hot-path-options='variants-
per-hot=64 variants-per-warm=64 budget=1000'` (the op is the hot site with
EVERY built-in schedule that applies, BLAS included) into an AOT executable
whose @main calls the site once, and run:
  oracle  exhaustive: every candidate timed, in declared order, no early
          rejection, no budget, no speed-up threshold, no noise limit
          (STC_TUNE_EARLY_REJECTION=0 STC_TUNE_ORDER=declared
          STC_TUNE_SAMPLES=15 STC_TUNE_BUDGET_MS=600000 STC_TUNE_TARGET_MS=600000
          STC_TUNE_MIN_SPEEDUP=1 STC_TUNE_DUEL_PAIRS=0
          STC_TUNE_MAX_RELATIVE_MAD=1 STC_TUNE_REPORT=1, fresh STC_CACHE_DIR):
          each candidate's paired median time ratio to the reference;
          with --oracle-runs N (default 3) N such processes, the first
          exhaustive, the others confirmation runs with early rejection
          on (a candidate clearly slower than the best so far stops; the
          contenders get every sample): a candidate's oracle ratio is the
          median of its ratios over the runs. Two candidates a few percent
          apart swap places between processes on this machine (the BLAS
          and OpenMP variants' speed changes from process to process), so
          one oracle process made a pick look 1.2-1.7x off that the next
          process ranked first;
  pick    the DEFAULT policy from a cold cache (fresh STC_CACHE_DIR, only
          STC_TUNE_REPORT=1): the winner, the tune's elapsed time and trials
          (the report's 'trials:' line when the runtime prints one, else an
          estimate from the samples column, marked '~');
  noer    the same with early rejection off (STC_TUNE_EARLY_REJECTION=0):
          shows whether racing changes the pick.
  steady  the steady-state oracle: the same object linked with the
          forced-variant stand-in of forced-variants.test (STC_STUB_VARIANT=k,
          published into the slot), each variant's time per call in a loop of
          --min-time seconds after its first call: what a program runs after
          the tune, without the trial runner's scratch copies.
regret = oracle ratio of the pick / the oracle's best ratio (the reference
counts, at 1.0); st_regr = the pick's steady-state time / the fastest
variant's. 'gen>blas' marks workloads where the best generated variant
beats the vendor-BLAS variant in the oracle. Every run's printed output must
match the STC_TUNE=off run's (reference), else WRONG and exit status 1;
timings never fail the script.

usage: bench/regret.sh [--quick] [--only REGEX] [--oracle-samples N] [--oracle-runs N]
                       [--stability N] [--no-noer] [--jobs N] [--keep DIR]
                       [--csv FILE] [--pick-env NAME=VALUE]... [--list]
  --quick           4 small workloads (CI smoke test, about a minute)
  --only REGEX      workloads whose name matches
  --oracle-samples  paired samples per candidate in the oracle (default 15)
  --oracle-runs N   oracle processes per workload (default 3; quick 1)
  --stability N     cold-cache picks of the issue's two matmuls
                    (1024^3, 128x768x3072), N fresh caches each (default 5;
                    0 with --quick)
  --no-noer         skip the early-rejection-off run
  --no-steady-oracle  skip the steady-state oracle
  --min-time S      seconds of steady-state calls per variant (default 0.3; quick 0.05)
  --jobs N          parallel compiles (default 2)
  --keep DIR        keep programs, executables, build logs and each run's
                    stderr (NAME.{oracle,pick,noer,sI}.stderr: the reports) in DIR
  --csv FILE        default bench/results/regret.csv (quick: regret-quick.csv)
  --pick-env N=V    an environment variable for the pick, no-early-rejection
                    and stability runs (repeatable; e.g. STC_TUNE_DUEL_PAIRS=0
                    to compare without the final duel)
  --list            print the workload table (markdown) and exit
Tools: STC_BIN (default build/plain/bin); see bench/stcbench.py.
Last line: RESULT regret geomean=... worst=... median_tune_s=... max_tune_s=...
"""
import argparse
import atexit
import concurrent.futures
import os
import re
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stcbench as sb  # noqa: E402

# name, kind, dims, source. matmul dims M,K,N (A MxK, B KxN); batch_matmul
# B,M,K,N; conv N,H,W,C,KH,KW,F,stride with H,W of the zero-padded input
# (ResNet's "same" padding); matvec M,N (y = A x, A MxN).
WORKLOADS = [
    ("mm_1024", "matmul", (1024, 1024, 1024), "issue 9: 1024^3 square matmul"),
    ("bert_base_ffn1", "matmul", (128, 768, 3072), "BERT-base FFN in, seq 128 (issue 9)"),
    ("bert_base_ffn2", "matmul", (128, 3072, 768), "BERT-base FFN out, seq 128"),
    ("bert_base_qkvo", "matmul", (128, 768, 768), "BERT-base Q/K/V/output projection, seq 128"),
    ("gpt2_c_attn", "matmul", (128, 768, 2304), "GPT-2 small fused QKV (c_attn), seq 128"),
    ("bert_large_proj", "matmul", (384, 1024, 1024), "BERT-large Q/K/V/output projection, seq 384"),
    ("bert_large_ffn1", "matmul", (384, 1024, 4096), "BERT-large FFN in, seq 384"),
    ("bert_large_ffn2", "matmul", (384, 4096, 1024), "BERT-large FFN out, seq 384"),
    ("gpt2_decode_fc", "matmul", (1, 768, 3072), "GPT-2 small MLP c_fc, one decode token"),
    ("mlp_example_l1", "matmul", (64, 512, 384), "examples/mlp.mlir layer 1"),
    ("mnist_mlp_l1", "matmul", (256, 784, 512), "MNIST MLP 784->512, batch 256 (odd K)"),
    ("resnet50_fc", "matmul", (128, 2048, 1000), "ResNet-50 classifier 2048->1000, batch 128"),
    ("llama7b_proj", "matmul", (32, 4096, 4096), "LLaMA-7B attention projection, 32 tokens"),
    ("gpt2_scores", "batch_matmul", (12, 128, 64, 128), "GPT-2 small attention scores Q K^T, 12 heads, seq 128"),
    ("gpt2_values", "batch_matmul", (12, 128, 128, 64), "GPT-2 small attention P V, 12 heads, seq 128"),
    ("bert_large_scores", "batch_matmul", (16, 384, 64, 384), "BERT-large scores, 16 heads, seq 384"),
    ("bert_large_values", "batch_matmul", (16, 384, 384, 64), "BERT-large P V, 16 heads, seq 384"),
    ("bert_base_scores512", "batch_matmul", (12, 512, 64, 512), "BERT-base scores, 12 heads, seq 512"),
    ("bert_base_values512", "batch_matmul", (12, 512, 512, 64), "BERT-base P V, 12 heads, seq 512"),
    ("rn50_conv1", "conv", (1, 230, 230, 3, 7, 7, 64, 2), "ResNet-50 conv1 7x7/2, 3->64, 224x224"),
    ("rn50_c2_3x3", "conv", (1, 58, 58, 64, 3, 3, 64, 1), "ResNet-50 conv2_x 3x3, 56x56, 64->64"),
    ("rn50_c3_3x3", "conv", (1, 30, 30, 128, 3, 3, 128, 1), "ResNet-50 conv3_x 3x3, 28x28, 128->128"),
    ("rn50_c4_3x3", "conv", (1, 16, 16, 256, 3, 3, 256, 1), "ResNet-50 conv4_x 3x3, 14x14, 256->256"),
    ("rn50_c5_3x3", "conv", (1, 9, 9, 512, 3, 3, 512, 1), "ResNet-50 conv5_x 3x3, 7x7, 512->512"),
    ("rn50_c2_1x1_up", "conv", (1, 56, 56, 64, 1, 1, 256, 1), "ResNet-50 conv2_x 1x1 expand, 56x56, 64->256"),
    ("rn50_c2_1x1_down", "conv", (1, 56, 56, 256, 1, 1, 64, 1), "ResNet-50 conv2_x 1x1 reduce, 56x56, 256->64"),
    ("rn50_c3_1x1_down", "conv", (1, 28, 28, 512, 1, 1, 128, 1), "ResNet-50 conv3_x 1x1 reduce, 28x28, 512->128"),
    ("rn50_c4_1x1_down", "conv", (1, 14, 14, 1024, 1, 1, 256, 1), "ResNet-50 conv4_x 1x1 reduce, 14x14, 1024->256"),
    ("rn50_c5_1x1_down", "conv", (1, 7, 7, 2048, 1, 1, 512, 1), "ResNet-50 conv5_x 1x1 reduce, 7x7, 2048->512"),
    ("mv_4096", "matvec", (4096, 4096), "4096x4096 matvec (LLaMA-7B-sized projection, batch-1 decode)"),
    ("mv_gpt2_proj", "matvec", (768, 3072), "GPT-2 small MLP c_proj 3072->768, one token"),
    ("mv_gpt2_fc", "matvec", (3072, 768), "GPT-2 small MLP c_fc 768->3072, one token"),
    ("mv_rn50_fc", "matvec", (1000, 2048), "ResNet-50 classifier, batch 1"),
]
QUICK = [
    ("q_matmul", "matmul", (64, 128, 96), "small matmul (CI)"),
    ("q_batch_matmul", "batch_matmul", (2, 64, 32, 64), "small batch_matmul (CI)"),
    ("q_conv", "conv", (1, 18, 18, 16, 3, 3, 16, 1), "small conv (CI)"),
    ("q_matvec", "matvec", (512, 256), "small matvec (CI)"),
]
STABILITY = ("mm_1024", "bert_base_ffn1")
HOT = "variants-per-hot=64 variants-per-warm=64 budget=1000"


def oracle_env(samples, confirm=False):
    """The exhaustive oracle's policy; confirm: early rejection on (the
    confirmation runs: only the contenders get every sample)."""
    return {"STC_TUNE_EARLY_REJECTION": "1" if confirm else "0", "STC_TUNE_ORDER": "declared",
            "STC_TUNE_SAMPLES": str(samples), "STC_TUNE_BUDGET_MS": "600000", "STC_TUNE_TARGET_MS": "600000",
            "STC_TUNE_MIN_SPEEDUP": "1", "STC_TUNE_MAX_RELATIVE_MAD": "1",
            "STC_TUNE_DUEL_PAIRS": "0",
            "STC_TUNE_MAX_CANDIDATES": "4096", "STC_TUNE_REPORT": "1"}


def site_report(run):
    """The kernel's report (the site with the most candidates)."""
    reps = [r for r in run.reports if r["candidates"]]
    return max(reps, key=lambda r: len(r["candidates"])) if reps else None


def duel_outcome(rep):
    """What the final duel of a report decided, in a few words (None when no
    duel was held): the paired ratio, or why it kept the exploration winner."""
    notes = [c["note"] for c in (rep["candidates"] if rep else []) if "duel " in c["note"]]
    if not notes:
        return None
    m = re.search(r"(duel [^;]*?(?:wins|kept)[^;]*)", notes[0])
    return m.group(1) if m else notes[0][notes[0].index("duel "):]


def machine_busy_s():
    """CPU seconds the whole machine has been busy (/proc/stat: user, nice,
    system, irq, softirq, steal; guest time is inside user); None without
    /proc."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    return (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / os.sysconf("SC_CLK_TCK")


def run_watched(exe, env, cache):
    """sb.run, and how many CPUs other processes kept busy meanwhile (the
    machine's busy time less the run's own CPU time, per second of the run;
    10 ms ticks, so +-0.1 on a 0.1 s run). The load average says little
    about a tune of 0.1 s; this says whether the cores a parallel candidate
    needs were free while it was timed."""
    busy0 = machine_busy_s()
    run = sb.run(exe, env, cache=cache)
    busy1 = machine_busy_s()
    if busy0 is None or busy1 is None or run.wall <= 0 or run.cpu is None:
        return run, None
    return run, max(0.0, busy1 - busy0 - run.cpu) / run.wall


def cold(path):
    """A cache directory with nothing in it: a --keep directory used before
    would otherwise hand the runs its decisions (disk-cache hits, no tune)."""
    shutil.rmtree(path, ignore_errors=True)
    return path


def warnings_of(run):
    return sorted({l for l in run.err.splitlines() if "warning" in l})


def workload_table():
    out = ["| name | op | sizes | from |", "|---|---|---|---|"]
    for name, kind, dims, src in WORKLOADS:
        out.append("| %s | %s | %s | %s |" % (name, kind, "x".join(map(str, dims)), src))
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only")
    ap.add_argument("--oracle-samples", type=int, default=15)
    ap.add_argument("--oracle-runs", type=int)
    ap.add_argument("--stability", type=int)
    ap.add_argument("--no-noer", action="store_true")
    ap.add_argument("--no-steady-oracle", dest="steady_oracle", action="store_false")
    ap.add_argument("--min-time", type=float)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--keep")
    ap.add_argument("--csv")
    ap.add_argument("--pick-env", action="append", default=[])
    ap.add_argument("--list", action="store_true")
    ap.add_argument("-h", "--help", action="store_true")
    a = ap.parse_args()
    if a.help:
        print(__doc__.strip())
        return 0
    if a.list:
        print(workload_table())
        return 0
    if a.oracle_samples < 1 or a.oracle_samples % 2 == 0:
        sb.die("--oracle-samples wants an odd number >= 1")
    sb.check_tools()
    wls = QUICK if a.quick else WORKLOADS
    if a.only:
        wls = [w for w in wls if re.search(a.only, w[0])]
    if not wls:
        sb.die("no workload matches")
    pick_env = {}
    for item in a.pick_env:
        k, eq, v = item.partition("=")
        if not eq or not k:
            sb.die("--pick-env wants NAME=VALUE, got %r" % item)
        pick_env[k] = v
    stability = a.stability if a.stability is not None else (0 if a.quick else 5)
    oracle_runs = a.oracle_runs if a.oracle_runs is not None else (1 if a.quick else 3)
    if oracle_runs < 1:
        sb.die("--oracle-runs wants a number >= 1")
    a.min_time = a.min_time or (0.05 if a.quick else 0.3)
    csv = a.csv or os.path.join(sb.ROOT, "bench", "results",
                                "regret-quick.csv" if a.quick else "regret.csv")
    work = a.keep or tempfile.mkdtemp(prefix="stc-regret.")
    if not a.keep:
        atexit.register(shutil.rmtree, work, True)
    os.makedirs(work, exist_ok=True)
    lowering = "fast" if sb.supports_default_lowering() else "loops (no --default-lowering yet)"
    t_start = time.time()
    print("regret: %d workloads, stc %s, default lowering %s, %s, %d cores, load %s, %d oracle run(s), "
          "work dir %s" % (len(wls), sb.git_head(), lowering, sb.cpu_model(), os.cpu_count() or 0,
                           sb.loadavg(), oracle_runs, work))

    # 1. Compile every program (a.jobs at a time).
    def compile_one(w):
        name, kind, dims, _ = w
        src = os.path.join(work, name + ".mlir")
        with open(src, "w") as f:
            f.write(sb.program(sb.kernel_for(kind, dims)))
        try:
            return name, sb.build(src, os.path.join(work, name), hot_options=HOT,
                                  default_lowering="fast", log=os.path.join(work, name + ".log")), None
        except sb.BuildError as e:
            return name, None, str(e)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        built = {n: (cs, err) for n, cs, err in pool.map(compile_one, wls)}
    stub = sb.stub_library(work) if a.steady_oracle else None

    # 2. Run: reference, oracle, cold pick, cold pick without early rejection.
    hdr = ("%-20s %-13s %4s %-32s %7s %-32s %7s %8s %7s %-32s %4s %7s %8s %-32s %7s  %s"
           % ("workload", "op", "vars", "oracle best", "ratio", "pick (cold)", "regret",
              "tune_s", "trials", "pick (no early rej.)", "same", "blas", "gen>blas",
              "steady-state best", "st_regr", "check"))
    print(hdr)
    rows, failures = [], 0
    regrets, tunes, trials_l, noer_regrets, same, gen_beats, blas_cmp = [], [], [], [], 0, 0, 0
    steady_regrets = []
    duels_held, duels_switched = 0, 0
    for name, kind, dims, src in wls:
        cs, err = built[name]
        exe = os.path.join(work, name)
        if err:
            print("%-20s %-13s BUILD FAILED: %s" % (name, kind, err))
            failures += 1
            rows.append([name, kind, "x".join(map(str, dims))] + [None] * 16 + ["BUILD FAILED"] + [None] * 11)
            continue
        notes = []
        ref = sb.run(exe, {"STC_TUNE": "off"}, cache=cold(os.path.join(work, name + ".c0")))
        expect = ref.values()
        if ref.rc != 0 or not expect:
            notes.append("reference run failed (rc %d)" % ref.rc)
        load = sb.loadavg()  # other sessions' load skews the pick most
        orc, others_orc = run_watched(exe, oracle_env(a.oracle_samples),
                                      cold(os.path.join(work, name + ".c1")))
        pick, others_pick = run_watched(exe, dict(pick_env, STC_TUNE_REPORT="1"),
                                        cold(os.path.join(work, name + ".c2")))
        noer, others_noer = (None, None) if a.no_noer else run_watched(
            exe, dict(pick_env, STC_TUNE_REPORT="1", STC_TUNE_EARLY_REJECTION="0"),
            cold(os.path.join(work, name + ".c3")))
        confirms = [sb.run(exe, oracle_env(a.oracle_samples, confirm=True),
                           cache=cold(os.path.join(work, "%s.c1.%d" % (name, i))))
                    for i in range(1, oracle_runs)]
        for label, r in ([("reference", ref), ("oracle", orc), ("pick", pick), ("noer", noer)]
                         + [("oracle%d" % (i + 2), c) for i, c in enumerate(confirms)]):
            if r is None:
                continue
            with open(os.path.join(work, "%s.%s.stderr" % (name, label)), "w") as f:
                f.write(r.err)
            if label == "reference":
                continue
            if r.rc != 0:
                notes.append("%s run failed (rc %d)" % (label, r.rc))
            elif not sb.same_values(r.values(), expect):
                notes.append("%s WRONG output" % label)
        # The steady-state oracle: every variant forced, its time per call.
        st_times, st_regret, st_best = {}, None, None
        if stub:
            try:
                sb.link(exe + ".o", exe + ".forced", rt=stub, log=os.path.join(work, name + ".log"))
                st_times, probs = sb.forced_variant_times(exe + ".forced", min_time=a.min_time,
                                                          expect=expect)
                notes += ["steady oracle: " + p_ for p_ in probs]
            except sb.BuildError as e:
                notes.append("steady oracle: " + str(e))
        orep, prep = site_report(orc), site_report(pick)
        nrep = site_report(noer) if noer else None
        if not orep or not prep or (noer and not nrep):
            notes.append("no tuning report")
        ratios, wrong = {}, []
        nvars = 0
        per_run, run_bests = {}, []
        creps = [site_report(c) for c in confirms]
        if orep:
            nvars = len(orep["candidates"]) - 1
            for k, rep in enumerate([orep] + creps):
                if not rep:
                    notes.append("oracle run %d: no tuning report" % (k + 1))
                    continue
                mine = {}
                for c in rep["candidates"]:
                    # A confirmation run's early-rejected candidate still
                    # has the ratio of the pairs it got.
                    usable = (not c["note"].startswith("rejected")
                              or (k > 0 and c["note"].startswith("rejected early")))
                    if c.get("ratio") is not None and c.get("verified") and usable:
                        mine[c["name"]] = c["ratio"]
                    if ("wrong" in c["note"] or "mismatch" in c["note"]) and c["name"] not in wrong:
                        wrong.append(c["name"])
                for n_, r_ in mine.items():
                    per_run.setdefault(n_, []).append(r_)
                if mine:
                    run_bests.append(min(mine, key=mine.get))
            # Only what the exhaustive run measured can be the oracle's;
            # a confirmation run adds evidence, never a candidate.
            ratios = {n_: statistics.median(v) for n_, v in per_run.items()
                      if n_ in {c["name"] for c in orep["candidates"]
                                if c.get("ratio") is not None and c.get("verified")
                                and not c["note"].startswith("rejected")}}
        if wrong:
            notes.append("variants rejected as wrong: " + " ".join(wrong))
        best = min(ratios, key=ratios.get) if ratios else None
        best_r = ratios.get(best)
        if len(set(run_bests)) > 1:
            notes.append("oracle runs' bests: " + " ".join(run_bests))

        def regret_of(rep):
            if not rep or best_r is None:
                return None
            w = rep["winner"]
            return ratios[w] / best_r if w in ratios else None
        rg, nrg = regret_of(prep), regret_of(nrep)
        # The final duel (the tuner's duel_pairs): held when a note names
        # one, switched when it overturned the ratios to the reference.
        duel_notes = [c["note"] for c in (prep["candidates"] if prep else []) if "duel " in c["note"]]
        if duel_notes:
            duels_held += 1
            switched = any("had it the other way" in n_ for n_ in duel_notes)
            duels_switched += switched
            notes.append("duel%s" % (" switched" if switched else ""))
        pw = prep["winner"] if prep else None
        if st_times:
            st_best = min(st_times, key=st_times.get)
            if pw in st_times:
                st_regret = st_times[pw] / st_times[st_best]
                steady_regrets.append(st_regret)
        nw = nrep["winner"] if nrep else None
        if prep and pw not in ratios:
            notes.append("pick %s has no oracle ratio" % pw)
        tune_s = prep["elapsed_ms"] / 1000 if prep and prep["elapsed_ms"] is not None else None
        trials, est = sb.estimate_trials(prep) if prep else (None, False)
        blas = [n for n in ratios if n.endswith("_blas")]
        gen = [ratios[n] for n in ratios if n != "reference" and not n.endswith("_blas")]
        blas_r = min(ratios[n] for n in blas) if blas else None
        gen_r = min(gen) if gen else None
        gb = None
        if blas_r is not None and gen_r is not None:
            gb = gen_r < blas_r
            blas_cmp += 1
            gen_beats += gb
        if rg is not None:
            regrets.append(rg)
        if nrg is not None:
            noer_regrets.append(nrg)
        if tune_s is not None:
            tunes.append(tune_s)
        if trials is not None:
            trials_l.append(trials)
        if nrep and prep:
            same += pw == nw
        bad = [n for n in notes if "WRONG" in n or "failed" in n or "no tuning report" in n]
        failures += bool(bad)
        check = "; ".join(notes) if notes else "ok"
        if prep and prep["exhausted"]:
            check += " (budget exhausted)"
        print("%-20s %-13s %4d %-32s %7s %-32s %7s %8s %7s %-32s %4s %7s %8s %-32s %7s  %s  [load %s, others %s cpu]"
              % (name, kind, nvars, best or "-", sb.fmt(best_r), pw or "-", sb.fmt(rg), sb.fmt(tune_s),
                 ("~%d" if est else "%d") % trials if trials is not None else "-",
                 nw or "-", ("yes" if pw == nw else "NO") if nw else "-", sb.fmt(blas_r),
                 {None: "-", True: "yes", False: "no"}[gb], st_best or "-", sb.fmt(st_regret),
                 check, load, sb.fmt(others_pick, "%.2f")), flush=True)
        rows.append([name, kind, "x".join(map(str, dims)), nvars, best, best_r, pw,
                     ratios.get(pw), rg, tune_s, trials, int(est), pick.wall, nw, nrg,
                     nrep["elapsed_ms"] / 1000 if nrep and nrep["elapsed_ms"] is not None else None,
                     blas_r, gen_r, cs, check,
                     " ".join("%s=%s/%s" % (c["name"], sb.fmt(c.get("ratio")), sb.fmt(c.get("noise")))
                              for c in (orep["candidates"] if orep else [])),
                     " ".join("%s:%s" % (c["name"], c["note"].split(":")[0])
                              for c in (prep["candidates"] if prep else [])),
                     st_best, st_regret,
                     " ".join("%s=%.6g" % (n_, t_ * 1000) for n_, t_ in sorted(st_times.items())),
                     load, others_orc, others_pick, others_noer, " ".join(run_bests),
                     " ".join("%s=%s" % (n_, "/".join(sb.fmt(x) for x in v))
                              for n_, v in per_run.items() if len(v) > 1)])

    # 3. Stability: the two matmuls, N cold caches each.
    stab_fields = []
    stab = [w for w in wls if w[0] in STABILITY] if stability > 0 else []
    stab_rows = []
    for name, kind, dims, _ in stab:
        if built[name][1]:
            continue
        winners, times = [], []
        for i in range(stability):
            r = sb.run(os.path.join(work, name), dict(pick_env, STC_TUNE_REPORT="1"),
                       cache=cold(os.path.join(work, "%s.s%d" % (name, i))))
            with open(os.path.join(work, "%s.s%d.stderr" % (name, i)), "w") as f:
                f.write(r.err)
            rep = site_report(r)
            winners.append(rep["winner"] if rep else "?")
            duel = duel_outcome(rep)
            if duel:
                print("  run %d: %s" % (i + 1, duel))
            times.append(rep["elapsed_ms"] / 1000 if rep and rep["elapsed_ms"] is not None else None)
        top = max(set(winners), key=winners.count)
        print("stability %-16s winners %s  (%d/%d the same; tune_s %s)"
              % (name, " ".join(winners), winners.count(top), stability,
                 " ".join(sb.fmt(t, "%.2f") for t in times)))
        stab_fields.append("%s=%d/%d" % (name, winners.count(top), stability))
        stab_rows.append([name, " ".join(winners), winners.count(top), stability,
                          " ".join(sb.fmt(t, "%.3f") for t in times)])

    sb.write_csv(csv, ["workload", "op", "sizes", "variants", "oracle_best", "oracle_best_ratio",
                       "pick", "pick_ratio", "regret", "tune_s", "trials", "trials_estimated",
                       "pick_process_s", "pick_no_early_rejection", "regret_no_early_rejection",
                       "tune_s_no_early_rejection", "blas_ratio", "best_generated_ratio",
                       "compile_s", "check", "oracle_ratio_noise", "pick_notes",
                       "steady_best", "steady_regret", "steady_ms_per_call", "load",
                       "others_cpu_oracle", "others_cpu_pick", "others_cpu_noer",
                       "oracle_run_bests", "oracle_run_ratios"], rows)
    if stab_rows:
        sb.write_csv(csv.replace(".csv", "-stability.csv"),
                     ["workload", "winners", "same", "runs", "tune_s"], stab_rows)
    n = len(regrets)
    print("summary: %d workloads with a regret; geomean %s, worst %s; tuning time per site median %s s, "
          "max %s s; trials median %s; early rejection off: same pick %d/%d, geomean %s; "
          "a generated variant beats BLAS on %d of %d; steady-state regret geomean %s, worst %s; "
          "duels held %d (switched %d); %.0f s in all; CSV %s"
          % (n, sb.fmt(sb.geomean(regrets), "%.4f"), sb.fmt(max(regrets) if regrets else None, "%.4f"),
             sb.fmt(sb.median(tunes), "%.3f"), sb.fmt(max(tunes) if tunes else None, "%.3f"),
             sb.fmt(sb.median(trials_l), "%.0f"), same, len(noer_regrets) if not a.no_noer else 0,
             sb.fmt(sb.geomean(noer_regrets), "%.4f"), gen_beats, blas_cmp,
             sb.fmt(sb.geomean(steady_regrets), "%.4f"),
             sb.fmt(max(steady_regrets) if steady_regrets else None, "%.4f"), duels_held, duels_switched,
             time.time() - t_start, csv))
    print("RESULT regret geomean=%s worst=%s median_tune_s=%s max_tune_s=%s median_trials=%s "
          "workloads=%d noer_same_pick=%d/%d noer_geomean=%s gen_beats_blas=%d/%d steady_geomean=%s "
          "steady_worst=%s %sduels=%d/%d default_lowering=%s oracle_runs=%d load=%s failures=%d"
          % (sb.fmt(sb.geomean(regrets), "%.4f"), sb.fmt(max(regrets) if regrets else None, "%.4f"),
             sb.fmt(sb.median(tunes), "%.3f"), sb.fmt(max(tunes) if tunes else None, "%.3f"),
             sb.fmt(sb.median(trials_l), "%.0f"), n, same,
             0 if a.no_noer else len([w for w in rows if w[13]]),
             sb.fmt(sb.geomean(noer_regrets), "%.4f"), gen_beats, blas_cmp,
             sb.fmt(sb.geomean(steady_regrets), "%.4f"),
             sb.fmt(max(steady_regrets) if steady_regrets else None, "%.4f"),
             "".join("stable_%s " % f for f in stab_fields),
             duels_switched, duels_held,
             "fast" if sb.supports_default_lowering() else "loops", oracle_runs, sb.loadavg(), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
