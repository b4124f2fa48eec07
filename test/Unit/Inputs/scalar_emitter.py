"""A self-contained emitter, as an LLM might write it: C[i][j] += sum_k
A[i][k] * B[k][j] with scalar FMAs, the shape and leading dimensions from
the request. Correct for any shape, slow. Used by the LLM tests."""

def emit(request):
    m, n, k = request["m"], request["n"], request["k"]
    lda, ldb, ldc = request["lda"], request["ldb"], request["ldc"]
    sym = f"llm_sgemm_{m}x{n}x{k}"
    body = [
        "xorl %r8d, %r8d",
        "1:",
        "xorl %r9d, %r9d",
        "2:",
        f"imulq ${ldc * 4}, %r8, %rax",
        "leaq (%rdx,%rax), %r10",
        "vmovss (%r10,%r9,4), %xmm0",
        f"imulq ${lda * 4}, %r8, %rax",
        "leaq (%rdi,%rax), %r11",
        "leaq (%rsi,%r9,4), %rax",
        "xorl %ecx, %ecx",
        "3:",
        "vmovss (%r11,%rcx,4), %xmm1",
        "vfmadd231ss (%rax), %xmm1, %xmm0",
        f"addq ${ldb * 4}, %rax",
        "incq %rcx",
        f"cmpq ${k}, %rcx",
        "jb 3b",
        "vmovss %xmm0, (%r10,%r9,4)",
        "incq %r9",
        f"cmpq ${n}, %r9",
        "jb 2b",
        "incq %r8",
        f"cmpq ${m}, %r8",
        "jb 1b",
    ]
    lines = [f"# qm.symbol: {sym}", "# qm.workspace_bytes: 64",
             "# qm.clobbers: rax,rcx,r8,r9,r10,r11,xmm0,xmm1",
             "# qm.features: avx,fma", "\t.text", f"\t.globl\t{sym}",
             f"{sym}:", "# qm.body.begin"]
    lines += ["\t" + b if not b.endswith(":") else b for b in body]
    lines += ["# qm.body.end", "\tretq"]
    return "\n".join(lines) + "\n"
