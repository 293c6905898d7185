#!/usr/bin/python3
"""Call sites without recompiling: callsites.cpp (built without onlinews,
-g -O2) runs on 2 ranks under LD_PRELOAD=libonlinews.so.  Rank 0 sleeps
0.2 s before its first send and 0.4 s more before its second, which rank 1
receives in app::recv_early and app::recv_late at the lines marked
SITE-EARLY and SITE-LATE in the source (found there, not written here).
Expected:

  MPI_Recv has two call paths under the executable's root region, one per
  call site, named by function (demangled), file and line;
  mpi_latesender at SITE-EARLY in app::recv_early(double*) == 0.2 s and at
  SITE-LATE in app::recv_late(double*) == 0.4 s, each within 30 ms;
  with ONLINEWS_CALLSITES=0 the file has no call sites, one MPI_Recv call
  path, and its Late Sender is the sum, 0.6 s.

Timed by sleeps: 3 attempts (run_scenario.until_passed)."""
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "tools" / "python"))
import onlinews_h5  # noqa: E402

sys.path.insert(0, str(HERE))
from run_scenario import launch, mpi_env, near, preload, preloaded_script  # noqa: E402

SOURCE = HERE / "callsites.cpp"
EARLY, LATE = "app::recv_early(double*)", "app::recv_late(double*)"


def marked_line(marker):
    for n, text in enumerate(SOURCE.read_text().splitlines(), start=1):
        if marker in text and "MPI_Recv(" in text:
            return n
    sys.exit(f"{marker} not found in {SOURCE}")


def run(args, work, name, **env):
    out = work / f"{name}.h5"
    out.unlink(missing_ok=True)
    cmd = launch(args.mpiexec, 2) + preload(args.mpiexec, args.lib) + [args.exe]
    p = subprocess.run(cmd, env=mpi_env(ONLINEWS_OUTPUT=str(out), **env), cwd=work, capture_output=True,
                       text=True, timeout=120)
    if p.returncode != 0:
        return None, [f"{name}: exit code {p.returncode}:\n{(p.stdout + p.stderr)[-2000:]}"]
    return onlinews_h5.Result(str(out)), []



def attempt(args, work, k):
    early, late = marked_line("SITE-EARLY"), marked_line("SITE-LATE")
    r, failures = run(args, work, f"sites{k}")
    if r is None:
        return failures
    recvs = r.callpaths_of_region("MPI_Recv")
    names = sorted(r.callpath_name(cp) for cp in recvs)
    print("MPI_Recv call paths:", *names, sep="\n  ")
    want = {(EARLY, "callsites.cpp", early), (LATE, "callsites.cpp", late)}
    got = {(r.sites[r.cp_site[cp]][0], Path(r.sites[r.cp_site[cp]][1]).name, r.sites[r.cp_site[cp]][2])
           for cp in recvs if r.cp_site[cp] >= 0}
    if got != want or len(recvs) != 2:
        failures.append(f"MPI_Recv's call sites: {sorted(got)}, expected {sorted(want)}")
    if any(r.cp_parent[cp] < 0 or r.region_kinds[r.cp_region[r.cp_parent[cp]]] != "root" for cp in recvs):
        failures.append("MPI_Recv's call paths should lie directly under the root region")
    for function, line, want in ((EARLY, early, 0.2), (LATE, late, 0.4)):
        near(failures, f"Late Sender at {function}:{line}",
             r.value("mpi_latesender", rank=1, site=(function, line)), want, 0.03)

    off, more = run(args, work, f"off{k}", ONLINEWS_CALLSITES="0")
    if off is None:
        return failures + more
    if off.sites or len(off.callpaths_of_region("MPI_Recv")) != 1:
        failures.append(f"ONLINEWS_CALLSITES=0: {len(off.sites)} call sites, "
                        f"{len(off.callpaths_of_region('MPI_Recv'))} MPI_Recv call paths (expected 0 and 1)")
    near(failures, "ONLINEWS_CALLSITES=0: Late Sender",
         off.value("mpi_latesender", rank=1, region="MPI_Recv"), 0.6, 0.03)
    return failures


if __name__ == "__main__":
    sys.exit(preloaded_script("callsites built without onlinews", attempt, "callsites: passed"))
