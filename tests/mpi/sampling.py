#!/usr/bin/python3
"""Sampling without recompiling: sampling.c (built without onlinews, -O2)
runs on 2 ranks under LD_PRELOAD=libonlinews.so with ONLINEWS_SAMPLING=1000.
Rank 0 runs work_a() and work_b() 20 times each, work_a() twice the loop
iterations of work_b(), then sends to rank 1, which waits in MPI_Recv; the
program prints the wall time it measured in each function.  With f the
measured share of work_a (2/3 by construction, whatever load made of it):

  work_a and work_b are regions of kind "sampled" directly under the root;
  their share of rank 0's computation (comp), of the delay costs of rank 1's
  Late Sender (delay_latesender) and of the critical path is f, within 10 %;
  together they cover at least half the time measured in them (each
  instant goes to the nearest sample within 10 ms, docs/analyses.md; a
  loaded machine can keep the process off the CPU for longer);
  the file counts the samples (sampling_hz, samples_placed);
  onlinews-report lists work_a and work_b with those seconds in its
  "Computation by sampled function" section (text and --json).

The same holds with ONLINEWS_EPOCH_SECONDS=0 (requested cuts between the
samples).  Timed by the CPU: 3 attempts (run_scenario.until_passed)."""
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "tools" / "python"))
import onlinews_h5  # noqa: E402
from onlinews_report import model, text  # noqa: E402

sys.path.insert(0, str(HERE))
from run_scenario import launch, mpi_env, preload, preloaded_script  # noqa: E402

HZ = 1000


def run(args, work, name, **env):
    out = work / f"{name}.h5"
    out.unlink(missing_ok=True)
    cmd = launch(args.mpiexec, 2) + preload(args.mpiexec, args.lib) + [args.exe]
    p = subprocess.run(cmd, env=mpi_env(ONLINEWS_OUTPUT=str(out), ONLINEWS_SAMPLING=str(HZ), **env), cwd=work,
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        return None, None, [f"{name}: exit code {p.returncode}:\n{(p.stdout + p.stderr)[-2000:]}"]
    m = re.search(r"measured work_a ([0-9.]+) work_b ([0-9.]+)", p.stdout)
    if m is None:
        return None, None, [f"{name}: the program's measurement is missing:\n{p.stdout[-1000:]}"]
    return onlinews_h5.Result(str(out)), (float(m.group(1)), float(m.group(2))), []


def check(r, measured, label):
    failures = []
    ta, tb = measured
    f = ta / (ta + tb)
    print(f"{label}: measured work_a {ta:.3f} s, work_b {tb:.3f} s: share {f:.3f}")
    for fn in ("work_a", "work_b"):
        cps = r.callpaths_of_region(fn)
        kinds = {r.region_kinds[r.cp_region[cp]] for cp in cps}
        parents = {r.region_kinds[r.cp_region[r.cp_parent[cp]]] if r.cp_parent[cp] >= 0 else None for cp in cps}
        if kinds != {"sampled"} or parents != {"root"}:
            failures.append(f"{label}: {fn}: region kinds {kinds} under {parents}, expected sampled under root")
    for metric in ("comp", "delay_latesender", "critical_path"):
        a, b = r.value(metric, rank=0, region="work_a"), r.value(metric, rank=0, region="work_b")
        share = a / (a + b) if a + b > 0 else 0.0
        print(f"{label}: {metric}: work_a {a:.3f} s, work_b {b:.3f} s: share {share:.3f}")
        if abs(share - f) > 0.1 * f:
            failures.append(f"{label}: {metric}: work_a's share {share:.3f}, measured {f:.3f} (10 % allowed)")
    covered = r.value("comp", rank=0, region="work_a") + r.value("comp", rank=0, region="work_b")
    if covered < 0.5 * (ta + tb) or covered > 1.05 * (ta + tb):
        failures.append(f"{label}: the sampled functions cover {covered:.3f} s of the {ta + tb:.3f} s measured")
    if int(r.attrs.get("sampling_hz", 0)) != HZ or int(r.attrs.get("samples_placed", 0)) < 100:
        failures.append(f"{label}: sampling_hz {r.attrs.get('sampling_hz')}, samples_placed "
                        f"{r.attrs.get('samples_placed')} (expected {HZ} and at least 100)")
    rep = model.build(r)
    listed = {f["function"]: f for f in (rep["sampling"] or {}).get("functions", [])}
    for fn in ("work_a", "work_b"):
        want = r.value("comp", rank=0, region=fn)
        if fn not in listed or abs(listed[fn]["comp"] - want) > 1e-6:
            failures.append(f"{label}: the report's sampling section lists {listed.get(fn)} for {fn}, "
                            f"expected comp {want:.3f} s")
    shown = text.render(rep)
    if "Computation by sampled function" not in shown or "work_a" not in shown:
        failures.append(f"{label}: the report's text has no sampling section")
    return failures


def attempt(args, work, k):
    failures = []
    for label, env in (("default", {}), ("EPOCH_SECONDS=0", {"ONLINEWS_EPOCH_SECONDS": "0"})):
        r, measured, more = run(args, work, f"sampling{k}_{label[:3]}", **env)
        failures += more if r is None else check(r, measured, label)
    return failures


if __name__ == "__main__":
    sys.exit(preloaded_script("sampling built without onlinews", attempt, "sampling: passed"))
