"""Shared helpers of bench/regret.py, bench/defaults.py and bench/e2e.py.

In:  nothing at import. The functions below generate one-op MLIR programs on
     tensors, build them ahead of time (the steps of test/e2e/aot-build.sh:
     stc-opt --tune-hot-paths --emit=obj, objcopy, cc with libstc_rt), run
     them, and parse the runtime's STC_TUNE_REPORT=1 tables.
Out: Python values; nothing printed except by the callers.

A generated program's @main builds deterministic inputs, calls @kernel ONCE
(the site's first call: on a cold cache that is the tune) and prints the
first few output values. With STC_BENCH_STEADY set it then calls @kernel
again in a loop until STC_BENCH_MIN_TIME seconds (default 0.5) and
STC_BENCH_MIN_CALLS calls (default 3) have passed, and prints a last line
"calls, seconds" (the steady state: the first call, which tunes, is
excluded). add_steady_loop() adds the same loop to an example's @main. The
helpers (stc_bench_steady, ...) come from the generated C main, MAIN_C.

Tools: stc-opt from STC_BIN (default build/plain/bin, else build/bench/bin),
cc, objcopy; LLVM libraries from STC_LLVM_LIB (default /usr/lib/llvm-22/lib).
"""
import math
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LLVM_LIB = os.environ.get("STC_LLVM_LIB", "/usr/lib/llvm-22/lib")
LLVM_BIN = os.environ.get("STC_LLVM_BIN", "/usr/lib/llvm-22/bin")


def stc_bin():
    if os.environ.get("STC_BIN"):
        return os.environ["STC_BIN"]
    for d in ("build/plain/bin", "build/bench/bin"):
        p = os.path.join(ROOT, d)
        if os.path.exists(os.path.join(p, "stc-opt")):
            return p
    return os.path.join(ROOT, "build/plain/bin")


def tool(name):
    return os.path.join(stc_bin(), name)


def rt_library():
    """The runtime AOT executables link: the static one (what
    test/e2e/aot-build.sh links by default), else libstc_rt.so."""
    lib = os.path.normpath(os.path.join(stc_bin(), "..", "lib"))
    for name in ("libstc_rt_static.a", "libstc_rt.a", "libstc_rt.so"):
        if os.path.exists(os.path.join(lib, name)):
            return os.path.join(lib, name)
    return os.path.join(lib, "libstc_rt.so")


def static_yaml():
    """libyaml's static archive where the system has one, else -lyaml."""
    p = subprocess.run(["cc", "-print-file-name=libyaml.a"], capture_output=True,
                       text=True).stdout.strip()
    return p if os.path.isabs(p) and os.path.exists(p) else "-lyaml"


def die(msg):
    print("error: " + msg, file=sys.stderr)
    sys.exit(1)


def check_tools():
    for t in ("stc-opt",):
        if not os.access(tool(t), os.X_OK):
            die("no %s in %s (build stc first, or set STC_BIN)" % (t, stc_bin()))
    if not os.path.exists(rt_library()):
        die("no runtime library %s" % rt_library())
    for t in ("cc", "objcopy"):
        if not shutil.which(t):
            die("%s is not on PATH" % t)


_support = {}


def supports_default_lowering():
    """True when stc-opt knows --default-lowering=fast|loops (the fast
    default lowering of issue 9); before it landed, the default lowering
    IS the scalar loops."""
    if "dl" not in _support:
        out = subprocess.run([tool("stc-opt"), "--help"], capture_output=True, text=True)
        _support["dl"] = "default-lowering" in (out.stdout + out.stderr)
    return _support["dl"]


def git_head():
    try:
        return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True).stdout.strip()
    except OSError:
        return "?"


def loadavg():
    """The 1-minute load average (other work on a shared machine skews every
    timing: the scripts print it at the start and the end)."""
    try:
        with open("/proc/loadavg") as f:
            return f.read().split()[0]
    except OSError:
        return "?"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "?"


# ---- program generation ---------------------------------------------------

def ttype(shape):
    return "tensor<%sxf32>" % "x".join(str(d) for d in shape) if shape else "tensor<f32>"


def _idmap(rank):
    dims = ", ".join("d%d" % i for i in range(rank))
    return "affine_map<(%s) -> (%s)>" % (dims, dims)


