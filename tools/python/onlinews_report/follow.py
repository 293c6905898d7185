"""--follow FILE: one line per finished epoch while the job runs, from the
live log <name>.live that rank 0 appends to (io/live_log.hpp says why it is
safe to read while written: append-only, one write per line, '\\n' last;
only complete lines are parsed here)."""
import json
import os
import sys
import time


def live_path(h5_path):
    return (h5_path[:-3] if h5_path.endswith(".h5") else h5_path) + ".live"


class Lines:
    """Complete lines appended to a file since the last call."""

    def __init__(self, path):
        self.path, self.offset, self.tail = path, 0, b""
        self.restarted = False

    def new(self):
        try:
            with open(self.path, "rb") as f:
                if os.fstat(f.fileno()).st_size < self.offset:  # (a new run truncated it)
                    self.offset, self.tail = 0, b""
                    self.restarted = True
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return []
        self.offset += len(data)
        data = self.tail + data
        *lines, self.tail = data.split(b"\n")
        return [ln.decode("utf-8", "replace") for ln in lines if ln.strip()]


def epoch_line(rec, display):
    t = rec["totals"]
    total = t.get("time", 0.0) or 1.0
    cut = rec["cut"]
    kind = "final" if cut & 4 else "requested" if cut & 2 else "synchronizing"
    waits = sorted(((v, k) for k, v in t.items() if k in display["_waits"] and v >= 5e-4), reverse=True)
    waiting = sum(v for v, _ in waits)
    top = ", ".join(f"{display.get(k, k)} {v:.3f}" for v, k in waits[:3])
    dropped = f"  DROPPED {rec['dropped_events']} events" if rec.get("dropped_events") else ""
    return (f"epoch {rec['epoch']:4d} {rec['t_begin']:9.3f} - {rec['t_end']:9.3f} s  {kind:<13} "
            f"{rec['events']:9d} events  comp {100 * t.get('comp', 0) / total:5.1f} %  "
            f"MPI {100 * t.get('mpi', 0) / total:5.1f} %  waiting {waiting:.3f} s"
            f"{(' (' + top + ')') if top else ''}  delay costs {t.get('delay', 0):.3f} s{dropped}")


def follow(h5_path, interval=1.0, timeout=None, out=sys.stdout):
    """Prints the epochs as they appear; returns 0 once the job completed,
    1 after `timeout` seconds without news (a job that died or hangs)."""
    path = live_path(h5_path)
    lines, display = Lines(path), {"_waits": set()}
    last_news = started = time.monotonic()
    waiting_said = printed_epoch = False
    while True:
        for text in lines.new():
            try:
                rec = json.loads(text)
            except ValueError:
                print(f"onlinews-report: skipping an unreadable line of {path}", file=sys.stderr)
                continue
            last_news = time.monotonic()
            if lines.restarted:
                print("onlinews-report: the live log was restarted (a new run): following it", file=sys.stderr)
                lines.restarted = False
            if rec.get("format") == "onlinews-live":
                display = dict(rec.get("display", {}))
                display["_waits"] = set(rec.get("wait_states", []))
                print(f"following {rec['file']}: {rec['command']} on {rec['ranks']} ranks", file=out, flush=True)
            elif "epoch" in rec:
                print(epoch_line(rec, display), file=out, flush=True)
                printed_epoch = printed_epoch or time.monotonic() - started > interval
            elif rec.get("complete"):
                if time.time() - os.path.getmtime(path) > 2 * interval + 1 and not printed_epoch:
                    print(f"onlinews-report: {path} is the log of a run that had finished before this follower "
                          "started", file=sys.stderr)
                print(f"complete: {rec['epochs']} epochs, {rec['wall_seconds']:.3f} s wall time; "
                      f"onlinews-report {h5_path} for the whole report", file=out, flush=True)
                return 0
        if not os.path.exists(path) and not waiting_said:
            print(f"onlinews-report: waiting for {path} (the job's rank 0 writes it once MPI_Init ran)",
                  file=sys.stderr, flush=True)
            waiting_said = True
        if timeout is not None and time.monotonic() - last_news > timeout:
            print(f"onlinews-report: nothing new in {path} for {timeout:g} s: the job may have died or hang "
                  f"(its result file keeps every finished epoch)", file=sys.stderr)
            return 1
        time.sleep(interval)
