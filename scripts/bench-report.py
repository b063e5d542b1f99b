#!/usr/bin/env python3
"""bench-report.py: the Markdown report of a bench.tsv (see bench/bench.h
for its lines), on stdout, and the plots' data files in the directory DATA:
timeout-SLACK.dat, cloexec.dat, encoded.dat, encwrite.dat, send-times.dat
and send-ratios.dat, each only when the run has its benchmark, and
peers.dat when the directory peers/ beside BENCH.TSV holds the boots of
make bench-peers (scripts/bench-peers).
scripts/bench-report runs it, then draws the plots from DATA with gnuplot.

    bench-report.py BENCH.TSV DATA > bench.md

The lines are read into a Bench: the facts of the "info" lines, each boot's
own, and a Record per measurement. Each section of the report is a
template of its Markdown, filled in with figures that the small functions
below compute; in a template an indented line continues the line before
it (see unwrap()), so that the report's long lines stay readable here.

Numbers come out as the awk script this replaced printed them, so that a
kept bench.tsv gives the same report byte for byte; as in awk, what the
TSV lacks reads as 0 where a number is wanted and as "" in text.
"""

import math
import os
import re
import sys

QUANTILES = ("min", "p10", "med", "p90", "p99", "max")

NAME = {
    "epoll_pwait2": "epoll_pwait2",
    "ppoll": "ppoll",
    "epoll_wait_ms": "epoll_wait, ms rounded up",
    "timerfd": "timerfd + epoll_wait",
    "close_range": "close_range(CLOEXEC)",
    "fcntl": "fcntl loop",
    "proc_scan": "/proc/self/fd scan",
    "read": "read()",
    "encoded": "preadv2(RWF_ENCODED)",
    "encoded_x4": "RWF_ENCODED, 4 threads",
    "encoded_uring": "RWF_ENCODED, io_uring ×4",
    "ioctl": "BTRFS_IOC_ENCODED_READ",
    "ioctl_x4": "the ioctl, 4 threads",
    "ioctl_uring": "the ioctl, io_uring ×4",
    "1ns": "timer slack 1 ns",
    "default": "default timer slack",
}


def name(key):
    return NAME.get(key, "")


def unwrap(template):
    """A template's indented lines joined to the line before, one space
    between."""
    return re.sub(r"\n[ \t]+", " ", template)


def fill(template, **fields):
    return unwrap(template).format(**fields)


class Facts(dict):
    """Facts for a template, where one the run lacks is empty."""

    def __missing__(self, key):
        return ""


NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


def num(text):
    """A string as awk reads it as a number: its numeric prefix, else 0."""
    match = NUMBER.match(text.lstrip())
    return float(match.group()) if match else 0.0


class Record:
    """A measurement: N and its quantiles as the line gave them. That of a
    measurement the run lacks is empty: N "" and quantiles 0."""

    def __init__(self, fields=("",) * 7):
        self.n, self.text = fields[0], dict(zip(QUANTILES, fields[1:]))

    def __getitem__(self, quantile):
        return num(self.text[quantile])

    def three(self, scale):
        """Median, min and max, each scaled by the function scale."""
        return [scale(self[q]) for q in ("med", "min", "max")]


class Bench:
    """What the lines of a bench.tsv say."""

    def __init__(self, lines):
        self.info = {}  # KEY or (KEY, SUBKEY): VALUE
        # A file merged by scripts/bench-merge holds several boots, each
        # from its "info date" line on; boots[0] has what came before one.
        self.boots, self.took = [{}], [[]]
        self.failed = []
        self.records = {}  # (BENCH, K1, K2, K3): Record
        self.order = {}  # (BENCH, i): the values of Ki, in order
        for line in lines:
            self.add(line.split("\t") if line else [])

    def add(self, f):
        """Takes in a line's fields: the facts of an "info" line, or a
        measurement (BENCH K1 K2 K3 N MIN P10 MEDIAN P90 P99 MAX)."""
        if f[:1] == ["info"]:
            if f[1:2] == ["date"]:
                self.boots.append({})
                self.took.append([])
            if len(f) == 3:
                self.info[f[1]] = self.boots[-1][f[1]] = f[2]
            elif len(f) >= 4:
                self.info[f[1], f[2]] = f[3]
                if f[1] == "failed":
                    self.failed.append(f[2])
                if f[1] == "seconds":
                    self.took[-1].append(f"{f[2]} {f[3]} s")
        elif len(f) == 11:
            self.records[tuple(f[:4])] = Record(f[4:])
            for i in (1, 2, 3):
                seen = self.order.setdefault((f[0], i), [])
                if f[i] not in seen:
                    seen.append(f[i])

    def keys(self, bench, i):
        return self.order.get((bench, i), [])

    def has(self, *key):
        return key in self.records

    def get(self, *key):
        return self.records.get(key, Record())

    def fact(self, *key):
        return self.info.get(key[0] if len(key) == 1 else key, "")