def gen_input(name, shape, seed, scale, indent="  "):
    """Lines defining %name : shape, t[l] = scale * sin((131 l + seed) mod
    1009) with l the row-major linear index (a non-tunable linalg.generic)."""
    r = len(shape)
    p = "%" + name
    lines = ["%s%s_e = tensor.empty() : %s" % (indent, p, ttype(shape)),
             "%s%s = linalg.generic {indexing_maps = [%s], iterator_types = [%s]}"
             % (indent, p, _idmap(r), ", ".join(['"parallel"'] * r)),
             "%s    outs(%s_e : %s) {" % (indent, p, ttype(shape)),
             "%s^bb0(%%o: f32):" % indent]
    for i in range(r):
        lines.append("%s  %%i%d = linalg.index %d : index" % (indent, i, i))
    lines.append("%s  %%l0 = arith.constant 0 : index" % indent)
    for i in range(r):
        lines.append("%s  %%d%d = arith.constant %d : index" % (indent, i, shape[i]))
        lines.append("%s  %%m%d = arith.muli %%l%d, %%d%d : index" % (indent, i, i, i))
        lines.append("%s  %%l%d = arith.addi %%m%d, %%i%d : index" % (indent, i + 1, i, i))
    lines += ["%s  %%c131 = arith.constant 131 : index" % indent,
              "%s  %%cs = arith.constant %d : index" % (indent, seed),
              "%s  %%c1009 = arith.constant 1009 : index" % indent,
              "%s  %%h1 = arith.muli %%l%d, %%c131 : index" % (indent, r),
              "%s  %%h2 = arith.addi %%h1, %%cs : index" % indent,
              "%s  %%h3 = arith.remui %%h2, %%c1009 : index" % indent,
              "%s  %%hi = arith.index_cast %%h3 : index to i64" % indent,
              "%s  %%hf = arith.uitofp %%hi : i64 to f32" % indent,
              "%s  %%sn = math.sin %%hf : f32" % indent,
              "%s  %%k = arith.constant %s : f32" % (indent, _f32(scale)),
              "%s  %%v = arith.mulf %%sn, %%k : f32" % indent,
              "%s  linalg.yield %%v : f32" % indent,
              "%s} -> %s" % (indent, ttype(shape))]
    return lines


def _f32(x):
    return "%.8e" % x


def conv_out(h, k, s):
    return (h - k) // s + 1


class Kernel:
    """One @kernel function: args (name, shape, scale), result shape, body
    lines, flops per call, and the shapes for OpenBLAS (or None)."""

    def __init__(self, args, result, body, flops, blas=None, dynamic=False):
        self.args, self.result, self.body, self.flops, self.blas = args, result, body, flops, blas
        # dynamic: @kernel takes and returns tensors of dynamic sizes
        # (tensor<?x...xf32>); @main casts its static tensors to them.
        self.dynamic = dynamic


def dtype(shape):
    """The type of a tensor of shape's rank with every size dynamic."""
    return "tensor<%sxf32>" % "x".join("?" for _ in shape)


def _fill(name, shape, value):
    return ["  %%%s_e = tensor.empty() : %s" % (name, ttype(shape)),
            "  %%%s_v = arith.constant %s : f32" % (name, value),
            "  %%%s = linalg.fill ins(%%%s_v : f32) outs(%%%s_e : %s) -> %s"
            % (name, name, name, ttype(shape), ttype(shape))]


