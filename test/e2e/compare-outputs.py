#!/usr/bin/env python3
"""Compare two program outputs made of printMemrefF32 tables, numerically.

In: two text files (expected, actual), e.g. the output of run-reference.sh and
of stc-run on the same model. Out: exit 0 when they match, 1 (after printing
the first differences) when they do not, 2 on bad usage or unreadable files.

Matching rules:
- "Unranked Memref base@ = 0x... rank = R offset = O sizes = [...] strides =
  [...] data =" headers must agree on rank and sizes only: the address, the
  offset and the strides depend on how a compiler laid the buffer out, not on
  the values.
- Numbers match when |a - b| <= atol + scale * M + rtol * max(|a|, |b|),
  where M is the largest finite |value| of the expected printMemref table
  the number belongs to (defaults rtol 1e-3, atol 1e-5, scale 1e-5; M = 0
  for numbers printed outside a table). inf matches only inf of the same
  sign; nan never matches (a NaN is a bug to report) unless --allow-nan is
  given.

Why the scale term. A tuned program may run a contraction or reduction with
a different schedule (tiles, vector lanes, packing, parallel chunks), which
adds the same float32 terms in another order. Each result then differs by
rounding, about n * eps * sum|terms| (eps = 6e-8), not by a fraction of the
result itself: where the terms cancel, the result is small and its relative
error large. Seen on examples/transformer.mlir with every matmul and
batch_matmul site on a non-reference variant (each variant alone matches;
each passes the runtime's per-site check with abs 1e-4 / rel 1e-3): row
14's checksum sum_j y_j * (1 + j mod 7) over 256 layer-normed values of
magnitude ~1 (sum|terms| ~ 800) is 0.0325766 in the reference and
0.0325317 tuned: 4.5e-5 absolute, 1.4e-3 relative, 5.5e-8 of the summands'
magnitude - one float32 ulp of them. The same table prints the row's sum of
squares (~250), so the table's scale M bounds the terms' magnitude and an
absolute allowance of 1e-5 * M (2.5e-3 there) is honest, while a per-element
rtol alone would call rounding a bug.
What it still catches (test/e2e/compare-outputs.test): any element off by
1% whose magnitude is at least 1/500 of its table's largest value (1% of
|x| > 1e-5 * M + 1e-3 * |x| + 1e-5), and any error over ~1e-3 relative on
the table's large values. An element 1000x smaller than its table's largest
one could be 1% off unnoticed; the schedules' own check (passes/schedules
check-all.sh) and the runtime's per-site validation cover those at the op
level.
- Any other word must be identical; brackets, commas and blank space are
  layout and are ignored.
Python 3 standard library only.
"""

import argparse
import math
import re
import sys

HEADER = re.compile(r"Unranked Memref base@ = 0x[0-9a-fA-F]+ rank = (\d+) "
                    r"offset = -?\d+ sizes = \[([^\]]*)\] strides = \[[^\]]*\] data =")
TOKEN = re.compile(r"[-+]?(?:nan|inf)\b|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[^\s\[\],]+",
                   re.IGNORECASE)
NUMBER = re.compile(r"[-+]?(?:nan|inf|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)$", re.IGNORECASE)


class Token:
    """One comparable item with where it came from (for messages)."""

    def __init__(self, kind, value, line, table, index, text=None):
        self.kind = kind      # "shape", "number" or "word"
        self.value = value
        self.text = text      # the number as printed, for messages
        self.line = line
        self.table = table    # ordinal of the printMemref table it belongs to (0 = before any)
        self.index = index    # element index within that table

    def where(self):
        if self.kind == "shape" or self.table == 0:
            return "line %d" % self.line
        return "line %d, table %d, element %d" % (self.line, self.table, self.index)

    def show(self):
        if self.kind == "shape":
            return "table of rank %s, sizes [%s]" % self.value
        return self.text if self.text is not None else str(self.value)