def sig(x):
    """Three significant digits, never in exponent form."""
    a = abs(x)
    digits = 0 if a >= 99.95 else 1 if a >= 9.995 else 2 if a >= 0.9995 else 3
    return "%.*f" % (digits, x)


def human(ns):
    """A duration in ns, in the unit that suits it."""
    units = ("ns", "us", "ms", "s")
    i = 0
    while i < 3 and (ns >= 999.5 or ns <= -999.5):
        ns /= 1000
        i += 1
    return f"{sig(ns)} {units[i]}"


def ratio(a, b):
    return sig(a / b) + "×" if b > 0 else "–"


def mib(size):
    return sig(size / 1048576) + " MiB"


def spread(record, scale=lambda x: x, show=sig):
    """"median (min–max)" of a record: scale()d, then show()n."""
    return "{} ({}–{})".format(*map(show, record.three(scale)))


def div(a, b):
    """a / b, where a TSV that lacks a figure divides by 0: infinite (or
    not a number) as in awk, so that the report is still written."""
    return a / b if b else math.copysign(math.inf, a) if a else math.nan


def dat3(record, scale):
    """Median, min and max of a record, scaled, for a data file."""
    return "%g %g %g" % tuple(record.three(scale))


def per_gib(gib):
    """Scales ns of work on gib GiB of data to s per GiB."""
    return lambda ns: div(ns / 1e9, gib)


def block(title, points, low, high, unit):
    """A plot data block: its title, then "X MEDIAN LOW HIGH" a point for
    each (x, record), at least 1 for a log axis, then in units of unit."""
    return f'"{title}"\n' + "".join(
        "%g %g %g %g\n" % (x, *(max(1, r[q]) / unit
                                for q in ("med", low, high)))
        for x, r in points) + "\n\n"


def row(cells):
    return "| " + " | ".join(cells) + " |\n"


# The header. WHEN and GUEST describe a boot, within ONE_BOOT or BOOT
# (f-strings: their {fields} stay fields, filled from the boot's facts).

WHEN = """{date} by `make bench` (repository at {commit}), on kernel {kernel}
  ({tree})"""

GUEST = """{cpus} vCPUs, {memory} of memory, clocksource {clocksource}. Host:
  {host}"""

ONE_BOOT = f"""\
Measured {WHEN}, in one boot of a QEMU guest under **TCG emulation** (no
  KVM): {GUEST}.
"""

BOOTS = """\
Measured by `make bench` in {runs} boots of a QEMU guest under **TCG
  emulation** (no KVM); later boots reran some benchmarks (`make bench
  ONLY=...`) and replaced their results:

"""

BOOT = f"- {WHEN}: {GUEST}. It ran: {{took}} (time in the guest).\n"

HEADER = """\
# Benchmarks

{boots}
An emulated CPU is many times slower than hardware and its timers are
  noisier, so the absolute numbers are those of this guest; what carries
  over is the comparison, given as ratios of medians measured in the same
  boot. Each figure is the median of repeated runs with its spread. Raw
  lines: [bench.tsv](bench.tsv){took}.
"""

FAILED = "\n**Failed in this run:**{failed} (see build/vm/bench/out).\n"

ONLY = '\nOnly some benchmarks ran (ONLY="{only}").\n'


def header(bench):
    runs = len(bench.boots) - 1
    ran = [", ".join(took) for took in bench.took]
    if runs <= 1:
        boot = bench.boots[1] if runs else {}
        boots = unwrap(ONE_BOOT).format_map(Facts(boot))
        took = "; time taken in the guest: " + (ran[1] if runs else "")
    else:
        boots = fill(BOOTS, runs=runs) + "".join(
            unwrap(BOOT).format_map(Facts(bench.boots[r], took=ran[r]))
            for r in range(1, runs + 1))
        took = ""
    text = fill(HEADER, boots=boots, took=took)
    if bench.failed:
        text += FAILED.format(failed="".join(" " + f for f in bench.failed))
    if "only" in bench.info and runs <= 1:
        text += ONLY.format(only=bench.info["only"])
    return text


# Timeout precision

TIMEOUT = """
## Timeout precision

How much later than requested a wait returns when nothing becomes ready
  (overshoot = actual wait − requested timeout, CLOCK_MONOTONIC). The
  methods take turns wait by wait:

- **epoll_pwait2**: epoll_pwait2() (syscall 441) with a nanosecond timespec
  on an epoll set where nothing is ready;
- **ppoll**: ppoll() on a never-ready eventfd, the nanosecond timer path
  epoll_pwait2 shares;
- **epoll_wait, ms rounded up**: what epoll users do today: the timeout
  rounded up to whole milliseconds (so it never returns early; at least
  1 ms);
- **timerfd + epoll_wait**: the workaround: a relative one-shot
  timerfd_settime() on a timerfd in the epoll set, epoll_wait(-1), and a
  read() of the timerfd after the wait (not timed). A timerfd's timer takes
  no timer slack, which is why it leads at the default slack.

System calls per wait: {syscalls}.

Cells: median overshoot (p10–p90), then p99, in microseconds; "waits" is
  the number of waits per method. Under TCG every wait also pays for
  emulated system calls, clock reads (clocksource {clocksource}) and timer
  interrupts: that floor, and its growth with longer waits, is common to
  all four methods; the differences between them are the interfaces'.
{headline}{tables}
![Median overshoot against the requested timeout, log-log; bars
  p10–p90](epoll-timeout.png)
"""