def kernel_for(kind, dims):
    """kind, dims -> Kernel. Kinds: matmul (M,K,N), batch_matmul (B,M,K,N),
    conv (N,H,W,C,KH,KW,F,stride; H,W of the padded input),
    depthwise (N,H,W,C,KH,KW,stride), pool_max (N,H,W,C,KH,KW,stride),
    matvec (M,N), reduction (M,N: row sums), eltwise (M,N: relu(a*b+bias),
    three generics), softmax (R,N: rows of N)."""
    if kind == "matmul":
        m, k, n = dims
        a, b, c = (m, k), (k, n), (m, n)
        body = _fill("c", c, "0.0") + [
            "  %%r = linalg.matmul ins(%%a, %%b : %s, %s) outs(%%c : %s) -> %s"
            % (ttype(a), ttype(b), ttype(c), ttype(c))]
        return Kernel([("a", a, 1 / math.sqrt(k)), ("b", b, 1.0)], c, body,
                      2 * m * n * k, ("gemm", 1, m, k, n))
    if kind == "batch_matmul":
        bt, m, k, n = dims
        a, b, c = (bt, m, k), (bt, k, n), (bt, m, n)
        body = _fill("c", c, "0.0") + [
            "  %%r = linalg.batch_matmul ins(%%a, %%b : %s, %s) outs(%%c : %s) -> %s"
            % (ttype(a), ttype(b), ttype(c), ttype(c))]
        return Kernel([("a", a, 1 / math.sqrt(k)), ("b", b, 1.0)], c, body,
                      2 * bt * m * n * k, ("gemm", bt, m, k, n))
    if kind == "conv_nchw_dyn":
        # conv_dyn's convolution in NCHW / FCHW layout.
        nb, h, w, ci, kh, kw, f, s = dims
        oh, ow = conv_out(h, kh, s), conv_out(w, kw, s)
        inp, filt, out = (nb, ci, h, w), (f, ci, kh, kw), (nb, f, oh, ow)
        attrs = ("{dilations = dense<1> : tensor<2xi64>, strides = dense<%d> : tensor<2xi64>}" % s)
        body = ["  %%r = linalg.conv_2d_nchw_fchw %s ins(%%a, %%b : %s, %s) outs(%%c : %s) -> %s"
                % (attrs, dtype(inp), dtype(filt), dtype(out), dtype(out))]
        return Kernel([("a", inp, 1.0), ("b", filt, 1 / math.sqrt(kh * kw * ci)), ("c", out, 0.0)],
                      out, body, 2 * nb * oh * ow * f * kh * kw * ci, None, dynamic=True)
    if kind in ("conv_dyn", "depthwise_dyn"):
        # The same convolutions on tensor<?x?x?x?xf32>: the output (zeros
        # would do as well) is an argument, its sizes being dynamic.
        static = kernel_for(kind[:-4], dims)
        inp, filt, out = static.args[0][1], static.args[1][1], static.result
        op = ("linalg.conv_2d_nhwc_hwcf" if kind == "conv_dyn"
              else "linalg.depthwise_conv_2d_nhwc_hwc")
        s = dims[-1]
        attrs = ("{dilations = dense<1> : tensor<2xi64>, strides = dense<%d> : tensor<2xi64>}" % s)
        body = ["  %%r = %s %s ins(%%a, %%b : %s, %s) outs(%%c : %s) -> %s"
                % (op, attrs, dtype(inp), dtype(filt), dtype(out), dtype(out))]
        return Kernel(static.args + [("c", out, 0.0)], out, body, static.flops, None,
                      dynamic=True)
    if kind in ("conv", "depthwise", "pool_max"):
        if kind == "conv":
            nb, h, w, ci, kh, kw, f, s = dims
        else:
            nb, h, w, ci, kh, kw, s = dims
            f = ci
        oh, ow = conv_out(h, kh, s), conv_out(w, kw, s)
        inp, out = (nb, h, w, ci), (nb, oh, ow, f)
        attrs = ("{dilations = dense<1> : tensor<2xi64>, strides = dense<%d> : tensor<2xi64>}" % s)
        if kind == "conv":
            filt = (kh, kw, ci, f)
            op = "linalg.conv_2d_nhwc_hwcf"
            flops = 2 * nb * oh * ow * f * kh * kw * ci
            args = [("a", inp, 1.0), ("b", filt, 1 / math.sqrt(kh * kw * ci))]
            body = _fill("c", out, "0.0")
        elif kind == "depthwise":
            filt = (kh, kw, ci)
            op = "linalg.depthwise_conv_2d_nhwc_hwc"
            flops = 2 * nb * oh * ow * ci * kh * kw
            args = [("a", inp, 1.0), ("b", filt, 1 / math.sqrt(kh * kw))]
            body = _fill("c", out, "0.0")
        else:
            filt = (kh, kw)
            op = "linalg.pooling_nhwc_max"
            flops = nb * oh * ow * ci * kh * kw
            args = [("a", inp, 1.0)]
            body = _fill("c", out, "-3.40282347e+38") + [
                "  %%b = tensor.empty() : %s" % ttype(filt)]
        body.append("  %%r = %s %s ins(%%a, %%b : %s, %s) outs(%%c : %s) -> %s"
                    % (op, attrs, ttype(inp), ttype(filt), ttype(out), ttype(out)))
        return Kernel(args, out, body, flops, None)
    if kind == "matvec":
        m, n = dims
        body = _fill("c", (m,), "0.0") + [
            "  %%r = linalg.matvec ins(%%a, %%b : %s, %s) outs(%%c : %s) -> %s"
            % (ttype((m, n)), ttype((n,)), ttype((m,)), ttype((m,)))]
        return Kernel([("a", (m, n), 1 / math.sqrt(n)), ("b", (n,), 1.0)], (m,), body,
                      2 * m * n, ("gemv", 1, m, n, 1))
    if kind == "reduction":
        m, n = dims
        body = _fill("c", (m,), "0.0") + [
            "  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, "
            "affine_map<(i, j) -> (i)>], iterator_types = [\"parallel\", \"reduction\"]}",
            "      ins(%%a : %s) outs(%%c : %s) {" % (ttype((m, n)), ttype((m,))),
            "  ^bb0(%v: f32, %s: f32):",
            "    %x = arith.addf %v, %s : f32",
            "    linalg.yield %x : f32",
            "  } -> %s" % ttype((m,))]
        return Kernel([("a", (m, n), 1.0)], (m,), body, m * n, None)
    if kind == "eltwise":
        m, n = dims
        t = ttype((m, n))
        id2, row = "affine_map<(i, j) -> (i, j)>", "affine_map<(i, j) -> (j)>"
        par = '["parallel", "parallel"]'
        body = ["  %%e = tensor.empty() : %s" % t,
                "  %%p = linalg.generic {indexing_maps = [%s, %s, %s], iterator_types = %s}" % (id2, id2, id2, par),
                "      ins(%%a, %%b : %s, %s) outs(%%e : %s) {" % (t, t, t),
                "  ^bb0(%x: f32, %y: f32, %o: f32):",
                "    %z = arith.mulf %x, %y : f32", "    linalg.yield %z : f32", "  } -> %s" % t,
                "  %%q = linalg.generic {indexing_maps = [%s, %s, %s], iterator_types = %s}" % (id2, row, id2, par),
                "      ins(%%p, %%bias : %s, %s) outs(%%e : %s) {" % (t, ttype((n,)), t),
                "  ^bb0(%x: f32, %y: f32, %o: f32):",
                "    %z = arith.addf %x, %y : f32", "    linalg.yield %z : f32", "  } -> %s" % t,
                "  %%r = linalg.generic {indexing_maps = [%s, %s], iterator_types = %s}" % (id2, id2, par),
                "      ins(%%q : %s) outs(%%e : %s) {" % (t, t),
                "  ^bb0(%x: f32, %o: f32):",
                "    %zero = arith.constant 0.0 : f32",
                "    %z = arith.maximumf %x, %zero : f32", "    linalg.yield %z : f32", "  } -> %s" % t]
        return Kernel([("a", (m, n), 1.0), ("b", (m, n), 1.0), ("bias", (n,), 0.1)],
                      (m, n), body, 3 * m * n, None)
    if kind == "softmax":
        rws, n = dims
        t, tr = ttype((rws, n)), ttype((rws,))
        id2, red = "affine_map<(i, j) -> (i, j)>", "affine_map<(i, j) -> (i)>"
        body = _fill("mi", (rws,), "0xFF800000") + _fill("si", (rws,), "0.0") + [
            "  %%mx = linalg.generic {indexing_maps = [%s, %s], iterator_types = [\"parallel\", \"reduction\"]}" % (id2, red),
            "      ins(%%a : %s) outs(%%mi : %s) {" % (t, tr),
            "  ^bb0(%v: f32, %m: f32):", "    %x = arith.maximumf %v, %m : f32",
            "    linalg.yield %x : f32", "  } -> %s" % tr,
            "  %%e = tensor.empty() : %s" % t,
            "  %%ex = linalg.generic {indexing_maps = [%s, %s, %s], iterator_types = [\"parallel\", \"parallel\"]}" % (id2, red, id2),
            "      ins(%%a, %%mx : %s, %s) outs(%%e : %s) {" % (t, tr, t),
            "  ^bb0(%v: f32, %m: f32, %o: f32):", "    %d = arith.subf %v, %m : f32",
            "    %x = math.exp %d : f32", "    linalg.yield %x : f32", "  } -> %s" % t,
            "  %%sm = linalg.generic {indexing_maps = [%s, %s], iterator_types = [\"parallel\", \"reduction\"]}" % (id2, red),
            "      ins(%%ex : %s) outs(%%si : %s) {" % (t, tr),
            "  ^bb0(%v: f32, %s: f32):", "    %x = arith.addf %v, %s : f32",
            "    linalg.yield %x : f32", "  } -> %s" % tr,
            "  %%r = linalg.generic {indexing_maps = [%s, %s, %s], iterator_types = [\"parallel\", \"parallel\"]}" % (id2, red, id2),
            "      ins(%%ex, %%sm : %s, %s) outs(%%e : %s) {" % (t, tr, t),
            "  ^bb0(%v: f32, %s: f32, %o: f32):", "    %x = arith.divf %v, %s : f32",
            "    linalg.yield %x : f32", "  } -> %s" % t]
        # max, sub, exp, add, div: 5 operations per element
        return Kernel([("a", (rws, n), 4.0)], (rws, n), body, 5 * rws * n, None)
    raise ValueError("unknown kind " + kind)


