# bench-report.awk: the Markdown report of a bench.tsv (see bench/bench.h
# for its lines), on stdout, and the plots' data files in the directory
# DATA (set with -v): timeout-SLACK.dat, cloexec.dat, encoded.dat,
# encwrite.dat, send-times.dat and send-ratios.dat, each only when the run
# has its benchmark.

BEGIN {
	FS = "\t"
	split("min p10 med p90 p99 max", F, " ")
	name["epoll_pwait2"] = "epoll_pwait2"
	name["ppoll"] = "ppoll"
	name["epoll_wait_ms"] = "epoll_wait, ms rounded up"
	name["timerfd"] = "timerfd + epoll_wait"
	name["close_range"] = "close_range(CLOEXEC)"
	name["fcntl"] = "fcntl loop"
	name["proc_scan"] = "/proc/self/fd scan"
	name["read"] = "read()"
	name["encoded"] = "preadv2(RWF_ENCODED)"
	name["1ns"] = "timer slack 1 ns"
	name["default"] = "default timer slack"
}

# info KEY VALUE, or info KEY SUBKEY VALUE
# A file merged by scripts/bench-merge holds several boots, each starting
# with its "info date" line: run[R, KEY] keeps each boot's facts.
$1 == "info" && $2 == "date" { runs++ }
$1 == "info" && NF == 3 { info[$2] = $3; run[runs, $2] = $3; next }
$1 == "info" && NF >= 4 {
	info[$2, $3] = $4
	if ($2 == "failed")
		failed = failed " " $3
	if ($2 == "seconds")
		took[runs] = took[runs] (took[runs] == "" ? "" : ", ") $3 " " \
			$4 " s"
	next
}
$1 == "info" { next }

NF == 11 {
	k = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4
	n[k] = $5
	for (i = 1; i <= 6; i++)
		S[k, F[i]] = $(i + 5)
	# The keys of each benchmark, in the order they came.
	add($1 " 1", $2)
	add($1 " 2", $3)
	add($1 " 3", $4)
}

function add(list, v) {
	if (!((list, v) in seen)) {
		seen[list, v] = 1
		keys[list] = keys[list] (keys[list] == "" ? "" : " ") v
	}
}

# Three significant digits, never in exponent form.
function sig(x,   a) {
	a = x < 0 ? -x : x
	if (a >= 99.95)
		return sprintf("%.0f", x)
	if (a >= 9.995)
		return sprintf("%.1f", x)
	if (a >= 0.9995)
		return sprintf("%.2f", x)
	return sprintf("%.3f", x)
}

# A duration in ns, in the unit that suits it.
function human(ns,   u, i) {
	split("ns us ms s", u, " ")
	for (i = 1; i < 4 && (ns >= 999.5 || ns <= -999.5); i++)
		ns /= 1000
	return sig(ns) " " u[i]
}

function ratio(a, b) {
	return b > 0 ? sig(a / b) "×" : "–"
}

function has(k) {
	return (k, "med") in S
}

function nsplit(list, a) {
	return split(keys[list], a, " ")
}

function timeout_key(slack, m, req) {
	return "timeout" SUBSEP slack SUBSEP m SUBSEP req
}

function cloexec_key(m, nfd) {
	return "cloexec" SUBSEP m SUBSEP nfd SUBSEP "-"
}

function enc_key(c, m, metric) {
	return "encoded" SUBSEP c SUBSEP m SUBSEP metric
}

# Seconds per GiB of file data of compression c.
function per_gib(ns, c) {
	return ns / 1e9 / (info["filesize", c] / 1073741824)
}

# Median, min and max in s/GiB, for a data file.
function gib3(c, m, metric,   k) {
	k = enc_key(c, m, metric)
	return sprintf("%g %g %g", per_gib(S[k, "med"], c),
		per_gib(S[k, "min"], c), per_gib(S[k, "max"], c))
}

function enc_cell(c, m, metric,   k) {
	k = enc_key(c, m, metric)
	return sig(per_gib(S[k, "med"], c)) " (" sig(per_gib(S[k, "min"], c)) \
		"–" sig(per_gib(S[k, "max"], c)) ")"
}

# A heading, with the blank lines around it.
function section(title) {
	print "\n## " title "\n"
}

