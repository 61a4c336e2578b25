#!/usr/bin/env python3
"""How long one user translation unit takes to compile, against a baseline.

    python3 benchmarks/compile_time/measure.py --build build [--repeat 3] [--json FILE]

Compiles, with exactly the command CMake gives each (build/compile_commands.json),
the objects of these targets (benchmarks/compile_time/CMakeLists.txt, -O2):

    armi_compile_time_baseline          <vector> <string> <thread> <functional> only
    armi_compile_time_user              tests/package/main.cpp (the README's calls), armi::armi
    armi_compile_time_user_header_only  the same, armi::header_only
    armi_compile_time_user_mpi          the same, armi::mpi             (when built with MPI)
    armi_compile_time_user_mpi_header_only  armi::mpi_header_only        (when built with MPI)

Each is compiled --repeat times, alternating the cases; the figure is the
compiler's user CPU time (this process's children), the least of the
repeats (other load on the machine only adds time).  Also compiled once: the
runtime itself (src/runtime.cpp, armi_runtime), which armi::armi builds once
per armi build, not per program.  Prints a table; --json writes it.
"""

import argparse
import json
import os
import resource
import shlex
import subprocess
import sys
from pathlib import Path

CASES = [
    ("baseline", "armi_compile_time_baseline", "`<vector>`, `<string>`, `<thread>`, `<functional>` only"),
    ("armi::armi", "armi_compile_time_user", "README calls; runtime compiled once, elsewhere"),
    ("armi::header_only", "armi_compile_time_user_header_only", "README calls; runtime compiled in"),
    ("armi::mpi", "armi_compile_time_user_mpi", "README calls, mpi backend; runtime compiled once, elsewhere"),
    ("armi::mpi_header_only", "armi_compile_time_user_mpi_header_only", "README calls, mpi backend; runtime in"),
    ("runtime (once)", "armi_runtime", "src/runtime.cpp: every backend, compiled once per armi build"),
]
TARGETS = {"armi::armi": 5.0, "armi::header_only": 8.0}  # issue 35: seconds of user CPU at most


def commands(build):
    db = json.loads((Path(build) / "compile_commands.json").read_text())
    found = {}
    for e in db:
        cmd = e.get("command") or " ".join(shlex.quote(a) for a in e["arguments"])
        for _, target, _ in CASES:
            if f"/{target}.dir/" in cmd:
                found[target] = (shlex.split(cmd), e["directory"])
    return found


def user_seconds(argv, cwd):
    out = argv[argv.index("-o") + 1]
    Path(cwd, out).parent.mkdir(parents=True, exist_ok=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    rc = subprocess.run(argv, cwd=cwd).returncode
    if rc != 0:
        raise SystemExit(f"measure.py: compiling failed ({rc}): {' '.join(argv)}")
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--cases", help="comma-separated case names to time (default: all built); e.g. baseline")
    args = ap.parse_args()
    found = commands(args.build)
    wanted = set(args.cases.split(",")) if args.cases else None
    cases = [c for c in CASES if c[1] in found and (wanted is None or c[0] in wanted)]
    if not any(c[0] == "baseline" for c in cases):
        raise SystemExit("measure.py: no armi_compile_time_baseline in compile_commands.json (configure with "
                         "-DARMI_BUILD_BENCHMARKS=ON)")
    times = {name: [] for name, _, _ in cases}
    for _ in range(max(1, args.repeat)):
        for name, target, _ in cases:
            if name == "runtime (once)" and times[name]:
                continue
            times[name].append(user_seconds(*found[target]))
    base = min(times["baseline"])
    rows = []
    for name, target, what in cases:
        best = min(times[name])
        row = dict(case=name, target=target, what=what, user_s=round(best, 2),
                   runs_s=[round(t, 2) for t in times[name]], ratio_vs_baseline=round(best / base, 2))
        if name in TARGETS:
            row["target_s"] = TARGETS[name]
            row["met"] = best <= TARGETS[name]
        rows.append(row)
    print(f"{'case':24} {'user s':>8} {'x baseline':>11}  target")
    for r in rows:
        target = f"<= {r['target_s']:.0f} s: {'met' if r['met'] else 'NOT met'}" if "target_s" in r else ""
        print(f"{r['case']:24} {r['user_s']:8.2f} {r['ratio_vs_baseline']:11.2f}  {target}")
    result = dict(benchmark="compile_time", repeat=args.repeat, rows=rows,
                  verified=True, targets_met=all(r.get("met", True) for r in rows), compiler_flags="-O2 (CMake's, per target)")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