def tokenize(text):
    tokens = []
    table = 0
    index = 0
    for lineno, line in enumerate(text.splitlines(), 1):
        rest = line
        m = HEADER.search(line)
        if m:
            sizes = ", ".join(s.strip() for s in m.group(2).split(",") if s.strip())
            tokens.append(Token("shape", (m.group(1), sizes), lineno, table + 1, 0))
            table += 1
            index = 0
            rest = line[:m.start()] + " " + line[m.end():]
        for word in TOKEN.findall(rest):
            if NUMBER.match(word):
                tokens.append(Token("number", float(word), lineno, table, index, word))
                index += 1
            else:
                tokens.append(Token("word", word, lineno, table, index))
    return tokens


def numbers_match(a, b, rtol, atol, allow_nan):
    if math.isnan(a) or math.isnan(b):
        return allow_nan and math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= atol + rtol * max(abs(a), abs(b))


def table_scales(tokens):
    """Largest finite |number| per table ordinal (table 0: none, scale 0)."""
    scales = {}
    for t in tokens:
        if t.kind == "number" and t.table and math.isfinite(t.value):
            scales[t.table] = max(scales.get(t.table, 0.0), abs(t.value))
    return scales


def compare(expected, actual, rtol, atol, allow_nan, max_report, scale=0.0):
    """Returns a list of human-readable differences (empty when equal)."""
    diffs = []
    scales = table_scales(expected)
    for e, a in zip(expected, actual):
        if e.kind != a.kind:
            same = False
        elif e.kind == "number":
            tol = atol + scale * scales.get(e.table, 0.0)
            same = numbers_match(e.value, a.value, rtol, tol, allow_nan)
        else:
            same = e.value == a.value
        if not same:
            detail = ""
            if e.kind == a.kind == "number" and not (math.isnan(e.value) or math.isnan(a.value)):
                detail = " (abs diff %.3g)" % abs(e.value - a.value)
            diffs.append("%s: expected %s, got %s [%s]%s"
                         % (e.where(), e.show(), a.show(), a.where(), detail))
            if len(diffs) >= max_report:
                return diffs
    if len(expected) != len(actual):
        longer, name = (expected, "expected") if len(expected) > len(actual) else (actual, "actual")
        extra = longer[min(len(expected), len(actual))]
        diffs.append("%s output has %d more items, first at %s: %s"
                     % (name, abs(len(expected) - len(actual)), extra.where(), extra.show()))
    return diffs


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("expected")
    parser.add_argument("actual")
    parser.add_argument("--rtol", type=float, default=1e-3)
    parser.add_argument("--atol", type=float, default=1e-5)
    parser.add_argument("--scale", type=float, default=1e-5,
                        help="absolute allowance per unit of the expected table's largest "
                             "|value| (default 1e-5; 0 turns it off)")
    parser.add_argument("--allow-nan", action="store_true",
                        help="let nan match nan (by default any nan is a difference)")
    parser.add_argument("--max-report", type=int, default=10,
                        help="how many differences to print (default 10)")
    args = parser.parse_args(argv)
    if args.rtol < 0 or args.atol < 0 or args.scale < 0 or args.max_report < 1:
        parser.error("tolerances must be >= 0 and --max-report >= 1")
    texts = []
    for path in (args.expected, args.actual):
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                texts.append(f.read())
        except OSError as err:
            print("compare-outputs: %s" % err, file=sys.stderr)
            return 2
    expected, actual = tokenize(texts[0]), tokenize(texts[1])
    if not any(t.kind == "number" for t in expected):
        print("compare-outputs: %s holds no numbers; refusing to call that a match" % args.expected,
              file=sys.stderr)
        return 1
    diffs = compare(expected, actual, args.rtol, args.atol, args.allow_nan, args.max_report,
                    args.scale)
    if diffs:
        print("outputs differ (rtol %g, atol %g + %g * table max):"
              % (args.rtol, args.atol, args.scale))
        for d in diffs:
            print("  " + d)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
