"""FMA throughput probe: the machine's measured peak, in our own instructions.

``qm_fma_peak_<n>acc_x86_64_<isa>(uint64_t iterations)`` runs `iterations`
rounds of `accumulators` independent vfmadd231ps on full vector registers,
so a round is accumulators * lanes * 2 flops. Enough independent chains hide
the FMA latency on every core we target (4 cycles x 2 ports = 8 for AVX2,
more for AVX-512 with two FMA units).

With ``"instruction": "bf16-dot"`` (avx512 with AVX512-BF16) the chains are
VDPBF16PS, two bf16 products per f32 lane: a round is accumulators * lanes
* 4 flops, the peak of the bf16 kernels (``qm_bf16dot_peak_...``); with
``"vnni-dot"`` (AVX512-VNNI) VPDPBUSD, four byte products per s32 lane, 8
ops (``qm_vnnidot_peak_...``).

With isa ``amx`` the instruction is ``"amx-bf16"`` (TDPBF16PS) or
``"amx-int8"`` (TDPBUSD): a round is one tile product into each of four C
tiles (amx.emit_peak_probe).
"""

from . import GENERATOR_VERSION, PROTOCOL_VERSION
from .errors import RequestError
from .fields import check_known, check_target_features, int_field
from .x86 import Asm, back, isa_field

#: Probe instructions: mnemonic, flops per f32 lane, symbol prefix and the
#: features beyond the isa's.
INSTRUCTIONS = {
    "fma": ("vfmadd231ps", 2, "fma", ()),
    "bf16-dot": ("vdpbf16ps", 4, "bf16dot", ("avx512bw", "avx512bf16")),
    "vnni-dot": ("vpdpbusd", 8, "vnnidot", ("avx512bw", "avx512vnni")),
}


def emit(request):
    check_known(request, ("isa", "accumulators", "target_features",
                          "instruction"))
    if request.get("isa") == "amx":
        from .amx import emit_peak_probe
        return emit_peak_probe(request)
    isa = isa_field(request)
    check_target_features(request, isa)
    acc = int_field(request, "accumulators", default=isa.registers - 4,
                    maximum=isa.registers - 2)
    instruction = request.get("instruction", "fma")
    if instruction not in INSTRUCTIONS:
        raise RequestError(
            f"unknown instruction {instruction!r}; expected one of "
            + ", ".join(INSTRUCTIONS))
    mnemonic, flops_per_lane, prefix, extra = INSTRUCTIONS[instruction]
    if extra and isa.name != "avx512":
        raise RequestError(f"instruction {instruction} needs isa avx512")
    features = tuple(isa.features) + tuple(
        f for f in extra if f not in isa.features)
    symbol = f"qm_{prefix}_peak_{acc}acc_x86_64_{isa.name}"
    a, b = isa.reg(acc), isa.reg(acc + 1)
    asm = Asm()
    loop = asm.label("round")
    asm.ins(f"vxorps %xmm0, %xmm0, %xmm0")
    for r in range(acc):
        asm.ins(isa.zero(r))
    asm.ins(f"vmovaps {isa.reg(0)}, {a}")
    asm.ins(f"vmovaps {isa.reg(0)}, {b}")
    asm.ins("testq %rdi, %rdi")
    done = asm.label("done")
    asm.ins(f"jz {done[0]}f")
    asm.raw("\t.p2align 5")
    asm.place(loop)
    for r in range(acc):
        asm.ins(f"{mnemonic} {a}, {b}, {isa.reg(r)}")
    asm.ins("decq %rdi")
    asm.ins(f"jnz {back(loop)}")
    asm.place(done)
    asm.ins("vzeroupper")
    return probe_file(
        symbol, acc * isa.lanes * flops_per_lane,
        ["rdi"] + [f"{isa.reg_prefix}{i}" for i in range(isa.registers)],
        features, asm.text())


def probe_file(symbol, flops_per_iteration, clobbers, features, body):
    """A probe's kernel file: ``symbol(uint64_t iterations)`` running
    `body`, each iteration `flops_per_iteration` flops."""
    out = [
        f"# QiMeng-TensorOp FMA peak probe, qimeng_emitters "
        f"{GENERATOR_VERSION}, protocol {PROTOCOL_VERSION}",
        f"# qm.symbol: {symbol}",
        "# qm.workspace_bytes: 0",
        f"# qm.flops_per_iteration: {flops_per_iteration}",
        "# qm.clobbers: " + ",".join(clobbers),
        "# qm.features: " + ",".join(features),
        f"# qm.generator: {GENERATOR_VERSION}",
        "\t.text",
        f"\t.globl\t{symbol}",
        "\t.p2align\t5",
        f"\t.type\t{symbol},@function",
        f"{symbol}:",
        "# qm.body.begin",
        body.rstrip("\n"),
        "# qm.body.end",
        "\tretq",
        f"\t.size\t{symbol}, .-{symbol}",
        "\t.section\t.note.GNU-stack,\"\",@progbits",
    ]
    return "\n".join(out) + "\n"
