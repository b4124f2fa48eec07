"""QiMeng-TensorOp emitters: stdlib-only Python that writes kernel assembly.

Run as ``python3 -m qimeng_emitters`` with a versioned JSON request on stdin;
the kernel text comes on stdout. See docs/EmitterProtocol.md.
"""

#: Bumped whenever generated code changes for the same request; part of every
#: tuning-database key.
GENERATOR_VERSION = "1.31.0"

#: Request schema version this package accepts.
PROTOCOL_VERSION = 1
