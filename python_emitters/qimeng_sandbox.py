"""Runs one untrusted emitter (an LLM wrote it) as a kernel emitter.

    python3 -I -S qimeng_sandbox.py EMITTER.py WORKDIR CPU_S MEM_MB FSIZE_KB

The emitter is Python source defining ``emit(request) -> str``, the
protocol of qimeng_emitters (docs/EmitterProtocol.md). The request (JSON)
comes on stdin, the kernel text goes to stdout; a failure is one
``error: ...`` line on stderr and exit status 1.

What the emitter may do is limited before its code runs:
- CPU seconds, address space and the size of files it writes (setrlimit);
- a network namespace of its own when the kernel allows it (unshare), so
  there is no network; "network: isolated" or "network: not isolated" is
  the first line on stderr;
- an audit hook refuses sockets, subprocesses, exec, fork, loading native
  code and writing files outside WORKDIR; reading is allowed only under
  WORKDIR and Python's own library;
- the caller gives it an empty environment and WORKDIR as its directory.
Standard library only.
"""

import ctypes
import json
import os
import resource
import sys

CLONE_NEWNET = 0x40000000
CLONE_NEWUSER = 0x10000000


def _isolate_network():
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.unshare(CLONE_NEWNET) == 0:
            return True
        # Without privileges: a user namespace first, then the network one.
        if libc.unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0:
            return True
    except (OSError, AttributeError):
        pass
    return False


def main():
    if len(sys.argv) != 6:
        sys.stderr.write("error: usage: qimeng_sandbox.py EMITTER WORKDIR "
                         "CPU_S MEM_MB FSIZE_KB\n")
        return 2
    path, workdir = sys.argv[1], os.path.realpath(sys.argv[2])
    cpu, mem_mb, fsize_kb = (int(v) for v in sys.argv[3:6])
    with open(path, encoding="utf-8") as f:
        source = f.read()
    request_text = sys.stdin.read()
    isolated = _isolate_network()
    sys.stderr.write("network: " + ("isolated" if isolated else
                                    "not isolated") + "\n")
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
    resource.setrlimit(resource.RLIMIT_AS, (mem_mb << 20, mem_mb << 20))
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize_kb << 10,
                                               fsize_kb << 10))
    os.chdir(workdir)
    readable = [workdir, os.path.realpath(sys.base_prefix),
                os.path.realpath(sys.prefix)]
    refused = ("socket.", "subprocess.", "os.system", "os.exec", "os.spawn",
               "os.posix_spawn", "os.fork", "os.forkpty", "ctypes.",
               "os.putenv", "os.unsetenv", "pty.", "import.native")

    def under(p, roots):
        p = os.path.realpath(p)
        return any(p == r or p.startswith(r + os.sep) for r in roots)

    def hook(event, args):
        if event.startswith(refused):
            raise PermissionError(f"sandbox: {event} is not allowed")
        if event == "open" and args and isinstance(args[0], (str, bytes)):
            target = os.fsdecode(args[0])
            mode = args[1] if len(args) > 1 and isinstance(args[1], str) \
                else "r"
            writing = any(c in mode for c in "wax+")
            if writing and not under(target, [workdir]):
                raise PermissionError(f"sandbox: writing {target} is not "
                                      "allowed")
            if not writing and not under(target, readable):
                raise PermissionError(f"sandbox: reading {target} is not "
                                      "allowed")

    sys.addaudithook(hook)
    try:
        namespace = {"__name__": "llm_emitter"}
        exec(compile(source, "llm_emitter.py", "exec"), namespace)
        emit = namespace.get("emit")
        if not callable(emit):
            raise RuntimeError("the emitter defines no emit(request) function")
        text = emit(json.loads(request_text))
        if not isinstance(text, str):
            raise RuntimeError("emit(request) did not return a string")
    except BaseException as exc:  # everything the emitter raises
        sys.stderr.write(f"error: {type(exc).__name__}: {exc}\n")
        return 1
    data = text.encode("utf-8", "replace")
    if len(data) > fsize_kb << 10:
        sys.stderr.write(f"error: the emitter printed more than {fsize_kb} "
                         f"KiB ({len(data)} bytes)\n")
        return 1
    sys.stdout.buffer.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
