"""Compares two printMemrefF32 outputs number by number: everything but
the numbers must be the same text, each number within an absolute ATOL
plus a relative RTOL of the reference's (NaN only against NaN). For
kernels that compute a smooth activation to a few ulps, against the stock
lowering's libm (printMemrefF32 prints six significant digits).

usage: compare_close.py REFERENCE OUTPUT RTOL ATOL
"""

import math
import re
import sys

NUMBER = re.compile(r"-?(?:nan|inf|\d+(?:\.\d*)?(?:e[-+]?\d+)?)")


def split(text):
    """(the text with every number replaced by '#', the numbers)."""
    numbers = [float(n) for n in NUMBER.findall(text)]
    return NUMBER.sub("#", text), numbers


def main(reference, output, rtol, atol):
    with open(reference, encoding="utf-8") as f:
        ref_text, ref = split(f.read())
    with open(output, encoding="utf-8") as f:
        out_text, out = split(f.read())
    if ref_text != out_text or len(ref) != len(out):
        print("the outputs differ in more than their numbers")
        return 1
    bad = 0
    for i, (want, got) in enumerate(zip(ref, out)):
        if math.isnan(want) or math.isnan(got):
            ok = math.isnan(want) and math.isnan(got)
        else:
            ok = abs(got - want) <= atol + rtol * abs(want)
        if not ok:
            bad += 1
            if bad <= 5:
                print(f"number {i}: {got!r}, reference {want!r}")
    print(f"{len(ref)} numbers, {bad} outside {rtol} relative + {atol}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], float(sys.argv[3]),
                  float(sys.argv[4])))
