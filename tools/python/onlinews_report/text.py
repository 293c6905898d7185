"""The report as text: fixed-width sections, for a terminal or a ticket."""


def _s(v):
    return f"{0.0 if abs(v) < 5e-4 else v:10.3f}"  # (no "-0.000" from rounding)


def _pct(v):
    return f"{v:6.1f} %" if v is not None else "        "


def _value(v, unit):
    if unit == "sec":
        return _s(v)
    return f"{v:10.0f}" if abs(v - round(v)) < 1e-9 else f"{v:10.3g}"


def render(rep, tree_depth=None, top=5):
    out = []
    say = out.append
    say(f"onlinews report: {rep['file']}")
    if rep["command"]:
        say(f"command: {rep['command']}")
    grid = rep["grid"]
    say(f"{rep['ranks']} ranks x up to {rep['max_threads']} thread(s) = {rep['locations']} locations, "
        f"{rep['wall_seconds']:.3f} s wall time, allocation time {rep['allocation_seconds']:.3f} s "
        f"(process grid {' x '.join(map(str, grid['dims']))}: {grid['source']})")
    say("")

    say("Metric tree (seconds summed over locations; % of allocation time; exclusive = without sub-metrics)")
    say(f"  {'metric':<54} {'exclusive':>10} {'inclusive':>10} {'share':>8}")
    for row in rep["metric_tree"]:
        if tree_depth is not None and row["depth"] > tree_depth:
            continue
        label = ("  " * row["depth"] + row["display"])[:54]
        unit = "" if row["unit"] == "sec" else f" [{row['unit']}]"
        say(f"  {label + unit:<54} {_value(row['exclusive'], row['unit'])} "
            f"{_value(row['inclusive'], row['unit'])} {_pct(row['percent'])}")
    say("")

    say("Wait states (largest first)")
    if not rep["wait_states"]:
        say("  none found")
    for w in rep["wait_states"]:
        say(f"  {w['display']:<34} {_s(w['seconds'])} s {_pct(w['percent'])}")
        for c in w["top_callpaths"][:top]:
            say(f"      {_s(c['seconds'])} s  {c['callpath']}")
        ranks = ", ".join(f"{r['rank']} ({r['seconds']:.3f} s)" for r in w["top_ranks"][:top])
        say(f"      ranks: {ranks}")
    say("")

    rc = rep["root_causes"]
    say(f"Root causes: delay costs {rc['seconds']:.3f} s "
        f"(short-term {rc['seconds'] - rc['long_term_seconds']:.3f} s, long-term {rc['long_term_seconds']:.3f} s)")
    if rc["top"]:
        say(f"  {'total':>10} {'short':>10} {'long':>10}  call path (ranks)")
    for c in rc["top"][:top * 2]:
        ranks = ", ".join(str(r["rank"]) for r in c["top_ranks"])
        say(f"  {_s(c['seconds'])} {_s(c['short_term'])} {_s(c['long_term'])}  {c['callpath']} (rank {ranks})")
    say("")

    cp = rep["critical_path"]
    say(f"Critical path: {cp['seconds']:.3f} s, of which {cp['imbalance_seconds']:.3f} s load imbalance")
    if cp["profile"]:
        say(f"  {'on path':>10} {'imbalance':>10}  call path")
    for c in cp["profile"][:top * 2]:
        say(f"  {_s(c['seconds'])} {_s(c['imbalance'])}  {c['callpath']}")
    say("")

    sm = rep.get("sampling")
    if sm:
        share = 100.0 * sm["named_seconds"] / sm["comp_seconds"] if sm["comp_seconds"] > 0 else 0.0
        say(f"Computation by sampled function (ONLINEWS_SAMPLING={sm['hz']}: {sm['samples']} samples name "
            f"{share:.1f} % of the computation; statistical, docs/analyses.md)")
        if sm["functions"]:
            say(f"  {'comp':>10} {'delay':>10} {'on path':>10}  function")
        for f in sm["functions"][:top * 2]:
            say(f"  {_s(f['comp'])} {_s(f['delay'])} {_s(f['critical_path'])}  {f['function']}")
        say("")

    ep, ov = rep["epochs"], rep["overhead"]
    cuts = ep["cuts"]
    say(f"Epochs: {ep['count']} (cuts: {cuts['synchronizing']} synchronizing, {cuts['requested']} requested, "
        f"{cuts['final']} final), mean {ep['mean_seconds']:.3f} s, longest {ep['max_seconds']:.3f} s, "
        f"{ep['events']} events, analysis {ep['analysis_seconds']:.3f} s")
    say(f"onlinews' own time: {ov['seconds']:.3f} s ({ov['percent']:.2f} % of allocation time): set-up "
        f"{ov['setup_seconds']:.3f} s, epochs and cut decisions {ov['recurring_seconds']:.3f} s")
    say("")
    say("Warnings" if rep["warnings"] else "Warnings: none")
    for w in rep["warnings"]:
        say(f"  - {w}")
    return "\n".join(out) + "\n"
