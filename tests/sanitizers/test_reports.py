#!/usr/bin/python3
"""reports.py on hand-written sanitizer logs: which reports are onlinews'
own (the run fails) and which are the MPI library's (listed).  The frames
are shaped like the ones Debian's GCC 12 sanitizers print."""
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = "/src/onlinews"

OPEN_MPI_LEAK = """==101==ERROR: LeakSanitizer: detected memory leaks

Direct leak of 8192 byte(s) in 1 object(s) allocated from:
    #0 0x7f16016b83b7 in __interceptor_calloc ../../../../src/libsanitizer/asan/asan_malloc_linux.cpp:77
    #1 0x7f15fa6de48d  (<unknown module>)
    #2 0x7f15fe3d8b6d in orte_init (/lib/x86_64-linux-gnu/libopen-rte.so.40+0x94b6d)
    #3 0x7f15ff742b7c in PMPI_Init (/lib/x86_64-linux-gnu/libmpi.so.40+0x81b7c)
    #4 0x7f160014af5a in MPI_Init /src/onlinews/build-asan/runtime/generated/mpi_wrappers.gen.cpp:22

Direct leak of 1 byte(s) in 1 object(s) allocated from:
    #0 0x7fd5ff67077b in __interceptor_strdup ../../../../src/libsanitizer/asan/asan_interceptors.cpp:439
    #1 0x7fd5f9b0f2e3  (/src/onlinews/build-asan/runtime/libonlinews.so.0.1.0+0x5e252e3)
    #2 0x7fd5fc8eb249 in mca_base_framework_components_register (/lib/x86_64-linux-gnu/libopen-pal.so.40+0x5e249)

Indirect leak of 692 byte(s) in 173 object(s) allocated from:
    #0 0x7f16016b89cf in __interceptor_malloc ../../../../src/libsanitizer/asan/asan_malloc_linux.cpp:69
    #1 0x7f15ff73ba6e in PMPI_File_write_at_all (/lib/x86_64-linux-gnu/libmpi.so.40+0x7aa6e)
    #2 0x7f16003f6465 in onlinews::io::write_profile(...) /src/onlinews/io/profile_writer.cpp:48

SUMMARY: AddressSanitizer: 8885 byte(s) leaked in 175 allocation(s).
"""

OUR_LEAK = """==102==ERROR: LeakSanitizer: detected memory leaks

Direct leak of 64 byte(s) in 1 object(s) allocated from:
    #0 0x7f16016b89cf in operator new(unsigned long) ../../../../src/libsanitizer/asan/asan_new_delete.cpp:95
    #1 0x7f160031a1b2 in std::vector<double>::_M_realloc_insert (/lib/x86_64-linux-gnu/libstdc++.so.6+0x9a1b2)
    #2 0x7f16003b2ae1 in onlinews::rt::finish_output(onlinews::rt::State&) /src/onlinews/runtime/output_final.cpp:173
    #3 0x7f160014c457 in MPI_Finalize /src/onlinews/build-asan/runtime/generated/mpi_wrappers.gen.cpp:50

SUMMARY: AddressSanitizer: 64 byte(s) leaked in 1 allocation(s).
"""

TEST_PROGRAM_LEAK = """==103==ERROR: LeakSanitizer: detected memory leaks

Direct leak of 32 byte(s) in 1 object(s) allocated from:
    #0 0x7f16016b89cf in __interceptor_malloc ../../../../src/libsanitizer/asan/asan_malloc_linux.cpp:69
    #1 0x564e11b94291 in main /src/onlinews/tests/mpi/late_sender_chain.c:16
"""

TSAN_OPEN_MPI = """==================
WARNING: ThreadSanitizer: data race (pid=201)
  Write of size 8 at 0x7b0400000010 by thread T2:
    #0 memcpy ../../../../src/libsanitizer/sanitizer_common/sanitizer_common_interceptors.inc:827
    #1 mca_btl_vader_component_progress (/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/mca_btl_vader.so+0x5a3f)
    #2 onlinews::rt::pmpi_test (/src/onlinews/runtime/progress.cpp:40)

  Previous read of size 8 at 0x7b0400000010 by main thread:
    #0 ompi_request_default_wait (/lib/x86_64-linux-gnu/libmpi.so.40+0x4e1c2)

SUMMARY: ThreadSanitizer: data race (/lib/x86_64-linux-gnu/libmpi.so.40+0x4e1c2) in ompi_request_default_wait
==================
"""