STEADY_DECLS = """func.func private @printMemrefF32(tensor<*xf32>)
func.func private @rtclock() -> f64
func.func private @printI64(i64)
func.func private @printF64(f64)
func.func private @printComma()
func.func private @printNewline()
func.func private @stc_bench_min_time() -> f64
func.func private @stc_bench_min_calls() -> i64
func.func private @stc_bench_steady() -> i1
"""


def steady_loop(call_lines):
    """Lines of the timing loop (inside a function body): call_lines (the
    calls to repeat, with fresh result names) until stc_bench_min_time()
    seconds and stc_bench_min_calls() calls have passed; prints "calls,
    seconds"."""
    out = ["  %__c0 = arith.constant 0 : index",
           "  %__c1 = arith.constant 1 : index",
           "  %__mc = func.call @stc_bench_min_calls() : () -> i64",
           "  %__c3 = arith.index_cast %__mc : i64 to index",
           "  %__f0 = arith.constant 0.0 : f64",
           "  %__min = func.call @stc_bench_min_time() : () -> f64",
           "  %__t0 = func.call @rtclock() : () -> f64",
           "  %__r:2 = scf.while (%__k = %__c0, %__el = %__f0) : (index, f64) -> (index, f64) {",
           "    %__lt = arith.cmpf olt, %__el, %__min : f64",
           "    %__few = arith.cmpi ult, %__k, %__c3 : index",
           "    %__go = arith.ori %__lt, %__few : i1",
           "    scf.condition(%__go) %__k, %__el : index, f64",
           "  } do {",
           "  ^bb0(%__k: index, %__el: f64):"]
    out += ["  " + line for line in call_lines]
    out += ["    %__t1 = func.call @rtclock() : () -> f64",
            "    %__e = arith.subf %__t1, %__t0 : f64",
            "    %__k1 = arith.addi %__k, %__c1 : index",
            "    scf.yield %__k1, %__e : index, f64",
            "  }",
            "  %__n = arith.index_cast %__r#0 : index to i64",
            "  func.call @printI64(%__n) : (i64) -> ()",
            "  func.call @printComma() : () -> ()",
            "  func.call @printF64(%__r#1) : (f64) -> ()",
            "  func.call @printNewline() : () -> ()"]
    return out


