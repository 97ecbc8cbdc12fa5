#!/usr/bin/env python3
"""Summarizes one tools/gpu/device-run.sh run: matmul.csv (generated
kernels and cuBLAS, tools/gpu/matmul_bench.c) and reference.csv (torch.matmul
and the autotuned Triton matmul, tools/gpu/triton_matmul.py) into one row
per shape:

  m,k,n,best_default,best_default_gflops,best_schedule,best_schedule_gflops,
  cublas_gflops,triton_gflops,torch_gflops,best_of_all,best_of_all_gflops,
  best_generated_over_cublas,triton_over_cublas,pick,pick_gflops,pick_over_best

"default" kernels are --target=cuda's one-thread-per-element kernels
(label rows,cols/mapping), "schedule" ones --gpu-schedule's register-tiled
kernels (label BMxBN/TMxTN/kBK). A variant counts only with status ok (it
matched cuBLAS within 1e-3). pick is the tuner's choice at a GPU dispatch
site (label pick:<winner>, docs/gpu.md): pick_gflops is the site called
through its dispatch after tuning, pick_over_best its ratio to the best of
all (generated kernels, cuBLAS and Triton).

usage: gpu_table.py matmul.csv reference.csv > table.csv"""
import csv
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    shapes = {}
    order = []

    def entry(row):
        key = (int(row["m"]), int(row["k"]), int(row["n"]))
        if key not in shapes:
            shapes[key] = {"default": [], "schedule": [], "cublas": None,
                           "triton": None, "torch": None, "pick": None}
            order.append(key)
        return shapes[key]

    with open(sys.argv[1]) as f:
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
            elif "/k" in label:
                e["schedule"].append((g, label))
            else:
                e["default"].append((g, label))
    with open(sys.argv[2]) as f:
        for row in csv.DictReader(line for line in f if not line.startswith("#")):
            e = entry(row)
            if row["variant"].startswith("triton"):
                e["triton"] = float(row["gflops"])
            elif row["variant"].startswith("torch"):
                e["torch"] = float(row["gflops"])
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["m", "k", "n", "best_default", "best_default_gflops", "best_schedule",
                  "best_schedule_gflops", "cublas_gflops", "triton_gflops", "torch_gflops",
                  "best_of_all", "best_of_all_gflops", "best_generated_over_cublas",
                  "triton_over_cublas", "pick", "pick_gflops", "pick_over_best"])

    def fmt(x, digits=1):
        return "" if x is None else f"{x:.{digits}f}"

    for key in order:
        e = shapes[key]
        bd = max(e["default"]) if e["default"] else (None, "")
        bs = max(e["schedule"]) if e["schedule"] else (None, "")
        candidates = [(g, "default " + l) for g, l in e["default"]]
        candidates += [(g, "schedule " + l) for g, l in e["schedule"]]
        for name in ("cublas", "triton"):
            if e[name] is not None:
                candidates.append((e[name], name))
        best = max(candidates) if candidates else (None, "")
        generated = max([g for g, _ in e["default"] + e["schedule"]], default=None)
        ratio = generated / e["cublas"] if generated and e["cublas"] else None
        triton = e["triton"] / e["cublas"] if e["triton"] and e["cublas"] else None
        pick = e["pick"] or (None, "")
        pick_ratio = pick[0] / best[0] if pick[0] and best[0] else None
        out.writerow([*key, bd[1], fmt(bd[0]), bs[1], fmt(bs[0]), fmt(e["cublas"]),
                      fmt(e["triton"]), fmt(e["torch"]), best[1], fmt(best[0]),
                      fmt(ratio, 3), fmt(triton, 3), pick[1], fmt(pick[0]),
                      fmt(pick_ratio, 3)])


if __name__ == "__main__":
    main()
