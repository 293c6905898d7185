#!/usr/bin/python3
"""onlinews-report on a real result file: tests/mpi/late_sender_chain.c on 4
ranks (its header derives the values).  Per iteration, ranks 1, 2, 3 wait
0.4, 0.5, 0.7 s in MPI_Recv (Late Sender) and ranks 0, 1 wait 0.3, 0.2 s at
the closing barrier; 2 iterations.  So the report must say:

  wait states: Late Sender first, 3.2 s, at "MPI_Recv @ main
      (late_sender_chain.c:L)" with L the line of the program's MPI_Recv, rank
      3 first with 1.4 s; Wait at Barrier 1.0 s, rank 0 first with 0.6 s;
  root causes: the delay costs equal the waiting they explain (Late Sender
      + Wait at Barrier, within 2 %), and lie in the computation of the root
      region (the sleeps), at least 95 % of them;
  critical path: its largest entry is that computation, 2 x (0.4 + 0.1 +
      0.2) = 1.4 s;
  metric tree: exclusive values add up to the inclusive ones;
the text shows the same numbers, --plot writes four non-blank PNGs,
--help-config prints the configuration table, and a missing or foreign
file gets a clear error (exit 2).  Timed by sleeps: 3 attempts."""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "mpi"))
from run_scenario import fresh_workdir, launch, mpi_env, near, script_arguments, until_passed, verdict  # noqa: E402

REPORT = ROOT / "tools" / "onlinews-report"
SOURCE = ROOT / "tests" / "mpi" / "late_sender_chain.c"


def recv_line():
    return next(n for n, t in enumerate(SOURCE.read_text().splitlines(), 1) if "MPI_Recv(" in t)