def steady_block(call_lines):
    """steady_loop() under `scf.if stc_bench_steady()`: the loop runs only
    when STC_BENCH_STEADY is set, so one executable gives both the
    whole-process time (unset) and the steady state (set)."""
    return (["  %__steady = func.call @stc_bench_steady() : () -> i1",
             "  scf.if %__steady {"] + ["  " + l for l in steady_loop(call_lines)] + ["  }"])


def program(kernel):
    """MLIR text of a one-kernel program (see the module comment)."""
    k = kernel
    atype = dtype if k.dynamic else ttype
    sig = ", ".join("%%%s: %s" % (n, atype(s)) for n, s, _ in k.args)
    lines = [STEADY_DECLS,
             "func.func @kernel(%s) -> %s {" % (sig, atype(k.result))]
    lines += k.body
    lines += ["  return %%r : %s" % atype(k.result), "}", ""]
    types = ", ".join(atype(s) for _, s, _ in k.args)
    names = ", ".join("%" + n + ("_d" if k.dynamic else "") for n, _, _ in k.args)
    call = "%%y = func.call @kernel(%s) : (%s) -> %s" % (names, types, atype(k.result))
    rank = len(k.result)
    cnt = min(8, k.result[-1])
    sl = [1] * (rank - 1) + [cnt]
    lines.append("func.func @main() {")
    for i, (n, s, scale) in enumerate(k.args):
        lines += gen_input(n, s, 101 * i + 7, scale)
        if k.dynamic:
            lines.append("  %%%s_d = tensor.cast %%%s : %s to %s" % (n, n, ttype(s), dtype(s)))
    lines.append("  " + call)
    lines += ["  %%sl = tensor.extract_slice %%y[%s] [%s] [%s] : %s to %s"
              % (", ".join(["0"] * rank), ", ".join(map(str, sl)), ", ".join(["1"] * rank),
                 atype(k.result), ttype(sl)),
              "  %%u = tensor.cast %%sl : %s to tensor<*xf32>" % ttype(sl),
              "  func.call @printMemrefF32(%u) : (tensor<*xf32>) -> ()"]
    lines += steady_block([call.replace("%y =", "%__y =")])
    lines += ["  return", "}", ""]
    return "\n".join(lines)


def add_steady_loop(text):
    """An example program (examples/*.mlir) -> the same program whose @main
    ends with the timing loop (steady_block) over @main's calls of the
    file's public functions (the models), and the declarations the loop
    needs. Returns (text, names of the looped functions)."""
    public = [n for n in re.findall(r"^func\.func @(\w+)\(", text, re.M) if n != "main"]
    lines = text.split("\n")
    try:
        start = lines.index(next(l for l in lines if l.startswith("func.func @main()")))
    except StopIteration:
        raise ValueError("no func.func @main()")
    end = next(i for i in range(start, len(lines)) if lines[i] == "}")
    calls, looped, i = [], [], start + 1
    call_re = re.compile(r"^  (%[\w]+)?(:\d+)?\s*=?\s*(?:func\.)?call @(\w+)\(")
    while i < end:
        m = call_re.match(lines[i])
        if m and m.group(3) in public:
            stmt = [lines[i]]
            while i + 1 < end and lines[i + 1].startswith("    "):
                i += 1
                stmt.append(lines[i])
            text1 = "\n".join(stmt)
            if m.group(1):
                text1 = text1.replace(m.group(1), "%__m" + str(len(calls)), 1)
            # Inside scf regions the short form `call` does not resolve.
            text1 = re.sub(r"(=\s*|^\s*)call @", r"\1func.call @", text1, count=1)
            calls.append(text1.strip())
            looped.append(m.group(3))
        i += 1
    if not calls:
        raise ValueError("@main calls no public function")
    ret = max(j for j in range(start, end) if lines[j].strip() == "return")
    new = lines[:ret] + steady_block(calls) + lines[ret:]
    decls = [d for d in STEADY_DECLS.strip().split("\n")
             if "@" + d.split("@")[1].split("(")[0] + "(" not in text]
    first = next(j for j, l in enumerate(new) if l.startswith("func.func"))
    return "\n".join(new[:first] + decls + new[first:]), looped


MAIN_C = r"""/* Generated by bench/stcbench.py: runs the model's @main once; its
 * timing loop runs when STC_BENCH_STEADY is set. With STC_BENCH_ENTRY set
 * it prints the wall time of that @main call (the model and the runtime's
 * whole per-process work, not the process's start and exit) to stderr:
 * "stc-bench-entry-us N". */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
extern void __stc_aot_entry(void);
static double stc_bench_now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}
bool stc_bench_steady(void) { return getenv("STC_BENCH_STEADY") != NULL; }
double stc_bench_min_time(void) {
  const char *s = getenv("STC_BENCH_MIN_TIME");
  return s && *s ? atof(s) : 0.5;
}
long long stc_bench_min_calls(void) {
  const char *s = getenv("STC_BENCH_MIN_CALLS");
  return s && *s ? atoll(s) : 3;
}
int main(void) {
  double t0 = stc_bench_now_us();
  __stc_aot_entry();
  double t1 = stc_bench_now_us();
  if (getenv("STC_BENCH_ENTRY"))
    fprintf(stderr, "stc-bench-entry-us %.1f\n", t1 - t0);
  return 0;
}
"""


