#!/usr/bin/env python3
"""An f32 Triton matmul autotuned the way its users do it (8 block configs,
IEEE f32 products: no TF32) and torch.matmul (cuBLAS, TF32 off), timed like
tools/gpu/matmul_bench.c (after 3 warm-ups, the median of 9 CUDA-event-timed
batches of back-to-back calls, each batch at least 1 ms, per call; the
host does not wait between calls) for the shapes given as MxKxN (A is MxK):
`triton_matmul.py 1024x1024x1024 128x768x3072`.
Prints CSV: m,k,n,variant,ms,gflops,max_rel_err_vs_torch. Runs on the GPU
machine (tools/gpu/device-run.sh run)."""
import sys

import torch
import triton
import triton.language as tl

CONFIGS = [
    triton.Config({"BM": 128, "BN": 128, "BK": 32, "G": 8}, num_stages=3, num_warps=8),
    triton.Config({"BM": 128, "BN": 64, "BK": 32, "G": 8}, num_stages=4, num_warps=4),
    triton.Config({"BM": 64, "BN": 128, "BK": 32, "G": 8}, num_stages=4, num_warps=4),
    triton.Config({"BM": 128, "BN": 256, "BK": 32, "G": 8}, num_stages=3, num_warps=8),
    triton.Config({"BM": 256, "BN": 128, "BK": 32, "G": 8}, num_stages=3, num_warps=8),
    triton.Config({"BM": 64, "BN": 64, "BK": 32, "G": 8}, num_stages=4, num_warps=4),
    triton.Config({"BM": 128, "BN": 32, "BK": 32, "G": 8}, num_stages=4, num_warps=4),
    triton.Config({"BM": 64, "BN": 32, "BK": 32, "G": 8}, num_stages=5, num_warps=2),
]


@triton.autotune(configs=CONFIGS, key=["M", "N", "K"])
@triton.jit
def matmul_kernel(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, G: tl.constexpr):
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BM)
    num_n = tl.cdiv(N, BN)
    group = pid // (G * num_n)
    first_m = group * G
    size_m = min(num_m - first_m, G)
    pm = first_m + (pid % size_m)
    pn = (pid % (G * num_n)) // size_m
    rm = (pm * BM + tl.arange(0, BM)) % M
    rn = (pn * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    pa = a + rm[:, None] * sam + rk[None, :] * sak
    pb = b + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        ma = tl.load(pa, mask=rk[None, :] < K - k * BK, other=0.0)
        mb = tl.load(pb, mask=rk[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(ma, mb, acc, input_precision="ieee")
        pa += BK * sak
        pb += BK * sbk
    cm = pm * BM + tl.arange(0, BM)
    cn = pn * BN + tl.arange(0, BN)
    tl.store(c + cm[:, None] * scm + cn[None, :] * scn, acc,
             mask=(cm[:, None] < M) & (cn[None, :] < N))


def matmul(a, b):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float32)
    grid = lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]),)
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0),
                        b.stride(1), c.stride(0), c.stride(1))
    return c


def timed(fn, reps=9):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def batch(calls):
        start.record()
        for _ in range(calls):
            fn()
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop) / calls

    for _ in range(3):
        fn()
    one = batch(1)
    calls = 1 if one >= 1.0 else min(256, max(1, int(1.0 / max(one, 1e-6)) + 1))
    times = sorted(batch(calls) for _ in range(reps))
    return times[len(times) // 2]


def main():
    torch.backends.cuda.matmul.allow_tf32 = False
    print("m,k,n,variant,ms,gflops,max_rel_err_vs_torch")
    for shape in sys.argv[1:] or ["1024x1024x1024", "2048x2048x2048", "4096x4096x4096"]:
        m, k, n = (int(x) for x in shape.split("x"))
        a = torch.rand(m, k, device="cuda") * 2 - 1
        b = torch.rand(k, n, device="cuda") * 2 - 1
        want = torch.matmul(a, b)
        got = matmul(a, b)  # autotunes
        err = ((got - want).abs() / (want.abs() + 1e-2 * want.abs().max())).max().item()
        flops = 2 * m * n * k
        for name, fn, e in (("torch.matmul_f32", lambda: torch.matmul(a, b), 0.0),
                            ("triton_autotuned_f32", lambda: matmul(a, b), err)):
            ms = timed(fn)
            print(f"{m},{k},{n},{name},{ms:.4f},{flops / (ms * 1e6):.1f},{e:.2e}", flush=True)


if __name__ == "__main__":
    main()
