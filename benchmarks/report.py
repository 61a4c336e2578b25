#!/usr/bin/env python3
"""Runs armi's benchmarks and writes the benchmark report.

    python3 benchmarks/report.py [--build build] [--out docs] [--quick]

Every benchmark program in build/benchmarks/ runs once at a size meant to
finish the whole report in under 15 minutes on 2 cores (--quick: tiny sizes,
to test this script). Each writes JSON (--json=FILE) into <out>/data/; then
<out>/results.md is written from that JSON alone: the machine, each paper
table or figure next to ours, and PNG plots in <out>/img/ (made with
matplotlib, Debian's python3-matplotlib; without it the report says that
the plots were skipped). The committed docs/results.md is this script's
output, never edited by hand.

--skip-run renders again from the JSON already in <out>/data/; --only=a,b runs
just those benchmarks and keeps the others' results (--only=diagnostics_off:
just the A/B of the diagnostics' hooks, DIAGNOSTICS_AB below; --only=fig6_pair:
just Fig. 6's alternating threads/mpi runs, FIG6_PAIR below).
Machine check: shared virtual machines have spells (seconds to minutes) in
which everything, raw MPI and raw threads alike, runs 2-4x slower.  Before
and after each benchmark the script times a cross-core round trip of two
pinned threads (table2_latency's explicit row, 0.1 s); one more than
SLOW_FACTOR times the typical check (the lower quartile of those seen; their
median while there are fewer than four)
means such a spell: it waits for the spell to end before a benchmark, and
runs a benchmark again (twice at most) when a check around it was slow; the
same for each round of the diagnostics A/B.
Each section of the report shows the check's figures.

Exit status: 0 if every benchmark ran and verified its results, 1 otherwise
(the report is still written, with the failures marked), 2 on a usage error.
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# name, MPI ranks (None: plain program), full arguments, quick arguments, what it reproduces.
# Arguments may use {json} (the JSON path).  Sizes: see benchmarks/README.md.
BENCHMARKS = [
    dict(name="table1_overhead", ranks=None, pin="1",
         full=["--benchmark_repetitions=3", "--benchmark_min_time=0.2"],
         quick=["--benchmark_min_time=0.001"],
         paper="ARMI Table 1"),
    dict(name="table2_latency", ranks=None, pin="0,1",
         full=["--rounds=100000", "--reps=5"], quick=["--rounds=300", "--reps=1"],
         paper="ARMI Table 2 (threads row)"),
    dict(name="mpi_latency", ranks=2,
         full=["--rounds=20000", "--reps=5"], quick=["--rounds=200", "--reps=1", "--sizes=0,8,1024"],
         paper="ARMI Table 2 (MPI row)"),
    # The same with every buffer an MPI message, as between ranks of different nodes.
    dict(name="mpi_latency", ranks=2, out="mpi_latency_noshm",
         full=["--rounds=20000", "--reps=5", "--armi-mpi-shm=off"],
         quick=["--rounds=200", "--reps=1", "--sizes=0,8,1024", "--armi-mpi-shm=off"],
         paper="ARMI Table 2 (MPI row, no shared memory)"),
    dict(name="fig5_aggregation", ranks=None, pin="0,1", out="fig5_threads",
         full=["--trials=11"], quick=["--ks=1,10,100", "--factors=1,16,256", "--pings=300", "--trials=1"],
         paper="ARMI Fig. 5 (threads)"),
    dict(name="fig5_aggregation", ranks=2, out="fig5_mpi",
         full=["--trials=11"], quick=["--ks=1,10,100", "--factors=1,16,256", "--pings=300", "--trials=1"],
         paper="ARMI Fig. 5 (MPI)"),
    dict(name="fig5_aggregation", ranks=2, out="fig5_mpi_noshm",
         full=["--trials=11", "--armi-mpi-shm=off"],
         quick=["--ks=1,10,100", "--factors=1,16,256", "--pings=300", "--trials=1", "--armi-mpi-shm=off"],
         paper="ARMI Fig. 5 (MPI, no shared memory)"),
    # The same sweep on the emulated SP2, nodes as threads and as processes (fewer pings: a
    # non-aggregated ping there costs a packet's worth of AM protocol).  With 10000 pings a
    # trial, wall-clock cells of factors that send the same buffers differed by up to 25%.
    dict(name="fig5_aggregation", ranks=None, out="fig5_sp2",
         full=["--armi-backend=sp2", "--armi-locations=2", "--trials=9", "--pings=50000"],
         quick=["--armi-backend=sp2", "--armi-locations=2", "--ks=1,10,100", "--factors=1,16,256", "--pings=300",
                "--trials=1"],
         paper="ARMI Fig. 5 (sp2)"),
    dict(name="fig5_aggregation", ranks=None, out="fig5_sp2p",
         full=["--armi-backend=sp2", "--armi-sp2-mode=process", "--armi-locations=2", "--trials=7", "--pings=30000"],
         quick=["--armi-backend=sp2", "--armi-sp2-mode=process", "--armi-locations=2", "--ks=1,10,100",
                "--factors=1,16,256", "--pings=300", "--trials=1"],
         paper="ARMI Fig. 5 (sp2, process mode)"),
    dict(name="message_rate", ranks=None,
         full=["--n=2000000", "--reps=5"], quick=["--n=20000", "--reps=1", "--locations=2", "--aggregations=64"],
         paper="fine-grain throughput (threads)"),
    dict(name="oversubscription", ranks=None,
         full=["--reps=9"], quick=["--n=20000", "--round-trips=300", "--reps=1", "--locations=2,3"],
         paper="issue 2: locations outnumbering cores"),
    dict(name="mpi_message_rate", ranks=2,
         full=["--n=2000000", "--reps=5"], quick=["--n=20000", "--reps=1"],
         paper="fine-grain throughput (MPI)"),
    dict(name="graph500_mpi_bfs", ranks=2,
         full=["--scale=18"], quick=["--scale=10", "--nbfs=4"],
         paper="issue 40: Graph500 BFS against a hand-written MPI BFS"),
    dict(name="random_access_mpi", ranks=2,
         full=["--log-size=22", "--reps=5"], quick=["--log-size=14", "--reps=1"],
         paper="issue 38: HPCC RandomAccess against a hand-written hypercube (Sandia) MPI program"),
    dict(name="associative", ranks=None, out="associative_threads",
         full=["--armi-locations=2", "--reps=5"],
         quick=["--armi-locations=2", "--updates=20000", "--keys=5000", "--reps=1"],
         paper="issue 40: punordered_map::update against parray::update (threads)"),
    dict(name="associative", ranks=2, out="associative_mpi",
         full=["--armi-backend=mpi", "--reps=5"],
         quick=["--armi-backend=mpi", "--updates=20000", "--keys=5000", "--reps=1"],
         paper="issue 40: punordered_map::update against parray::update (MPI)"),
    dict(name="madeleine_fig8", ranks=2,
         full=["--rounds=10000", "--reps=5"], quick=["--rounds=100", "--reps=1", "--sizes=0,1024"],
         paper="Madeleine Fig. 8"),
    dict(name="madeleine_fig8", ranks=2, out="madeleine_fig8_noshm",
         full=["--rounds=10000", "--reps=5", "--armi-mpi-shm=off"],
         quick=["--rounds=100", "--reps=1", "--sizes=0,1024", "--armi-mpi-shm=off"],
         paper="Madeleine Fig. 8 (no shared memory)"),
    dict(name="madeleine_fig8", ranks=2, out="madeleine_fig8_mixed",
         full=["--armi-backend=mixed", "--armi-locations=1", "--rounds=10000", "--reps=5"],
         quick=["--armi-backend=mixed", "--armi-locations=1", "--rounds=100", "--reps=1", "--sizes=0,65536"],
         paper="Madeleine Fig. 8 (mixed backend)"),
    dict(name="madeleine_fig8", ranks=None, out="madeleine_fig8_threads",
         full=["--armi-backend=threads", "--armi-locations=2", "--rounds=10000", "--reps=5"],
         quick=["--armi-backend=threads", "--armi-locations=2", "--rounds=100", "--reps=1", "--sizes=0,65536"],
         paper="Madeleine Fig. 8, armi only, two locations of one process (issue 38: view and lend)"),
    # Fig. 6: sort scaling, 1 and 2 locations on each backend (the machine has 2 cores).
    dict(name="fig6_sample_sort", ranks=None, out="fig6_threads_1",
         full=["--armi-locations=1", "--reps=3"], quick=["--armi-locations=1", "--reps=1", "--sizes=20000"],
         paper="ARMI Fig. 6"),
    dict(name="fig6_sample_sort", ranks=None, out="fig6_threads_2",
         full=["--armi-locations=2", "--reps=5"], quick=["--armi-locations=2", "--reps=1", "--sizes=20000"],
         paper="ARMI Fig. 6"),
    dict(name="fig6_sample_sort", ranks=1, out="fig6_mpi_1",
         full=["--armi-backend=mpi", "--reps=3"], quick=["--armi-backend=mpi", "--reps=1", "--sizes=20000"],
         paper="ARMI Fig. 6"),
    dict(name="fig6_sample_sort", ranks=2, out="fig6_mpi_2",
         full=["--armi-backend=mpi", "--reps=5"], quick=["--armi-backend=mpi", "--reps=1", "--sizes=20000"],
         paper="ARMI Fig. 6"),
    dict(name="fig7_aggregation", ranks=None, out="fig7_threads",
         full=["--armi-locations=2", "--reps=9", "--log-size=20", "--updates-per-entry=2", "--lu-n=768",
               "--scale=15"],
         quick=["--armi-locations=2", "--reps=1", "--factors=1,64", "--log-size=10", "--lu-n=40", "--lu-block=8",
                "--scale=7"],
         paper="ARMI Fig. 7 (threads)"),
    dict(name="fig7_aggregation", ranks=2, out="fig7_mpi",
         full=["--armi-backend=mpi", "--reps=7", "--log-size=20", "--updates-per-entry=2", "--lu-n=768",
               "--scale=15"],
         quick=["--armi-backend=mpi", "--reps=1", "--factors=1,64", "--log-size=10", "--lu-n=40", "--lu-block=8",
                "--scale=7"],
         paper="ARMI Fig. 7 (MPI)"),
    # Between 2 emulated hosts (../shared/cluster, as root): one rank on each, TCP only, over a
    # plain bridge (delay 0) and through the delaying switch (10 µs one way).  Fewer rounds: a
    # round trip costs 15-60 µs there.
    *[dict(name=n, ranks=2, hosts=2, delay=delay, out=out + suffix, full=full, quick=quick,
           paper=f"{paper} between hosts")
      for delay, suffix in ((0, "_hosts"), (10, "_hosts_d10"))
      for n, out, full, quick, paper in (
          ("mpi_latency", "mpi_latency", ["--rounds=5000", "--reps=5"],
           ["--rounds=200", "--reps=1", "--sizes=0,8,1024"], "ARMI Table 2 (MPI row)"),
          ("madeleine_fig8", "madeleine_fig8", ["--rounds=3000", "--reps=5"],
           ["--rounds=100", "--reps=1", "--sizes=0,1024"], "Madeleine Fig. 8"),
          ("fig5_aggregation", "fig5_mpi", ["--trials=5"],
           ["--ks=1,10,100", "--factors=1,16,256", "--pings=300", "--trials=1"], "ARMI Fig. 5"),
          ("mpi_message_rate", "mpi_message_rate", ["--n=2000000", "--reps=5"], ["--n=20000", "--reps=1"],
           "fine-grain throughput (MPI)"))],
    # Not a program: compiles one user translation unit through each CMake target (quick: the baseline only).
    dict(name="compile_time", ranks=None, script="benchmarks/compile_time/measure.py",
         full=["--repeat=3"], quick=["--repeat=1", "--cases=baseline"],
         paper="issue 35: compile time of a user translation unit"),
    dict(name="mrpc_table8", ranks=None, full=["--calls=2000"], quick=["--calls=100"],
         paper="MRPC Tables 8/9 (sp2)"),
    # Issue 41: Split-C's one-sided operations against sync_rmi, and a fetch_add histogram.
    dict(name="global_memory", ranks=None, out="global_memory_sp2", full=["--armi-backend=sp2"],
         quick=["--armi-backend=sp2", "--calls=50", "--updates=20000"], paper="CC++ vs Split-C (sp2)"),
    dict(name="global_memory", ranks=2, out="global_memory_mpi", full=["--armi-backend=mpi"],
         quick=["--armi-backend=mpi", "--calls=50", "--updates=20000"], paper="CC++ vs Split-C (MPI)"),
    dict(name="global_memory", ranks=2, out="global_memory_mpi_noshm", full=["--armi-backend=mpi", "--armi-mpi-shm=off"],
         quick=["--armi-backend=mpi", "--armi-mpi-shm=off", "--calls=50", "--updates=20000"],
         paper="CC++ vs Split-C (MPI, no shared memory)"),
    dict(name="global_memory", ranks=2, out="global_memory_mixed", full=["--armi-backend=mixed", "--armi-locations=1"],
         quick=["--armi-backend=mixed", "--armi-locations=1", "--calls=50", "--updates=20000"],
         paper="CC++ vs Split-C (mixed, 2 ranks of a node)"),
    dict(name="global_memory", ranks=None, out="global_memory_threads", full=["--armi-locations=2"],
         quick=["--armi-locations=2", "--calls=50", "--updates=20000"], paper="CC++ vs Split-C (threads)"),
    # Between 2 emulated hosts: by requests (the default), and gets and puts by MPI-3 RMA.
    *[dict(name="global_memory", ranks=2, hosts=2, delay=0, out=out,
           full=["--armi-backend=mpi", "--calls=1000", "--updates=1000000", *extra],
           quick=["--armi-backend=mpi", "--calls=50", "--updates=20000", *extra],
           paper=f"CC++ vs Split-C (MPI between hosts{label})")
      for out, extra, label in (("global_memory_hosts", [], ""),
                                ("global_memory_hosts_rma", ["--armi-mpi-rma=on"], ", MPI RMA"))],
    # Issue 36: collectives from 4 to 1,024 locations, trees against a star.
    dict(name="scaling", ranks=None, out="scaling_sp2",
         full=["--armi-backend=sp2", "--calls=20"],
         quick=["--armi-backend=sp2", "--locations=4,16", "--arities=2,star", "--calls=3"],
         paper="issue 36: collectives at scale (emulated SP2)"),
    dict(name="scaling", ranks=None, out="scaling_threads",
         full=["--calls=20", "--locations=4,16,64,256,1024"],
         quick=["--locations=4,16", "--arities=2,star", "--calls=3"],
         paper="issue 36: collectives at scale (threads, wall time)"),
    # Issue 36: random updates routed over a grid against direct, 16 to 1,024 locations.
    dict(name="routing", ranks=None, out="routing_sp2",
         full=["--armi-backend=sp2", "--locations=16,64,256,1024", "--sparse=2000", "--dense=100000"],
         quick=["--armi-backend=sp2", "--locations=9,16", "--sparse=200", "--dense=2000"],
         paper="issue 36: routed aggregation (emulated SP2)"),
    dict(name="routing", ranks=None, out="routing_threads",
         full=["--locations=16,64,256,1024", "--sparse=2000", "--dense=20000"],
         quick=["--locations=9,16", "--sparse=200", "--dense=2000"],
         paper="issue 36: routed aggregation (threads, wall time)"),
    dict(name="mrpc_fig11_em3d", ranks=None, out="mrpc_fig11_em3d",
         full=["--armi-locations=4", "--reps=3"],
         quick=["--armi-locations=2", "--nodes=200", "--iters=2", "--reps=1", "--remotes=10,100"],
         paper="MRPC Fig. 11"),
]

# The mpi backend's two paths between two ranks of this machine, for the MPI latency tables:
# {} is the benchmark's name; its shm-off run's out name adds _noshm.
# The runs between 2 emulated hosts: suffix of their out name, and what they are.
HOSTS_RUNS = [
    ("_hosts", "between 2 emulated hosts, TCP over a plain bridge"),
    ("_hosts_d10", "between 2 emulated hosts, TCP, 10 µs one-way delay"),
]
MPI_PATHS = [
    ("{}", "ranks of a node through shared memory, the default"),
    ("{}_noshm", "every buffer an MPI message, --armi-mpi-shm=off, as between nodes"),
] + [("{}" + suffix, label) for suffix, label in HOSTS_RUNS]

# Issue 38's compact wire: bytes sent per 8-byte async_rmi at aggregation 256.
WIRE_BYTES_TARGET = 9.0
# Issue 38's message rates on one host, as a fraction of the hand-written program's, and the
# aggregation factors each applies to (None: every row).
RATE_TARGETS = dict(message_rate=(1.2, None), mpi_message_rate=(0.8, (256, 1024)))
# Issue 37's targets for the runs between hosts (their programs judge the single-host targets).
HOSTS_TARGETS = dict(sync_8_bytes=1.15, madeleine_vs_two_message=1.0, fig5_speedup_at_10000=15.0,
                     message_rate_fraction=0.8)

# What the diagnostics' hooks (--armi-stats timers, --armi-trace, --armi-watchdog) cost when
# those options are off: each program runs alternately with its twin built with
# ARMI_DIAGNOSTICS=0 (<name>_nodiag), AB_ROUNDS times each, with the same arguments.  metric:
# (JSON row -> case name or None to skip, value, True if higher is better).
DIAGNOSTICS_AB = [
    dict(name="message_rate", pin=None,
         full=["--n=2000000", "--reps=1", "--locations=2", "--aggregations=1,64,1024"],
         quick=["--n=20000", "--reps=1", "--locations=2", "--aggregations=64"],
         metric=lambda r: (f"{r['locations']} locations, aggregation {r['aggregation']}", r["armi_rmis_per_s"], True),
         unit="M RMIs/s", scale=1e-6),
    dict(name="table2_latency", pin="0,1", full=["--rounds=100000", "--reps=1"], quick=["--rounds=300", "--reps=1"],
         metric=lambda r: (r["name"] if "rmi" in r["name"] else None, r["us_per_round_trip"], False),
         unit="µs per round trip", scale=1.0),
]
AB_ROUNDS = 5


def run_round_program(args, out_data, cmd, json_stem, commands):
    """One program of an alternating round (diagnostics A/B, Fig. 6 pair): runs cmd, its output
    discarded, notes its shortened command line once in commands; returns (exit code or
    "timeout", the JSON it wrote or None)."""
    line = " ".join(shorten(c) for c in cmd)
    if line not in commands:
        commands.append(line)
    print(f"report: running {' '.join(cmd)}", file=sys.stderr, flush=True)
    try:
        rc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                            timeout=args.timeout).returncode
    except subprocess.TimeoutExpired:
        rc = "timeout"
    return rc, load(out_data, json_stem)


def run_diagnostics_ab(args, out_data, check):
    """The A/B of DIAGNOSTICS_AB into <out>/data/diagnostics_off.json; returns its runs entry."""
    bench_dir = Path(args.build) / "benchmarks"
    rounds = 1 if args.quick else AB_ROUNDS
    rows, commands, status = [], [], "ok"
    start = time.monotonic()
    for b in DIAGNOSTICS_AB:
        samples = {}  # (case, variant) -> values
        order = []
        for i in range(rounds):
            got = {}

            def one_round():
                nonlocal status
                got.clear()
                for variant, exe_name in (("on", b["name"]), ("off", b["name"] + "_nodiag")):
                    exe = bench_dir / exe_name
                    if not exe.exists():
                        status = f"{exe_name} not built"
                        return False
                    json_path = out_data / f"diagnostics_off.{exe_name}.json"
                    cmd = [str(exe)] + (b["quick"] if args.quick else b["full"]) + [f"--json={json_path}"]
                    if b.get("pin") and shutil.which("taskset") and len(os.sched_getaffinity(0)) >= 2:
                        cmd = ["taskset", "-c", b["pin"]] + cmd
                    rc, d = run_round_program(args, out_data, cmd, json_path.stem, commands)
                    if rc != 0 or d is None:
                        status = f"{exe_name}: exit {rc}"
                        return False
                    for r in d["rows"]:
                        case, value, higher = b["metric"](r)
                        if case is not None:
                            got.setdefault((case, variant), []).append((value, higher))
                return True

            check.run_calm(f"diagnostics_off round {i + 1}", one_round)
            if status != "ok":
                break
            for (case, variant), values in got.items():
                if case not in order:
                    order.append(case)
                samples.setdefault((case, variant), []).extend(values)
        for case in order:
            on = [v for v, _ in samples.get((case, "on"), [])]
            off = [v for v, _ in samples.get((case, "off"), [])]
            if not on or not off:
                continue
            higher = samples[(case, "on")][0][1]
            med_on, med_off = statistics.median(on), statistics.median(off)
            # cost with the hooks / cost without them (rates are inverted)
            cost = med_off / med_on if higher else med_on / med_off
            rows.append(dict(program=b["name"], case=case, unit=b["unit"], on=med_on * b["scale"],
                             off=med_off * b["scale"], on_range=[min(on) * b["scale"], max(on) * b["scale"]],
                             off_range=[min(off) * b["scale"], max(off) * b["scale"]], cost_ratio=cost))
    (out_data / "diagnostics_off.json").write_text(json.dumps(
        dict(benchmark="diagnostics_off", rounds=rounds, rows=rows, verified=status == "ok"), indent=1))
    seconds = time.monotonic() - start
    print(f"report: diagnostics_off: {status} in {seconds:.1f} s", file=sys.stderr, flush=True)
    return dict(status=status, seconds=round(seconds, 1), command="; ".join(commands) + f" (alternating with the "
                "_nodiag twins, " + str(rounds) + (" rounds" if rounds != 1 else " round") + " each)")


# Fig. 6's targets compare armi on threads (one process) with the hand-written MPI sort (another
# program run): a slow spell of the machine between the two runs would decide the comparison.  So
# the two programs run alternately FIG6_ROUNDS times, and the verdict uses the medians over all
# their repetitions.
FIG6_PAIR = [
    ("threads", None, ["--armi-locations=2"]),
    ("mpi", 2, ["--armi-backend=mpi"]),
]
FIG6_ROUNDS = 3


def run_fig6_pair(args, out_data, check):
    """The alternating runs of FIG6_PAIR into <out>/data/fig6_pair.json; returns its runs entry."""
    exe = Path(args.build) / "benchmarks" / "fig6_sample_sort"
    mpiexec = shutil.which("mpiexec")
    rounds = 1 if args.quick else FIG6_ROUNDS
    each = ["--reps=1", "--sizes=20000"] if args.quick else ["--reps=3"]
    samples = {}  # (ints, series) -> seconds
    commands, status = [], "ok"
    start = time.monotonic()
    if not exe.exists():
        status = "not built"
    elif not mpiexec:
        status = "no mpiexec"
    for i in range(rounds if status == "ok" else 0):
        got = {}

        def one_round():
            nonlocal status
            got.clear()
            for backend, ranks, flags in FIG6_PAIR:
                json_path = out_data / f"fig6_pair.{backend}.json"
                cmd = [str(exe)] + flags + each + [f"--json={json_path}"]
                if ranks:
                    cmd = [mpiexec, "-bind-to", "core", "-n", str(ranks)] + cmd
                rc, d = run_round_program(args, out_data, cmd, json_path.stem, commands)
                if rc != 0 or d is None:
                    status = f"{backend}: exit {rc}"
                    return False
                for r in d["rows"]:
                    got.setdefault((r["ints"], f"{backend} armi"), []).extend(r["armi_samples"])
                    if "hand_written_samples" in r:
                        got.setdefault((r["ints"], "hand-written MPI"), []).extend(r["hand_written_samples"])
            return True

        check.run_calm(f"fig6_pair round {i + 1}", one_round)
        if status != "ok":
            break
        for key, values in got.items():
            samples.setdefault(key, []).extend(values)
    rows = []
    for n in sorted({n for n, _ in samples}):
        row = dict(ints=n)
        for series in ("threads armi", "mpi armi", "hand-written MPI"):
            v = samples.get((n, series))
            if v:
                row[series] = dict(median_s=statistics.median(v), min_s=min(v), max_s=max(v), samples=len(v))
        hw = row.get("hand-written MPI")
        for series in ("threads armi", "mpi armi"):
            if hw and series in row:
                row[series]["over_hand_written"] = row[series]["median_s"] / hw["median_s"]
        rows.append(row)
    (out_data / "fig6_pair.json").write_text(json.dumps(
        dict(benchmark="fig6_pair", rounds=rounds, locations=2, rows=rows, verified=status == "ok"), indent=1))
    seconds = time.monotonic() - start
    print(f"report: fig6_pair: {status} in {seconds:.1f} s", file=sys.stderr, flush=True)
    return dict(status=status, seconds=round(seconds, 1),
                command="; ".join(commands) + f" (alternating, {rounds} round{'s' if rounds != 1 else ''})")


# ---------------------------------------------------------------------------------------------
# Figures from the papers (facts; see ../shared/papers/).

PAPER_TABLE1 = {  # ns: direct, method pointer, ARMI async_rmi
    "V2200": (65, 132, 933), "O3800": (12, 26, 325), "Regatta": (8, 14, 197), "RS6000": (60, 121, 842)}
PAPER_TABLE2 = {  # us: explicit, async_rmi, sync_rmi
    "Threads": {"V2200": (15, 21, 18), "O3800": (4, 6, 5), "Regatta": (2, 3, 3), "RS6000": (6, 16, 11)},
    "MPI": {"V2200": (16, 45, 49), "O3800": (13, 15, 16), "Regatta": (6, 10, 11), "RS6000": (29, 66, 71)}}


def shorten(word):
    """A command word as the report shows it: paths relative to the repository, mpiexec by name."""
    for prefix in (str(REPO) + "/", os.getcwd() + "/"):
        word = word.replace(prefix, "")
    word = word.replace(str(REPO.parent) + "/", "../")
    return "mpiexec" if word.endswith("/mpiexec") else word


SLOW_FACTOR = 2.5   # a check this many times the typical one: the machine is in a slow spell
SLOW_WAIT_S = 15    # seconds between checks while it is
SLOW_WAITS = 8      # checks before a benchmark runs anyway
SLOW_RUNS = 3       # runs of a benchmark at most while checks around it read a spell


class MachineCheck:
    """Cross-core round trips (µs) of two pinned threads, table2_latency's explicit row."""

    def __init__(self, args, out_data):
        exe = Path(args.build) / "benchmarks" / "table2_latency"
        usable = exe.exists() and not args.quick and shutil.which("taskset") and len(os.sched_getaffinity(0)) >= 2
        self.cmd = ["taskset", "-c", "0,1", str(exe), "--rounds=20000", "--reps=1"] if usable else None
        self.json_path = out_data / "machine_check.json"
        self.seen = []

    def probe(self):
        """One round trip time, or None when it cannot be measured."""
        if self.cmd is None:
            return None
        try:
            subprocess.run(self.cmd + [f"--json={self.json_path}"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=60, check=True)
            rows = json.loads(self.json_path.read_text())["rows"]
            us = next(r["us_per_round_trip"] for r in rows if r["name"].startswith("explicit"))
        except (OSError, ValueError, KeyError, StopIteration, subprocess.SubprocessError):
            return None
        finally:
            if self.json_path.exists():
                self.json_path.unlink()
        self.seen.append(us)
        return us

    @property
    def typical(self):
        """The lower quartile of the checks so far: spells are the exception, but one can last
        through several benchmarks, and the median then drifts into it (a report run whose
        checks read 0.42 µs for five benchmarks in a row took 0.42 as typical).  The best is no
        guide either: two virtual CPUs that land on one physical core's hyperthreads meet twice
        as fast, and with fewer than four checks the lowest was the quartile: one such check at
        the start (0.044 µs against 0.10) made every ordinary check nearly slow.  So the median
        until there are four."""
        if not self.seen:
            return None
        if len(self.seen) < 4:
            return statistics.median(self.seen)
        return statistics.quantiles(self.seen, n=4, method="inclusive")[0]

    def slow(self, us):
        return us is not None and self.seen and us > SLOW_FACTOR * self.typical

    def calm(self):
        """Waits (a while at most) until a check is not slow; returns the last check."""
        us = self.probe()
        for _ in range(SLOW_WAITS):
            if not self.slow(us):
                break
            print(f"report: machine check {us:.3f} µs per round trip, typical {self.typical:.3f}: a slow spell, "
                  f"waiting {SLOW_WAIT_S} s", file=sys.stderr, flush=True)
            time.sleep(SLOW_WAIT_S)
            us = self.probe()
        return us

    def run_calm(self, what, attempt):
        """Runs attempt() (True: it succeeded) after a calm check, and again, SLOW_RUNS times at
        most in all, while a check around it reads a slow spell; returns the last (before, after)."""
        for run in range(1, SLOW_RUNS + 1):
            before = self.calm()
            ok = attempt()
            after = self.probe()
            if not ok or not (self.slow(before) or self.slow(after)) or run == SLOW_RUNS:
                return before, after
            print(f"report: {what}: a machine check around it read "
                  f"{max(x for x in (before, after) if x is not None):.3f} µs (typical {self.typical:.3f}): "
                  "running it again", file=sys.stderr, flush=True)


class Testbed:
    """The emulated hosts of ../shared/cluster for the runs between hosts: brought up with the delay a
    run asks for (the plain bridge at 0), and down at the end."""

    def __init__(self, directory):
        self.dir = Path(directory)
        self.shape = None  # (hosts, delay) now up

    def usable(self):
        if os.geteuid() != 0:
            return "needs root (the emulated hosts are network namespaces)"
        if not (self.dir / "mpirun.sh").exists():
            return f"no testbed at {self.dir}"
        return None

    def launcher(self, hosts, delay):
        if self.shape != (hosts, delay):
            env = dict(os.environ, BACKEND="bridge" if delay == 0 else "auto")
            subprocess.run([str(self.dir / "up.sh"), str(hosts), str(delay)], env=env, check=True,
                           stdout=subprocess.DEVNULL)
            self.shape = (hosts, delay)
        return [str(self.dir / "mpirun.sh"), str(hosts)]

    def down(self):
        if self.shape is not None:
            subprocess.run([str(self.dir / "down.sh")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.shape = None


def run_benchmarks(args, out_data, check):
    """Runs every benchmark; returns {out name: dict(status, seconds, command, log)}."""
    bench_dir = Path(args.build) / "benchmarks"
    mpiexec = shutil.which("mpiexec")
    runs_path = out_data / "runs.json"
    results = json.loads(runs_path.read_text()) if args.only and runs_path.exists() else {}
    testbed = Testbed(args.cluster)
    commit = head_commit()
    try:
        run_each(args, out_data, check, bench_dir, mpiexec, results, testbed, commit)
    finally:
        testbed.down()
    (out_data / "runs.json").write_text(json.dumps(results, indent=1))
    return results


def run_each(args, out_data, check, bench_dir, mpiexec, results, testbed, commit):
    for b in BENCHMARKS:
        out = b.get("out", b["name"])
        if args.only and out not in args.only and b["name"] not in args.only:
            continue
        exe = REPO / b["script"] if b.get("script") else bench_dir / b["name"]
        json_path = out_data / f"{out}.json"
        log_path = out_data / f"{out}.log"
        if json_path.exists():
            json_path.unlink()
        if not exe.exists():
            results[out] = dict(status="not built", seconds=0, command=str(exe))
            print(f"report: {out}: {exe} not built, skipped", file=sys.stderr)
            continue
        if b["ranks"] and not mpiexec:
            results[out] = dict(status="no mpiexec", seconds=0, command=str(exe))
            continue
        # Quick runs (the report's own test) leave the testbed alone; a run without it is
        # skipped, not failed.
        why_not = "not in --quick" if args.quick else testbed.usable()
        if b.get("hosts") and why_not:
            results[out] = dict(status=f"skipped: {why_not}", seconds=0, command=str(exe))
            print(f"report: {out}: {why_not}, skipped", file=sys.stderr)
            continue
        cmd = [str(exe)] + (b["quick"] if args.quick else b["full"]) + [f"--json={json_path}"]
        if b.get("script"):
            cmd = [sys.executable] + cmd + [f"--build={args.build}"]
        if b.get("hosts"):
            try:
                cmd = testbed.launcher(b["hosts"], b["delay"]) + cmd  # one rank per host
            except subprocess.CalledProcessError as e:
                results[out] = dict(status=f"the testbed did not come up ({e})", seconds=0, command=str(exe))
                continue
        elif b["ranks"]:
            cmd = [mpiexec, "-bind-to", "core", "-n", str(b["ranks"])] + cmd
        elif b.get("pin") and shutil.which("taskset") and len(os.sched_getaffinity(0)) >= 2:
            cmd = ["taskset", "-c", b["pin"]] + cmd
        outcome = {}

        def one_run():
            print(f"report: running {' '.join(cmd)}", file=sys.stderr, flush=True)
            start = time.monotonic()
            try:
                with open(log_path, "w") as log:
                    rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, timeout=args.timeout).returncode
                status = "ok" if rc == 0 else f"exit {rc}"
            except subprocess.TimeoutExpired:
                status = f"timed out after {args.timeout} s"
            if status == "ok" and not json_path.exists():
                status = "no JSON written"
            outcome.update(status=status, seconds=time.monotonic() - start)
            return status == "ok"

        if b.get("delay"):
            # The delaying switch busy-waits on a core while it is up, so every machine check
            # reads a slow spell then: run once, and keep the checks as they read.
            before = check.probe()
            one_run()
            after = check.probe()
        else:
            before, after = check.run_calm(out, one_run)
        status, seconds = outcome["status"], outcome["seconds"]
        results[out] = dict(status=status, seconds=round(seconds, 1), command=" ".join(shorten(c) for c in cmd),
                            commit=commit)
        if before is not None and after is not None:
            results[out]["machine_check_us"] = [round(before, 3), round(after, 3), round(check.typical, 3)]
        print(f"report: {out}: {status} in {seconds:.1f} s", file=sys.stderr, flush=True)


def command_output(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def head_commit():
    return command_output(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"])


def machine_description():
    cpu = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    osname = ""
    try:
        for line in open("/etc/os-release"):
            if line.startswith("PRETTY_NAME="):
                osname = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    mpich = command_output(["mpichversion"]).splitlines()
    return {
        "CPU": cpu or platform.processor(),
        "CPUs usable": str(len(os.sched_getaffinity(0))),
        "memory": mem,
        "OS": f"{osname}, Linux {platform.release()}",
        "compiler": (command_output(["g++", "--version"]).splitlines() or [""])[0],
        "MPI": " ".join(mpich[0].replace("MPICH Version:", "MPICH").split()) if mpich else "",
        "armi commit": head_commit(),
    }


def load(out_data, name):
    p = out_data / f"{name}.json"
    if not p.exists():
        return None
    try:
        return json.loads(p.read_text())
    except json.JSONDecodeError:
        return None


def fmt(x, digits=2):
    if x is None:
        return "–"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def md_table(header, rows, align=None):
    align = align or ["---:"] * len(header)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(fmt(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def target_line(met, text):
    return f"**Target {'met' if met else 'not met'}**: {text}"


class Report:
    def __init__(self, out_dir, runs, quick):
        self.out = out_dir
        self.data = out_dir / "data"
        self.img = out_dir / "img"
        self.runs = runs
        self.quick = quick
        self.parts = []
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
            self.plt = plt
        except ImportError:
            self.plt = None

    def add(self, text):
        self.parts.append(text)

    def plot(self, name, title, draw):
        """draw(ax) fills the axes; returns the markdown image line."""
        if self.plt is None:
            return "_(plot skipped: python3-matplotlib is not installed)_"
        self.img.mkdir(parents=True, exist_ok=True)
        fig, ax = self.plt.subplots(figsize=(6.4, 3.8), dpi=100)
        draw(ax)
        ax.set_title(textwrap.fill(title, 80), fontsize=10)  # long titles on two lines, not cut off
        ax.grid(True, which="both", alpha=0.3)
        fig.tight_layout()
        fig.savefig(self.img / f"{name}.png")
        self.plt.close(fig)
        return f"![{title}](img/{name}.png)"

    def status(self, name):
        r = self.runs.get(name)
        if r is None:
            return "not run"
        return r["status"]

    @staticmethod
    def run_line(r):
        """The command, its status and time, and the machine check around it."""
        line = f"`{r.get('command', '')}` — {r.get('status')}, {r.get('seconds', 0)} s"
        if r.get("commit"):
            line += f" at armi {r['commit']}"
        check = r.get("machine_check_us")
        if check:
            line += (f"; machine check (cross-core round trip) {check[0]:.3f} µs before, {check[1]:.3f} µs after, "
                     f"typical of the run {check[2]:.3f}")
        return line + "\n"

    def section(self, name, title):
        """Header plus run line; returns the JSON, or None (then a note was written)."""
        self.add(f"## {title}\n")
        r = self.runs.get(name, {})
        d = load(self.data, name)
        if r:
            self.add(self.run_line(r))
        if d is None:
            self.add(f"_No result: {self.status(name)}._\n")
            return None
        if d.get("verified") is False:
            self.add("**The benchmark's own check of its results FAILED.**\n")
        return d

    def hosts_target(self, name, met, text):
        """Issue 37's target line, under the sections of the runs between hosts only."""
        if any(name.endswith(suffix) for suffix, _ in HOSTS_RUNS):
            self.add("\n" + target_line(met, f"between hosts, {text}.") + "\n")

    # --- one renderer per benchmark ---------------------------------------------------------

    def table1(self):
        d = self.section("table1_overhead", "ARMI Table 1 — overhead of method invocation")
        if not d:
            return
        rows = [[c["case"], c["ns_per_call"], c.get("ratio_vs_method_pointer")] for c in d["cases"]]
        self.add(md_table(["case", "ns per call", "× method pointer"], rows, ["---", "---:", "---:"]))
        paper = [[m, v[0], v[1], v[2], v[2] / v[1]] for m, v in PAPER_TABLE1.items()]
        self.add("\nThe paper (ns; ARMI = a local `async_rmi`):\n")
        self.add(md_table(["machine", "direct", "method ptr", "ARMI", "ARMI × method ptr"], paper,
                          ["---", "---:", "---:", "---:", "---:"]))
        t = d.get("target")
        if t:
            self.add("\n" + target_line(t["met"], f"`{t['case']}` = {fmt(t['ratio'])}× method pointer "
                                         f"(target ≤ {t['max_ratio']}×; the paper's ARMI rows are 7–14×).") + "\n")

    def table2(self):
        d = self.section("table2_latency", "ARMI Table 2 — latency, threads row")
        if d:
            rows = [[r["name"], r.get("aggregation"), r["us_per_round_trip"], r["ratio_vs_explicit"]]
                    for r in d["rows"]]
            self.add(md_table(["round trip", "aggregation", "µs", "× explicit"], rows,
                              ["---", "---:", "---:", "---:"]))
            for t in d.get("targets", []):
                self.add("\n" + target_line(t["met"], f"{t['case']} = {fmt(t['ratio'])}× explicit "
                                             f"(target ≤ {t['max_ratio']}×).") + "\n")
        for name, title in MPI_PATHS:
            m = self.section(name.format("mpi_latency"), f"ARMI Table 2 — latency, MPI row ({title})")
            if not m:
                continue
            rows = [[r["bytes"], r["send_recv_us"], r["isend_irecv_us"], r["async_rmi_us"], r["sync_rmi_us"],
                     r["async_ratio"], r["sync_ratio"]] for r in m["rows"]]
            self.add(md_table(["bytes", "Send/Recv µs", "Isend/Irecv µs", "async_rmi µs", "sync_rmi µs",
                               "async ×", "sync ×"], rows))
            for t in m.get("targets", []):
                self.add("\n" + target_line(t["met"], f"{t['case']} = {fmt(t['ratio'])}× Send/Recv "
                                             f"(target ≤ {t['max_ratio']}×).") + "\n")
            eight = [r["sync_ratio"] for r in m["rows"] if r["bytes"] == 8]
            if eight:
                limit = HOSTS_TARGETS["sync_8_bytes"]
                self.hosts_target(name, eight[0] <= limit,
                                  f"sync_rmi 8 bytes = {fmt(eight[0])}× Send/Recv (issue 37: ≤ {limit}×)")

            def draw(ax, m=m):
                xs = [max(r["bytes"], 1) for r in m["rows"]]
                ax.plot(xs, [r["async_ratio"] for r in m["rows"]], "o-", label="async_rmi / Send-Recv")
                ax.plot(xs, [r["sync_ratio"] for r in m["rows"]], "s-", label="sync_rmi / Send-Recv")
                ax.axhline(1.0, color="gray", lw=0.8)
                ax.set_xscale("log")
                ax.set_xlabel("argument bytes (0 drawn at 1)")
                ax.set_ylabel("ratio to raw MPI")
                ax.legend(fontsize=8)
            self.add("\n" + self.plot(name.format("mpi_latency_ratio"), f"MPI latency ({title}): armi / raw MPI",
                                       draw) + "\n")
        paper = []
        for row, machines in PAPER_TABLE2.items():
            for mach, (e, a, s) in machines.items():
                paper.append([row, mach, e, a, s, a / e, s / e])
        self.add("\nThe paper (µs):\n")
        self.add(md_table(["row", "machine", "explicit", "async_rmi", "sync_rmi", "async ×", "sync ×"], paper,
                          ["---", "---", "---:", "---:", "---:", "---:", "---:"]))
        self.add("")

    def fig5_table(self, table):
        factors = sorted({int(f) for r in table for f in r["ns_per_ping_by_aggregation"]})
        # Runs since --armi-aggregation=auto have an auto column and its ratio to the best factor.
        has_auto = all("auto_ns_per_ping" in r for r in table)
        rows = []
        for r in table:
            by = r["ns_per_ping_by_aggregation"]
            rows.append([r["k"]] + [by.get(str(f)) for f in factors] +
                        ([r["auto_ns_per_ping"]] if has_auto else []) +
                        [r["best_aggregation"], r["speedup_best_vs_aggregation_1"]] +
                        ([r["auto_over_best"]] if has_auto else []))
        self.add(md_table(["k \\ aggregation"] + [str(f) for f in factors] + (["auto"] if has_auto else []) +
                          ["best", "speedup vs 1"] + (["auto / best"] if has_auto else []), rows))

    def fig5(self):
        for name, label in (("fig5_threads", "threads"), ("fig5_mpi", "MPI, ranks of a node through shared memory"),
                            ("fig5_mpi_noshm", "MPI, every buffer an MPI message: --armi-mpi-shm=off"),
                            *[("fig5_mpi" + suffix, "MPI " + label) for suffix, label in HOSTS_RUNS],
                            ("fig5_sp2", "sp2, nodes as threads"),
                            ("fig5_sp2p", "sp2, nodes as processes")):
            d = self.section(name, f"ARMI Fig. 5 — k pings + 1 pong vs aggregation ({label})")
            if not d:
                continue
            self.fig5_table(d["rows"])
            at = [r["speedup_best_vs_aggregation_1"] for r in d["rows"] if r["k"] == 10000]
            if at:
                limit = HOSTS_TARGETS["fig5_speedup_at_10000"]
                self.hosts_target(name, at[0] >= limit, f"the best factor is {fmt(at[0])}× faster than factor 1 "
                                  f"at k = 10 000 (issue 37: ≥ {limit:.0f}×)")
            if d.get("emulated_rows"):
                self.add("\nThe same games on node 0's emulated SP2 clock (emulated ns per ping; the model "
                         "charges every packet, as the paper's machines did):\n")
                self.fig5_table(d["emulated_rows"])

            def draw(ax, d=d):
                for r in d["rows"]:
                    by = r["ns_per_ping_by_aggregation"]
                    fs = sorted(int(f) for f in by)
                    ax.plot(fs, [by[str(f)] for f in fs], "o-", ms=3, label=f"k = {r['k']}")
                ax.set_xscale("log", base=2)
                ax.set_yscale("log")
                ax.set_xlabel("aggregation factor (requests per buffer)")
                ax.set_ylabel("ns per ping")
                ax.legend(fontsize=7)
            self.add("\n" + self.plot(name, f"Fig. 5 ({label}): ns per ping vs aggregation", draw) + "\n")
        self.add("The paper (MPI on the O3800): armi is faster than raw MPI after 10 pings, 15× faster "
                 "at 10 000 pings, best factor 256 (an 8 KB buffer), a parabola; threads: 3× at 256.\n")

    def message_rates(self):
        for name, label in (("message_rate", "threads"), ("mpi_message_rate", "MPI"),
                            *[("mpi_message_rate" + suffix, "MPI " + label) for suffix, label in HOSTS_RUNS]):
            d = self.section(name, f"Fine-grain message rate ({label})")
            if not d:
                continue
            key = "locations" if "locations" in d["rows"][0] else "ranks"
            # Two armi forms: the method constant (the target's) and the method pointer.
            self.add(f"armi: `{d['forms']['armi']}`; pointer: `{d['forms']['armi_pointer']}`.\n")
            wire = all("armi_wire_bytes_per_rmi" in r for r in d["rows"])
            rows = [[r[key], r["aggregation"], r["armi_rmis_per_s"] / 1e6, r["armi_pointer_rmis_per_s"] / 1e6,
                     r["hand_written_per_s"] / 1e6, 100 * r["armi_fraction_of_hand_written"],
                     100 * r["armi_pointer_fraction_of_hand_written"]]
                    + ([r["armi_wire_bytes_per_rmi"]] if wire else []) for r in d["rows"]]
            self.add(md_table([key, "aggregation", "armi M RMIs/s", "pointer M RMIs/s", "hand-written M/s",
                               "armi %", "pointer %"] + (["bytes on the wire per RMI"] if wire else []), rows))
            t = d.get("target")
            if t:
                self.add("\n" + target_line(t["met"], f"armi ≥ {100 * t['min_fraction']:.0f}% of the "
                                             "hand-written rate in every row.") + "\n")
            at256 = [r["armi_wire_bytes_per_rmi"] for r in d["rows"] if wire and r["aggregation"] == 256]
            if at256:
                limit = WIRE_BYTES_TARGET
                self.add("\n" + target_line(max(at256) <= limit, f"at most {limit:g} bytes on the wire per 8-byte "
                                             f"async_rmi at aggregation 256 (issue 38): {max(at256):.2f} "
                                             "(`--armi-stats` counters: bytes sent ÷ requests sent).") + "\n")
            if name in RATE_TARGETS:
                need, factors = RATE_TARGETS[name]
                judged = [r["armi_fraction_of_hand_written"] for r in d["rows"]
                          if factors is None or r["aggregation"] in factors]
                where = "in every row" if factors is None else \
                    "at aggregation " + " and ".join(str(f) for f in factors)
                self.add("\n" + target_line(min(judged) >= need, f"armi at least {100 * min(judged):.0f}% of the "
                                             f"hand-written rate {where} (issue 38: ≥ {100 * need:.0f}%).") + "\n")
            limit = HOSTS_TARGETS["message_rate_fraction"]
            worst = min(r["armi_fraction_of_hand_written"] for r in d["rows"])
            self.hosts_target(name, worst >= limit, f"armi at least {100 * worst:.0f}% of the hand-written rate in "
                              f"every row (issue 37: ≥ {100 * limit:.0f}%)")

    def graph500(self):
        d = self.section("graph500_mpi_bfs", "Graph500 BFS — armi against a hand-written MPI BFS")
        if not d:
            return
        self.add(f"SCALE {d['scale']}, edgefactor {d['edge_factor']}, {d['ranks']} ranks, {d['nbfs']} search keys, "
                 f"{d['stored_edges']} stored edges; per key, interleaved: `armi::bfs_parents` ({d['batch']} "
                 "(vertex, parent) pairs per `async_rmi`), the fine-grain form (one `async_rmi` per remote edge), "
                 "and a hand-written CSR BFS with one `MPI_Alltoallv` per level (large frontiers scanned in "
                 f"{d['baseline_order']} order); every tree validated by Graph500's rules.\n")
        rows = [[name, r["harmonic_mean_teps"] / 1e6, r["median_time_s"] * 1e3, r["harmonic_mean_teps"] /
                 d["hand_written"]["harmonic_mean_teps"]]
                for name, r in (("armi (batched)", d["armi"]), ("armi (fine-grain)", d["armi_fine_grain"]),
                                ("hand-written MPI", d["hand_written"]))]
        self.add(md_table(["kernel", "harmonic mean M TEPS", "median BFS ms", "× hand-written"], rows,
                          ["---", "---:", "---:", "---:"]))
        t = d.get("target")
        if t:
            self.add("\n" + target_line(t["met"], f"armi's harmonic-mean TEPS ≥ {t['min_ratio']:.1f}× the "
                                         "hand-written MPI BFS's (issue 40).") + "\n")

    def random_access(self):
        d = self.section("random_access_mpi", "HPCC RandomAccess — armi against a hand-written MPI program")
        if not d:
            return
        self.add(f"Table 2^{d['log_size']} words, {d['updates']} updates, {d['ranks']} ranks, median of {d['reps']} "
                 "alternated passes; both exact (each pass verified by applying the stream again: 0 wrong words "
                 f"required; armi {d['armi_errors']}, hand-written {d['hand_written_errors']}). armi: "
                 "`armi::random_updates`, one aggregated `async_rmi` per update to another rank's word. "
                 f"Hand-written: HPCC's Sandia algorithm, rounds of {d['chunk']} updates routed over the hypercube "
                 "(one message per dimension to the partner), then applied.\n")
        self.add(md_table(["program", "GUPS", "× hand-written"],
                          [["armi", f"{d['armi_gups']:.4f}", d["ratio"]],
                           ["hand-written MPI", f"{d['hand_written_gups']:.4f}", 1.0]],
                          ["---", "---:", "---:"]))
        t = d.get("target")
        if t:
            self.add("\n" + target_line(t["met"], f"armi's GUPS ≥ {t['min_ratio']:.1f}× the hand-written program's "
                                         f"at 2^22 words on 2 ranks (issue 38): {d['ratio']:.2f}×.") + "\n")

    def associative(self):
        for name, label in (("associative_threads", "threads"), ("associative_mpi", "MPI")):
            d = self.section(name, f"Associative pContainers — updates against parray::update ({label})")
            if not d:
                continue
            self.add(f"{d['locations']} locations, {d['updates_per_location']} updates per location to keys drawn "
                     "uniformly from the key count, median of the reps; each row starts from an empty container. "
                     "The local rows make no RMI: each location applies the updates it owns (of every location's "
                     "stream) to a zeroed `std::vector` of its part (under parray's distribution) or to an empty "
                     "`node_hash_map` (under punordered_map's), all locations at once.\n")
            rows = [[r["keys"], r["row"], r["mupdates_per_s"], r["over_parray"]] for r in d["rows"]]
            self.add(md_table(["keys", "row", "M updates/s", "× parray::update"], rows,
                              ["---:", "---", "---:", "---:"]))
            maps = [r for r in d["rows"] if r["row"] == "punordered_map::update"]
            if maps:
                worst = min(maps, key=lambda r: r["over_parray"])
                self.add("\n" + target_line(worst["over_parray"] >= 0.5, "punordered_map::update ≥ 0.5× parray::update "
                                             f"at every key count (issue 40): least {worst['over_parray']:.2f}× at "
                                             f"{worst['keys']} keys.") + "\n")
                alone = [r for r in d["rows"] if r["row"] == "local node_hash_map (no RMI)" and r["keys"] == worst["keys"]]
                if alone:
                    self.add(f"At {worst['keys']} keys the owners' tables alone, with no RMI, run at "
                             f"{alone[0]['over_parray']:.2f}× parray::update's rate through RMIs: the map's rate is "
                             "bounded by its tables before any request is sent.\n")

    def oversubscription(self):
        d = self.section("oversubscription", "Locations outnumbering cores (threads)")
        if not d:
            return
        ref = d["reference_locations"]
        self.add(f"The same work in all, whatever the location count: {d['async_rmis']} random-destination "
                 f"`async_rmi`s (the stress test's stream) and {d['round_trips']} `sync_rmi`s to random other "
                 f"locations, on a machine with {d['hardware_threads']} hardware threads. Ratio: ns per "
                 f"request over {ref} locations' at the same aggregation (median of the reps' ratios).\n")
        rows = [[r["locations"], "yes" if r["outnumber_cores"] else "no",
                 r["aggregation"] if r["workload"] == "stream" else "sync_rmi round trip",
                 r["ns_per_request"], r["ratio"]] for r in d["rows"]]
        self.add(md_table(["locations", "outnumber cores", "aggregation", "ns per request", f"× {ref} locations"],
                          rows, ["---:", "---", "---", "---:", "---:"]))
        t = d.get("target")
        if t:
            self.add("\n" + target_line(t["met"], f"the stream within {t['max_ratio']:.0f}× per request of "
                                         f"{ref} locations (issue 2).") + " Round trips have no target: where "
                     "locations outnumber cores, a round trip mostly finds its callee not running and waits for "
                     "the kernel to run it.\n")

    def diagnostics_off(self):
        d = self.section("diagnostics_off", "Diagnostics off — their hooks compiled in vs compiled out")
        if not d:
            return
        rows = [[r["program"], r["case"], r["unit"], r["on"], f"{r['on_range'][0]:.3g}–{r['on_range'][1]:.3g}",
                 r["off"], f"{r['off_range'][0]:.3g}–{r['off_range'][1]:.3g}", r["cost_ratio"]] for r in d["rows"]]
        self.add(f"Medians of {d['rounds']} alternating runs of each program and its twin built with "
                 "`ARMI_DIAGNOSTICS=0` (no hooks for `--armi-stats`, `--armi-trace`, `--armi-watchdog`); "
                 "the options are off in both. Cost ratio = cost per request with the hooks / without "
                 "(1.00: no cost).\n")
        self.add(md_table(["program", "case", "unit", "hooks in", "range", "hooks out", "range", "cost ratio"],
                          rows, ["---", "---", "---", "---:", "---:", "---:", "---:", "---:"]))
        worst = max((r["cost_ratio"] for r in d["rows"]), default=None)
        if worst is not None:
            self.add(f"\nLargest cost ratio: {worst:.3f}. Issue 6 asks for no measurable overhead when off; "
                     "compare the ratios with the ranges, which are the run-to-run spread.\n")

    def madeleine(self):
        for name, title in MPI_PATHS:
            self.madeleine_run(name.format("madeleine_fig8"), title)
        self.madeleine_run("madeleine_fig8_mixed", "mixed backend, 2 ranks x 1 thread: every buffer an MPI message")
        self.add("The paper (TCP on 100 Mb/s Fast Ethernet): the two-message MPI RPC takes about twice "
                 "as long as Madeleine's one message at every size.\n")
        self.madeleine_threads()

    def madeleine_threads(self):
        d = self.section("madeleine_fig8_threads",
                         "Madeleine Fig. 8 on threads — the argument as a vector, a view, a lent view")
        if not d:
            return
        rows = [[r["bytes"], r["sync_rmi_us"], r["sync_rmi_view_us"], r["vector_over_view"],
                 r.get("sync_rmi_lent_us"), r.get("vector_over_lent")] for r in d["rows"]]
        self.add(md_table(["bytes", "std::vector µs", "armi::view µs", "vector / view", "armi::lend µs",
                           "vector / lent"], rows))
        self.add("\nTwo locations of one process: a view reads the request's buffer (one copy, at the call); "
                 "a lent view (`armi::lend`) reads the caller's array (no copy). The view is slower than the "
                 "vector although it copies once less: its target's byte loop reads lines the other core has "
                 "just written, which the vector's unpacking `memmove` pulls faster (`perf` at 64 KiB: 25% of "
                 "samples in the view's target, against 7.6% in the vector's and 12% in `memmove`). The lent "
                 "array stays in both caches, since the client changes one byte a round.\n")
        v = d.get("view_target")
        if v and v["vector_over_view_64k"] > 0:
            best = max(v["vector_over_view_64k"], v.get("vector_over_lent_64k", 0))
            self.add("\n" + target_line(v["met"], f"at 64 KiB a std::vector argument takes {fmt(best)}× the time of "
                                                  f"the faster of a view ({fmt(v['vector_over_view_64k'])}×) and a "
                                                  f"lent view ({fmt(v.get('vector_over_lent_64k'))}×) "
                                                  "(issue 38: ≥ 1.5×).") + "\n")

    def madeleine_run(self, name, title):
        d = self.section(name, f"Madeleine Fig. 8 — RPC with a byte array, one message vs two ({title})")
        if not d:
            return
        views = all("sync_rmi_view_us" in r for r in d["rows"])  # runs before armi::view have none
        lent = all(r.get("sync_rmi_lent_us") is not None for r in d["rows"])  # nor before armi::lend
        rows = [[r["bytes"], r["two_message_us"], r["one_message_us"], r["sync_rmi_us"],
                 r["ratio_vs_two_message"], r["ratio_vs_one_message"]] +
                ([r["sync_rmi_view_us"], r["vector_over_view"]] if views else []) +
                ([r["sync_rmi_lent_us"], r["vector_over_lent"]] if lent else []) for r in d["rows"]]
        self.add(md_table(["bytes", "two-message µs", "one-message µs", "sync_rmi µs", "× two-message",
                           "× one-message"] + (["sync_rmi, view µs", "vector / view"] if views else []) +
                          (["sync_rmi, lent µs", "vector / lent"] if lent else []), rows))
        t = d.get("target")
        if t:
            self.add("\n" + target_line(t["met"], "sync_rmi faster than the two-message RPC at every size.") + "\n")
        v = d.get("view_target")
        if views and v and v["vector_over_view_64k"] > 0:
            best = max(v["vector_over_view_64k"], v.get("vector_over_lent_64k") or 0)
            self.add(target_line(v["met"], f"at 64 KiB a std::vector argument takes {fmt(best)}× the time of the "
                                           f"faster of a view ({fmt(v['vector_over_view_64k'])}×) and a lent view "
                                           f"({fmt(v.get('vector_over_lent_64k'))}×) (issue 38: ≥ 1.5×).") + "\n")
        limit = HOSTS_TARGETS["madeleine_vs_two_message"]
        worst = max(r["ratio_vs_two_message"] for r in d["rows"])
        self.hosts_target(name, worst <= limit, f"sync_rmi at most {fmt(worst)}× the two-message RPC "
                          f"(issue 37: ≤ {limit}× at every size)")

        def draw(ax):
            xs = [max(r["bytes"], 1) for r in d["rows"]]
            ax.plot(xs, [r["two_message_us"] for r in d["rows"]], "o-", label="MPI, two messages")
            ax.plot(xs, [r["one_message_us"] for r in d["rows"]], "^-", label="MPI, one message")
            ax.plot(xs, [r["sync_rmi_us"] for r in d["rows"]], "s-", label="armi sync_rmi")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("array bytes (0 drawn at 1)")
            ax.set_ylabel("µs per round trip")
            ax.legend(fontsize=8)
        self.add("\n" + self.plot(name, f"Madeleine Fig. 8 ({title}): RPC round trip", draw) + "\n")

    def fig6(self):
        self.add("## ARMI Fig. 6 — sample sort\n")
        runs = [("fig6_threads_1", "threads", 1), ("fig6_threads_2", "threads", 2),
                ("fig6_mpi_1", "mpi", 1), ("fig6_mpi_2", "mpi", 2)]
        table, points = [], {}
        for name, backend, p in runs:
            r = self.runs.get(name, {})
            d = load(self.data, name)
            if r:
                self.add(self.run_line(r))
            if d is None:
                continue
            for row in d["rows"]:
                hw = row.get("hand_written_s")
                table.append([backend, p, row["ints"], 1e3 * row["std_sort_s"], 1e3 * row["armi_s"],
                              1e3 * hw if hw is not None else None, row.get("armi_over_hand_written")])
                points.setdefault((backend, row["ints"]), []).append((p, row["armi_s"]))
                if "hand_written_s" in row:
                    points.setdefault(("hand-written MPI", row["ints"]), []).append((p, row["hand_written_s"]))
                points.setdefault(("std::sort (1 core)", row["ints"]), []).append((p, row["std_sort_s"]))
        if not table:
            self.add("_No result._\n")
            return
        self.add(md_table(["backend", "locations", "ints", "std::sort ms", "armi ms", "hand-written MPI ms",
                           "armi / hand-written"], table, ["---", "---:", "---:", "---:", "---:", "---:", "---:"]))
        self.add("\nTargets (issue 5): armi on threads faster than the hand-written MPI sort; armi on mpi within "
                 "1.2× of it. The paper (Regatta, 1M ints): threads outran the hand-written MPI sort at every "
                 "processor count; at 10M–50M the hand-written sort won on MPI.\n")
        self.fig6_pair()

        def draw(ax):
            for (label, n), pts in sorted(points.items(), key=lambda kv: (kv[0][1], kv[0][0])):
                pts = sorted(set(pts))
                ax.plot([p for p, _ in pts], [t for _, t in pts], "o-", ms=4, label=f"{label}, {n:,} ints")
            ax.set_xlabel("locations (threads or ranks)")
            ax.set_ylabel("seconds")
            ax.set_yscale("log")
            ax.set_xticks(sorted({p for _, _, p in runs}))
            ax.legend(fontsize=6)
        self.add("\n" + self.plot("fig6_sample_sort", "Fig. 6: sample sort time vs locations", draw) + "\n")

    def fig6_pair(self):
        """The targets, from the alternating runs (run_fig6_pair)."""
        r = self.runs.get("fig6_pair", {})
        d = load(self.data, "fig6_pair")
        if d is None or not d["rows"]:
            return
        self.add(f"\nThe targets compare two programs, so they are judged on runs that alternate: "
                 f"`{r.get('command', '')}` — {r.get('status', '?')}, {r.get('seconds', '?')} s. Medians of every "
                 f"repetition (min–max), 2 locations, ms:\n")
        series = ("threads armi", "mpi armi", "hand-written MPI")
        table = []
        for row in d["rows"]:
            line = [row["ints"]]
            for name in series:
                v = row.get(name)
                line.append(f"{1e3 * v['median_s']:.1f} ({1e3 * v['min_s']:.1f}–{1e3 * v['max_s']:.1f})"
                            if v else "–")
            for name in series[:2]:
                line.append(row.get(name, {}).get("over_hand_written"))
            table.append(line)
        self.add(md_table(["ints", "armi, threads", "armi, mpi", "hand-written MPI", "threads / hand-written",
                           "mpi / hand-written"], table, ["---:", "---:", "---:", "---:", "---:", "---:"]))
        self.add("")
        for name, ok, text in (("threads armi", lambda x: x < 1.0, "armi on threads faster than the hand-written MPI sort"),
                               ("mpi armi", lambda x: x <= 1.2, "armi on mpi within 1.2× of the hand-written MPI sort")):
            ratios = [(row["ints"], row[name]["over_hand_written"]) for row in d["rows"]
                      if "over_hand_written" in row.get(name, {})]
            if ratios:
                met = all(ok(x) for _, x in ratios)
                self.add(target_line(met, f"{text} ({', '.join(f'{n:,} ints: {x:.2f}×' for n, x in ratios)})."))

    def fig7(self):
        for name, label in (("fig7_threads", "threads"), ("fig7_mpi", "MPI")):
            d = self.section(name, f"ARMI Fig. 7 — applications vs aggregation ({label})")
            if not d:
                continue
            # "auto" (runs since --armi-aggregation=auto) is a column of its own, with its ratio to the best.
            factors = sorted({int(f) for r in d["rows"] for f in r["ms_by_aggregation"] if f != "auto"})
            has_auto = all("auto_ms" in r for r in d["rows"])
            rows = []
            for r in d["rows"]:
                ms = r["ms_by_aggregation"]
                rows.append([f"{r['kernel']} ({r['input']})"] + [ms.get(str(f)) for f in factors] +
                            ([r["auto_ms"]] if has_auto else []) + [r["best_aggregation"]] +
                            ([r["auto_over_best"]] if has_auto else []))
            auto_cols = 2 if has_auto else 0
            self.add(f"ms per run at {d['locations']} locations, median of {d['reps']}:\n")
            self.add(md_table(["kernel"] + [str(f) for f in factors] + (["auto"] if has_auto else []) + ["best"] +
                              (["auto / best"] if has_auto else []), rows,
                              ["---"] + ["---:"] * (len(factors) + 1 + auto_cols)))

            def draw(ax, d=d):
                for r in d["rows"]:
                    ratio = r["ratio_to_best_by_aggregation"]
                    fs = sorted(int(f) for f in ratio if f != "auto")
                    ax.plot(fs, [ratio[str(f)] for f in fs], "o-", ms=3, label=r["kernel"])
                ax.set_xscale("log", base=2)
                ax.set_yscale("log")
                ax.set_xlabel("aggregation factor")
                ax.set_ylabel("time / best time")
                ax.legend(fontsize=8)
            self.add("\n" + self.plot(name, f"Fig. 7 ({label}): time vs aggregation, per kernel", draw) + "\n")
        self.add("The paper: the best factor differs per program — pSCC 75, pArray 4096 (20% faster than 64 on "
                 "64 processors, 5% on 4), LU needs aggregation (speedup 3 without, 35 with, on 64 processors) "
                 "but gains nothing past a modest factor.\n")

    def table8(self):
        d = self.section("mrpc_table8", "MRPC Tables 8 and 9 — RMI over Active Messages on the emulated SP2")
        if not d:
            return
        rows = [[r["name"], r["emulated_us"], r.get("paper_total_us"), r.get("paper_am_us"), r.get("paper_splitc_us"),
                 r["real_us_per_call"], r["cpu_us_per_call"]] for r in d["rows"]]
        self.add(md_table(["round trip", "armi on sp2, emulated µs", "paper CC++/MRPC µs", "paper AM µs",
                           "paper Split-C µs", "real µs per call", "CPU µs per call"], rows,
                          ["---", "---:", "---:", "---:", "---:", "---:", "---:"]))
        self.add(f"\nThe emulated times come from the SP2 cost model (calibrated AM round trip "
                 f"{fmt(d.get('calibrated_am_us'))} µs; paper Table 9: 51 µs); real and CPU time are this machine's "
                 "cost of one call including the emulation. The emulation is a model, not a measurement of an SP2.\n")

    def global_memory(self):
        for out, label in (("global_memory_sp2", "emulated SP2"), ("global_memory_mpi", "MPI, 2 ranks of a node"),
                           ("global_memory_mpi_noshm", "MPI, 2 ranks, --armi-mpi-shm=off, as between nodes"),
                           ("global_memory_mixed", "mixed, 2 ranks of a node x 1 thread: a shared window"),
                           ("global_memory_threads", "threads, 2 locations"),
                           ("global_memory_hosts", "MPI between 2 emulated hosts, TCP over a plain bridge"),
                           ("global_memory_hosts_rma",
                            "MPI between 2 emulated hosts, gets and puts by MPI-3 RMA, --armi-mpi-rma=on")):
            d = self.section(out, f"CC++ vs Split-C — one-sided operations against sync_rmi ({label})")
            if not d:
                continue
            unit = "emulated µs" if d.get("emulated_clock") else "µs"
            rows = [[r["name"], r["one_sided_us"], r["sync_rmi_us"], r["ratio"], r.get("paper_splitc_us"),
                     r.get("paper_ccpp_us")] for r in d["rows"]]
            self.add(md_table(["location 0 → 1", f"one-sided {unit}", f"sync_rmi {unit}", "ratio",
                               "paper Split-C µs", "paper CC++ µs"], rows,
                              ["---", "---:", "---:", "---:", "---:", "---:"]))
            fa, ar = d["histogram_fetch_add_s"], d["histogram_async_rmi_s"]
            self.add(f"\nHistogram, {d['histogram_updates']} random increments over {d['locations']} locations "
                     f"× {d['histogram_bins']} bins: fetch_add (futures dropped) {fmt(fa, 3)} s, async_rmi "
                     f"{fmt(ar, 3)} s, fetch_add / async_rmi {fmt(fa / ar)}×.\n")
        self.add("The paper's figures are MRPC Table 8's (IBM SP2): GP 2-word R/W, BulkRead/BulkWrite 40-word. "
                 "Within a process and between the ranks of a node (mpi and mixed: a shared window) the one-sided "
                 "operations are memory accesses. On sp2 they are SP-AM messages of their own, as Split-C's are: a short "
                 "request (a get, or an 8-byte put or add) and a reply, served by an AM handler at the owner without "
                 "armi's runtime, so they skip the bulk overhead that every armi buffer pays each way. Between mpi "
                 "nodes (or with --armi-mpi-shm=off) they are armi requests by default, so they cost what sync_rmi costs "
                 "there; with --armi-mpi-rma=on gets and puts are MPI-3 RMA (MPI_Rget; a put is MPI_Raccumulate "
                 "with MPI_REPLACE, then an MPI_Rget_accumulate that returns once it has landed), atomics stay "
                 "requests (docs/guide/global_memory.md).\n")
        self.add("Histogram: `async_rmi` wins wherever increments are aggregated. It is one-way and many increments share a buffer, and the owner adds into memory in its own cache. Each `fetch_add` makes a future (a shared state per call) and carries a reply; on sp2 it is one short AM request per increment (no aggregation), by request (mpi between nodes) twice the messages, by memory (threads, a node's mpi ranks) an atomic read-modify-write on lines the other core also writes. `fetch_add` is the tool where the old value is needed, or where the owner does not poll.\n")

    def em3d(self):
        d = self.section("mrpc_fig11_em3d", "MRPC Fig. 11 — EM3D per-edge time")
        if not d:
            return
        rows = [[r["remote_percent"], r["measured_remote_fraction"], r["ns_per_edge_base"], r["ns_per_edge_ghost"],
                 r["ns_per_edge_bulk"], r["base_over_ghost"], r["ghost_over_bulk"], r["max_error"]]
                for r in d["rows"]]
        self.add(f"{d['locations']} locations, {d['nodes_per_location']} nodes per location, degree {d['degree']}, "
                 f"{d['iters']} iterations:\n")
        self.add(md_table(["remote %", "measured", "base ns/edge", "ghost ns/edge", "bulk ns/edge", "base / ghost",
                           "ghost / bulk", "max error"], rows))

        def draw(ax):
            xs = [r["remote_percent"] for r in d["rows"]]
            for key, label in (("ns_per_edge_base", "em3d-base"), ("ns_per_edge_ghost", "em3d-ghost"),
                               ("ns_per_edge_bulk", "em3d-bulk")):
                ax.plot(xs, [r[key] for r in d["rows"]], "o-", label=label)
            ax.set_yscale("log")
            ax.set_xlabel("remote edges (%)")
            ax.set_ylabel("ns per edge")
            ax.legend(fontsize=8)
        self.add("\n" + self.plot("mrpc_fig11_em3d", "MRPC Fig. 11: EM3D ns per edge", draw) + "\n")
        self.add("The paper (SP2, 4 processors, normalized to Split-C): per-edge time grows with the remote "
                 "fraction in em3d-base (one remote read per edge), much less in em3d-ghost, and em3d-bulk is "
                 "fastest; CC++/MRPC within about 2–2.5× of Split-C.\n")

    def scaling(self):
        for name, label in (("scaling_sp2", "emulated SP2, µs of the nodes' emulated clocks"),
                            ("scaling_threads", "threads, wall µs, P threads on this machine's cores")):
            d = self.section(name, f"Collectives at scale — {label}")
            if not d:
                continue
            rows = [[r["locations"], r["arity"], r["allreduce_ns"] / 1e3, r["reduce_ns"] / 1e3,
                     r["broadcast_ns"] / 1e3, r["fence_ns"] / 1e3] for r in d["rows"]]
            self.add(md_table(["P", "arity", "allreduce_rmi µs", "reduce_rmi µs", "broadcast_rmi µs", "rmi_fence µs"],
                              rows, ["---:", "---", "---:", "---:", "---:", "---:"]))
            growth = d.get("growth_1024_over_16", [])
            if growth:
                self.add("\nTime at 1,024 locations over time at 16:\n")
                self.add(md_table(["collective", "arity", "1,024 / 16"],
                                  [[g["collective"], g["arity"], g["ratio"]] for g in growth], ["---", "---", "---:"]))
            met = d.get("target", {}).get("met")
            if met is not None:
                self.add("\n" + target_line(met, "broadcast_rmi, reduce_rmi and allreduce_rmi at 1,024 nodes each within "
                                                 "4× its time at 16 (default arity, emulated clock).") + "\n")

            def draw(ax, d=d):
                for arity in sorted({r["arity"] for r in d["rows"]}):
                    pts = [(r["locations"], r["allreduce_ns"] / 1e3) for r in d["rows"] if r["arity"] == arity]
                    ax.plot([p for p, _ in pts], [t for _, t in pts], "o-", ms=4, label=f"allreduce_rmi, {arity}")
                fence = [(r["locations"], r["fence_ns"] / 1e3) for r in d["rows"] if r["arity"] == d["rows"][0]["arity"]]
                ax.plot([p for p, _ in fence], [t for _, t in fence], "s--", ms=3,
                        label=f"rmi_fence, {d['rows'][0]['arity']}")
                ax.set_xscale("log", base=2)
                ax.set_yscale("log")
                ax.set_xlabel("locations P")
                ax.set_ylabel("µs per call")
                ax.legend(fontsize=8)
            self.add("\n" + self.plot(name, f"Collectives vs P ({name.split('_')[1]})", draw) + "\n")
        self.add("On threads the locations share 2 cores: each level of a tree costs a wake-up of a thread that is "
                 "not running, so past a few locations the wall times measure the scheduler, and a star (one "
                 "wake-up of the root per member, which it serves in a batch) can beat the tree. The emulated "
                 "clock charges what the SP2 would: a message's overheads and latency.\n")

    def routing(self):
        for name, label in (("routing_sp2", "emulated SP2, ms of the nodes' emulated clocks"),
                            ("routing_threads", "threads, wall ms, P threads on this machine's cores")):
            d = self.section(name, f"Routed aggregation — {label}")
            if not d:
                continue
            self.add(f"Random 8-byte `async_rmi` updates to uniform destinations, aggregation {d['aggregation']}, "
                     "`--armi-routing=direct` and `grid` in the same run; per update: buffers and bytes sent "
                     "(every hop's), updates passed on; the slowest location's time from the fence before to the "
                     "fence after; the heap in use after the updates (every buffer still held) over P.\n")
            rows = [[r["locations"], r["density"], r["updates_per_location"], r["routing"],
                     f'{r["buffers_per_request"]:.4f}', r["bytes_per_request"], r["forwarded_per_request"], r["time_ns"] / 1e6,
                     r["heap_bytes_per_location"] / 1024] for r in d["rows"]]
            self.add(md_table(["P", "traffic", "per location", "routing", "buffers/update", "bytes/update",
                               "forwarded/update", "time ms", "heap KB/location"],
                              rows, ["---:", "---", "---:", "---", "---:", "---:", "---:", "---:", "---:"]))
            ratios = d.get("grid_over_direct", [])
            if ratios:
                self.add("\ngrid against direct:\n")
                self.add(md_table(["P", "traffic", "direct buffers / grid buffers", "grid time / direct time"],
                                  [[r["locations"], r["density"], r["fewer_buffers"], r["time_ratio"]] for r in ratios],
                                  ["---:", "---", "---:", "---:"]))
            met = d.get("target", {}).get("met")
            if met is not None:
                self.add("\n" + target_line(met, "at 1,024 nodes, aggregation 64: sparse, grid sends ≥ 4× fewer "
                                                 "buffers and finishes ≥ 2× sooner; dense, grid takes ≤ 1.3× "
                                                 "direct's time (emulated clock).") + "\n")

            def draw(ax, d=d):
                for density in ("sparse", "dense"):
                    for routing in ("direct", "grid"):
                        pts = [(r["locations"], r["time_ns"] / 1e6) for r in d["rows"]
                               if r["density"] == density and r["routing"] == routing]
                        if pts:
                            ax.plot([p for p, _ in pts], [t for _, t in pts], "o-" if routing == "grid" else "s--",
                                    ms=4, label=f"{density}, {routing}")
                ax.set_xscale("log", base=2)
                ax.set_yscale("log")
                ax.set_xlabel("locations P")
                ax.set_ylabel("ms for the updates")
                ax.legend(fontsize=8)
            self.add("\n" + self.plot(name, f"Random updates vs P ({name.split('_')[1]})", draw) + "\n")

    def compile_time(self):
        d = self.section("compile_time", "Compile time of one user translation unit")
        if not d:
            return
        rows = [[r["case"], r["what"], r["user_s"], r["ratio_vs_baseline"],
                 (f"≤ {r['target_s']:.0f} s: " + ("met" if r["met"] else "**not met**")) if "target_s" in r else ""]
                for r in d["rows"]]
        self.add(f"gcc, `-O2`, user CPU seconds, the least of {d['repeat']} compiles each, alternated; the user "
                 "translation unit is `tests/package/main.cpp` (the README's calls), compiled with the flags each "
                 "CMake target gives it:\n")
        self.add(md_table(["target", "what is compiled", "user s", "× baseline", "target"], rows,
                          ["---", "---", "---:", "---:", "---"]))

    def render(self, machine, total_seconds):
        self.add("# armi benchmark report\n")
        self.add("Generated by `python3 benchmarks/report.py` "
                 f"({'quick sizes, for testing the script' if self.quick else 'report sizes'}) on "
                 f"{datetime.date.today().isoformat()}; do not edit by hand. Ratios are against a baseline "
                 "measured in the same run; absolute times move with the machine's load. "
                 "See benchmarks/README.md for what each program does.\n")
        self.add(md_table(["", ""], [[k, v] for k, v in machine.items()], ["---", "---"]) + "\n")
        skipped = [n for n, r in self.runs.items() if r["status"].startswith("skipped")]
        bad = [n for n, r in self.runs.items() if r["status"] != "ok" and n not in skipped]
        self.add(f"Benchmarks run: {len(self.runs) - len(skipped)}, total {total_seconds:.0f} s; "
                 f"{'all ran and verified' if not bad else 'not ok: ' + ', '.join(bad)}"
                 f"{'; skipped: ' + ', '.join(skipped) if skipped else ''}.\n")
        self.table1()
        self.table2()
        self.fig5()
        self.message_rates()
        self.oversubscription()
        self.diagnostics_off()
        self.madeleine()
        self.table8()
        self.global_memory()
        self.fig6()
        self.fig7()
        self.em3d()
        self.graph500()
        self.random_access()
        self.associative()
        self.scaling()
        self.routing()
        self.compile_time()
        text = "\n".join(self.parts).rstrip() + "\n"
        (self.out / "results.md").write_text(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=str(REPO / "build"), help="the CMake build directory (default build)")
    ap.add_argument("--out", default=str(REPO / "docs"), help="where results.md, img/ and data/ go (default docs)")
    ap.add_argument("--quick", action="store_true", help="tiny sizes (tests the script, not the library)")
    ap.add_argument("--skip-run", action="store_true", help="render from the JSON already in <out>/data")
    ap.add_argument("--only", type=lambda t: [w for w in t.split(",") if w],
                    help="run only these (program or output names, comma-separated); keep the other results")
    ap.add_argument("--timeout", type=int, default=300, help="seconds one benchmark may take (default 300)")
    ap.add_argument("--cluster", default=str(REPO.parent / "shared" / "cluster"),
                    help="the emulated-hosts testbed for the runs between hosts (default ../shared/cluster)")
    args = ap.parse_args()

    out = Path(args.out)
    data = out / "data"
    data.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    if args.skip_run:
        runs_path = data / "runs.json"
        runs = json.loads(runs_path.read_text()) if runs_path.exists() else {}
    else:
        check = MachineCheck(args, data)
        for _ in range(3):
            check.probe()  # a typical check to begin with
        runs = run_benchmarks(args, data, check)
        if not args.only or "diagnostics_off" in args.only:
            runs["diagnostics_off"] = run_diagnostics_ab(args, data, check)
            (data / "runs.json").write_text(json.dumps(runs, indent=1))
        if not args.only or "fig6_pair" in args.only:
            runs["fig6_pair"] = run_fig6_pair(args, data, check)
            (data / "runs.json").write_text(json.dumps(runs, indent=1))
    # A whole run: its wall time.  --only or --skip-run: the report still shows every benchmark,
    # so the sum of their own times (this invocation's wall time would count only some).
    whole = not args.skip_run and not args.only
    total = time.monotonic() - start if whole else sum(r.get("seconds", 0) for r in runs.values())
    Report(out, runs, args.quick).render(machine_description(), total)
    print(f"report: wrote {out / 'results.md'}", file=sys.stderr)
    return 0 if all(r["status"] == "ok" or r["status"].startswith("skipped") for r in runs.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