class BuildError(Exception):
    pass


def build(mlir, exe, hot_options=None, default_lowering=None, profile=None,
          pre_pipeline=None, log=None, rt=None):
    """mlir file -> AOT executable (exe, exe.o, exe.main.c). hot_options:
    --hot-path-options text; default_lowering: fast|loops (passed only when
    stc-opt supports it); profile: --hot-path-profile; pre_pipeline: an
    stc-opt --pass-pipeline run first (e.g. a restricted stc-multi-variant).
    rt: the library providing stc_rt_site_enter (default libstc_rt.so; see
    link()). Returns compile seconds (stc-opt only). Raises BuildError."""
    src = mlir
    t0 = time.time()
    if pre_pipeline:
        src = exe + ".pre.mlir"
        _run_checked([tool("stc-opt"), "--pass-pipeline=" + pre_pipeline, mlir, "-o", src], log)
    cmd = [tool("stc-opt"), "--tune-hot-paths", "--emit=obj"]
    if hot_options:
        cmd.append("--hot-path-options=" + hot_options)
    if profile:
        cmd.append("--hot-path-profile=" + profile)
    if default_lowering and supports_default_lowering():
        cmd.append("--default-lowering=" + default_lowering)
    cmd += [src, "-o", exe + ".o"]
    _run_checked(cmd, log)
    compile_s = time.time() - t0
    _run_checked(["objcopy", "--redefine-sym", "main=__stc_aot_entry", exe + ".o"], log)
    link(exe + ".o", exe, rt, log)
    return compile_s


def link(obj, exe, rt=None, log=None):
    """Links an object from build() (entry already renamed) with rt (default
    rt_library(): the static runtime; libstc_rt.so; stub_library() forces
    variants) into exe, as test/e2e/aot-build.sh does."""
    with open(exe + ".main.c", "w") as f:
        f.write(MAIN_C)
    rt = rt or rt_library()
    rt_dir = os.path.dirname(os.path.abspath(rt))
    # The start-up stub beside the runtime (runtime/aot_boot.c, aot_omp.c:
    # loads libomp, and ahead of libstc_rt.so libstc_rt, on first use);
    # after a static runtime only its libomp half is taken. Not with another
    # runtime.
    stub = os.path.join(rt_dir, "libstc_rt_aot.a")
    stub = [stub] if os.path.exists(stub) else []
    boot, libs = [], [rt]
    if os.path.basename(rt) == "libstc_rt.so":
        boot = stub
    elif rt.endswith(".a"):
        libs = [rt, os.path.join(rt_dir, "libstc_core.a"), static_yaml()] + stub
    # A RUNPATH only where a library the executable needs lives (the
    # loader probes each RUNPATH directory for libm and libc at every
    # start): none with the static runtime and stc's runner utilities, as
    # in test/e2e/aot-build.sh (the stub finds libomp itself).
    rpath = ["-Wl,-rpath," + rt_dir, "-Wl,-rpath," + LLVM_LIB]
    if rt.endswith(".a") and os.environ.get("STC_BENCH_UPSTREAM_RUNNER_UTILS") != "1":
        rpath = []
    # The order of test/e2e/aot-build.sh (docs/aot.md, "Start-up cost").
    _run_checked(["cc", "-O1", "-o", exe, exe + ".main.c", obj] + runner_utils(rt_dir) +
                 ["-Wl,--no-as-needed", "-lm", "-lc", "-Wl,--as-needed"] + boot + libs +
                 ["-lomp", "-ldl", "-Wl,--no-as-needed", "-lpthread"] + rpath, log)


def runner_utils(rt_dir):
    """What AOT executables print with (printMemrefF32, vector.print's
    printF32, rtclock): libstc_runner_utils.a beside the runtime or in
    stc's lib/ (runtime/runner_utils.c, libc only), as test/e2e/aot-build.sh
    links; with STC_BENCH_UPSTREAM_RUNNER_UTILS=1 MLIR's shared ones, which
    load libMLIR and libLLVM (docs/aot.md, "Start-up cost")."""
    if os.environ.get("STC_BENCH_UPSTREAM_RUNNER_UTILS") == "1":
        return ["-Wl,--as-needed", "-L" + LLVM_LIB, "-lmlir_c_runner_utils",
                "-lmlir_runner_utils", "-lmlir_float16_utils"]
    for d in (rt_dir, os.path.join(stc_bin(), "..", "lib")):
        a = os.path.normpath(os.path.join(d, "libstc_runner_utils.a"))
        if os.path.exists(a):
            return [a]
    raise BuildError("no libstc_runner_utils.a beside %s or in %s/../lib" % (rt_dir, stc_bin()))