TSAN_OURS = """==================
WARNING: ThreadSanitizer: data race (pid=202)
  Write of size 1 at 0x7f00 by thread T1:
    #0 onlinews::rt::hooks::claim(onlinews::rt::Call&) /src/onlinews/runtime/hooks_p2p.cpp:88 (libonlinews.so.0+0x12)

  Previous write of size 1 at 0x7f00 by main thread:
    #0 onlinews::rt::hooks::claim(onlinews::rt::Call&) /src/onlinews/runtime/hooks_p2p.cpp:88 (libonlinews.so.0+0x12)

SUMMARY: ThreadSanitizer: data race /src/onlinews/runtime/hooks_p2p.cpp:88 in onlinews::rt::hooks::claim
==================
"""

# (The CI run's report, shortened: our frame's timespec, then ob1's request
# on the same stack address, locked by another thread.)
TSAN_STACK_REUSE = """==================
WARNING: ThreadSanitizer: data race (pid=203)
  Atomic read of size 1 at 0x7fffbb1fab08 by thread T3:
    #0 pthread_mutex_lock ../../../../src/libsanitizer/sanitizer_common/sanitizer_common_interceptors.inc:4324 (libtsan.so.2+0x558e1)
    #1 <null> <null> (mca_pml_ob1.so+0x1bc59)
    #2 ring /src/onlinews/tests/mpi/thread_ring.c:114 (thread_ring_plain+0x2df3)

  Previous write of size 8 at 0x7fffbb1fab08 by main thread:
    #0 clock_gettime ../../../../src/libsanitizer/sanitizer_common/sanitizer_common_interceptors.inc:2185 (libtsan.so.2+0x43563)
    #1 onlinews::rt::monotonic_ns() /src/onlinews/runtime/clock.hpp:21 (libonlinews.so+0xaf8d1)
    #2 onlinews::rt::call_enter(onlinews::rt::Call&) /src/onlinews/runtime/hooks.hpp:134 (libonlinews.so+0xaf8d1)

  Location is stack of main thread.

SUMMARY: ThreadSanitizer: data race (mca_pml_ob1.so+0x1bc59)
==================
"""

# The same, but the stack is another thread's than the one whose access
# was ours: not a reused frame of ours.
TSAN_OTHER_STACK = TSAN_STACK_REUSE.replace("Location is stack of main thread", "Location is stack of thread T3")

# (The CI run's report, shortened: the cut protocol's broadcast buffer,
# unpacked by an application thread's receive, read after MPI_Test.)
TSAN_MPI_COPY = """==================
WARNING: ThreadSanitizer: data race (pid=204)
  Read of size 8 at 0x7b2c0002a838 by main thread:
    #0 onlinews::rt::CutProtocol::poll() /src/onlinews/runtime/cut_protocol.cpp:136 (libonlinews.so+0xa1b2c)
    #1 onlinews::rt::hooks::post_p2p(onlinews::rt::Call&, int) /src/onlinews/runtime/hooks_p2p.cpp:60 (libonlinews.so+0xa3000)

  Previous write of size 8 at 0x7b2c0002a838 by thread T5:
    #0 memcpy ../../../../src/libsanitizer/sanitizer_common/sanitizer_common_interceptors.inc:827 (libtsan.so.2+0x5dda6)
    #1 memcpy ../../../../src/libsanitizer/sanitizer_common/sanitizer_common_interceptors.inc:819 (libtsan.so.2+0x5dda6)
    #2 opal_convertor_unpack <null> (libopen-pal.so.40+0x41273)
    #3 ring /src/onlinews/tests/mpi/thread_ring.c:106 (thread_ring_plain+0x2f49)

  Location is heap block of size 168 at 0x7b2c0002a7f0 allocated by main thread:
    #0 operator new(unsigned long) ../../../../src/libsanitizer/tsan/tsan_new_delete.cpp:64 (libtsan.so.2+0x87323)
    #1 start /src/onlinews/runtime/hooks_init.cpp:223 (libonlinews.so+0xa053e)

  Thread T5 (tid=26821, running) created by main thread at:
    #0 pthread_create ../../../../src/libsanitizer/tsan/tsan_interceptors_posix.cpp:1001 (libtsan.so.2+0x5e686)
    #1 main /src/onlinews/tests/mpi/thread_ring.c:142 (thread_ring_plain+0x2440)

SUMMARY: ThreadSanitizer: data race /src/onlinews/runtime/cut_protocol.cpp:136 in onlinews::rt::CutProtocol::poll()
==================
"""

# The copy made by onlinews instead of MPI, and MPI reading our memory
# without a copy: both stay ours.
TSAN_OUR_COPY = TSAN_MPI_COPY.replace(
    "    #2 opal_convertor_unpack <null> (libopen-pal.so.40+0x41273)\n",
    "    #2 onlinews::rt::Drain::copy() /src/onlinews/runtime/drain.cpp:50 (libonlinews.so+0x1234)\n")