# A plot data block: its title, then "X MEDIAN LOW HIGH" a point, scaled
# by 1/div, for the stats keys pk[1..np] at x values px[1..np].
function block(dat, title, np, px, pk, lo, hi, div,   i) {
	printf "\"%s\"\n", title > dat
	for (i = 1; i <= np; i++)
		printf "%g %g %g %g\n", px[i], pos(S[pk[i], "med"]) / div,
			pos(S[pk[i], lo]) / div, pos(S[pk[i], hi]) / div > dat
	printf "\n\n" > dat
}

function mib(b) {
	return sig(b / 1048576) " MiB"
}

END {
	print "# Benchmarks"
	print ""
	if (runs <= 1)
		print "Measured " boot(1) ", in one boot of a QEMU guest under " \
			"**TCG emulation** (no KVM): " guest(1) "."
	else {
		print "Measured by `make bench` in " runs " boots of a QEMU guest " \
			"under **TCG emulation** (no KVM); later boots reran some " \
			"benchmarks (`make bench ONLY=...`) and replaced their " \
			"results:"
		print ""
		for (r = 1; r <= runs; r++)
			print "- " boot(r) ": " guest(r) ". It ran: " took[r] \
				" (time in the guest)."
	}
	print ""
	print "An emulated CPU is many times slower than hardware and its " \
		"timers are noisier, so the absolute numbers are those of this " \
		"guest; what carries over is the comparison, given as ratios of " \
		"medians measured in the same boot. Each figure is the median of " \
		"repeated runs with its spread. Raw lines: [bench.tsv](bench.tsv)" \
		(runs <= 1 ? "; time taken in the guest: " took[1] : "") "."
	if (failed != "")
		print "\n**Failed in this run:**" failed " (see build/vm/bench/out)."
	if ("only" in info && runs <= 1)
		print "\nOnly some benchmarks ran (ONLY=\"" info["only"] "\")."
	timeout_section()
	cloexec_section()
	encoded_section()
	encwrite_section()
	send_section()
}

# What boot r was: when, which code and kernel; then its guest and host.
function boot(r) {
	return run[r, "date"] " by `make bench` (repository at " \
		run[r, "commit"] "), on kernel " run[r, "kernel"] \
		" (Linux 5.10.262 with the series; kernel tree at \"" \
		run[r, "tree"] "\")"
}

function guest(r) {
	return run[r, "cpus"] " vCPUs, " run[r, "memory"] " of memory, " \
		"clocksource " run[r, "clocksource"] ". Host: " run[r, "host"]
}

function timeout_section(   ns, slacks, nm, ms, nr, reqs, s, m, r, k, row,
			  dat, sep, p, q, px, pk) {
	ns = nsplit("timeout 1", slacks)
	nm = nsplit("timeout 2", ms)
	nr = nsplit("timeout 3", reqs)
	if (!ns)
		return
	section("Timeout precision")
	print "How much later than requested a wait returns when nothing " \
		"becomes ready (overshoot = actual wait − requested timeout, " \
		"CLOCK_MONOTONIC). The methods take turns wait by wait:"
	print ""
	print "- **epoll_pwait2**: epoll_pwait2() (syscall 441) with a " \
		"nanosecond timespec on an epoll set where nothing is ready;"
	print "- **ppoll**: ppoll() on a never-ready eventfd, the nanosecond " \
		"timer path epoll_pwait2 shares;"
	print "- **epoll_wait, ms rounded up**: what epoll users do today: the " \
		"timeout rounded up to whole milliseconds (so it never returns " \
		"early; at least 1 ms);"
	print "- **timerfd + epoll_wait**: the workaround: a relative one-shot " \
		"timerfd_settime() on a timerfd in the epoll set, epoll_wait(-1), " \
		"and a read() of the timerfd after the wait (not timed). A " \
		"timerfd's timer takes no timer slack, which is why it leads at " \
		"the default slack."
	print ""
	printf "System calls per wait:"
	for (m = 1; m <= nm; m++)
		printf " %s %s%s", name[ms[m]], info["syscalls", ms[m]],
			m < nm ? "," : ".\n"
	print ""
	print "Cells: median overshoot (p10–p90), then p99, in microseconds; " \
		"\"waits\" is the number of waits per method. Under TCG every " \
		"wait also pays for emulated system calls, clock reads " \
		"(clocksource " info["clocksource"] ") and timer interrupts: " \
		"that floor, and its growth with longer waits, is common to all " \
		"four methods; the differences between them are the interfaces'."
	if (has(timeout_key("1ns", "epoll_pwait2", 100000)))
		timeout_headline()
	for (s = 1; s <= ns; s++) {
		print ""
		print "### " toupper(substr(name[slacks[s]], 1, 1)) \
			substr(name[slacks[s]], 2) \
			(slacks[s] == "default" ? \
			 " (" human(info["timerslack", "default"]) ")" : "")
		print ""
		row = "| requested | waits |"
		sep = "|---:|---:|"
		for (m = 1; m <= nm; m++) {
			row = row " " name[ms[m]] " |"
			sep = sep "---:|"
		}
		print row " epoll_pwait2 / ppoll (medians) |"
		print sep "---:|"
		dat = DATA "/timeout-" slacks[s] ".dat"
		printf "" > dat
		for (m = 1; m <= nm; m++) {
			for (r = 1; r <= nr; r++) {
				px[r] = reqs[r] / 1000
				pk[r] = timeout_key(slacks[s], ms[m], reqs[r])
			}
			block(dat, name[ms[m]], nr, px, pk, "p10", "p90", 1000)
		}
		close(dat)
		for (r = 1; r <= nr; r++) {
			k = timeout_key(slacks[s], ms[1], reqs[r])
			row = "| " human(reqs[r]) " | " n[k] " |"
			for (m = 1; m <= nm; m++) {
				k = timeout_key(slacks[s], ms[m], reqs[r])
				row = row " " sig(S[k, "med"] / 1000) " (" \
					sig(S[k, "p10"] / 1000) "–" \
					sig(S[k, "p90"] / 1000) "), " \
					sig(S[k, "p99"] / 1000) " |"
			}
			p = S[timeout_key(slacks[s], "epoll_pwait2", reqs[r]), "med"]
			q = S[timeout_key(slacks[s], "ppoll", reqs[r]), "med"]
			print row " " ratio(p, q) " |"
		}
	}
	print ""
	print "![Median overshoot against the requested timeout, log-log; " \
		"bars p10–p90](epoll-timeout.png)"
}

