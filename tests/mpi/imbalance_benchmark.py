#!/usr/bin/python3
"""Seed 003's synthetic benchmark (imbalance.c): the critical-path imbalance
of work() is ~25 % of the average workload in the static, dynamic and mixed
scenarios (and ~0 when balanced), while the profile's max - avg finds it only
in the static one (about 10.7 % in the mixed one).  Prints both numbers."""
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "python"))
import onlinews_h5  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_scenario import launch, mpi_env, script_args, validate  # noqa: E402

EXPECT = {  # scenario: (critical-path imbalance %, profile max-avg %)
    "balanced": (0.0, 0.0), "static": (25.0, 25.0), "dynamic": (25.0, 0.0), "mixed": (25.0, 10.7)}
TOLERANCE = 3.0  # percentage points: sleep and scheduling jitter on 8 oversubscribed ranks


def main():
    ap = script_args()
    args = ap.parse_args()
    work = Path(args.workdir)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    failures = []
    print(f"{'scenario':10s} {'wall [s]':>9s} {'avg work [s]':>13s} {'CP imbalance':>13s} {'profile max-avg':>16s}")
    for scenario, (want_cp, want_prof) in EXPECT.items():
        out = work / f"{scenario}.h5"
        env = mpi_env(ONLINEWS_OUTPUT=str(out), ONLINEWS_VERBOSE="0")
        p = subprocess.run(launch(args.mpiexec, 8) + [args.exe, scenario], env=env, cwd=work,
                           capture_output=True, text=True, timeout=300)
        if p.returncode != 0:
            print(p.stderr)
            failures.append(f"{scenario}: exit code {p.returncode}")
            continue
        r = onlinews_h5.Result(str(out))
        failures += [f"{scenario}: {p}" for p in validate(r)]
        per_rank = r.per_rank("time", region="work")
        avg = per_rank.mean()
        cp_imb = 100 * r.value("critical_path_imbalance", region="work") / avg
        prof = 100 * (per_rank.max() - avg) / avg
        ok = abs(cp_imb - want_cp) <= TOLERANCE and abs(prof - want_prof) <= TOLERANCE
        print(f"{scenario:10s} {float(r.attrs['wall_seconds']):9.2f} {avg:13.3f} {cp_imb:12.1f}% {prof:15.1f}%"
              f"   (expected {want_cp:.1f}% / {want_prof:.1f}%) {'ok' if ok else 'FAIL'}")
        if not ok:
            failures.append(scenario)
    print("PASS" if not failures else "FAIL: " + ", ".join(failures))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
