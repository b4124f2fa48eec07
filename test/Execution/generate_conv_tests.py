#!/usr/bin/env python3
"""Writes the conv-*.mlir execution tests of this directory.

Each test runs one linalg.conv_2d_* through --qimeng-tensorop, lowers the
result with the stock pipeline, runs it under mlir-runner and compares the
output, element by element and exactly, with a linalg.generic computing the
same convolution in the same run (the pass leaves linalg.generic alone, and
the stock lowering turns it into loops). Inputs are small integers, so every
partial sum is exact in f32 whatever the summation order.

Run from anywhere: python3 test/Execution/generate_conv_tests.py
"""

import os

HERE = os.path.dirname(os.path.abspath(__file__))

# name, layout, (n, h, w, c), f, (kh, kw), stride, dilation, pad, comment
CASES = [
    ("conv-nhwc-3x3-c3", "nhwc_hwcf", (1, 8, 8, 3), 16, (3, 3), 1, 1, 0,
     "3x3, C = 3"),
    ("conv-nhwc-c1-stride2", "nhwc_hwcf", (1, 11, 9, 1), 5, (3, 3), 2, 1, 0,
     "C = 1, odd H and W, stride 2"),
    ("conv-nhwc-dilation2-batch2", "nhwc_hwcf", (2, 9, 10, 3), 20, (3, 3), 1,
     2, 0, "dilation 2, batch 2"),
    ("conv-nhwc-1x1", "nhwc_hwcf", (1, 7, 13, 16), 40, (1, 1), 1, 1, 0,
     "1x1 stride 1: a plain GEMM over the pixels"),
    ("conv-nhwc-padded-subview", "nhwc_hwcf", (1, 10, 10, 8), 24, (3, 3), 1,
     1, 1, "the input is a subview of a padded buffer (pad 1, 'same')"),
    ("conv-nhwc-two-threads", "nhwc_hwcf", (1, 30, 30, 16), 64, (3, 3), 1, 1,
     0, "enough work for the parallel form (omp.parallel)"),
    ("conv-nhwc-fhwc-3x3", "nhwc_fhwc", (1, 9, 7, 5), 21, (3, 3), 1, 1, 0,
     "nhwc_fhwc: the filter is read transposed"),
    ("conv-nchw-3x3-c3", "nchw_fchw", (1, 8, 8, 3), 7, (3, 3), 1, 1, 0,
     "nchw_fchw 3x3, C = 3"),
    ("conv-nchw-batch2", "nchw_fchw", (2, 20, 19, 2), 5, (3, 3), 1, 1, 0,
     "nchw_fchw, batch 2, odd W"),
    ("conv-nchw-7x7-stride2", "nchw_fchw", (1, 23, 21, 3), 32, (7, 7), 2, 1,
     0, "nchw_fchw 7x7 stride 2, a stem layer in small"),
]


def dims(layout, n, h, w, c, f, kh, kw, oh, ow):
    """Shapes of input, filter and output as the op takes them."""
    if layout == "nchw_fchw":
        return (n, c, h, w), (f, c, kh, kw), (n, f, oh, ow)
    if layout == "nhwc_fhwc":
        return (n, h, w, c), (f, kh, kw, c), (n, oh, ow, f)
    return (n, h, w, c), (kh, kw, c, f), (n, oh, ow, f)


def maps(layout, s, d):
    """Indexing maps of the reference linalg.generic over
    (n, oh, ow, f, kh, kw, c)."""
    dom = "(n, oh, ow, f, kh, kw, c)"
    ih = f"oh * {s} + kh * {d}"
    iw = f"ow * {s} + kw * {d}"
    if layout == "nchw_fchw":
        return (f"affine_map<{dom} -> (n, c, {ih}, {iw})>",
                f"affine_map<{dom} -> (f, c, kh, kw)>",
                f"affine_map<{dom} -> (n, f, oh, ow)>")
    flt = ("(f, kh, kw, c)" if layout == "nhwc_fhwc" else "(kh, kw, c, f)")
    return (f"affine_map<{dom} -> (n, {ih}, {iw}, c)>",
            f"affine_map<{dom} -> {flt}>",
            f"affine_map<{dom} -> (n, oh, ow, f)>")


def memref(shape):
    return "memref<" + "x".join(str(v) for v in shape) + "xf32>"


def strided_type(shape, strides, dynamic_offset=True):
    return ("memref<" + "x".join(str(v) for v in shape) + "xf32, strided<["
            + ", ".join(str(v) for v in strides) + "], offset: ?>>")


def dense_strides(shape):
    out, acc = [], 1
    for v in reversed(shape):
        out.append(acc)
        acc *= v
    return list(reversed(out))