# A value on a log axis: at least 1.
function pos(x) {
	return x < 1 ? 1 : x
}

function timeout_headline(   sl, s, a, b, c, d, r) {
	print ""
	print "Headline, 100 us requested:"
	print ""
	split("1ns default", sl, " ")
	for (s = 1; s <= 2; s++) {
		r = 100000
		a = S[timeout_key(sl[s], "epoll_pwait2", r), "med"]
		b = S[timeout_key(sl[s], "ppoll", r), "med"]
		c = S[timeout_key(sl[s], "epoll_wait_ms", r), "med"]
		d = S[timeout_key(sl[s], "timerfd", r), "med"]
		print "- " name[sl[s]] ": epoll_pwait2 overshoots by " human(a) \
			" (median; ppoll " human(b) ", ratio " ratio(a, b) "), " \
			"epoll_wait by " human(c) " (" ratio(c, a) " epoll_pwait2's), " \
			"the timerfd workaround by " human(d) " with three syscalls."
	}
}

function cloexec_section(   nm, ms, nn, nfds, i, m, k, row, a, b, c, dat, pk) {
	nm = nsplit("cloexec 1", ms)
	nn = nsplit("cloexec 2", nfds)
	if (!nm)
		return
	section("Marking descriptors close-on-exec")
	print "The time of one call that marks every descriptor above stderr " \
		"close-on-exec, with N descriptors open (dup2() copies of one " \
		"/dev/null): close_range(3, ~0U, CLOSE_RANGE_CLOEXEC); a loop of " \
		"fcntl(F_SETFD, FD_CLOEXEC) over the known descriptors; and what " \
		"container runtimes did, reading /proc/self/fd and calling " \
		"fcntl(F_GETFD) and F_SETFD for each entry. Every call runs in a " \
		"freshly forked child (no flag set yet, a cold /proc/self/fd), as " \
		"a runtime does before exec. Cells: median (min–max) of the runs."
	print ""
	print "| descriptors | runs | " name[ms[1]] " | " name[ms[2]] " | " \
		name[ms[3]] " | fcntl / close_range | scan / close_range |"
	print "|---:|---:|---:|---:|---:|---:|---:|"
	dat = DATA "/cloexec.dat"
	printf "" > dat
	for (i = 1; i <= nn; i++) {
		row = "| " nfds[i] " | " n[cloexec_key(ms[1], nfds[i])] " |"
		for (m = 1; m <= nm; m++) {
			k = cloexec_key(ms[m], nfds[i])
			row = row " " human(S[k, "med"]) " (" human(S[k, "min"]) \
				"–" human(S[k, "max"]) ") |"
		}
		a = S[cloexec_key("close_range", nfds[i]), "med"]
		b = S[cloexec_key("fcntl", nfds[i]), "med"]
		c = S[cloexec_key("proc_scan", nfds[i]), "med"]
		print row " " ratio(b, a) " | " ratio(c, a) " |"
	}
	for (m = 1; m <= nm; m++) {
		for (i = 1; i <= nn; i++)
			pk[i] = cloexec_key(ms[m], nfds[i])
		block(dat, name[ms[m]], nn, nfds, pk, "min", "max", 1e6)
	}
	close(dat)
	print ""
	print "![Time per call against the number of descriptors, log-log; " \
		"bars min–max](cloexec.png)"
}