def stub_library(out_dir):
    """Builds test/tune-hot-paths/Inputs/site_enter_stub.c (with the real
    vendor-BLAS entry points, runtime/blas.c) into out_dir/libstcstub.so: a
    stand-in stc_rt_site_enter that runs variant STC_STUB_VARIANT=k of
    every site (STC_STUB_PUBLISH=1: and publishes it into the slot, so later
    calls take the fast path; STC_STUB_TRACE=1: prints 'stub: SITE ->
    NAME'). The way forced-variants.test runs every variant. It stands in
    for libstc_rt, so it defines memrefCopy too (runtime/memref_copy.c: a
    strided copy, e.g. in the convolutions' variants; the runner utilities
    AOT executables link no longer do)."""
    so = os.path.join(out_dir, "libstcstub.so")
    _run_checked(["cc", "-O2", "-shared", "-fPIC", "-I" + os.path.join(ROOT, "include"),
                  os.path.join(ROOT, "test/tune-hot-paths/Inputs/site_enter_stub.c"),
                  os.path.join(ROOT, "runtime/blas.c"),
                  os.path.join(ROOT, "runtime/library_lookup.c"),
                  os.path.join(ROOT, "runtime/memref_copy.c"), "-ldl", "-o", so], None)
    return so


def _run_checked(cmd, log):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if log:
        with open(log, "a") as f:
            f.write("$ " + " ".join(cmd) + "\n" + p.stdout[-4000:] + p.stderr[-20000:])
    if p.returncode != 0:
        raise BuildError("%s failed (%d): %s" % (os.path.basename(cmd[0]), p.returncode,
                                                  _last_error(p.stderr)))


def _last_error(text):
    lines = [l for l in text.splitlines() if "error" in l]
    return (lines[-1] if lines else text.strip()[-300:])[:300]


class Run:
    def __init__(self, rc, out, err, wall, cpu=None):
        self.rc, self.out, self.err, self.wall = rc, out, err, wall
        self.cpu = cpu  # user + system seconds of the process (and its children)
        self.reports = parse_reports(err)

    def steady(self):
        """(calls, seconds) from the timing loop's last line, or None."""
        for line in reversed(self.out.strip().splitlines()):
            m = re.match(r"^\s*(\d+),\s*([0-9.eE+-]+)\s*$", line)
            if m:
                return int(m.group(1)), float(m.group(2))
        return None

    def entry_us(self):
        """The @main call's wall time in microseconds that MAIN_C prints
        under STC_BENCH_ENTRY, or None."""
        m = re.search(r"^stc-bench-entry-us ([0-9.]+)$", self.err, re.M)
        return float(m.group(1)) if m else None

    def values(self):
        """The printed output values (printMemrefF32 data), as floats."""
        vals = []
        for line in self.out.splitlines():
            if line.startswith("Unranked Memref") or re.match(r"^\s*\d+,\s*[0-9.eE+-]+\s*$", line):
                continue
            for tok in re.findall(r"-?(?:nan|inf|[0-9.]+(?:e[+-]?\d+)?)", line):
                try:
                    vals.append(float(tok))
                except ValueError:
                    pass
        return vals


