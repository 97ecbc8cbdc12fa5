#!/usr/bin/env python3
"""cuBLAS f32 and cuBLAS TF32 through torch (torch.backends.cuda.matmul.
allow_tf32 off / on) on the data tools/gpu/matmul_bench.c uses, for
tools/gpu/tf32-bench.sh: `tf32_reference.py 1024x1024x1024 128x768x3072`
(MxKxN, A is MxK). Each computes C + A B (torch.addmm, like the bench's
C += A B), timed like the bench (median of 20 CUDA-event-timed calls after
3 warm-ups). Prints CSV:
m,k,n,variant,ms,gflops,err_vs_f32,err_scaled_vs_f32,err_vs_f64
err_vs_f32: max |x - y| / (|y| + 0.01 max|y|) against torch f32 (the bench's
metric); err_scaled_vs_f32: max |x - y| / (|y| + mean|y|) (the runtime's
TF32 rule); err_vs_f64: the first metric against an f64 product."""
import sys

import torch


def data(m, k, n, device):
    """matmul_bench.c's A, B and initial C (row-major, index i)."""
    ia = torch.arange(m * k, device=device, dtype=torch.int64)
    ib = torch.arange(k * n, device=device, dtype=torch.int64)
    ic = torch.arange(m * n, device=device, dtype=torch.int64)
    a = (((ia * 7919 + 13) % 2003).float() / 1001.5 - 1.0).reshape(m, k)
    b = (((ib * 104729 + 7) % 1999).float() / 999.5 - 1.0).reshape(k, n)
    c = (((ic * 6007 + 5) % 1013).float() / 506.5 - 1.0).reshape(m, n)
    return a, b, c


def timed(fn, reps=20):
    for _ in range(3):
        fn()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def errors(x, y):
    d = (x.double() - y.double()).abs()
    ya = y.double().abs()
    return ((d / (ya + 0.01 * ya.max())).max().item(),
            (d / (ya + ya.mean())).max().item())


def main():
    print("m,k,n,variant,ms,gflops,err_vs_f32,err_scaled_vs_f32,err_vs_f64")
    for shape in sys.argv[1:]:
        m, k, n = (int(x) for x in shape.split("x"))
        a, b, c = data(m, k, n, "cuda")
        exact = torch.addmm(c.double(), a.double(), b.double())
        out = torch.empty_like(c)
        results = {}
        for name, tf32 in (("torch_f32", False), ("torch_tf32", True)):
            torch.backends.cuda.matmul.allow_tf32 = tf32
            results[name] = torch.addmm(c, a, b)
            ms = timed(lambda: torch.addmm(c, a, b, out=out))
            e32, s32 = errors(results[name], results["torch_f32"])
            e64, _ = errors(results[name], exact)
            print(f"{m},{k},{n},{name},{ms:.4f},{2.0 * m * n * k / (ms * 1e6):.1f},"
                  f"{e32:.3e},{s32:.3e},{e64:.3e}", flush=True)
        torch.backends.cuda.matmul.allow_tf32 = False
        del a, b, c, exact, out, results
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
