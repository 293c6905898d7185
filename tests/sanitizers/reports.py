#!/usr/bin/python3
"""Sorts sanitizer reports into onlinews' own and other libraries'.

usage: reports.py LOG_PREFIX [ROOT]
  LOG_PREFIX  the sanitizers' log_path: every file LOG_PREFIX.* is read
  ROOT        the source tree (default: this checkout); a frame is onlinews
              code when it is symbolized to a source file of the library
              below ROOT (its stages, or the wrappers a build tree
              generates), or to a function in onlinews::  The test programs
              are not the library.

Debian's Open MPI, hwloc, PMIx and HDF5 are not instrumented.  ASan still
sees their allocations (its malloc) and reports the ones never freed at exit
(Open MPI keeps its MCA components' data until the process ends; its
plug-ins are unloaded by then, so their frames read "<unknown module>" or
an address past the end of another library).  TSan sees their memory
accesses through its interceptors but not the atomics that order them.  So
nothing is suppressed by library name: a report is ours when the innermost
frame of one of its stacks, below the sanitizer runtime and the C and C++
libraries, is onlinews code -- the allocation, the racing access, the lock
is ours.  One exception: a data race on a thread's stack, between an
earlier access of ours by the thread that owns the stack and an access of
another library's on another thread.  That is the stack reused: the frame
of ours has returned, and the memory now holds, say, the request of a
blocking MPI_Recv, whose lock Open MPI's progress takes on another thread
with atomics TSan does not see (a fresh-clone CI run: clock_gettime's
timespec in monotonic_ns, then ob1's request mutex at the same address).
A second: a data race between MPI copying a message into or out of memory
(a memcpy, memmove or process_vm_readv called by the MPI library) and an
access of ours or another copy of MPI's, on another thread.  That is a
message buffer of ours, handed to a nonblocking call and read or reused
after MPI_Test or MPI_Wait completed it: the copy may run inside any
thread's MPI call, and what orders it before the completion is Open MPI's
atomics (a fresh-clone CI run: the cut protocol's standing broadcast,
unpacked by an application thread's MPI_Recv, then read by
CutProtocol::poll).  Two accesses of ours,
or an access of MPI's that is not a copy, stay ours.  (What this lets
pass: a buffer of ours reused before MPI completed it.  TSan cannot tell
that from a reuse after the completion, which Open MPI orders out of its
sight; the scenario tests' values would show it.)  (Our reduction
operators, which MPI calls on any thread, tell TSan themselves what orders
them: runtime/tsan_order.hpp.)
Reports that are not ours are counted by kind and innermost module, and
listed.  An UBSan report ("runtime error") is always ours: only
our code is instrumented.

Exit status 1 when any report is ours (the first few are printed)."""
import collections
import glob
import re
import sys
from pathlib import Path

# Frames of the sanitizer runtimes, glibc and libstdc++: the allocation or
# access is made below them on behalf of the frame that called them.
# (libstdc++'s templates too, inlined from its headers: std::min called by
# our code is our access.)
RUNTIME = re.compile(r"libasan|libtsan|libubsan|sanitizer_common|/asan_|/tsan_|tsan_interceptors|libstdc\+\+|/include/c\+\+/|"
                     r"libc\.so|libio/|stdio-common/|string/|debug/|malloc/|/sysdeps/|/csu/|nptl/|operator new")
FRAME = re.compile(r"\s+#\d+ ")


def symbolized(frame):
    """A frame's function and source ("" when unsymbolized): ASan prints
    "#1 0xADDR in FUNCTION FILE:LINE", TSan "#1 FUNCTION FILE:LINE (MODULE+0xOFF)",
    both "(MODULE+0xOFF)" alone or with <null> for an address without symbols."""
    text = re.sub(r"^\s*#\d+\s+(0x[0-9a-f]+\s+)?(in\s+)?", "", frame)
    text = re.sub(r"\s*\([^()]*\+0x[0-9a-f]+\)\s*$|\s*\(<unknown module>\)\s*$", "", text)
    return "" if text.startswith("<null>") else text.strip()


def is_ours(frame, root):
    # Symbolized frames only (an unsymbolized "(module+offset)" of an
    # unloaded plug-in can name our library).
    text = symbolized(frame)
    stage = re.escape(root) + r"/(build[^/]*/)?(runtime|inline_analysis|io|postpass|ompt|include)/"
    return "onlinews::" in text or re.search(stage, text) is not None


def stacks(block):
    """The stacks of a report: runs of consecutive frame lines."""
    out, cur = [], []
    for line in block.splitlines():
        if FRAME.match(line):
            cur.append(line)
        elif cur:
            out.append(cur)
            cur = []
    if cur:
        out.append(cur)
    return out


