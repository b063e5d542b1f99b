#!/usr/bin/env python3
"""bench-peers-report.py: the Markdown report of make bench-peers, on
stdout, and the data file of its plot in DATA (peers.dat).

    bench-peers-report.py PEERS_DIR DATA > bench-peers.md

PEERS_DIR holds one directory per kernel (scripts/bench-peers), each with
the bench.tsv of its boot, read with bench-report.py's Bench. The report
gives each kernel's own ratios (what the issue of a user choosing between
two ways on one kernel is), then the series' kernels against Debian's
stock kernel, mainline's implementation (what choosing a kernel is): the
ratio of the medians, and whether the runs' ranges overlap.
"""

import importlib.machinery
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
report = importlib.machinery.SourceFileLoader(
    "bench_report", os.path.join(HERE, "bench-report.py")).load_module()
Bench, sig, div = report.Bench, report.sig, report.div

CODECS = ("zstd", "zlib", "lzo")


def load(path):
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        return Bench(line.rstrip("\n") for line in f)


def rec(bench, *key):
    return bench.get(*key) if bench.has(*key) else None


def ratios(a, b):
    """a/b of the medians, and the range min(a)/max(b)..max(a)/min(b):
    from a's best run over b's worst to its worst over b's best (for
    costs). None where either lacks the measurement."""
    if not a or not b or not b["med"] or not b["min"]:
        return None
    return a["med"] / b["med"], a["min"] / b["max"], a["max"] / b["min"]


def ratio_cell(a, b):
    r = ratios(a, b)
    return "{}× ({}–{})".format(*map(sig, r)) if r else "–"