HEADLINE = """
Headline, 100 us requested:

"""

HEADLINE_ITEM = """\
- {slack}: epoll_pwait2 overshoots by {pwait2} (median; ppoll {ppoll}, ratio
  {pwait2_ppoll}), epoll_wait by {wait_ms} ({wait_ms_pwait2} epoll_pwait2's),
  the timerfd workaround by {timerfd} with three syscalls.
"""


def timeout_headline(bench):
    text = HEADLINE
    for slack in ("1ns", "default"):
        pwait2, ppoll, wait_ms, timerfd = (
            bench.get("timeout", slack, m, "100000")["med"]
            for m in ("epoll_pwait2", "ppoll", "epoll_wait_ms", "timerfd"))
        text += fill(HEADLINE_ITEM, slack=name(slack), pwait2=human(pwait2),
                     ppoll=human(ppoll), pwait2_ppoll=ratio(pwait2, ppoll),
                     wait_ms=human(wait_ms),
                     wait_ms_pwait2=ratio(wait_ms, pwait2),
                     timerfd=human(timerfd))
    return text


def timeout_cell(record):
    """Median (p10–p90), p99 of waits in ns, in us."""
    return "{} ({}–{}), {}".format(*(sig(record[q] / 1000)
                                     for q in ("med", "p10", "p90", "p99")))


def timeout_table(bench, slack, methods, requested):
    title = name(slack)[:1].upper() + name(slack)[1:]
    if slack == "default":
        title += f" ({human(num(bench.fact('timerslack', 'default')))})"
    text = f"\n### {title}\n\n" + row(
        ["requested", "waits"] + [name(m) for m in methods]
        + ["epoll_pwait2 / ppoll (medians)"])
    text += "|---:|---:|" + "---:|" * (len(methods) + 1) + "\n"
    for req in requested:
        rec = lambda m: bench.get("timeout", slack, m, req)
        text += row([human(num(req)), rec(methods[0]).n]
                    + [timeout_cell(rec(m)) for m in methods]
                    + [ratio(rec("epoll_pwait2")["med"], rec("ppoll")["med"])])
    return text


def timeout_section(bench, data):
    slacks, methods, requested = (bench.keys("timeout", i) for i in (1, 2, 3))
    if not slacks:
        return ""
    tables = ""
    for slack in slacks:
        tables += timeout_table(bench, slack, methods, requested)
        data(f"timeout-{slack}.dat", "".join(
            block(name(m), [(num(r) / 1000, bench.get("timeout", slack, m, r))
                            for r in requested], "p10", "p90", 1000)
            for m in methods))
    return fill(TIMEOUT, tables=tables, clocksource=bench.fact("clocksource"),
                syscalls=", ".join(f"{name(m)} {bench.fact('syscalls', m)}"
                                   for m in methods),
                headline=timeout_headline(bench) if bench.has(
                    "timeout", "1ns", "epoll_pwait2", "100000") else "")


# Marking descriptors close-on-exec

CLOEXEC = """
## Marking descriptors close-on-exec

The time of one call that marks every descriptor above stderr close-on-exec,
  with N descriptors open (dup2() copies of one /dev/null): close_range(3,
  ~0U, CLOSE_RANGE_CLOEXEC); a loop of fcntl(F_SETFD, FD_CLOEXEC) over the
  known descriptors; and what container runtimes did, reading /proc/self/fd
  and calling fcntl(F_GETFD) and F_SETFD for each entry. Every call runs in
  a freshly forked child (no flag set yet, a cold /proc/self/fd), as a
  runtime does before exec. Cells: median (min–max) of the runs.

{table}
![Time per call against the number of descriptors, log-log; bars
  min–max](cloexec.png)
"""


def cloexec_section(bench, data):
    methods, nfds = bench.keys("cloexec", 1), bench.keys("cloexec", 2)
    if not methods:
        return ""
    table = row(["descriptors", "runs"] + [name(m) for m in methods]
                + ["fcntl / close_range", "scan / close_range"])
    table += "|---:|---:|" + "---:|" * (len(methods) + 2) + "\n"
    for nfd in nfds:
        rec = lambda m: bench.get("cloexec", m, nfd, "-")
        table += row([nfd, rec(methods[0]).n]
                     + [spread(rec(m), show=human) for m in methods]
                     + [ratio(rec(m)["med"], rec("close_range")["med"])
                        for m in ("fcntl", "proc_scan")])
    data("cloexec.dat", "".join(
        block(name(m), [(num(n), bench.get("cloexec", m, n, "-"))
                        for n in nfds], "min", "max", 1e6)
        for m in methods))
    return fill(CLOEXEC, table=table)


