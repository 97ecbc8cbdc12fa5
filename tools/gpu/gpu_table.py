#!/usr/bin/env python3
"""Summarizes one tools/gpu/device-run.sh run: matmul.csv (generated
kernels and cuBLAS, tools/gpu/matmul_bench.c) and reference.csv (torch.matmul
and the autotuned Triton matmul, tools/gpu/triton_matmul.py) into one row
per shape.

usage: gpu_table.py [--full | --markdown] [--comment TEXT]... matmul.csv reference.csv

Default (the columns of bench/results/gpu-table.csv):

  m,k,n,best_default,best_default_gflops,best_schedule,best_schedule_gflops,
  cublas_gflops,triton_gflops,torch_gflops,best_of_all,best_of_all_gflops,
  best_generated_over_cublas,triton_over_cublas,pick,pick_gflops,pick_over_best

--full (bench/results/gpu-table-full.csv): m,k,n, then one GFLOP/s column
per generated variant (its label; empty where its tiles do not divide the
shape), then cublas_gflops, triton_gflops, torch_gflops, best_generated,
best_generated_gflops, best_of_all, best_of_all_gflops, pick,
pick_gflops, pick_over_best, best_generated_over_cublas,
triton_over_cublas.

--markdown: the docs/gpu.md "Measured" table of the same figures.

"default" kernels are --target=cuda's one-thread-per-element kernels
(label rows,cols/mapping), "schedule" ones --gpu-schedule's kernels (label
BMxBN/TMxTN/kBK[/shared[/splitS]]). A variant counts only with status ok
(it matched cuBLAS within 1e-3). pick is the tuner's choice at a GPU
dispatch site (label pick:<winner>, docs/gpu.md): pick_gflops is the site
called through its dispatch after tuning. "Best of all" is the best of the
generated kernels and cuBLAS: the candidates a site has. Triton, a Python
reference, is informational (its own column and its ratio to cuBLAS).
--comment lines are written first, each as "# TEXT" (CSV forms)."""
import csv
import sys


def read(matmul, reference):
    shapes, order, labels = {}, [], []

    def entry(row):
        key = (int(row["m"]), int(row["k"]), int(row["n"]))
        if key not in shapes:
            shapes[key] = {"default": [], "schedule": [], "cublas": None,
                           "triton": None, "torch": None, "pick": None, "all": {}}
            order.append(key)
        return shapes[key]

    with open(matmul) as f:
        for row in csv.DictReader(line for line in f if not line.startswith("#")):
            e = entry(row)
            if row["status"] != "ok":
                continue
            g = float(row["gflops"])
            label = row.get("block") or row.get("config") or ""
            if row["variant"] == "cublas_sgemm":
                e["cublas"] = g
            elif label.startswith("pick"):
                e["pick"] = (g, label.split(":", 1)[-1])
            else:
                e["schedule" if "/k" in label else "default"].append((g, label))
                e["all"][label] = g
                if label not in labels:
                    labels.append(label)
    if reference:
        with open(reference) as f:
            for row in csv.DictReader(line for line in f if not line.startswith("#")):
                e = entry(row)
                if row["variant"].startswith("triton"):
                    e["triton"] = float(row["gflops"])
                elif row["variant"].startswith("torch"):
                    e["torch"] = float(row["gflops"])
    return shapes, order, labels


def summary(e):
    """Best default, best schedule, best generated, best of all, ratios."""
    bd = max(e["default"]) if e["default"] else (None, "")
    bs = max(e["schedule"]) if e["schedule"] else (None, "")
    bg = max(e["default"] + e["schedule"]) if e["default"] or e["schedule"] else (None, "")
    candidates = list(e["default"] + e["schedule"])
    if e["cublas"] is not None:
        candidates.append((e["cublas"], "cublas"))
    best = max(candidates) if candidates else (None, "")
    ratio = bg[0] / e["cublas"] if bg[0] and e["cublas"] else None
    triton = e["triton"] / e["cublas"] if e["triton"] and e["cublas"] else None
    pick = e["pick"] or (None, "")
    pick_ratio = pick[0] / best[0] if pick[0] and best[0] else None
    return bd, bs, bg, best, ratio, triton, pick, pick_ratio


def fmt(x, digits=1):
    return "" if x is None else f"{x:.{digits}f}"


def main():
    args = sys.argv[1:]
    mode, comments = "summary", []
    while args and args[0].startswith("--"):
        flag = args.pop(0)
        if flag in ("--full", "--markdown"):
            mode = flag[2:]
        elif flag == "--comment" and args:
            comments.append(args.pop(0))
        else:
            sys.exit(__doc__)
    if len(args) not in (1, 2):
        sys.exit(__doc__)
    shapes, order, labels = read(args[0], args[1] if len(args) == 2 else None)
    if mode == "markdown":
        print("| M x K x N | best generated | cuBLAS | Triton | pick (winner) "
              "| pick / best of all | best generated / cuBLAS | Triton / cuBLAS |")
        print("|---|---|---|---|---|---|---|---|")
        for key in order:
            e = shapes[key]
            _, _, bg, _, ratio, triton, pick, pick_ratio = summary(e)
            m, k, n = key
            name = f"{m}^3" if m == k == n else f"{m}x{k}x{n}"
            print(f"| {name} | {fmt(bg[0], 0)} ({bg[1]}) | {fmt(e['cublas'], 0)} "
                  f"| {fmt(e['triton'], 0)} | {fmt(pick[0], 0)} ({pick[1]}) "
                  f"| {fmt(pick_ratio, 3)} | {fmt(ratio, 2)} | {fmt(triton, 2)} |")
        return
    for c in comments:
        print(f"# {c}")
    out = csv.writer(sys.stdout, lineterminator="\n")
    if mode == "full":
        out.writerow(["m", "k", "n", *labels, "cublas_gflops", "triton_gflops",
                      "torch_gflops", "best_generated", "best_generated_gflops",
                      "best_of_all", "best_of_all_gflops", "pick", "pick_gflops",
                      "pick_over_best", "best_generated_over_cublas",
                      "triton_over_cublas"])
        for key in order:
            e = shapes[key]
            _, _, bg, best, ratio, triton, pick, pick_ratio = summary(e)
            out.writerow([*key, *(fmt(e["all"].get(l)) for l in labels),
                          fmt(e["cublas"]), fmt(e["triton"]), fmt(e["torch"]),
                          bg[1], fmt(bg[0]), best[1], fmt(best[0]), pick[1],
                          fmt(pick[0]), fmt(pick_ratio, 3), fmt(ratio, 3),
                          fmt(triton, 3)])
        return
    out.writerow(["m", "k", "n", "best_default", "best_default_gflops", "best_schedule",
                  "best_schedule_gflops", "cublas_gflops", "triton_gflops", "torch_gflops",
                  "best_of_all", "best_of_all_gflops", "best_generated_over_cublas",
                  "triton_over_cublas", "pick", "pick_gflops", "pick_over_best"])
    for key in order:
        e = shapes[key]
        bd, bs, _, best, ratio, triton, pick, pick_ratio = summary(e)
        out.writerow([*key, bd[1], fmt(bd[0]), bs[1], fmt(bs[0]), fmt(e["cublas"]),
                      fmt(e["triton"]), fmt(e["torch"]), best[1], fmt(best[0]),
                      fmt(ratio, 3), fmt(triton, 3), pick[1], fmt(pick[0]),
                      fmt(pick_ratio, 3)])


if __name__ == "__main__":
    main()