TSAN_MPI_NOT_A_COPY = TSAN_MPI_COPY.replace(
    "    #0 memcpy ../../../../src/libsanitizer/sanitizer_common/sanitizer_common_interceptors.inc:827 (libtsan.so.2+0x5dda6)\n"
    "    #1 memcpy ../../../../src/libsanitizer/sanitizer_common/sanitizer_common_interceptors.inc:819 (libtsan.so.2+0x5dda6)\n",
    "")

# Our read inlined from libstdc++'s headers (std::max in our reduction
# operator) is ours, so this is the same MPI copy; and two of MPI's copies
# (one sends what another received) in a buffer we allocated are MPI's.
TSAN_MPI_COPY_INLINED = TSAN_MPI_COPY.replace(
    "    #0 onlinews::rt::CutProtocol::poll()",
    "    #0 long const& std::max<long>(long const&, long const&) /usr/include/c++/12/bits/stl_algobase.h:259 "
    "(libonlinews.so+0x1651a3)\n"
    "    #1 onlinews::rt::CutProtocol::poll()")
TSAN_TWO_MPI_COPIES = TSAN_MPI_COPY.replace(
    "    #0 onlinews::rt::CutProtocol::poll() /src/onlinews/runtime/cut_protocol.cpp:136 (libonlinews.so+0xa1b2c)\n",
    "    #0 memcpy ../../../../src/libsanitizer/sanitizer_common/sanitizer_common_interceptors.inc:827 "
    "(libtsan.so.2+0x5dda6)\n"
    "    #1 mca_btl_vader_sendi <null> (mca_btl_vader.so+0x633c)\n")

UBSAN = """/src/onlinews/inline_analysis/sym.cpp:40:7: runtime error: signed integer overflow: 2147483647 + 1 cannot be represented in type 'int'
    #0 0x7f1 in onlinews::analysis::SymTable::reduce /src/onlinews/inline_analysis/sym.cpp:40
"""


def verdict(logs):
    """reports.py's exit status and output on files holding `logs`."""
    with tempfile.TemporaryDirectory() as d:
        for i, text in enumerate(logs):
            Path(d, f"asan.{1000 + i}").write_text(text)
        p = subprocess.run([sys.executable, str(HERE / "reports.py"), f"{d}/asan", ROOT], capture_output=True,
                           text=True)
        return p.returncode, p.stdout


def main():
    failures = []
    cases = [
        ("Open MPI's leaks (an unloaded plug-in, one read as past our library's end, MPI-IO under our writer)",
         [OPEN_MPI_LEAK], 0, "3 elsewhere"),
        ("a leak allocated by onlinews (through libstdc++)", [OPEN_MPI_LEAK, OUR_LEAK], 1, "1 sanitizer report(s)"),
        ("a test program's own leak is not the library's", [TEST_PROGRAM_LEAK], 0, "1 elsewhere"),
        ("a race inside Open MPI's progress, driven by our PMPI call", [TSAN_OPEN_MPI], 0, "1 elsewhere"),
        ("a race in onlinews code", [TSAN_OPEN_MPI, TSAN_OURS], 1, "1 sanitizer report(s)"),
        ("Open MPI on a stack our returned frame used (the owning thread's earlier access)", [TSAN_STACK_REUSE], 0,
         "data race on a reused stack"),
        ("the same on another thread's stack is ours", [TSAN_OTHER_STACK], 1, "1 sanitizer report(s)"),
        ("MPI's copy of a message into a buffer of ours, which we read after its completion", [TSAN_MPI_COPY], 0,
         "on a message buffer of ours, copied by MPI, innermost frame in libopen-pal"),
        ("the same, our access inlined from libstdc++'s headers", [TSAN_MPI_COPY_INLINED], 0,
         "copied by MPI, innermost frame in libopen-pal"),
        ("two of MPI's copies in a buffer we allocated", [TSAN_TWO_MPI_COPIES], 0, "copied by MPI"),
        ("the same copy made by onlinews is ours", [TSAN_OUR_COPY], 1, "1 sanitizer report(s)"),
        ("MPI's access to our memory that is not a copy is ours", [TSAN_MPI_NOT_A_COPY], 1, "1 sanitizer report(s)"),
        ("undefined behaviour is always ours", [UBSAN], 1, "1 sanitizer report(s)"),
        ("no reports", [], 0, "0 elsewhere, 0 log files"),
    ]
    for name, logs, want_rc, want_text in cases:
        rc, out = verdict(logs)
        ok = rc == want_rc and want_text in out
        print(f"  {'ok  ' if ok else 'FAIL'} {name}: exit {rc} (want {want_rc}), output has '{want_text}'")
        if not ok:
            failures.append(name)
            print(out)
    print("PASS" if not failures else f"FAIL: {len(failures)} case(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