# Encoded reads against ordinary reads

ENCODED = """
## Encoded reads against ordinary reads

A {datamib} MiB file of web server log lines on a fresh btrfs (a 1.5 GiB
  image on the guest's tmpfs, through a loop device) mounted with
  compress-force=zstd, zlib or lzo, read whole from a cold cache (caches
  dropped before each read): with read() in 1 MiB chunks, and with
  preadv2(RWF_ENCODED), one extent per call into a struct encoded_iov and a
  128 KiB buffer; then with four reads in flight, by four threads taking
  the extents FIEMAP lists, or by one thread with io_uring (IOSQE_ASYNC);
  then the same through mainline's BTRFS_IOC_ENCODED_READ (io_uring:
  its uring_cmd, which this kernel may lack). The image lives in memory,
  so "cold" means btrfs reads and checks the extents again but no disk is
  waited for.

Times are seconds per GiB of file data, median (min–max) of the runs.
  Process CPU is the reader's user + system time (getrusage); busy CPU is
  the whole guest's non-idle time (/proc/stat), which also counts the kernel
  workers where btrfs decompresses and verifies checksums for read(). Bytes
  moved: what the calls copied to the process; a stored extent is whole
  4 KiB sectors, so the encoded bytes include that padding.

| compression | method | runs | wall s/GiB | process CPU s/GiB | busy CPU
  s/GiB | bytes moved | calls |
|---|---|---:|---:|---:|---:|---:|---:|
{times}
Ratios of the medians, read() / RWF_ENCODED (above 1: the encoded read is
  cheaper), and of read()'s wall time over that of the encoded reads with
  four in flight:

| compression | file | wall | process CPU | busy CPU | bytes moved | wall,
  4 threads | wall, io_uring ×4 |
|---|---:|---:|---:|---:|---:|---:|---:|
{ratios}
![Wall time per GiB, read() against RWF_ENCODED, bars
  min–max](encoded-read.png)
"""

ENCODED_DAT = ("# compression, then median min max of: read wall, encoded "
               "wall, read busy CPU, encoded busy CPU (s/GiB)\n")


def encoded_section(bench, data):
    compressions = bench.keys("encoded", 1)
    if not compressions:
        return ""
    times = ratios = ""
    dat = ENCODED_DAT
    for c in compressions:
        rec = lambda m, metric: bench.get("encoded", c, m, metric)
        scale = per_gib(num(bench.fact("filesize", c)) / 1073741824)
        for m in bench.keys("encoded", 2):
            if not bench.has("encoded", c, m, "wall_ns"):
                continue
            times += row([c, name(m), rec(m, "bytes").n]
                         + [spread(rec(m, t), scale)
                            for t in ("wall_ns", "cpu_ns", "busy_ns")]
                         + [mib(rec(m, "bytes")["med"]),
                            rec(m, "calls").text["med"]])
        ratios += row([c, mib(num(bench.fact("filesize", c)))]
                      + [ratio(rec("read", t)["med"], rec("encoded", t)["med"])
                         for t in ("wall_ns", "cpu_ns", "busy_ns", "bytes")]
                      + [ratio(rec("read", "wall_ns")["med"],
                               rec(m, "wall_ns")["med"])
                         for m in ("encoded_x4", "encoded_uring")])
        dat += " ".join([c] + [dat3(rec(m, t), scale)
                               for t in ("wall_ns", "busy_ns")
                               for m in ("read", "encoded")]) + "\n"
    data("encoded.dat", dat)
    return fill(ENCODED, datamib=bench.fact("datamib"), times=times,
                ratios=ratios)


# Encoded writes against ordinary writes