function encoded_section(   nc, cs, c, m, mt, row, k, r, dat) {
	nc = nsplit("encoded 1", cs)
	if (!nc)
		return
	section("Encoded reads against ordinary reads")
	print "A " info["datamib"] " MiB file of web server log lines on a " \
		"fresh btrfs (a 1.5 GiB image on the guest's tmpfs, through a " \
		"loop device) mounted with compress-force=zstd, zlib or lzo, " \
		"read whole from a cold cache (caches dropped before each read): " \
		"with read() in 1 MiB chunks, and with preadv2(RWF_ENCODED), one " \
		"extent per call into a struct encoded_iov and a 128 KiB buffer. " \
		"The image lives in memory, so \"cold\" means btrfs reads and " \
		"checks the extents again but no disk is waited for."
	print ""
	print "Times are seconds per GiB of file data, median (min–max) of " \
		"the runs. Process CPU is the reader's user + system time " \
		"(getrusage); busy CPU is the whole guest's non-idle time " \
		"(/proc/stat), which also counts the kernel workers where btrfs " \
		"decompresses and verifies checksums for read(). Bytes moved: " \
		"what the calls copied to the process; a stored extent is whole " \
		"4 KiB sectors, so the encoded bytes include that padding."
	print ""
	print "| compression | method | runs | wall s/GiB | process CPU s/GiB | " \
		"busy CPU s/GiB | bytes moved | calls |"
	print "|---|---|---:|---:|---:|---:|---:|---:|"
	for (c = 1; c <= nc; c++)
		for (m = 1; m <= 2; m++) {
			r = m == 1 ? "read" : "encoded"
			k = enc_key(cs[c], r, "bytes")
			print "| " cs[c] " | " name[r] " | " n[k] " | " \
				enc_cell(cs[c], r, "wall_ns") " | " \
				enc_cell(cs[c], r, "cpu_ns") " | " \
				enc_cell(cs[c], r, "busy_ns") " | " \
				mib(S[k, "med"]) " | " S[enc_key(cs[c], r, "calls"), "med"] " |"
		}
	print ""
	print "Ratios of the medians, read() / RWF_ENCODED (above 1: the " \
		"encoded read is cheaper):"
	print ""
	print "| compression | file | wall | process CPU | busy CPU | bytes moved |"
	print "|---|---:|---:|---:|---:|---:|"
	dat = DATA "/encoded.dat"
	printf "# compression, then median min max of: read wall, encoded " \
		"wall, read busy CPU, encoded busy CPU (s/GiB)\n" > dat
	split("wall_ns cpu_ns busy_ns bytes", mt, " ")
	for (c = 1; c <= nc; c++) {
		row = "| " cs[c] " | " mib(info["filesize", cs[c]]) " |"
		for (m = 1; m <= 4; m++)
			row = row " " ratio(S[enc_key(cs[c], "read", mt[m]), "med"],
				S[enc_key(cs[c], "encoded", mt[m]), "med"]) " |"
		print row
		print cs[c], gib3(cs[c], "read", "wall_ns"),
			gib3(cs[c], "encoded", "wall_ns"),
			gib3(cs[c], "read", "busy_ns"),
			gib3(cs[c], "encoded", "busy_ns") > dat
	}
	close(dat)
	print ""
	print "![Wall time per GiB, read() against RWF_ENCODED, bars " \
		"min–max](encoded-read.png)"
}

# "median (min–max)" of stats key k, divided by div.
function spread(k, div) {
	return sig(S[k, "med"] / div) " (" sig(S[k, "min"] / div) "–" \
		sig(S[k, "max"] / div) ")"
}

