#!/usr/bin/env python3
"""bench-peers-report.py: the boots of make bench-peers and each kernel's
own ratios, in Markdown on stdout.

    bench-peers-report.py PEERS_DIR > bench-peers.md

PEERS_DIR holds one directory per kernel (scripts/bench-peers), each with
the bench.tsv of its boot, read with bench-report.py. The report gives
each kernel's own ratios: what a user choosing between two ways on one
kernel compares. The series' kernels against Debian's (choosing a
kernel) are a section of bench.md, written by bench-report.py from the
same directory.
"""

import importlib.machinery
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
report = importlib.machinery.SourceFileLoader(
    "bench_report", os.path.join(HERE, "bench-report.py")).load_module()
CODECS, rec, ratio_cell, table = (report.CODECS, report.rec,
                                  report.ratio_cell, report.table)


def within(kernels):
    """Each kernel's own ratios: the alternatives a user has on it."""
    any_bench = next(iter(kernels.values()))
    mib = any_bench.fact("datamib")
    out = ["## On each kernel\n\nRatios of the medians in the same boot "
           "(in brackets the range over the runs' extremes). Encoded "
           f"reads read the {mib} MiB log file of `make bench`, cold, "
           "stored with `compress-force`, one extent per call, or four in "
           "flight by four threads (`_x4`) or io_uring (`_uring`); send moves its data set and the one four "
           "times as large (x4).\n\n"]
    head = ["kernel"]
    rows = {k: [k] for k in kernels}
    for c in CODECS:
        for m in ("ioctl", "encoded"):
            head.append(f"{c}: busy CPU, {m} / read()")
            for k, b in kernels.items():
                rows[k].append(ratio_cell(rec(b, "encoded", c, m, "busy_ns"),
                                          rec(b, "encoded", c, "read", "busy_ns")))
    out.append(table(head, rows.values()))
    rows = []
    for c in CODECS:
        for m in ("ioctl", "encoded", "ioctl_x4", "encoded_x4",
                  "ioctl_uring", "encoded_uring"):
            rows.append([f"{c}: {m}"] + [
                ratio_cell(rec(b, "encoded", c, m, "wall_ns"),
                           rec(b, "encoded", c, "read", "wall_ns"))
                for b in kernels.values()])
    out.append("\nWall time of reading the whole file, over read()'s (below "
               "1: faster than read(); – where the kernel lacks the "
               "method):\n\n" + table(["method"] + list(kernels), rows))
    head = ["kernel"]
    rows = {k: [k] for k in kernels}
    for sfx in ("", "-x4"):
        for what, metric, label in (("send", "sys_ns", "send system time"),
                                    ("stream", "bytes", "stream size"),
                                    ("receive", "wall_ns", "receive wall"),
                                    ("receive", "busy_ns", "receive busy CPU")):
            head.append(f"v2/v1 {label}{' x4' if sfx else ''}")
            for k, b in kernels.items():
                rows[k].append(ratio_cell(rec(b, "send", "v2" + sfx, what, metric),
                                          rec(b, "send", "v1" + sfx, what, metric)))
    out.append("\nSend stream version 2 with `--compressed-data` against "
               "version 1, sent and received:\n\n" + table(head, rows.values()))
    return "".join(out)


def boots(kernels):
    out = ["| kernel | booted | repository | what | guest | host load "
           "before, after | guest time |\n|---|---|---|---|---|---|---|\n"]
    for k, b in kernels.items():
        out.append(report.row([
            k, b.fact("date"), b.fact("commit"),
            f"`{b.fact('kernel')}`: {b.fact('tree')}",
            f"{b.fact('cpus')} vCPUs, {b.fact('memory')}, "
            f"clocksource {b.fact('clocksource')}",
            b.fact("host").split("load average ")[-1],
            ", ".join(b.took[-1])]))
    return "".join(out)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: bench-peers-report.py PEERS_DIR")
    kernels = report.load_peers(sys.argv[1])
    text = ("# Benchmarks on each kernel, for `make bench-peers`\n\n"
            "The encoded read and send benchmarks of `make bench` on each "
            "kernel, one boot each, one after the other on the same host, "
            "in the same QEMU guest under TCG. Absolute times are the "
            "emulated guest's; compare ratios. The series' kernels against "
            "Debian's: [bench.md](bench.md#against-mainlines-implementation)"
            ". Each kernel's own report: "
            + ", ".join(f"[{k}](peers/{k}/bench.md)" for k in kernels)
            + ".\n\n" + boots(kernels) + "\n" + within(kernels))
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
