#!/usr/bin/python3
"""A full disk under the result file: the job goes on, the file keeps what
was written.

random_program (seed 10, 120 steps, 4 ranks, a cut at every opportunity:
~70 epochs) runs with file_states.so preloaded as a disk full at 500 000
bytes: writes to the result file past that fail with ENOSPC, and fstatvfs
reports only what is left below it.  With room the file reaches ~1.1 MB;
each flush first asks for room (io/h5_flush.cpp: twice what it may add,
and 1 MiB), so here the first epoch's flush is not made, and none halfway.
That the epochs before a failure stay is the unit test's ("a file whose
writes fail is closed, and keeps the epochs before": 10 epochs and more).
Before this was handled, HDF5's close failed in
its flush at MPI_Finalize and left its identifier pointing at freed memory,
which HDF5's own shutdown closed again: the application died of SIGSEGV
(exit code 139), after one warning per epoch.  Expected:
  * the job exits 0 and prints the program's own result line, the same as
    in a run with room (the application's results never change);
  * one warning, naming the file and the likely cause, not one per epoch;
  * the file opens with h5py, complete = 0, each table row with its
    metric rows (kill_trials.holds), no /profile."""
import subprocess
import sys
from pathlib import Path

import h5py

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kill_trials import holds  # noqa: E402
from run_scenario import Checks, fresh_workdir, launch, mpi_env, sanitizer_runtimes, script_arguments, verdict  # noqa: E402

FULL_AT = 500_000


def run(args, work, name, **env):
    out = work / f"{name}.h5"
    cmd = launch(args.mpiexec, 4) + [args.exe, "10", "120"]
    p = subprocess.run(cmd, env=mpi_env(ONLINEWS_OUTPUT=str(out), ONLINEWS_EPOCH_SECONDS="0", ONLINEWS_BUFFER="64K",
                                        **env),
                       cwd=work, capture_output=True, text=True, timeout=600)
    (work / f"{name}.log").write_text(p.stdout + p.stderr)
    return p, out


def main():
    ap = script_arguments("random_program built with onlinews")
    ap.add_argument("--shim", required=True, help="file_states.so")
    args = ap.parse_args()
    work = fresh_workdir(args)
    shim = ":".join(sanitizer_runtimes(args.exe) + [str(Path(args.shim).resolve())])
    check = Checks()
    room, _ = run(args, work, "room")
    full, out = run(args, work, "full", LD_PRELOAD=shim, FILE_STATES_TARGET=str(work / "full.h5"),
                    FILE_STATES_FULL_AT=str(FULL_AT))
    check(room.returncode == 0, f"with room: exit code {room.returncode}")
    check(full.returncode == 0, f"with the disk full at {FULL_AT} bytes: exit code {full.returncode} (0)")
    results = [[line for line in p.stdout.splitlines() if not line.startswith("onlinews")] for p in (room, full)]
    check(results[0] == results[1] and results[0], f"the program's own output is the same ({results[1][-1:]})")
    warnings = [line for line in full.stderr.splitlines() if "failed" in line and "onlinews: warning" in line]
    check(len(warnings) == 1 and "disk full" in warnings[0] and str(out) in warnings[0],
          f"one warning naming the file and a full disk: {warnings[:3]}")
    try:
        with h5py.File(out, "r") as f:
            ok, what = holds(f)
            complete = int(f.attrs.get("complete", -1))
            check(ok and complete == 0 and "profile" not in f, f"the file opens: {what}; no /profile")
    except OSError as e:
        check(False, f"h5py cannot open the file: {e}")
    return verdict(check.failures, "PASS")


if __name__ == "__main__":
    sys.exit(main())