ENCWRITE = """
## Encoded writes against ordinary writes

A {writemib} MiB file of the web server log lines above, written whole to a
  fresh btrfs (a 2 GiB image on the guest's tmpfs, through a loop device) in
  128 KiB pieces, and fsync()ed, three ways: **uncompressed** (pwrite() on a
  file system mounted without compression), **compress-force** (pwrite() on
  one mounted compress-force=zstd or zlib: the kernel compresses at
  writeback) and **encoded** (pwritev2(RWF_ENCODED) of each piece compressed
  beforehand in user space with libzstd or zlib at btrfs' level 3, one
  128 KiB extent per call, on the uncompressed mount).

Times are seconds per GiB of file data, median (min–max) of the runs, from
  open() to the end of fsync(). Process CPU is the writer's user + system
  time; busy CPU is the whole guest's non-idle time, which also counts the
  kernel workers that compress for compress-force. The encoded method's own
  compression is done once before its runs and is not in these times (the
  data comes compressed, as from a send stream or a backup): it is the
  "compression" line below. Under TCG on a busy host the two CPU clocks
  disagree (busy CPU is sampled at timer ticks, process CPU read from the
  scheduler's clock), so busy CPU can come out below process CPU: compare
  each column with itself. Space is the free space the file took (statvfs
  after sync); stored is the sum of its extents as RWF_ENCODED reads return
  them; "read back" compares the file with the data after the first run.

| compression | method | runs | wall s/GiB | process CPU s/GiB | busy CPU
  s/GiB | space | stored | read back |
|---|---|---:|---:|---:|---:|---:|---:|---|
{rows}{compression}
Encoded against compress-force (ratios of the medians, above 1: the encoded
  write is cheaper):{ratios}
![Writing a file: uncompressed, compressed by the kernel, encoded; bars
  min–max](encoded-write.png)
"""

NOT_MEASURED = "| {c} | {method} | – | not measured{why} | | | | | |\n"

NO_ENCODED_WRITES = ": the kernel has no encoded writes ({why})"

COMPRESSION = """
Compression:

"""

COMPRESSION_ITEM = """\
- user-space {c} compression of the data before the encoded runs: {cpu} CPU
  s/GiB, to {size}
"""

ENCWRITE_RATIO = """\
- {c}: wall {wall}, busy CPU {busy}; counting the user-space compression too
  (its CPU time added to the encoded write's busy CPU), {total}
"""

NO_ENCWRITE_RATIOS = """ not measured: no encoded write ran in this boot
  (the kernel answered EOPNOTSUPP; rerun `make bench` on a kernel with btrfs
  encoded writes).
"""

ENCWRITE_DAT = ("# method, then median min max of wall and of busy CPU "
                "(s/GiB)\n")

# The table's rows: compression, then pwrite() ("write") or RWF_ENCODED.
ENCWRITE_ROWS = (("none", "write"), ("zstd", "write"), ("zstd", "encoded"),
                 ("zlib", "write"), ("zlib", "encoded"))


def encwrite_method(compression, method):
    if method == "encoded":
        return "encoded"
    return "uncompressed" if compression == "none" else "compress-force"


def encwrite_row(bench, c, m, gib):
    """A row of the table, and the method's line of the data file ("" where
    it was not measured)."""
    method = encwrite_method(c, m)
    if not bench.has("encwrite", c, m, "wall_ns"):
        # A kernel without encoded writes says so in an "unsupported" line.
        unsupported = ("unsupported", "encoded_write-" + c)
        why = (NO_ENCODED_WRITES.format(why=bench.info[unsupported])
               if m == "encoded" and unsupported in bench.info else "")
        return NOT_MEASURED.format(c=c, method=method, why=why), ""
    rec = lambda metric: bench.get("encwrite", c, m, metric)
    scale = lambda ns: div(ns, gib * 1e9)
    text = row([c, method, rec("wall_ns").n]
               + [spread(rec(t), scale)
                  for t in ("wall_ns", "cpu_ns", "busy_ns")]
               + [mib(rec("space")["med"]),
                  mib(num(bench.fact("stored", f"{c}-{m}"))),
                  bench.fact("written", f"{c}-{m}")])
    title = method if c == "none" else f"{c} {method}"
    wall, busy = (dat3(rec(t), per_gib(gib)) for t in ("wall_ns", "busy_ns"))
    return text, f'"{title}" {wall} {busy}\n'


def encwrite_ratio(bench, c):
    """Encoded against compress-force, where both ran."""
    if not (bench.has("encwrite", c, "write", "wall_ns")
            and bench.has("encwrite", c, "encoded", "wall_ns")):
        return ""
    wall, busy = ([bench.get("encwrite", c, m, t)["med"]
                   for m in ("write", "encoded")]
                  for t in ("wall_ns", "busy_ns"))
    return fill(ENCWRITE_RATIO, c=c, wall=ratio(*wall), busy=ratio(*busy),
                total=ratio(busy[0], busy[1]
                            + num(bench.fact("compress_ns", c))))


def encwrite_section(bench, data):
    if "writemib" not in bench.info:
        return ""
    gib = num(bench.info["writemib"]) / 1024
    rows, dat = "", ENCWRITE_DAT
    for c, m in ENCWRITE_ROWS:
        text, line = encwrite_row(bench, c, m, gib)
        rows, dat = rows + text, dat + line
    data("encwrite.dat", dat)
    compression = "".join(
        fill(COMPRESSION_ITEM, c=c,
             cpu=sig(per_gib(gib)(num(bench.info["compress_ns", c]))),
             size=mib(num(bench.fact("payload", c))))
        for c in ("zstd", "zlib") if ("compress_ns", c) in bench.info)
    ratios = "".join(encwrite_ratio(bench, c) for c in ("zstd", "zlib"))
    return fill(ENCWRITE, writemib=bench.info["writemib"], rows=rows,
                compression=COMPRESSION + compression if compression else "",
                ratios=("\n\n" + ratios if ratios
                        else unwrap(NO_ENCWRITE_RATIOS)))