def innermost(stack):
    return next((f for f in stack if not RUNTIME.search(f)), None)


def module(frame):
    if frame is None:
        return "?"
    if "<unknown module>" in frame:
        return "an unloaded plug-in (<unknown module>)"
    m = re.search(r"\(([^+()]*)\+0x", frame)
    if m:
        # (An unsymbolized address: a plug-in unloaded where it lay can read as
        # an offset past the end of a library mapped below it.)
        return Path(m.group(1)).name + ("" if symbolized(frame) else ", unsymbolized address")
    return symbolized(frame).split(" ")[-1] or "?"


def stack_reuse(kind, block, inner, root):
    """A data race on the stack of the thread whose earlier access was ours,
    with the current access outside onlinews on another thread (the
    module's docstring)."""
    owner = re.search(r"Location is stack of (main thread|thread T\d+)", block)
    earlier = re.search(r"Previous (?:atomic )?(?:read|write) of size \d+ at \S+ by (main thread|thread T\d+)", block)
    # (Stacks in report order: the current access, the earlier one, then
    # where threads or mutexes were created, which must not be ours either.)
    ours = [f is not None and is_ours(f, root) for f in inner]
    return (kind == "data race" and owner is not None and earlier is not None and earlier.group(1) == owner.group(1)
            and len(inner) >= 2 and inner[0] is not None and not ours[0] and ours[1] and not any(ours[2:]))


# How MPI libraries move messages, and which modules are MPI's (Open MPI's,
# MPICH's).
COPY = re.compile(r"\b(memcpy|memmove|process_vm_readv|process_vm_writev)\b")
MPI_LIBRARY = re.compile(r"^(libmpi|libopen-pal|libopen-rte|mca_|libmpich|libucp|libucs)")


def copied_by_mpi(kind, stacks_, inner, root):
    """A data race between MPI's copy of a message and an access of ours or
    another copy (the module's docstring); the first two stacks are the two
    accesses."""
    if kind != "data race" or len(stacks_) < 2:
        return False
    ours = [f is not None and is_ours(f, root) for f in inner[:2]]
    copy = [COPY.search(stacks_[i][0]) is not None and inner[i] is not None and not ours[i]
            and MPI_LIBRARY.search(module(inner[i])) is not None for i in (0, 1)]
    return (copy[0] or copy[1]) and all(c or o for c, o in zip(copy, ours))


def reports(text):
    """(kind, block) for every report in a log file."""
    # TSan puts each report between lines of '='; ASan's leak reports are
    # paragraphs after one "ERROR: LeakSanitizer" header.
    for chunk in re.split(r"\n?={10,}\n", text):
        if "WARNING: ThreadSanitizer" in chunk:
            yield re.search(r"WARNING: ThreadSanitizer: ([^(\n]*)", chunk).group(1).strip(), chunk
            continue
        for block in chunk.split("\n\n"):
            if re.search(r"^(Direct|Indirect) leak of", block, re.M):
                yield "leak", block
            elif "ERROR: AddressSanitizer" in block:
                yield re.search(r"ERROR: AddressSanitizer: (\S+)", block).group(1), block
            elif "runtime error:" in block:
                yield "undefined behaviour", block


def main():
    prefix = sys.argv[1]
    root = str(Path(sys.argv[2] if len(sys.argv) > 2 else Path(__file__).resolve().parents[2]).resolve())
    ours, theirs, files = [], collections.Counter(), 0
    for path in sorted(glob.glob(prefix + ".*")):
        files += 1
        for kind, block in reports(Path(path).read_text(errors="replace")):
            stacks_ = stacks(block)
            inner = [innermost(s) for s in stacks_]
            if stack_reuse(kind, block, inner, root):
                theirs[(kind + " on a reused stack", module(inner[0]))] += 1
            elif copied_by_mpi(kind, stacks_, inner, root):
                mpi = next(f for f in inner[:2] if not is_ours(f, root))
                theirs[(kind + " on a message buffer of ours, copied by MPI", module(mpi))] += 1
            elif kind == "undefined behaviour" or any(f is not None and is_ours(f, root) for f in inner):
                ours.append((kind, path, block))
            else:
                theirs[(kind, module(inner[0] if inner else None))] += 1
    for (kind, mod), n in theirs.most_common():
        print(f"  not onlinews' ({n}x): {kind}, innermost frame in {mod}")
    if ours:
        for kind, path, block in ours[:3]:
            print(f"--- {kind} ({path})\n{block}")
        print(f"FAIL: {len(ours)} sanitizer report(s) in onlinews code")
        return 1
    print(f"PASS: no sanitizer report in onlinews code ({sum(theirs.values())} elsewhere, {files} log files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