def putchars(text):
    lines = []
    for i, ch in enumerate(text):
        lines.append(f"  %ch{i} = arith.constant {ord(ch)} : i32")
        lines.append(f"  call @putchar(%ch{i}) : (i32) -> i32")
    return "\n".join(lines)


def fill_func():
    return """// Element i of a flat buffer: (i * x) mod 9 - 4, a small integer.
func.func private @fill(%m: memref<?xf32>, %x: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c9 = arith.constant 9 : index
  %c4 = arith.constant 4 : i64
  %size = memref.dim %m, %c0 : memref<?xf32>
  scf.for %i = %c0 to %size step %c1 {
    %ix = arith.muli %i, %x : index
    %r = arith.remui %ix, %c9 : index
    %ri = arith.index_cast %r : index to i64
    %v = arith.subi %ri, %c4 : i64
    %f = arith.sitofp %v : i64 to f32
    memref.store %f, %m[%i] : memref<?xf32>
  }
  return
}
"""


def case_text(name, layout, nhwc, f, k, s, d, pad, comment):
    n, h, w, c = nhwc
    kh, kw = k
    oh = (h - d * (kh - 1) - 1) // s + 1
    ow = (w - d * (kw - 1) - 1) // s + 1
    in_shape, flt_shape, out_shape = dims(layout, n, h, w, c, f, kh, kw, oh,
                                          ow)
    fn = name.replace("-", "_")
    op = "linalg.conv_2d_" + layout
    # The input: dense, or a subview of a buffer padded by `pad` in H and W.
    if pad:
        assert layout != "nchw_fchw"
        padded = (n, h + 2 * pad, w + 2 * pad, c)
        in_type = strided_type(in_shape, dense_strides(padded))
    else:
        padded = in_shape
        in_type = memref(in_shape)
    flt_type, out_type = memref(flt_shape), memref(out_shape)
    attrs = (f"{{dilations = dense<{d}> : tensor<2xi64>, "
             f"strides = dense<{s}> : tensor<2xi64>}}")
    in_map, flt_map, out_map = maps(layout, s, d)

    def count(shape):
        total = 1
        for v in shape:
            total *= v
        return total

    def expand(var, flat, shape):
        rank = len(shape)
        return (f"  {var} = memref.expand_shape {flat} [[0, 1, 2, 3]] "
                f"output_shape [{', '.join(str(v) for v in shape)}] : "
                f"memref<{count(shape)}xf32> into {memref(shape)}")

    lines = []
    lines.append(f"// Execution: {op} {comment}, through --qimeng-tensorop,")
    lines.append("// checked exactly against a linalg.generic computing the "
                 "same convolution in")
    lines.append("// the same run. Generated by generate_conv_tests.py.")
    lines.append("// REQUIRES: host-avx2, host-fma")
    lines.append("// RUN: %qimeng-opt %s --qimeng-tensorop -o %t.mlir")
    lines.append("// RUN: FileCheck %s --check-prefix=IR < %t.mlir")
    lines.append("// RUN: %mlir-opt %t.mlir %lower-to-llvm | %mlir-runner "
                 "-e main \\")
    lines.append("// RUN:   -entry-point-result=void "
                 "--shared-libs=%runner-libs | FileCheck %s")
    lines.append("")
    lines.append(f"// IR-LABEL: func.func @{fn}(")
    lines.append(f"// IR-NOT:   {op}")
    lines.append("// IR:       llvm.call @qm_sconv2d_" + layout)
    lines.append(f"// IR-LABEL: func.func @{fn}_reference(")
    lines.append("// IR:       linalg.generic")
    lines.append("// IR:       llvm.func internal @qm_sconv2d_" + layout)
    lines.append("// IR:       llvm.inline_asm has_side_effects")
    lines.append("")
    lines.append(f"// CHECK: {fn}: mismatches = 0")
    lines.append("")
    lines.append(f"func.func @{fn}(%in: {in_type}, %flt: {flt_type}, "
                 f"%out: {out_type}) {{")
    lines.append(f"  {op} {attrs}")
    lines.append(f"      ins(%in, %flt : {in_type}, {flt_type})")
    lines.append(f"      outs(%out : {out_type})")
    lines.append("  return")
    lines.append("}")
    lines.append("")
    lines.append(f"func.func @{fn}_reference(%in: {in_type}, "
                 f"%flt: {flt_type}, %out: {out_type}) {{")
    lines.append("  linalg.generic {")
    lines.append(f"      indexing_maps = [{in_map},")
    lines.append(f"                       {flt_map},")
    lines.append(f"                       {out_map}],")
    lines.append('      iterator_types = ["parallel", "parallel", "parallel", '
                 '"parallel",')
    lines.append('                        "reduction", "reduction", '
                 '"reduction"]}')
    lines.append(f"      ins(%in, %flt : {in_type}, {flt_type})")
    lines.append(f"      outs(%out : {out_type}) {{")
    lines.append("  ^bb0(%a: f32, %b: f32, %o: f32):")
    lines.append("    %p = arith.mulf %a, %b : f32")
    lines.append("    %sum = arith.addf %o, %p : f32")
    lines.append("    linalg.yield %sum : f32")
    lines.append("  }")
    lines.append("  return")
    lines.append("}")
    lines.append("")
    lines.append(fill_func())
    lines.append("func.func @main() {")
    lines.append("  %c0 = arith.constant 0 : index")
    lines.append("  %c1 = arith.constant 1 : index")
    for x in (2, 3, 5, 7):
        lines.append(f"  %c{x} = arith.constant {x} : index")
    n_in, n_flt, n_out = count(padded), count(flt_shape), count(out_shape)
    for var, size, salt in (("in", n_in, 5), ("flt", n_flt, 7),
                            ("out", n_out, 3), ("ref", n_out, 3)):
        lines.append(f"  %{var}_flat = memref.alloc() : memref<{size}xf32>")
        lines.append(f"  %{var}_dyn = memref.cast %{var}_flat : "
                     f"memref<{size}xf32> to memref<?xf32>")
        lines.append(f"  call @fill(%{var}_dyn, %c{salt}) : "
                     "(memref<?xf32>, index) -> ()")
    lines.append(expand("%in_full", "%in_flat", padded))
    if pad:
        lines.append(f"  %in = memref.subview %in_full[0, {pad}, {pad}, 0] "
                     f"[{', '.join(str(v) for v in in_shape)}] [1, 1, 1, 1] : "
                     f"{memref(padded)} to "
                     + in_type.replace("offset: ?", f"offset: "
                                       f"{pad * dense_strides(padded)[1] + pad * dense_strides(padded)[2]}"))
        static_type = in_type.replace(
            "offset: ?",
            f"offset: {pad * dense_strides(padded)[1] + pad * dense_strides(padded)[2]}")
        lines.append(f"  %in_arg = memref.cast %in : {static_type} to "
                     f"{in_type}")
        in_arg = "%in_arg"
    else:
        in_arg = "%in_full"
    lines.append(expand("%flt", "%flt_flat", flt_shape))
    lines.append(expand("%out", "%out_flat", out_shape))
    lines.append(expand("%ref", "%ref_flat", out_shape))
    lines.append(f"  call @{fn}_reference({in_arg}, %flt, %ref) : "
                 f"({in_type}, {flt_type}, {out_type}) -> ()")
    lines.append(f"  call @{fn}({in_arg}, %flt, %out) : "
                 f"({in_type}, {flt_type}, {out_type}) -> ()")
    lines.append("  %zero = arith.constant 0 : i64")
    lines.append("  %one = arith.constant 1 : i64")
    lines.append(f"  %total = arith.constant {n_out} : index")
    lines.append("  %bad = scf.for %i = %c0 to %total step %c1 "
                 "iter_args(%acc = %zero) -> (i64) {")
    lines.append(f"    %got = memref.load %out_flat[%i] : memref<{n_out}xf32>")
    lines.append(f"    %want = memref.load %ref_flat[%i] : "
                 f"memref<{n_out}xf32>")
    lines.append("    %ne = arith.cmpf une, %got, %want : f32")
    lines.append("    %inc = arith.select %ne, %one, %zero : i64")
    lines.append("    %next = arith.addi %acc, %inc : i64")
    lines.append("    scf.yield %next : i64")
    lines.append("  }")
    lines.append("  call @printCaseName() : () -> ()")
    lines.append("  call @printI64(%bad) : (i64) -> ()")
    lines.append("  call @printNewline() : () -> ()")
    for var, size in (("in", n_in), ("flt", n_flt), ("out", n_out),
                      ("ref", n_out)):
        lines.append(f"  memref.dealloc %{var}_flat : memref<{size}xf32>")
    lines.append("  return")
    lines.append("}")
    lines.append("")
    lines.append("func.func private @printCaseName() {")
    lines.append(putchars(f"{fn}: mismatches = "))
    lines.append("  return")
    lines.append("}")
    lines.append("")
    lines.append("func.func private @putchar(i32) -> i32")
    lines.append("func.func private @printI64(i64)")
    lines.append("func.func private @printNewline()")
    return "\n".join(lines) + "\n"


def main():
    for case in CASES:
        path = os.path.join(HERE, case[0] + ".mlir")
        with open(path, "w", encoding="ascii") as f:
            f.write(case_text(*case))


if __name__ == "__main__":
    main()