# btrfs send and receive

SEND = """
## btrfs send and receive: stream version 1 against version 2

A data set of {size} in {files} files, generated with a fixed seed
  (bench/send_receive.c): 40 % web server logs in 16 MiB files, 30 %
  English-like text in files of 256 KiB to 4 MiB, 15 % small text files of 1
  to 32 KiB, 15 % random bytes (incompressible) in 4 MiB files; written to a
  btrfs mounted compress-force=zstd (a 2 GiB image on the guest's tmpfs) and
  snapshotted read-only. Run after run, the snapshot is sent with Debian's
  btrfs-progs, `btrfs send --proto 1` (version 1: the data decompressed, in
  writes of at most 48 KiB) and `btrfs send --proto 2 --compressed-data`
  (version 2: each compressed extent as stored, one encoded_write command),
  into a stream file on tmpfs, from a cold cache; then the stream is
  received with `btrfs receive` into a fresh btrfs mounted
  compress-force=zstd.

Cells: median (min–max) of {runs} runs. Send times are those of the `btrfs
  send` process (the kernel builds the stream in its system time); receive
  times run to the end of a sync() after it, so that the received data is
  compressed and written; busy CPU is the whole guest's non-idle time over
  the same span (btrfs compresses in kernel workers). Beside them, the
  figures published with the original proposal (the encoded I/O series this
  one follows; a 50 GB stream, not in an emulator); this data set is much
  smaller, to fit a TCG-emulated guest, so compare the ratios.

| | version 1 | version 2, compressed | v2 / v1 | proposal: v1 | proposal:
  v2 | proposal: v2 / v1 |
|---|---:|---:|---:|---:|---:|---:|
{rows}
Checks, once per version (they do not make the benchmark fail):

{checks}
How receive writes a version 2 stream: btrfs-progs writes each
  encoded_write command with BTRFS_IOC_ENCODED_WRITE, and falls back to
  decompressing it and writing the plain data (which compress-force then
  compresses again) only where the kernel refuses the ioctl. The snapshot
  has {snap_encoded} compressed extents (FIEMAP); the files received from
  version 1 have {v1_encoded}, compressed again by the receiving kernel,
  and those received from version 2 {v2_encoded}.

![Send and receive times by stream version, and the v2 / v1 ratios beside
  the proposal's](send-receive.png)
"""

SEND_CHECK = """\
- version {v}: the received files are {received} to the snapshot (diff -r);
  the stream has {write} write and {encoded} encoded_write commands, and
  {other} others (btrfs receive --dump).
"""

# The table's rows: the records' phase and metric, and the unit they are
# shown in.
SEND_ROWS = {
    "stream size, MiB": ("stream", "bytes", 1048576),
    "send: system time, s": ("send", "sys_ns", 1e9),
    "send: user time, s": ("send", "user_ns", 1e9),
    "send: wall time, s": ("send", "wall_ns", 1e9),
    "send: busy CPU, s": ("send", "busy_ns", 1e9),
    "receive: wall time, s": ("receive", "wall_ns", 1e9),
    "receive: user time, s": ("receive", "user_ns", 1e9),
    "receive: system time, s": ("receive", "sys_ns", 1e9),
    "receive: busy CPU, s": ("receive", "busy_ns", 1e9),
}

# What the proposal published for some rows, v1 and v2: as it gave them,
# and as numbers; then the name of the row in send-ratios.dat.
PROPOSAL = {
    "stream size, MiB": ("50 GB", "23 GB", 50, 23, "stream size"),
    "send: system time, s": ("82 s", "60.5 s", 82, 60.5, "send system time"),
    "receive: wall time, s": ("5:11", "3:42", 311, 222, "receive time"),
}

SEND_TIMES = {  # name in send-times.dat: row of the table
    "send: system": "send: system time, s",
    "send: wall": "send: wall time, s",
    "send: busy CPU": "send: busy CPU, s",
    "receive: wall": "receive: wall time, s",
    "receive: busy CPU": "receive: busy CPU, s",
}


def send_records(bench, what, sfx=""):
    """The records of a row of the table, of version 1 and of version 2
    (of the data set that sfx names: "" or "-x4")."""
    phase, metric, _ = SEND_ROWS[what]
    return [bench.get("send", v + sfx, phase, metric) for v in ("v1", "v2")]