def timed_process(cmd, env, timeout):
    """Runs cmd to completion with its output captured: (rc, stdout,
    stderr, wall seconds); rc 124 when it ran past timeout and was killed.
    The timeout is a timer that kills the process, not communicate's: with
    one, Popen.wait polls (sleeps of 0.5, 1, 2, ... up to 50 ms between
    waitpid calls), which added 0-2 ms to a short process - a 2.5 ms
    convnet process measured 2.46 or 3.43 ms (paired warm/default
    quartiles 0.80-1.08), 2.54-2.69 ms with this blocking wait - and up to
    50 ms to a long one."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=env)
    killed = threading.Event()

    def kill():
        killed.set()
        p.kill()

    timer = threading.Timer(timeout, kill)
    timer.start()
    try:
        out, err = p.communicate()
    finally:
        timer.cancel()
    wall = time.perf_counter() - t0
    return (124 if killed.is_set() else p.returncode), out, err, wall


def run(exe, env_extra=None, steady=False, cache=None, timeout=1800):
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("STC_TUNE") or k in ("STC_BLAS", "STC_BENCH_STEADY"):
            del env[k]
    if cache:
        env["STC_CACHE_DIR"] = cache
    if steady:
        env["STC_BENCH_STEADY"] = "1"
    env.update(env_extra or {})
    # CPU: the growth of this process's waited-for children's user + system
    # time (runs are sequential, so it is exactly this child's).
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    rc, out, err, wall = timed_process([exe], env, timeout)
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    return Run(rc, out, err, wall, cpu)


def forced_variant_times(exe, env=None, min_time=0.3, limit=64, expect=None):
    """exe linked with stub_library(): runs variant k = 0, 1, ... of every
    site (STC_STUB_VARIANT=k, published into the slot) with the steady-state
    loop (at least one timed call, then until min_time seconds) until k
    wraps to the reference at every site. Returns {name: seconds per call}
    (name: the variants' names joined with '+' over the sites; 'reference'
    for k = 0) and a list of problems (failed runs, outputs that differ
    from expect)."""
    times, problems = {}, []
    for k in range(limit):
        r = run(exe, dict(env or {}, STC_STUB_VARIANT=str(k), STC_STUB_PUBLISH="1",
                          STC_STUB_TRACE="1", STC_BENCH_MIN_CALLS="1",
                          STC_BENCH_MIN_TIME=str(min_time)), steady=True)
        names = sorted({m.group(1) for m in re.finditer(r"stub: \S+ -> (\S+)", r.err)})
        if k > 0 and (not names or names == ["reference"]):
            break
        label = "+".join(n for n in names if n != "reference") or "reference"
        st = r.steady() if r.rc == 0 else None
        if not st:
            problems.append("%s run failed (rc %d)" % (label, r.rc))
            continue
        if expect is not None and not same_values(r.values(), expect):
            problems.append("%s WRONG output" % label)
        times[label] = st[1] / st[0]
    return times, problems


def same_values(a, b, rtol=1e-3, atol=1e-4):
    if len(a) != len(b) or not a:
        return False
    for x, y in zip(a, b):
        if math.isnan(x) or math.isnan(y) or abs(x - y) > atol + rtol * abs(y):
            return False
    return True


# ---- STC_TUNE_REPORT=1 parsing ---------------------------------------------

_CAND = re.compile(r"^  (\S+)\s+(\d+)(?:\s+(\d+))?\s+(-|[0-9.]+)\s+(-|[0-9.]+)\s+(yes|no)\s\s(.*)$")


def parse_reports(text):
    """Tuning reports in stderr -> list of dicts: site, workload, winner,
    elapsed_ms, exhausted, trials (from a '  trials: N runs' line, or None),
    columns (header names), candidates [{name, samples, trials, ratio, noise,
    verified, note}]. Tolerates an extra 'trials' column (anywhere after
    the name) and an extra 'trials:' line."""
    reports, cur, header = [], None, None
    for line in text.splitlines():
        if line.startswith("stc: tuning report"):
            cur = {"site": "", "workload": "", "winner": "", "elapsed_ms": None,
                   "exhausted": False, "trials": None, "candidates": []}
            reports.append(cur)
            header = None
            continue
        if cur is None:
            continue
        if not line.startswith("  "):
            cur = None
            continue
        m = re.match(r"^  (site|workload|winner|elapsed|trials):\s*(.*)$", line)
        if m:
            key, val = m.group(1), m.group(2).strip()
            if key == "elapsed":
                mm = re.match(r"([0-9.]+)\s*ms", val)
                cur["elapsed_ms"] = float(mm.group(1)) if mm else None
                cur["exhausted"] = "budget exhausted" in val
            elif key == "trials":
                mm = re.match(r"(\d+)", val)
                cur["trials"] = int(mm.group(1)) if mm else None
            else:
                cur[key] = val
            continue
        fields = line.split()
        if fields and fields[0] == "candidate":
            header = fields
            continue
        if header:
            c = _parse_candidate(line, header)
            if c:
                cur["candidates"].append(c)
    return reports


def _parse_candidate(line, header):
    # Columns before "note" are whitespace-separated single tokens.
    ncols = header.index("note") if "note" in header else len(header)
    parts = line.split(None, ncols)
    if len(parts) < ncols:
        return None
    c = {"name": parts[0], "note": parts[ncols] if len(parts) > ncols else ""}
    for i, col in enumerate(header[1:ncols], start=1):
        v = parts[i]
        if col in ("samples", "trials"):
            c[col] = int(v) if v.isdigit() else None
        elif col in ("ratio", "noise"):
            c[col] = None if v == "-" else _float(v)
        elif col == "verified":
            c[col] = v == "yes"
        else:
            c[col] = v
    return c


def _float(v):
    try:
        return float(v)
    except ValueError:
        return None


def estimate_trials(report, warmups=2):
    """Kernel runs a tune took: the report's trials line or column when
    present, else an estimate from samples: the reference warmups +
    validation + 1 timed run; each candidate that ran warmups + validation
    (+ the reference's half of it) + 2 per paired sample."""
    if report.get("trials") is not None:
        return report["trials"], False
    cands = report["candidates"]
    if cands and all(c.get("trials") is not None for c in cands):
        return sum(c["trials"] for c in cands), False
    total = 0
    for i, c in enumerate(cands):
        note = c.get("note", "")
        if i == 0:
            total += warmups + 2
        elif note.startswith("skipped"):
            continue
        else:
            total += warmups + 2 + 2 * (c.get("samples") or 0)
    return total, True


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else float("nan")


def write_csv(path, header, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(",".join(header) + "\n")
        for r in rows:
            f.write(",".join(_csv(v) for v in r) + "\n")


def _csv(v):
    if v is None:
        return ""
    if isinstance(v, float):
        return "" if math.isnan(v) else "%.6g" % v
    s = str(v)
    return '"%s"' % s.replace('"', "'") if ("," in s or '"' in s) else s


def fmt(v, spec="%.3f", none="-"):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return none
    return spec % v
