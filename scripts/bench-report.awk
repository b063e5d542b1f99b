# bench-report.awk: the Markdown report of a bench.tsv (see bench/bench.h
# for its lines), on stdout, and the plots' data files in the directory
# DATA (set with -v): timeout-SLACK.dat, cloexec.dat, encoded.dat.

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
$1 == "info" && NF == 3 { info[$2] = $3; next }
$1 == "info" && NF >= 4 {
	info[$2, $3] = $4
	if ($2 == "failed")
		failed = failed " " $3
	if ($2 == "seconds")
		took = took (took == "" ? "" : ", ") $3 " " $4 " s"
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
	print "Measured " info["date"] " by `make bench` (repository at " \
		info["commit"] "), on kernel " info["kernel"] " (Linux 5.10.262 " \
		"with the series; kernel tree at \"" info["tree"] "\"), in one boot of a QEMU guest under **TCG " \
		"emulation** (no KVM): " info["cpus"] " vCPUs, " info["memory"] \
		" of memory, clocksource " info["clocksource"] ". Host: " \
		info["host"] "."
	print ""
	print "An emulated CPU is many times slower than hardware and its " \
		"timers are noisier, so the absolute numbers are those of this " \
		"guest; what carries over is the comparison, given as ratios of " \
		"medians measured in the same boot. Each figure is the median of " \
		"repeated runs with its spread. Raw lines: " \
		"[bench.tsv](bench.tsv); time taken in the guest: " took "."
	if (failed != "")
		print "\n**Failed in this run:**" failed " (see build/vm/bench/out)."
	timeout_section()
	cloexec_section()
	encoded_section()
	section("Encoded writes and send/receive")
	print "Not measured yet: encoded writes are pending the btrfs encoded " \
		"write patches (until then btrfs answers EOPNOTSUPP), and " \
		"send/receive the send stream v2 work (send v2 with compressed " \
		"extents is entering the series; receiving them needs the " \
		"encoded writes)."
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
