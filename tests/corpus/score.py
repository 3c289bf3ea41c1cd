#!/usr/bin/env python3
"""tests/corpus/score.py - runs blockscan on one corpus project and scores it
against that project's triage table; also draws the triage sample.

Invariants: a reported line is keyed by (file:line of the blocking call, the
function called), with the file relative to the project's source root, so a
key survives everything but an edit of that very line. Precision counts only
reported lines that are triaged; recall counts triaged-real lines that are
still reported. The sample is reproducible: the same findings and seed give
the same rows.

usage: score.py run NAME SRC DB BLOCKSCAN TRIAGE [blockscan args...]
           prints one tab-separated row: name tus errors findings lines
           seconds rss_mb triaged real precision real_kept recall untriaged
           (errors: TUs that did not parse; blockscan analyses the rest)
       score.py sample JSON[,JSON...] TRIAGE [N] [SEED]
           prints triage rows (verdict left empty) for the lines reported in
           any of the JSON reports (e.g. before and after a change) and not
           yet in TRIAGE: all of them when there are at most N (60),
           else N drawn with SEED (14) plus every line of a category in
           REAL_LOOKING
"""

import json
import os
import random
import resource
import subprocess
import sys
import time

# Categories whose findings are rarely a rules artefact; every such line is
# triaged, not only a sample.
REAL_LOOKING = {"sleep", "wait", "join", "sync-over-async", "nested-loop", "yield"}


def read_triage(path):
    """(location, function) -> row dict; missing file -> {}."""
    table = {}
    if not os.path.exists(path):
        return table
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            cols = line.split("\t")
            if len(cols) != 6 or cols[3] not in ("real", "fp"):
                sys.exit(f"{path}:{number}: want 6 tab-separated columns "
                         "location function category verdict class reason, "
                         "verdict real or fp")
            table[(cols[0], cols[1])] = dict(zip(
                ("location", "function", "category", "verdict", "class", "reason"), cols))
    return table


def relative(path):
    """A file under a project's build directory (generated code) is keyed
    as build/<path in it>, so no machine's directory enters a table."""
    if os.path.isabs(path) and "/build/" in path:
        return "build/" + path.split("/build/", 1)[1]
    return path


def lines_of(findings):
    """(location, function) -> category of each distinct reported line."""
    return {(f"{relative(x['file'])}:{x['line']}", x["function"]): x["category"]
            for x in findings}


def count_tus(db):
    with open(os.path.join(db, "compile_commands.json"), encoding="utf-8") as f:
        entries = json.load(f)
    return len({os.path.normpath(os.path.join(e["directory"], e["file"])) for e in entries})


def pct(num, den):
    return f"{100.0 * num / den:.0f}%" if den else "-"


def cmd_run(name, src, db, blockscan, triage_path, extra):
    out = os.path.join(db, "blockscan-corpus.json")
    # Each run writes a report of its own, so runs from several checkouts
    # at once never score each other's; the one scored then becomes the
    # project's latest (what `sample` reads), replaced in one rename. A run
    # that writes no report (a rules file it cannot load exits 2 too) is
    # never scored on an older one.
    mine = os.path.join(db, "blockscan-corpus.%d.json" % os.getpid())
    if os.path.exists(mine):
        os.remove(mine)
    start = time.monotonic()
    proc = subprocess.run([blockscan, "-p", db, "-j2", "--format", "json", "-o", mine, *extra],
                          cwd=src, stderr=subprocess.PIPE, text=True, check=False)
    seconds = time.monotonic() - start
    rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
    try:
        with open(mine, encoding="utf-8") as f:
            report = json.load(f)
        os.replace(mine, out)
    except (OSError, ValueError):
        report = None
        if os.path.exists(mine):
            os.remove(mine)
    if report is None or proc.returncode not in (0, 1, 2):
        sys.stderr.write(proc.stderr)
        sys.exit(f"{name}: blockscan exited {proc.returncode} without a report")
    findings = report["findings"]
    errors = len({e["file"] for e in report["errors"]})
    reported = lines_of(findings)
    triage = read_triage(triage_path)
    triaged = [k for k in reported if k in triage]
    real = [k for k in triaged if triage[k]["verdict"] == "real"]
    all_real = [k for k, row in triage.items() if row["verdict"] == "real"]
    kept = [k for k in all_real if k in reported]
    print("\t".join(str(v) for v in (
        name, count_tus(db), errors, len(findings), len(reported), f"{seconds:.1f}", f"{rss_mb:.0f}",
        len(triaged), len(real), pct(len(real), len(triaged)),
        f"{len(kept)}/{len(all_real)}", pct(len(kept), len(all_real)),
        len(reported) - len(triaged))))


def cmd_sample(json_paths, triage_path, n=60, seed=14):
    reported = {}
    for path in json_paths.split(","):
        with open(path, encoding="utf-8") as f:
            reported.update(lines_of(json.load(f)["findings"]))
    keys = sorted(reported)
    if len(keys) > n:
        chosen = set(random.Random(seed).sample(keys, n))
        chosen |= {k for k in keys if reported[k] in REAL_LOOKING}
        keys = sorted(chosen)
    triage = read_triage(triage_path)
    for loc, fn in keys:
        if (loc, fn) not in triage:
            print(f"{loc}\t{fn}\t{reported[(loc, fn)]}\t\t\t")


def main(argv):
    if len(argv) >= 6 and argv[0] == "run":
        cmd_run(*argv[1:6], argv[6:])
    elif 3 <= len(argv) <= 5 and argv[0] == "sample":
        cmd_sample(argv[1], argv[2], *(int(a) for a in argv[3:]))
    else:
        sys.stderr.write(__doc__)
        sys.exit(2)


if __name__ == "__main__":
    main(sys.argv[1:])