def report(*args, env=None):
    return subprocess.run([sys.executable, str(REPORT), *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=120)



def check_json(rep, failures):
    line = recv_line()
    waits = {w["metric"]: w for w in rep["wait_states"]}
    if not rep["wait_states"] or rep["wait_states"][0]["metric"] != "mpi_latesender":
        failures.append(f"first wait state {rep['wait_states'][:1]}, expected Late Sender")
        return
    ls, bw = waits["mpi_latesender"], waits.get("mpi_barrier_wait")
    near(failures, "Late Sender", ls["seconds"], 3.2, 0.12)
    want_cp = f"MPI_Recv @ main (late_sender_chain.c:{line})"
    if not ls["top_callpaths"][0]["callpath"].endswith(want_cp):
        failures.append(f"Late Sender's top call path {ls['top_callpaths'][0]['callpath']!r}, expected ...{want_cp}")
    if ls["top_ranks"][0]["rank"] != 3:
        failures.append(f"Late Sender's first rank {ls['top_ranks'][0]}, expected rank 3")
    near(failures, "Late Sender on rank 3", ls["top_ranks"][0]["seconds"], 1.4, 0.05)
    if bw is None:
        failures.append("no Wait at Barrier")
        return
    near(failures, "Wait at Barrier", bw["seconds"], 1.0, 0.08)
    if bw["top_ranks"][0]["rank"] != 0:
        failures.append(f"Wait at Barrier's first rank {bw['top_ranks'][0]}, expected rank 0")
    explained = ls["seconds"] + bw["seconds"]
    rc = rep["root_causes"]
    near(failures, "delay costs / waiting explained", rc["seconds"] / explained, 1.0, 0.02)
    root = rc["top"][0]
    if " > " in root["callpath"] or root["seconds"] < 0.95 * rc["seconds"]:
        failures.append(f"first root cause {root}, expected the root region with >= 95 % of {rc['seconds']:.3f} s")
    near(failures, "short + long term", root["short_term"] + root["long_term"], root["seconds"], 1e-6)
    cp = rep["critical_path"]["profile"][0]
    if " > " in cp["callpath"]:
        failures.append(f"critical path's largest entry {cp}, expected the root region's computation")
    near(failures, "critical path in the root region", cp["seconds"], 1.4, 0.1)
    tree = rep["metric_tree"]
    for i, row in enumerate(tree):
        kids = []
        for r in tree[i + 1:]:
            if r["depth"] <= row["depth"]:
                break
            if r["depth"] == row["depth"] + 1:
                kids.append(r["inclusive"])
        near(failures, f"{row['metric']}: exclusive + children", row["exclusive"] + sum(kids), row["inclusive"],
             1e-6 * max(1.0, abs(row["inclusive"])))
    time = next(r for r in tree if r["metric"] == "time")
    if not 50.0 < time["percent"] <= 100.0:
        failures.append(f"Time is {time['percent']:.1f} % of the allocation time")


def check_text(text, rep, failures):
    ls = rep["wait_states"][0]
    want = [f"{ls['display']:<34} {ls['seconds']:10.3f} s", ls["top_callpaths"][0]["callpath"],
            f"Root causes: delay costs {rep['root_causes']['seconds']:.3f} s",
            f"Critical path: {rep['critical_path']['seconds']:.3f} s", "Metric tree", "Warnings"]
    for w in want:
        if w not in text:
            failures.append(f"the text lacks {w!r}")


def check_plots(out_dir, failures):
    import matplotlib.image as mpimg
    pngs = sorted(Path(out_dir).glob("*.png"))
    names = [p.name for p in pngs]
    want = ["critical_path.png", "heatmap_mpi_latesender.png", "root_causes.png", "wait_states_over_time.png"]
    if names != want:
        failures.append(f"plots {names}, expected {want}")
    for p in pngs:
        img = mpimg.imread(p)
        if img.shape[0] < 200 or img.shape[1] < 300 or float(np.std(img)) < 0.01:
            failures.append(f"{p.name}: {img.shape}, blank or tiny")


def attempt(args, work, k):
    out = work / f"chain{k}.h5"
    out.unlink(missing_ok=True)
    p = subprocess.run(launch(args.mpiexec, 4) + [args.exe], env=mpi_env(ONLINEWS_OUTPUT=str(out)), cwd=work,
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        return [f"late_sender_chain: exit code {p.returncode}\n{p.stderr[-2000:]}"]
    failures = []
    j = report(out, "--json")
    if j.returncode != 0:
        return [f"--json: exit code {j.returncode}\n{j.stderr}"]
    rep = json.loads(j.stdout)
    check_json(rep, failures)
    t = report(out)
    print(t.stdout)
    check_text(t.stdout, rep, failures)
    plots = work / f"plots{k}"
    shutil.rmtree(plots, ignore_errors=True)
    pl = report(out, "--plot", plots)
    if pl.returncode != 0:
        failures.append(f"--plot: exit code {pl.returncode}\n{pl.stderr}")
    else:
        check_plots(plots, failures)
    return failures


def main():
    ap = script_arguments("late_sender_chain (linked with onlinews)")
    ap.add_argument("--config-tool", required=True, help="onlinews-config")
    args = ap.parse_args()
    work = fresh_workdir(args)
    failures = until_passed(3, lambda k: attempt(args, work, k))

    env = dict(os.environ, PATH=str(Path(args.config_tool).resolve().parent) + os.pathsep + os.environ["PATH"])
    h = report("--help-config", env=env)
    if h.returncode != 0 or not re.search(r"ONLINEWS_CALLSITES.*\|", h.stdout):
        failures.append(f"--help-config: exit code {h.returncode}, no ONLINEWS_CALLSITES row\n{h.stdout[:500]}")
    missing = report(work / "nothing.h5")
    if missing.returncode != 2 or "no such file" not in missing.stderr:
        failures.append(f"a missing file: exit code {missing.returncode}, {missing.stderr!r}")
    foreign = work / "foreign.h5"
    import h5py
    with h5py.File(foreign, "w") as f:
        f["x"] = [1, 2, 3]
    bad = report(foreign)
    if bad.returncode != 2 or "not a complete onlinews result file" not in bad.stderr:
        failures.append(f"a foreign HDF5 file: exit code {bad.returncode}, {bad.stderr[-300:]!r}")
    return verdict(failures, "report: passed")


if __name__ == "__main__":
    sys.exit(main())
