"""Command line of onlinews-report (tools/onlinews-report is the entry)."""
import argparse
import json
import os
import shutil
import subprocess
import sys

from . import model, text


def help_config():
    """The configuration table, from onlinews-config (installed next to
    this tool, or on PATH)."""
    here = os.path.dirname(os.path.abspath(sys.argv[0]))
    for exe in (os.path.join(here, "onlinews-config"), shutil.which("onlinews-config")):
        if exe and os.access(exe, os.X_OK):
            return subprocess.run([exe, "--markdown"], check=False).returncode
    print("onlinews-report: onlinews-config not found (installed next to onlinews-report, or on PATH)",
          file=sys.stderr)
    return 2


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="onlinews-report",
        description="Report on an onlinews result file: metric tree, wait states and their call paths and "
                    "ranks, root causes (delay costs), critical path, epochs, overhead and warnings.")
    ap.add_argument("file", nargs="?", help="result file (ONLINEWS_OUTPUT, *.h5)")
    ap.add_argument("--json", action="store_true", help="print the report as JSON (for scripts)")
    ap.add_argument("--plot", metavar="DIR", help="write PNG plots into DIR")
    ap.add_argument("--metric", help="metric of the per-rank heat map (--plot; default: the largest wait state)")
    ap.add_argument("--top", type=int, default=5, help="call paths and ranks listed per item (default 5)")
    ap.add_argument("--depth", type=int, help="metric tree down to this depth only")
    ap.add_argument("--follow", action="store_true",
                    help="print one line per finished epoch while the job writes FILE, until it completes")
    ap.add_argument("--interval", type=float, default=1.0, help="--follow: seconds between looks (default 1)")
    ap.add_argument("--timeout", type=float, default=None,
                    help="--follow: give up after this many seconds without a new epoch")
    ap.add_argument("--help-config", action="store_true", help="print the ONLINEWS_* configuration table")
    args = ap.parse_args(argv)
    if args.help_config:
        return help_config()
    if not args.file:
        ap.error("a result file is needed")
    if args.follow:
        from . import follow
        return follow.follow(args.file, args.interval, args.timeout)
    if not os.path.exists(args.file):
        print(f"onlinews-report: {args.file}: no such file", file=sys.stderr)
        return 2
    import onlinews_h5
    try:
        result = onlinews_h5.Result(args.file)
    except (OSError, KeyError) as e:
        print(f"onlinews-report: {args.file}: not a complete onlinews result file ({e})", file=sys.stderr)
        return 2
    with result:
        rep = model.build(result, top=args.top)
        if args.plot:
            from . import plots
            for path in plots.write_all(result, rep, args.plot, args.metric):
                print(f"onlinews-report: wrote {path}", file=sys.stderr)
    if args.json:
        json.dump(rep, sys.stdout, indent=1)
        print()
    else:
        sys.stdout.write(text.render(rep, tree_depth=args.depth, top=args.top))
    return 0