def send_row(bench, what):
    v1, v2 = send_records(bench, what)
    unit = lambda x: x / SEND_ROWS[what][2]
    p1, p2, x1, x2, _ = PROPOSAL.get(what, ("", "", 0, 0, ""))
    return row([what, spread(v1, unit), spread(v2, unit),
                ratio(v2["med"], v1["med"]), p1, p2,
                ratio(x2, x1) if p1 else ""])


def send_check(bench, v):
    """What the stream of version v held (receive --dump), and whether the
    received files matched."""
    def commands(what):
        return bench.info.get(("commands", f"v{v} {what}"), "0")

    other = sum(num(value) for key, value in bench.info.items()
                if isinstance(key, tuple) and key[0] == "commands"
                and key[1].split()[:1] == [f"v{v}"]
                and key[1].split()[1:2] not in (["write"], ["encoded_write"]))
    # As awk printed a number: an integer if it is one and fits in an int.
    other = ("%d" % other if other == int(other) and abs(other) < 2**31
             else "%.6g" % other)
    return fill(SEND_CHECK, v=v, write=commands("write"),
                encoded=commands("encoded_write"), other=other,
                received=bench.info.get(("received", f"v{v}"), "not compared"))


def send_section(bench, data):
    if not bench.has("send", "v1", "stream", "bytes"):
        return ""
    times = "# what, then median min max of v1 and of v2 (s)\n"
    for title, what in SEND_TIMES.items():
        v1, v2 = (dat3(r, lambda ns: ns / 1e9)
                  for r in send_records(bench, what))
        times += f'"{title}" {v1} {v2}\n'
    data("send-times.dat", times)
    ratios = "# what, v2/v1 of the medians here, and in the proposal\n"
    for what, (_, _, x1, x2, title) in PROPOSAL.items():
        v1, v2 = send_records(bench, what)
        ratios += '"%s" %g %g\n' % (title, div(v2["med"], v1["med"]), x2 / x1)
    data("send-ratios.dat", ratios)
    def encoded(what):
        return bench.info.get(("encodedextents", what), "(not counted)")

    return fill(SEND, size=mib(num(bench.fact("sendbytes"))),
                snap_encoded=encoded("snapshot"), v1_encoded=encoded("v1"),
                v2_encoded=encoded("v2"),
                files=bench.fact("sendfiles"),
                runs=bench.get("send", "v1", "stream", "bytes").n,
                rows="".join(send_row(bench, what) for what in SEND_ROWS),
                checks="".join(send_check(bench, v) for v in (1, 2))) + \
        send_x4_section(bench)


SEND_X4 = """
### Four times the data

The same, in the same boot, with a data set four times larger ({size} in
  {files} files, made the same way), {runs} runs each way. Cells: the
  medians of version 1 and version 2 with four times the data, then the
  v2 / v1 ratio of the medians at each size.

| | version 1, ×4 | version 2, ×4 | v2 / v1, {small} | v2 / v1, {size} |
|---|---:|---:|---:|---:|
{rows}
Checks of the larger set: version 1's received files are {received1},
  version 2's {received2} to the snapshot (diff -r); the snapshot has
  {snap_encoded} compressed extents, version 2's received files
  {v2_encoded}.
"""


def send_x4_section(bench):
    """The send benchmark again with four times the data, beside the first."""
    if not bench.has("send", "v1-x4", "stream", "bytes"):
        return ""
    rows = ""
    for what, (_, _, scale) in SEND_ROWS.items():
        v1, v2 = send_records(bench, what)
        b1, b2 = send_records(bench, what, "-x4")
        rows += row([what, sig(b1["med"] / scale), sig(b2["med"] / scale),
                     ratio(v2["med"], v1["med"]), ratio(b2["med"], b1["med"])])
    return fill(SEND_X4, size=mib(num(bench.fact("sendbytes-x4"))),
                small=mib(num(bench.fact("sendbytes"))),
                files=bench.fact("sendfiles-x4"),
                runs=bench.get("send", "v1-x4", "stream", "bytes").n, rows=rows,
                received1=bench.info.get(("received", "v1-x4"), "not compared"),
                received2=bench.info.get(("received", "v2-x4"), "not compared"),
                snap_encoded=bench.info.get(("encodedextents", "snapshot-x4"), "(not counted)"),
                v2_encoded=bench.info.get(("encodedextents", "v2-x4"), "(not counted)"))


# The series' kernels against Debian's stock kernels: make bench-peers keeps
# a bench.tsv per kernel in peers/KERNEL/ beside the report's own.

CODECS = ("zstd", "zlib", "lzo")


def load(path):
    """The Bench of a bench.tsv file."""
    with open(path, newline="\n", encoding="utf-8",
              errors="surrogateescape") as lines:
        return Bench(line.removesuffix("\n") for line in lines)


