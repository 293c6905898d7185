#!/usr/bin/python3
"""HDF5 is loaded only by the ranks that write (io/module.hpp): robust.c
maps (the late-sender pair: rank 0 sleeps 0.3 s before its send, so rank 1
waits 0.3 s) on 2 ranks prints how many libhdf5 mappings each rank has
before MPI_Finalize.

  * With the build's libonlinews: rank 0, which writes the epoch tables,
    has libhdf5 mapped; rank 1 has none (its small profile is gathered to
    rank 0); the file is complete and holds rank 1's 0.3 s Late Sender
    (+- 50 ms; a timed check: up to 3 attempts).
  * Preloaded through a symlink in another directory: the module is found
    next to the file the link names; the file is written.
  * A copy of libonlinews alone in a directory (its module missing,
    preloaded so that it stands for the linked one): the job still exits
    0 and prints its summary with the Late Sender, one warning names the
    module it could not load, no rank maps libhdf5, no file is written."""
import re
import shutil
import subprocess
import sys
from pathlib import Path

import h5py

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_scenario import Checks, launch, mpi_env, preload, script_args, until_passed, verdict  # noqa: E402


def run(args, work, out, extra):
    cmd = launch(args.mpiexec, 2) + extra + [str(Path(args.exe).resolve()), "maps"]
    print("$ " + " ".join(cmd), flush=True)
    p = subprocess.run(cmd, env=mpi_env(ONLINEWS_OUTPUT=str(out)), cwd=work, capture_output=True, text=True,
                       timeout=120)
    sys.stdout.write(p.stdout)
    sys.stdout.write(p.stderr)
    maps = {int(r): int(n) for r, n in re.findall(r"^rank (\d+) libhdf5 (\d+)$", p.stdout, re.M)}
    return p, maps


def check_written(check, label, p, maps, out):
    check(p.returncode == 0, f"{label}: exit code 0 (got {p.returncode})")
    check(maps.get(0, 0) > 0, f"{label}: rank 0 has libhdf5 mapped ({maps.get(0)} mappings)")
    check(maps.get(1, -1) == 0, f"{label}: rank 1 has no libhdf5 mapped ({maps.get(1)} mappings)")
    if not out.exists():
        check(False, f"{label}: {out} written")
        return
    with h5py.File(out, "r") as f:
        check(int(f.attrs["complete"]) == 1, f"{label}: the file is complete")
        ls = f["profile/mpi_latesender"][:, 1].sum() if "profile/mpi_latesender" in f else -1.0
        check(abs(ls - 0.3) <= 0.05, f"{label}: rank 1's Late Sender {ls:.3f} s, expected 0.300 +- 0.050", timed=True)


def attempt(args, work, k):
    check = Checks(args.untimed)
    trial = work / f"attempt{k}"
    trial.mkdir()
    out = trial / "with.h5"
    p, maps = run(args, trial, out, [])
    check_written(check, "linked", p, maps, out)

    lib = Path(args.lib).resolve()
    linked = trial / "linked"
    linked.mkdir()
    (linked / lib.name).symlink_to(lib)
    out = trial / "symlink.h5"
    p, maps = run(args, trial, out, preload(args.mpiexec, str(linked / lib.name)))
    check_written(check, "through a symlink", p, maps, out)

    alone = trial / "alone"
    alone.mkdir()
    shutil.copy(lib, alone / lib.name)
    out = trial / "without.h5"
    p, maps = run(args, trial, out, preload(args.mpiexec, str(alone / lib.name)))
    check(p.returncode == 0, f"without the module: exit code 0 (got {p.returncode})")
    named = [line for line in p.stderr.splitlines() if "libonlinews_io.so" in line]
    check(len(named) == 1, f"without the module: one warning names libonlinews_io.so ({len(named)} lines)")
    check("Late Sender" in p.stderr, "without the module: the summary still lists the Late Sender")
    check(sorted(maps) == [0, 1] and all(n == 0 for n in maps.values()),
          f"without the module: no rank maps libhdf5 ({maps})")
    check(not out.exists(), "without the module: no file written")
    return check.failures


def main():
    ap = script_args()
    ap.add_argument("--lib", required=True, help="the build's libonlinews.so")
    args = ap.parse_args()
    work = Path(args.workdir).resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    sys.exit(verdict(until_passed(3, lambda k: attempt(args, work, k)), "all checks passed"))


if __name__ == "__main__":
    main()