def within(kernels):
    """Each kernel's own ratios: the alternatives a user has on it."""
    any_bench = next(iter(kernels.values()))
    mib = any_bench.fact("datamib")
    out = ["## On each kernel\n\nRatios of the medians in the same boot "
           "(in brackets the range over the runs' extremes). Encoded "
           f"reads read the {mib} MiB log file of `make bench`, cold, "
           "stored with `compress-force`, one extent per call or by four "
           "threads (`_x4`); send moves its data set and the one four "
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
    head = ["kernel"]
    rows = {k: [k] for k in kernels}
    for c in CODECS:
        for m in ("ioctl", "encoded", "ioctl_x4", "encoded_x4"):
            head.append(f"{c}: wall, {m} / read()")
            for k, b in kernels.items():
                rows[k].append(ratio_cell(rec(b, "encoded", c, m, "wall_ns"),
                                          rec(b, "encoded", c, "read", "wall_ns")))
    out.append("\nWall time of reading the whole file (below 1: faster than "
               "read()):\n\n" + table(head, rows.values()))
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


# What is compared across kernels: (label, key of the measurement).
def across_items():
    for c in CODECS:
        for m in ("ioctl", "read()"):
            k = m.rstrip("()")
            yield (f"{c}: {m} busy CPU", ("encoded", c, k, "busy_ns"))
            yield (f"{c}: {m} wall", ("encoded", c, k, "wall_ns"))
    for sfx in ("", "-x4"):
        for v in ("v1", "v2"):
            x = " x4" if sfx else ""
            yield (f"send {v}{x} system time", ("send", v + sfx, "send", "sys_ns"))
            yield (f"receive {v}{x} wall", ("send", v + sfx, "receive", "wall_ns"))
            yield (f"receive {v}{x} busy CPU", ("send", v + sfx, "receive", "busy_ns"))
        yield (f"v2{' x4' if sfx else ''} stream bytes", ("send", "v2" + sfx, "stream", "bytes"))


def across(kernels, data):
    """Each series kernel over each of Debian's stock kernels."""
    bases = [k for k in kernels if k.startswith("debian-")]
    pairs = [(k, m) for k in kernels if k not in bases for m in bases]
    if not pairs:
        return "\n## Against mainline's implementation\n\nNot measured: " \
               "the run lacks a series kernel or a Debian one.\n"
    head = ["measurement"] + [f"{m} median" for m in bases] + \
        [f"{k} / {m}" for k, m in pairs] + ["series behind beyond the runs?"]
    rows, dat = [], ""
    for label, key in across_items():
        base = {m: rec(kernels[m], *key) for m in bases}
        cells = [label] + [human(base[m]["med"], key[-1]) if base[m] else "–"
                           for m in bases]
        behind = []
        dat += '"{}"'.format(label)
        for k, m in pairs:
            r = ratios(rec(kernels[k], *key), base[m])
            cells.append(ratio_cell(rec(kernels[k], *key), base[m]))
            # A cost where even the series' best run is worse than the
            # other's worst; byte counts, the same in every run, only
            # beyond 1 %.
            if r and (r[1] > 1.01 if key[-1] == "bytes" else r[1] > 1):
                behind.append(f"{k} / {m}")
            dat += " %g %g %g" % (r if r else (float("nan"),) * 3)
        dat += "\n"
        known = any(ratios(rec(kernels[k], *key), base[m]) for k, m in pairs)
        cells.append(", ".join(behind) if behind else "no" if known else "–")
        rows.append(cells)
    data("peers.dat", "# label, then per pair ("
         + " ".join(f"{k}/{m}" for k, m in pairs) + "): ratio, low, high\n"
         + dat)
    return ("\n## Against mainline's implementation\n\nThe same work on "
            "Debian's stock kernels (debian-6.1: Debian 12's; debian-7.2: "
            "Debian unstable's, the mainline series' base version; both "
            "with mainline's btrfs encoded ioctls and send stream version "
            "2, and Debian's own configuration) and on the series' kernels "
            "(the guest configuration of `config/`), in the same guest, one "
            "boot each: the ratio of the medians (below 1: the series takes "
            "less), in brackets the range from the series' best run over "
            "the other's worst to its worst over the other's best. "
            "\"Behind\" names a pair where the series' best run costs more "
            "than the other's worst (byte counts, the same in every run: "
            "more than 1 % more); \"no\" means not shown by these 2 to 5 "
            "runs each. RWF_ENCODED exists only on the series' "
            "kernels, so the encoded reads compared are the ioctl's "
            "(BTRFS_IOC_ENCODED_READ).\n\n![Series over Debian's kernels, "
            "per measurement; bars: the range](bench-peers.png)\n\n"
            + table(head, rows))


def human(v, metric):
    if metric == "bytes":
        return report.mib(v)
    return report.human(v)


def table(head, rows):
    return (report.row(head) + report.row(["---"] * len(head))
            + "".join(report.row(r) for r in rows))


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
    if len(sys.argv) != 3:
        sys.exit("usage: bench-peers-report.py PEERS_DIR DATA")
    peers, datadir = sys.argv[1:]
    # By version, the series' kernel before Debian's of the same version.
    def order(name):
        kind, _, version = name.partition("-")
        return [int(x) if x.isdigit() else 0 for x in version.split(".")], \
            kind != "series", name
    names = sorted(os.listdir(peers), key=order)
    kernels = {n: load(os.path.join(peers, n, "bench.tsv")) for n in names
               if os.path.isfile(os.path.join(peers, n, "bench.tsv"))}

    def data(filename, text):
        with open(os.path.join(datadir, filename), "w") as f:
            f.write(text)

    text = ("# Benchmarks against mainline's implementation\n\n"
            "`make bench-peers`: the encoded read "
            "and send benchmarks of `make bench` on each kernel, one boot "
            "each, one after the other on the same host, in the same QEMU "
            "guest under TCG. Absolute times are the emulated guest's; "
            "compare ratios. Each kernel's own report: "
            + ", ".join(f"[{k}](peers/{k}/bench.md)" for k in kernels)
            + ".\n\n" + boots(kernels) + "\n" + within(kernels)
            + across(kernels, data))
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