function ew_key(c, m, metric) {
	return "encwrite" SUBSEP c SUBSEP m SUBSEP metric
}

function ew_method(c, m) {
	if (m == "encoded")
		return "encoded"
	return c == "none" ? "uncompressed" : "compress-force"
}

# Median, min and max of stats key k (ns) in s per GiB, for a data file.
function gib3k(k, gib) {
	return sprintf("%g %g %g", S[k, "med"] / 1e9 / gib,
		S[k, "min"] / 1e9 / gib, S[k, "max"] / 1e9 / gib)
}

# What a kernel without encoded writes leaves of the encoded method.
function ew_missing(c) {
	return ("unsupported", "encoded_write-" c) in info
}

function encwrite_section(   rows, nr, i, c, m, k, gib, cells, dat, a, b,
			   compressed, ratios) {
	if (!("writemib" in info))
		return
	section("Encoded writes against ordinary writes")
	gib = info["writemib"] / 1024
	print "A " info["writemib"] " MiB file of the web server log lines " \
		"above, written whole to a fresh btrfs (a 2 GiB image on the " \
		"guest's tmpfs, through a loop device) in 128 KiB pieces, and " \
		"fsync()ed, three ways: **uncompressed** (pwrite() on a file " \
		"system mounted without compression), **compress-force** " \
		"(pwrite() on one mounted compress-force=zstd or zlib: the " \
		"kernel compresses at writeback) and **encoded** " \
		"(pwritev2(RWF_ENCODED) of each piece compressed beforehand in " \
		"user space with libzstd or zlib at btrfs' level 3, one 128 KiB " \
		"extent per call, on the uncompressed mount)."
	print ""
	print "Times are seconds per GiB of file data, median (min–max) of " \
		"the runs, from open() to the end of fsync(). Process CPU is the " \
		"writer's user + system time; busy CPU is the whole guest's " \
		"non-idle time, which also counts the kernel workers that " \
		"compress for compress-force. The encoded method's own " \
		"compression is done once before its runs and is not in these " \
		"times (the data comes compressed, as from a send stream or a " \
		"backup): it is the \"compression\" line below. Under TCG on a " \
		"busy host the two CPU clocks disagree (busy CPU is sampled at " \
		"timer ticks, process CPU read from the scheduler's clock), so " \
		"busy CPU can come out below process CPU: compare each column " \
		"with itself. Space is the free " \
		"space the file took (statvfs after sync); stored is the sum of " \
		"its extents as RWF_ENCODED reads return them; \"read back\" " \
		"compares the file with the data after the first run."
	print ""
	print "| compression | method | runs | wall s/GiB | process CPU s/GiB | " \
		"busy CPU s/GiB | space | stored | read back |"
	print "|---|---|---:|---:|---:|---:|---:|---:|---|"
	nr = split("none write,zstd write,zstd encoded,zlib write,zlib encoded",
		rows, ",")
	dat = DATA "/encwrite.dat"
	printf "# method, then median min max of wall and of busy CPU (s/GiB)\n" > dat
	for (i = 1; i <= nr; i++) {
		split(rows[i], cells, " ")
		c = cells[1]
		m = cells[2]
		k = ew_key(c, m, "wall_ns")
		printf "| %s | %s |", c, ew_method(c, m)
		if (!has(k)) {
			print " – | not measured" \
				(m == "encoded" && ew_missing(c) ? ": the kernel " \
				 "has no encoded writes (" \
				 info["unsupported", "encoded_write-" c] ")" : "") \
				" | | | | | |"
			continue
		}
		print " " n[k] " | " spread(k, gib * 1e9) " | " \
			spread(ew_key(c, m, "cpu_ns"), gib * 1e9) " | " \
			spread(ew_key(c, m, "busy_ns"), gib * 1e9) " | " \
			mib(S[ew_key(c, m, "space"), "med"]) " | " \
			mib(info["stored", c "-" m]) " | " info["written", c "-" m] " |"
		printf "\"%s\" %s %s\n", (c == "none" ? "" : c " ") \
			ew_method(c, m), gib3k(k, gib),
			gib3k(ew_key(c, m, "busy_ns"), gib) > dat
	}
	close(dat)
	for (i = split("zstd zlib", cells, " "); i >= 1; i--)
		if (("compress_ns", cells[i]) in info)
			compressed = "\n- user-space " cells[i] " compression " \
				"of the data before the encoded runs: " \
				sig(info["compress_ns", cells[i]] / 1e9 / gib) \
				" CPU s/GiB, to " mib(info["payload", cells[i]]) \
				compressed
	if (compressed != "")
		print "\nCompression:\n" compressed
	print ""
	printf "Encoded against compress-force (ratios of the medians, " \
		"above 1: the encoded write is cheaper):"
	for (i = split("zstd zlib", cells, " "); i >= 1; i--) {
		c = cells[i]
		a = S[ew_key(c, "write", "busy_ns"), "med"]
		b = S[ew_key(c, "encoded", "busy_ns"), "med"]
		if (!has(ew_key(c, "write", "wall_ns")) ||
		    !has(ew_key(c, "encoded", "wall_ns")))
			continue
		ratios = "\n- " c ": wall " ratio(S[ew_key(c, "write", "wall_ns"),
			"med"], S[ew_key(c, "encoded", "wall_ns"), "med"]) \
			", busy CPU " ratio(a, b) "; counting the user-space " \
			"compression too (its CPU time added to the encoded " \
			"write's busy CPU), " ratio(a, b + info["compress_ns", c]) \
			ratios
	}
	print ratios == "" ? " not measured: no encoded write ran in this " \
		"boot (the kernel answered EOPNOTSUPP; rerun `make bench` on a " \
		"kernel with btrfs encoded writes)." : "\n" ratios
	print ""
	print "![Writing a file: uncompressed, compressed by the kernel, " \
		"encoded; bars min–max](encoded-write.png)"
}

