#!/usr/bin/python3
"""Kill safety, state by state: the file states a SIGKILL can leave.

kill_trials.py kills jobs at random moments; a window of a few
microseconds is hit once in hundreds of CI runs (it was: "truncated file:
eof = 951759, stored_eof = 952783", a file 1024 bytes shorter than the end
its superblock records).  This test looks at every state instead.  It runs
random_program (4 ranks, a cut at every opportunity, 64K buffers, as the
kill trials do) with file_states.so preloaded, which, after every write or
truncate of the result file, compares the file's size with its superblock's
end of file and copies the file after every truncate (file_states.c).  Twice:
/profile gathered to rank 0 (the default at this size) and written through
parallel HDF5 (ONLINEWS_TEST_PARALLEL_PROFILE=1).

Expected, derived from what a kill may leave (kill_trials.py's docstring):
  * the job finishes, complete = 1, with every epoch of its live log;
  * at least 2 truncates per epoch were seen (each epoch's append ends
    with kill-safe flushes, each extending the file first and trimming it
    after), so the states looked at are the ones of the appends;
  * in no state is the file shorter than its superblock's end of file;
  * every state right after a truncate opens with h5py and holds what
    kill_trials requires of a killed job's file.  A kill is likeliest
    there: shrinking a file is the slowest of these calls, and SIGKILL
    acts when it returns.

Not checked: the states in the middle of one H5Fflush's metadata writes.
HDF5 1.10 writes a flush's metadata in no crash-consistent order (the
superblock's end of file last), so a kill within those few writes can
leave a header that points past it; docs/output.md says so."""
import os
import subprocess
import sys
from pathlib import Path

import h5py

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kill_trials import holds  # noqa: E402
from run_scenario import Checks, fresh_workdir, launch, mpi_env, sanitizer_runtimes, script_arguments, verdict  # noqa: E402


def run(args, work, name, check, **env):
    out = work / f"{name}.h5"
    states = work / f"{name}.states"
    states.mkdir()
    log = work / f"{name}.calls"
    cmd = launch(args.mpiexec, 4) + [args.exe, "7", "80"]
    environment = mpi_env(ONLINEWS_OUTPUT=str(out), ONLINEWS_EPOCH_SECONDS="0", ONLINEWS_BUFFER="64K",
                          LD_PRELOAD=":".join(sanitizer_runtimes(args.exe) + [args.shim]), FILE_STATES_TARGET=str(out), FILE_STATES_DIR=str(states),
                          FILE_STATES_LOG=str(log), **env)
    with open(work / f"{name}.log", "w") as output:
        rc = subprocess.run(cmd, env=environment, cwd=work, stdout=output, stderr=subprocess.STDOUT,
                            timeout=600).returncode
    check(rc == 0, f"{name}: the job exits 0 ({rc})")
    live = work / f"{name}.live"
    epochs = sum(line.startswith('{"epoch":') for line in live.read_text().splitlines()) if live.exists() else 0
    with h5py.File(out, "r") as f:
        ok, what = holds(f, epochs)
        check(ok and int(f.attrs.get("complete", 0)) == 1, f"{name}: the finished file: {what}")
    lines = log.read_text().splitlines() if log.exists() else []
    calls = [list(map(int, line.split()[1:])) for line in lines if line.startswith("calls ")]
    changes, truncates = sum(c[1] for c in calls), sum(c[2] for c in calls)
    check(truncates >= 2 * epochs > 0,
          f"{name}: {changes} writes and {truncates} truncates of the file seen, for {epochs} epochs "
          f"(at least 2 truncates an epoch)")
    short = [line for line in lines if line.startswith("short ")]
    check(not short, f"{name}: no state shorter than its superblock's end of file ({len(short)}: {short[:3]})")
    bad = []
    copies = sorted(states.iterdir())
    for state in copies:
        try:
            with h5py.File(state, "r") as f:
                ok, what = holds(f)
            if not ok:
                bad.append(f"{state.name}: {what}")
        except OSError as e:
            bad.append(f"{state.name}: {e}")
        state.unlink()
    check(copies and not bad, f"{name}: {len(copies)} states after a truncate open and hold the epochs "
          f"finished ({len(bad)} do not: {bad[:3]})")


def main():
    ap = script_arguments("random_program built with onlinews")
    ap.add_argument("--shim", required=True, help="file_states.so")
    args = ap.parse_args()
    work = fresh_workdir(args)
    args.shim = str(Path(args.shim).resolve())
    check = Checks()
    run(args, work, "gathered", check)
    run(args, work, "parallel", check, ONLINEWS_TEST_PARALLEL_PROFILE="1")
    return verdict(check.failures, "PASS")


if __name__ == "__main__":
    sys.exit(main())
