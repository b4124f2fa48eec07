//===- Passes.td - QiMeng-TensorOp passes ------------------*- tablegen -*-===//
#ifndef QIMENG_TRANSFORMS_PASSES
#define QIMENG_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def QiMengTensorOp : Pass<"qimeng-tensorop", "mlir::ModuleOp"> {
  let summary = "Replace linalg contractions (matmul, batch_matmul, generic "
                "contractions) and 2-D convolutions with generated, "
                "validated kernels";
  let description = [{
    Runs on bufferized IR, before or after `buffer-deallocation-pipeline`,
    or on tensors before bufferization: there each op it takes moves onto
    buffers at its place (`bufferization.to_buffer` of its inputs, a fresh
    allocation for its output, `bufferization.to_tensor restrict writable`
    of it as the result), which `one-shot-bufferize` then keeps.

    Rewrites every op with linalg's contraction interface that has one M,
    one N, one K and at most one batch dimension (`linalg.matmul`,
    `linalg.batch_matmul`, `linalg.generic` contractions such as
    `dot_general`), on f32 memrefs (and bf16, f16 or 8-bit ones into f32 or
    i32 sums: AMX's tiles or AVX-512's dot-product instructions,
    docs/FrontendIR.md), into calls of a kernel that the QiMeng
    emitters wrote for that shape and layout: A and B transposed or not
    through `indexing_maps`, a 2-D operand broadcast over the batch,
    subviews. A leading dimension that the type leaves dynamic (the
    default layout of `one-shot-bufferize{bufferize-function-boundaries}`)
    is passed to the kernel at run time, and so are batch strides and a
    dynamic batch size; unit strides the type leaves dynamic are taken as
    1 and checked at run time, the original op running when they differ.
    A dynamic M (a dynamic batch of a linear layer, rows under a batch) is
    passed at run time too, the kernel blocked and tuned for
    `representative-m` rows; kernels blocked for fewer rows (`m-buckets`,
    by default one row and sixteen) run the calls with at most that many (a
    decoder's one token), chosen at run time on M. So are a dynamic N
    (`representative-n`) and a dynamic K (`representative-k`). A
    `linalg.transpose` that only feeds the contraction and a zero
    `linalg.fill` of a fresh C (or of a slice of one: a concatenation
    written in place) fold into the kernel, and so does an elementwise
    consumer of such a C that adds a bias along the columns and/or a
    residual and applies relu or a clamp (relu6, hardtanh; TOSA's and
    torch-mlir's forms) or leaky relu (not after an 8-bit product), or a
    smooth activation: sigmoid, silu, gelu (erf or tanh), tanh, hardswish,
    mish or softplus (after an f32 product on x86, AArch64 and RISC-V, and
    after bf16 and f16 products on AVX-512), or a chain of
    such consumers each reading the previous one's output
    (`fuse-epilogues`); the last of them may write a slice of a
    concatenation.

    Rewrites `linalg.conv_2d_nhwc_hwcf`, `linalg.conv_2d_nhwc_fhwc` and
    `linalg.conv_2d_nchw_fchw` on f32 memrefs (and bf16, f16 or 8-bit ones),
    static-shaped but for the batch, any strides and dilations, likewise: an implicit GEMM whose PACK gathers the input's
    patches one panel at a time (never the whole im2col matrix). Padding is
    the producer's: the input may be a padded buffer or a subview of one
    (unit channel or width stride); the filter must be dense, the output
    too or a channel slice of a concatenation (an NHWC f32 output's pixels
    that far apart; images further apart than one image: a call per image).

    Each kernel is emitted by the Python emitters, assembled with LLVM MC,
    and (unless `validate=false`) run in a separate `qimeng-runner` process
    against OpenBLAS and an fp64 reference before it is used. Its
    instructions are embedded in the module as the body of an `llvm.func`
    holding one `llvm.inline_asm`, so the output is self-contained: the stock
    pipeline (`--convert-linalg-to-loops --expand-strided-metadata
    --lower-affine --convert-scf-to-cf --convert-to-llvm
    --reconcile-unrealized-casts`) lowers it, `mlir-runner` runs it and
    `mlir-translate | llc` compiles it ahead of time.

    With `tune-budget=N` an op whose kernel is not in the tuning database is
    tuned (Monte Carlo tree search over the sketch parameters, every
    candidate validated and timed in qimeng-runner) and the winner stored;
    a database hit uses the stored, validated kernel directly.

    With `target=nvptx64-nvidia-cuda:ARCH` the pass generates for an
    NVIDIA GPU instead: each static, dense, row-major `linalg.matmul`
    (bf16, f16, or f32 (FFMA, or tf32 with `tf32`); B may be transposed
    through `indexing_maps`) on buffers becomes a call of a launcher the
    module carries (the cuda_gemm kernel compiled with NVRTC, embedded as
    a cubin, loaded and launched with the CUDA driver API, then
    synchronised), validated and timed against cuBLAS first where this
    machine has a GPU. A, B and C must be device memory; link the result
    with the driver (libcuda.so.1).

    Contractions and convolutions the pass does not handle stay unchanged
    and get a remark `not accelerated: <reason>`. docs/FrontendIR.md gives
    the recommended pipeline for torch-mlir, StableHLO and TOSA users.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"host\"",
           "Machine to generate for: `host`, or "
           "TRIPLE[:CPU[:FEATURES[:CACHES]]] such as "
           "`x86_64-unknown-linux-gnu:znver3:+avx2,+fma:l1d=32K,l2=512K`, "
           "`aarch64-linux-gnu:neoverse-n1:+neon` or "
           "`riscv64-linux-gnu:spacemit-x60:+m,+a,+f,+d,+c,+v` (validated "
           "under qemu-user; docs/CrossTargets.md), or an NVIDIA GPU, "
           "`nvptx64-nvidia-cuda:sm_90a` (or `:H200`, `:sm_80`, `:A100`, "
           "...): matmul-like contractions on device memory become "
           "launches of cubins the module embeds, through the CUDA driver "
           "API (docs/Cuda.md)">,
    Option<"tf32", "tf32", "bool", /*default=*/"false",
           "With an NVIDIA target: multiply f32 contractions on tensor "
           "cores in tf32 (10-bit mantissas, f32 sums; results change "
           "within about 2^-9 of each product) instead of FFMA in f32">,
    Option<"kernelConfig", "kernel-config", "std::string", /*default=*/"\"\"",
           "Pin the kernel configuration, overriding the analytical model "
           "key by key: `mr=6,nr=16,ku=4,kc=256,mc=72,nc=4080,pfa=0,pfb=0,"
           "isa=avx2`">,
    Option<"cacheDir", "cache-dir", "std::string", /*default=*/"\"\"",
           "Tuning database directory (default: QIMENG_CACHE_DIR, then "
           "$XDG_CACHE_HOME/qimeng-tensorop, then ~/.cache/qimeng-tensorop); "
           "a hit uses the tuned kernel without tuning again">,
    Option<"tuneBudget", "tune-budget", "unsigned", /*default=*/"0",
           "Candidate trials per op when the database misses: 0 uses the "
           "analytical default and never tunes">,
    Option<"tuneSeconds", "tune-seconds", "unsigned", /*default=*/"0",
           "Wall-clock limit of one op's tuning in seconds; 0: none">,
    Option<"threads", "threads", "unsigned", /*default=*/"0",
           "Threads per kernel: 0 uses all of the target's cores; more than "
           "one runs the kernel once per part of C inside omp.parallel "
           "(lower with the stock pipeline, run with libomp); the blocking "
           "model takes them into account (few rows block differently on "
           "one part than on several)">,
    Option<"representativeM", "representative-m", "unsigned",
           /*default=*/"256",
           "Rows a contraction with a dynamic M is blocked, validated and "
           "tuned for (it runs for any M, read at run time; the tuning "
           "database keys it by this value)">,
    Option<"mBuckets", "m-buckets", "std::string", /*default=*/"\"1,16\"",
           "Row counts below representative-m for which a contraction with "
           "a dynamic M gets a kernel of its own, comma-separated: the call "
           "runs the one for the fewest rows not below M (a matrix-vector "
           "product reads B where it lies instead of packing it for rows "
           "that never come); none: one kernel for every M">,
    Option<"representativeN", "representative-n", "unsigned",
           /*default=*/"256",
           "Columns a contraction with a dynamic N is blocked, "
           "validated and tuned for (it runs for any N, read at run time)">,
    Option<"representativeK", "representative-k", "unsigned",
           /*default=*/"256",
           "Depth a contraction with a dynamic K is blocked, validated and "
           "tuned for (it runs for any K, 0 included, read at run time; "
           "an f32 one takes C's zero fill or bias init and a consumer as "
           "with a static K, a bf16, f16 or int8 one keeps them)">,
    Option<"fuseEpilogues", "fuse-epilogues", "bool", /*default=*/"true",
           "Fuse a bias add along the columns, a residual add and relu "
           "or a clamp to [min, max], leaky relu, or sigmoid, silu, gelu, "
           "tanh, hardswish, mish or softplus (f32 on every CPU target, "
           "bf16 and f16 on AVX-512) (one generic, or a chain of them) "
           "that consume a "
           "zero-initialised product into the kernel's store of C, as "
           "oneDNN's post-ops (the fused kernel is "
           "validated with them; a residual is copied into C first and "
           "the kernel accumulates onto it, as oneDNN's sum post-op)">,
    Option<"useAmx", "amx", "bool", /*default=*/"true",
           "Run bf16 and 8-bit GEMMs and nhwc convolutions on AMX's tiles "
           "where the target has them (amx-tile with amx-bf16 or "
           "amx-int8); false keeps them on AVX512-BF16/VNNI">,
    Option<"packConstantWeights", "pack-constant-weights", "bool",
           /*default=*/"true",
           "Pack an f32, bf16 or 8-bit B (weights, a convolution's filter) "
           "that is a constant of the module (a constant memref.global, or an "
           "arith.constant on tensors) into its kernel's layout at compile "
           "time, as a new constant global: the kernel then runs no PACK B "
           "at each call (not for a run-time M, N or K, nor a batch of "
           "B's)">,
    Option<"validate", "validate", "bool", /*default=*/"true",
           "Validate every kernel in a qimeng-runner process (OpenBLAS and "
           "fp64 references, guard bytes), or for another architecture in "
           "its cross runner under qemu-user, before using it; an op whose "
           "kernel fails stays unchanged">,
    Option<"runner", "runner", "std::string", /*default=*/"\"\"",
           "Path of qimeng-runner (default: QIMENG_RUNNER, then the build's)">,
    Option<"python", "python", "std::string", /*default=*/"\"\"",
           "python3 that runs the emitters (default: QIMENG_PYTHON, then the "
           "one found at configure time)">,
    Option<"emitterDir", "emitter-dir", "std::string", /*default=*/"\"\"",
           "Directory holding the qimeng_emitters package (default: "
           "QIMENG_EMITTER_DIR, then the source tree's)">,
    Option<"emitTimeout", "emit-timeout", "unsigned", /*default=*/"60",
           "Seconds an emitter may take (validation gets at least 120)">,
    Option<"llmEndpoint", "llm-endpoint", "std::string", /*default=*/"\"\"",
           "OpenAI-compatible API base (e.g. http://127.0.0.1:8000/v1; "
           "default QIMENG_LLM_ENDPOINT): when tuning, the LLM proposes "
           "moves on top of the built-in priors; none: offline">,
    Option<"llmModel", "llm-model", "std::string", /*default=*/"\"\"",
           "LLM model name (default QIMENG_LLM_MODEL)">,
    Option<"llmApiKeyEnv", "llm-api-key-env", "std::string",
           /*default=*/"\"\"",
           "Environment variable holding the LLM API key (default "
           "QIMENG_LLM_API_KEY_ENV); the key is never printed">,
    Option<"llmTranscript", "llm-transcript", "std::string",
           /*default=*/"\"\"",
           "Append every LLM exchange to this JSON-lines file (key "
           "stripped)">,
    Option<"testInjectFault", "test-inject-fault", "std::string",
           /*default=*/"\"\"",
           "Test only: request a deliberately broken kernel (`drop-k`, "
           "`write-past-edge`, or for f16 `drop-low`) to show that "
           "validation rejects it">
  ];
  let dependentDialects = [
    "mlir::LLVM::LLVMDialect", "mlir::memref::MemRefDialect",
    "mlir::arith::ArithDialect", "mlir::omp::OpenMPDialect",
    "mlir::scf::SCFDialect", "mlir::bufferization::BufferizationDialect",
    "mlir::tensor::TensorDialect", "mlir::linalg::LinalgDialect"
  ];
}

#endif // QIMENG_TRANSFORMS_PASSES