def load_peers(peers):
    """{kernel: Bench} of the directory PEERS, by version, the series'
    kernel before Debian's of the same version; {} if there is none."""
    def order(name):
        kind, _, version = name.partition("-")
        return [int(x) if x.isdigit() else 0 for x in version.split(".")], \
            kind != "series", name
    names = sorted(os.listdir(peers), key=order) if os.path.isdir(peers) \
        else []
    return {n: load(os.path.join(peers, n, "bench.tsv")) for n in names
            if os.path.isfile(os.path.join(peers, n, "bench.tsv"))}


def rec(bench, *key):
    """A measurement, or None where the boot lacks it."""
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


def table(head, rows):
    return (row(head) + row(["---"] * len(head))
            + "".join(row(r) for r in rows))


def peer_items():
    """What is compared across kernels: (label, key of the measurement)."""
    for c in CODECS:
        for m in ("ioctl", "read"):
            k = "read()" if m == "read" else m
            yield (f"{c}: {k} busy CPU", ("encoded", c, m, "busy_ns"))
            yield (f"{c}: {k} wall", ("encoded", c, m, "wall_ns"))
        for m in ("ioctl_x4", "ioctl_uring"):
            yield (f"{c}: {m} wall", ("encoded", c, m, "wall_ns"))
    for sfx in ("", "-x4"):
        for v in ("v1", "v2"):
            x = " x4" if sfx else ""
            yield (f"send {v}{x} system time", ("send", v + sfx, "send", "sys_ns"))
            yield (f"receive {v}{x} wall", ("send", v + sfx, "receive", "wall_ns"))
            yield (f"receive {v}{x} busy CPU", ("send", v + sfx, "receive", "busy_ns"))
        yield (f"v2{' x4' if sfx else ''} stream bytes", ("send", "v2" + sfx, "stream", "bytes"))


PEERS = """
## Against mainline's implementation

The same encoded read and send benchmarks on Debian's stock kernels
  (debian-6.1: Debian 12's; debian-7.2: Debian unstable's, the mainline
  series' base version; both with mainline's btrfs encoded ioctls and send
  stream version 2, and Debian's own configuration) and on the series'
  kernels (the guest configuration of `config/`), in the same guest, one
  boot each, by `make bench-peers` ({boots}; each boot and each kernel's own
  ratios: [bench-peers.md](bench-peers.md)). Cells: the ratio of the
  medians (below 1: the series takes less), in brackets the range from the
  series' best run over the other's worst to its worst over the other's
  best. "Behind" names a pair where the series' best run costs more than
  the other's worst (byte counts, the same in every run: more than 1 %
  more); "no" means not shown by these runs. RWF_ENCODED exists only on the
  series' kernels, so the encoded reads compared are the ioctl's
  (BTRFS_IOC_ENCODED_READ; io_uring: its uring_cmd, 7.2 only).

![Series over Debian's kernels, per measurement; bars: the
  range](bench-peers.png)

{table}"""


def peers_section(peers, data):
    """Each series kernel over each of Debian's stock kernels, from the
    boots of make bench-peers in the directory PEERS; peers.dat for the
    plot."""
    kernels = load_peers(peers)
    bases = [k for k in kernels if k.startswith("debian-")]
    pairs = [(k, m) for k in kernels if k not in bases for m in bases]
    if not pairs:
        return ""
    head = ["measurement"] + [f"{m} median" for m in bases] + \
        [f"{k} / {m}" for k, m in pairs] + ["series behind beyond the runs?"]
    rows, dat = [], ""
    for label, key in peer_items():
        base = {m: rec(kernels[m], *key) for m in bases}
        if not any(ratios(rec(kernels[k], *key), base[m]) for k, m in pairs):
            continue
        cells = [label] + [(mib if key[-1] == "bytes" else human)(
            base[m]["med"]) if base[m] else "–" for m in bases]
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
            dat += " %g %g %g" % (r if r else (math.nan,) * 3)
        dat += "\n"
        cells.append(", ".join(behind) if behind else "no")
        rows.append(cells)
    data("peers.dat", "# label, then per pair ("
         + " ".join(f"{k}/{m}" for k, m in pairs) + "): ratio, low, high\n"
         + dat)
    boots = ", ".join(f"{k} {b.fact('date')}" for k, b in kernels.items())
    return fill(PEERS, boots=boots, table=table(head, rows))


SECTIONS = (timeout_section, cloexec_section, encoded_section,
            encwrite_section, send_section)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: bench-report.py BENCH.TSV DATA")
    tsv, datadir = sys.argv[1:]
    # Bytes that are not UTF-8 pass through unchanged, as they did in awk.
    utf8 = dict(encoding="utf-8", errors="surrogateescape")
    bench = load(tsv)

    def data(filename, text):
        with open(os.path.join(datadir, filename), "w", **utf8) as dat:
            dat.write(text)

    report = header(bench) + "".join(s(bench, data) for s in SECTIONS) + \
        peers_section(os.path.join(os.path.dirname(tsv), "peers"), data)
    sys.stdout.buffer.write(report.encode(**utf8))


if __name__ == "__main__":
    main()