function send_key(v, phase, metric) {
	return "send" SUBSEP v SUBSEP phase SUBSEP metric
}

# A row of the send table: what, the key's phase and metric, the divisor,
# and the proposal's v1 and v2 figures ("" where it published none).
function send_row(what, phase, metric, div, p1, p2,   a, b) {
	a = send_key("v1", phase, metric)
	b = send_key("v2", phase, metric)
	print "| " what " | " spread(a, div) " | " spread(b, div) " | " \
		ratio(S[b, "med"], S[a, "med"]) " | " p1 " | " p2 " | " \
		(p1 == "" ? "" : PROPOSAL[what]) " |"
}

# Commands of kind what in the stream of version v (receive --dump).
function count(v, what) {
	return ("commands", v " " what) in info ? info["commands", v " " what] : 0
}

function send_section(   v, k, c, dat, cmds, other) {
	if (!has(send_key("v1", "stream", "bytes")))
		return
	section("btrfs send and receive: stream version 1 against version 2")
	print "A data set of " mib(info["sendbytes"]) " in " info["sendfiles"] \
		" files, generated with a fixed seed (bench/send_receive.c): 40 % " \
		"web server logs in 16 MiB files, 30 % English-like text in files " \
		"of 256 KiB to 4 MiB, 15 % small text files of 1 to 32 KiB, 15 % " \
		"random bytes (incompressible) in 4 MiB files; written to a btrfs " \
		"mounted compress-force=zstd (a 2 GiB image on the guest's tmpfs) " \
		"and snapshotted read-only. Run after run, the snapshot is sent " \
		"with Debian's btrfs-progs, `btrfs send --proto 1` (version 1: " \
		"the data decompressed, in writes of at most 48 KiB) and `btrfs " \
		"send --proto 2 --compressed-data` (version 2: each compressed " \
		"extent as stored, one encoded_write command), into a stream file " \
		"on tmpfs, from a cold cache; then the stream is received with " \
		"`btrfs receive` into a fresh btrfs mounted compress-force=zstd."
	print ""
	print "Cells: median (min–max) of " n[send_key("v1", "stream", "bytes")] \
		" runs. Send times are those of the `btrfs send` process (the " \
		"kernel builds the stream in its system time); receive times run " \
		"to the end of a sync() after it, so that the received data is " \
		"compressed and written; busy CPU is the whole guest's non-idle " \
		"time over the same span (btrfs compresses in kernel workers). " \
		"Beside them, the figures published with the original proposal " \
		"(the encoded I/O series this one follows; a 50 GB stream, not " \
		"in an emulator); this data set is much smaller, to fit a " \
		"TCG-emulated guest, so compare the ratios."
	print ""
	print "| | version 1 | version 2, compressed | v2 / v1 | " \
		"proposal: v1 | proposal: v2 | proposal: v2 / v1 |"
	print "|---|---:|---:|---:|---:|---:|---:|"
	PROPOSAL["stream size, MiB"] = ratio(23, 50)
	PROPOSAL["send: system time, s"] = ratio(60.5, 82)
	PROPOSAL["receive: wall time, s"] = ratio(222, 311)
	send_row("stream size, MiB", "stream", "bytes", 1048576, "50 GB", "23 GB")
	send_row("send: system time, s", "send", "sys_ns", 1e9, "82 s", "60.5 s")
	send_row("send: user time, s", "send", "user_ns", 1e9, "", "")
	send_row("send: wall time, s", "send", "wall_ns", 1e9, "", "")
	send_row("send: busy CPU, s", "send", "busy_ns", 1e9, "", "")
	send_row("receive: wall time, s", "receive", "wall_ns", 1e9,
		"5:11", "3:42")
	send_row("receive: user time, s", "receive", "user_ns", 1e9, "", "")
	send_row("receive: system time, s", "receive", "sys_ns", 1e9, "", "")
	send_row("receive: busy CPU, s", "receive", "busy_ns", 1e9, "", "")
	print ""
	print "Checks, once per version (they do not make the benchmark fail):"
	print ""
	for (v = 1; v <= 2; v++) {
		other = 0
		for (k in info) {
			split(k, c, SUBSEP)
			split(c[2], cmds, " ")
			if (c[1] == "commands" && cmds[1] == "v" v &&
			    cmds[2] != "write" && cmds[2] != "encoded_write")
				other += info[k]
		}
		print "- version " v ": the received files are " \
			(("received", "v" v) in info ? info["received", "v" v] : \
			 "not compared") " to the snapshot (diff -r); the stream " \
			"has " count("v" v, "write") " write and " \
			count("v" v, "encoded_write") " encoded_write commands, and " \
			other " others (btrfs receive --dump)."
	}
	print ""
	print "How receive writes a version 2 stream: btrfs-progs 6.2 " \
		"writes each encoded_write command with the btrfs ioctl " \
		"BTRFS_IOC_ENCODED_WRITE (mainline's interface), which this series " \
		"does not have (its encoded writes are pwritev2(RWF_ENCODED)); on " \
		"ENOTTY it decompresses the extent in user space and writes it " \
		"with pwrite(), and the kernel compresses it again " \
		"(compress-force); strace of a receive on build #9 of the series " \
		"with the encoded write patches showed an ioctl failing with " \
		"ENOTTY and a pwrite64() of 128 KiB for each. So the version 2 " \
		"receive here saves the smaller stream but pays for user-space " \
		"decompression; the proposal's receive wrote the compressed " \
		"extents as they came."
	dat = DATA "/send-times.dat"
	printf "# what, then median min max of v1 and of v2 (s)\n" > dat
	send_dat(dat, "send: system", "send", "sys_ns")
	send_dat(dat, "send: wall", "send", "wall_ns")
	send_dat(dat, "send: busy CPU", "send", "busy_ns")
	send_dat(dat, "receive: wall", "receive", "wall_ns")
	send_dat(dat, "receive: busy CPU", "receive", "busy_ns")
	close(dat)
	dat = DATA "/send-ratios.dat"
	printf "# what, v2/v1 of the medians here, and in the proposal\n" > dat
	send_ratio(dat, "stream size", "stream", "bytes", 23 / 50)
	send_ratio(dat, "send system time", "send", "sys_ns", 60.5 / 82)
	send_ratio(dat, "receive time", "receive", "wall_ns", 222 / 311)
	close(dat)
	print ""
	print "![Send and receive times by stream version, and the v2 / v1 " \
		"ratios beside the proposal's](send-receive.png)"
}

function send_dat(dat, what, phase, metric,   a, b) {
	a = send_key("v1", phase, metric)
	b = send_key("v2", phase, metric)
	printf "\"%s\" %g %g %g %g %g %g\n", what, S[a, "med"] / 1e9,
		S[a, "min"] / 1e9, S[a, "max"] / 1e9, S[b, "med"] / 1e9,
		S[b, "min"] / 1e9, S[b, "max"] / 1e9 > dat
}

function send_ratio(dat, what, phase, metric, published,   a, b) {
	a = S[send_key("v1", phase, metric), "med"]
	b = S[send_key("v2", phase, metric), "med"]
	printf "\"%s\" %g %g\n", what, b / a, published > dat
}
