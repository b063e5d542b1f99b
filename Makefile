# The front end: every verb is one small script in scripts/.
#
#   make            build the patched kernel and boot it to show the new
#                   interfaces working (demo)
#   make check      the whole test suite of both series: gates, build,
#                   selftests in the guest, a short hostile-argument run and
#                   a short stress run (5.10); SERIES=5.10 or SERIES=mainline
#                   checks one
#   make tree       build/linux = pinned base + patches/ (one commit each)
#   make export     write build/linux's commits back to patches/
#   make build      build the test kernel (build/linux/out-x86_64)
#   make selftests  run the series' selftests in the guest
#   make vm CMD=... run a command in the guest
#   make check-arm64  cross-build arm64 and run the encoded I/O selftests,
#                     epoll_pwait2_test and close_range_test in an arm64
#                     guest, with Debian's arm64 btrfs-progs
#   make check-s390x  the same on s390x (big-endian)
#   make check-endian send streams and encoded-write images carried between
#                     s390x and x86_64 guests, both ways
#   make check-i386   build the kernel for 32-bit x86
#   make check-debug  the selftests on a KASAN/UBSAN/lockdep/kmemleak kernel
#   make check-module build btrfs as a module and run the encoded I/O
#                     selftests with it loaded on demand
#   make powercut     encoded writes + fsync cut off by killing QEMU, 20
#                     times; the next boot checks what was acked survived
#   make check-defconfig  build x86_64 and arm64 defconfig kernels (+ fragments)
#                     and compare the series' files' warnings with the base
#   make check-sparse sparse on the files the series changes, against the base
#   make check-debian11  the same, with Debian 11's own configuration of this
#                     base (fetched with apt; gcc's and sparse's warnings)
#   make bisect       build after each patch, name the first that breaks
#   make bisect-boot  the same, and boot at the end of each feature group
#                     to run the selftests that exist there
#   make bench      run the benchmarks of bench/ in one boot of the built
#                   kernel; writes results/bench.md and plots (no build);
#                   ONLY="send encoded_write" reruns some and replaces
#                   just their results
#   make bench-peers  encoded reads and send on both series' kernels and
#                   Debian's stock 6.1 and 7.2, one boot each; writes
#                   results/bench-peers.md (no build)
#   make hostile    random and boundary arguments for the new interfaces in
#                   one boot of the built kernel, every result checked (no
#                   build); HOSTILE_SEED, HOSTILE_TIME, HOSTILE_OUT=debug
#   make stress     encoded and ordinary I/O racing on one btrfs, every result
#                   checked against an oracle, in one boot of the built kernel
#                   (no build); STRESS_SEED, STRESS_TIME, STRESS_OUT=debug
#   make trinity    Debian's trinity on the series' system calls in one boot
#                   of the debug kernel (no build); TRINITY_SEED,
#                   TRINITY_TIME, TRINITY_OUT (debug, or x86_64)
#   make mutants    small mutations of the series' kernel code, one at a
#                   time: build, boot, run the selftests that cover it; how
#                   many the tests notice (results/mutants.md; resumes, takes
#                   hours; MUTANTS="-n NAME" for one; SERIES=mainline:
#                   tests/mutants/list-mainline, results/mutants-mainline.md)
#   make parity     the same programs on the series' kernel and on Debian 12's
#                   6.1 kernel (fetched with apt-get download): the encoded
#                   ioctls, send streams, images written by each kernel read
#                   by the other, the epoll_pwait2 and close_range selftests;
#                   fails on a difference not in tests/parity/differences
#                   (no build)
#   make man        lint the manual pages in man/ with groff and mandoc
#   make mbox       the series as one mailbox, build/series.mbox (b4, git am)
#   make clean      remove build/ (the downloaded base stays cached)

# SERIES=mainline runs the verbs on the mainline series (patches-mainline/
# on Linux 7.2, built in build/mainline/); the default is the 5.10 series.
# The scripts read SERIES from the environment (scripts/lib.sh). Without
# SERIES, make check checks both series, the 5.10 one first.
ifeq ($(origin SERIES),undefined)
CHECK_BOTH := 1
endif
SERIES ?= 5.10
export SERIES
ifeq ($(SERIES),mainline)
B := build/mainline
P := patches-mainline
# 7.2's epoll_wakeup_test needs minutes under TCG and has no settings file
# (the 5.10 series' patch gives it 300 s): every collection's timeout x7.
SELFTEST_TIMEOUT_SCALE ?= 7
export SELFTEST_TIMEOUT_SCALE
else
B := build
P := patches
endif

SELFTESTS ?= core filesystems/epoll filesystems/encoded_io
KERNEL := $(B)/linux/out-x86_64/arch/x86/boot/bzImage

.PHONY: all demo check gates tree export apply-check checkpatch syscall-check fcntl-check build \
	selftests vm clean check-arm64 check-s390x check-endian check-i386 bisect bisect-boot bench bench-peers man mbox mbox-check check-debug \
	powercut hostile trinity check-defconfig check-defconfig-x86_64 check-defconfig-arm64 \
	check-sparse stress stress-check parity check-module check-debian11 \
	hostile-check mutants

all: build demo

# Built against the patched tree's headers (installed by scripts/build).
build/demo: demo/demo.c build
	$(CC) -Wall -O2 -isystem build/linux/usr/include -o $@ demo/demo.c

demo: build/demo
	scripts/vm -q -t 600 $(CURDIR)/scripts/demo-guest $(CURDIR)/build/demo

# The known-flaky cases that passed only on a rerun are named again at the
# end (scripts/selftests writes them to build/selftests.log.reran).
# The mainline series has its gates, build, selftests and the short hostile
# and stress runs (the syscall tables and the mailbox are the 5.10 series').
ifeq ($(SERIES),mainline)
check: apply-check checkpatch fcntl-check build selftests hostile-check stress-check
else
check: gates fcntl-check build syscall-check mbox-check selftests hostile-check stress-check
endif
	@if [ -s $(B)/selftests.log.reran ]; then \
		echo "check: known-flaky cases that needed a rerun (tests/known-flaky):"; \
		sed 's/^/    /' $(B)/selftests.log.reran; \
	fi
	@echo "check: all passed ($(SERIES) series)"
ifdef CHECK_BOTH
	$(MAKE) check SERIES=mainline
endif

# Cheap checks first, so a bad patch fails in seconds, not after a build.
gates: apply-check checkpatch man

tree:
	scripts/tree

export:
	scripts/export

apply-check:
	scripts/apply-check

checkpatch:
	scripts/checkpatch

syscall-check: $(B)/linux/.git/series-stamp
	scripts/syscall-check

# O_ALLOW_ENCODED's value on every architecture, from the UAPI headers.
fcntl-check: $(B)/linux/.git/series-stamp
	scripts/fcntl-check

# The tree is (re)made from patches/ when they are newer than it.
$(B)/linux/.git/series-stamp: $(P)/series $(wildcard $(P)/*.patch)
	scripts/tree
	touch $@

build: $(B)/linux/.git/series-stamp
	scripts/build x86_64

selftests:
	scripts/selftests $(SELFTESTS)

# A short, seeded run of make hostile (about 2 minutes under TCG): 60 s
# of random and boundary arguments, every result checked; a fixed seed, so
# that a failure replays.
hostile-check:
	scripts/hostile -s 1 -t 60

# A short run of make stress (about 3 minutes under TCG): 60 s of racing
# operations, then the whole-file, send/receive, scrub and btrfs check
# passes; a fixed seed, so that a failure replays. The last step of make
# check.
stress-check:
	scripts/stress -s 1 -t 60

vm:
	scripts/vm $(CMD)

# Extended checks, not part of 'make check' (each is a separate build).
# check-arm64, check-s390x: the whole encoded I/O collection,
# epoll_pwait2_test and close_range_test, cross-built, in a guest of that
# architecture under TCG whose root is made of Debian's packages for it
# (scripts/guest-root: btrfs-progs, python3, strace, ...); the same runner,
# accounting and allowed skips as make selftests. epoll_wakeup_test stays
# on x86_64, where its known-flaky timing cases get their reruns
# (scripts/flaky-rate boots x86_64 only). The s390x guest needs about 31
# minutes (TCG), the arm64 guest 5. With SERIES=mainline: its encoded I/O
# collection (epoll_pwait2 and close_range are mainline's there).
ifeq ($(SERIES),mainline)
CROSS_SELFTESTS := filesystems/encoded_io
else
CROSS_SELFTESTS := -c filesystems/encoded_io -t core:close_range_test \
	-t filesystems/epoll:epoll_pwait2_test \
	core filesystems/epoll filesystems/encoded_io
endif
check-arm64: $(B)/linux/.git/series-stamp
	scripts/build arm64
	SELFTEST_LIMIT=3600 scripts/selftests -a arm64 $(CROSS_SELFTESTS)

check-s390x: $(B)/linux/.git/series-stamp
	scripts/build s390x
	SELFTEST_LIMIT=5400 scripts/selftests -a s390x $(CROSS_SELFTESTS)

# check-endian: version 2 send streams and images of encoded writes made
# on s390x (big-endian) read, received and sent again on x86_64, and the
# other way round (scripts/cross-endian); three boots, about 4 minutes
# once both kernels are built.
check-endian: $(B)/linux/.git/series-stamp
	scripts/build x86_64
	scripts/build s390x
	scripts/cross-endian

check-i386: $(B)/linux/.git/series-stamp
	scripts/build i386

# KASAN, UBSAN, lockdep, atomic-sleep checks, kmemleak and btrfs assertions:
# every selftest of the series on the debug kernel; any report fails.
# Under TCG the debug kernel is slow enough for RCU's stall warning to fire
# on its default 21 s; it is given the longest timeout (here and for the
# runs below that may boot the debug kernel).
DEBUG_APPEND := rcupdate.rcu_cpu_stall_timeout=300

check-debug: $(B)/linux/.git/series-stamp
	scripts/build debug
	VM_APPEND="$(DEBUG_APPEND)" SELFTEST_LIMIT=7200 SELFTEST_TIMEOUT_SCALE=6 \
		scripts/selftests -o debug $(SELFTESTS)

# btrfs as a module (config/btrfs-module.config), as distributions build
# it: the build must need no unexported symbol, the guest loads btrfs.ko
# and its libraries from out-modular/modules when the tests first mount.
check-module: $(B)/linux/.git/series-stamp
	scripts/build modular
	VM_APPEND="guest.modules=$(CURDIR)/build/linux/out-modular/modules" \
		scripts/selftests -o modular filesystems/encoded_io

# A run of 20 cycles takes about 15 minutes. POWERCUT='-n 40 -s 7' for more.
powercut: build
	scripts/powercut $(POWERCUT)

# The defconfigs people build, with the test fragments (x86_64) or btrfs
# (arm64) on top: long cold builds (see docs/testing.md). sparse-check then compares
# gcc's and sparse's warnings in the series' C files with the base's.
check-defconfig: check-defconfig-x86_64 check-defconfig-arm64

check-defconfig-x86_64: $(B)/linux/.git/series-stamp
	scripts/build x86_64-defconfig
	scripts/sparse-check x86_64-defconfig

check-defconfig-arm64: $(B)/linux/.git/series-stamp
	scripts/build arm64-defconfig
	scripts/sparse-check arm64-defconfig

# Needs no kernel build: only the series' objects are compiled and checked.
check-sparse: $(B)/linux/.git/series-stamp
	scripts/sparse-check

# The series' objects as Debian 11 compiles this base (scripts/build
# debian11: its configuration, from its kernel package), against the base.
check-debian11: $(B)/linux/.git/series-stamp
	scripts/sparse-check debian11

bisect: build
	scripts/bisect-build

bisect-boot: build
	SELFTESTS="$(SELFTESTS)" scripts/bisect-build -b

# Uses the kernel and headers already built; never starts a kernel build.
bench:
	scripts/bench

# The encoded read and send benchmarks on both series' kernels and on
# Debian's stock 6.1 and 7.2, one boot each (scripts/bench-peers); uses
# the kernels already built (make build; make build SERIES=mainline).
bench-peers:
	scripts/bench-peers

# Uses the kernel and headers already built; never starts a kernel build.
# A fixed seed, so that two runs draw the same arguments.
HOSTILE_SEED ?= 1
HOSTILE_TIME ?= 120
HOSTILE_OUT ?= x86_64
hostile:
	VM_APPEND="$(DEBUG_APPEND)" scripts/hostile -o $(HOSTILE_OUT) -s $(HOSTILE_SEED) -t $(HOSTILE_TIME)

# Uses the kernel and headers already built; never starts a kernel build.
# STRESS_ARGS passes more options to scripts/stress (-p, -j, -c, -n, -m).
STRESS_SEED ?= 1
STRESS_TIME ?= 240
STRESS_OUT ?= x86_64
stress:
	VM_APPEND="$(DEBUG_APPEND)" scripts/stress -o $(STRESS_OUT) -s $(STRESS_SEED) \
		-t $(STRESS_TIME) $(STRESS_ARGS)

# The kernel of make check-debug by default: trinity finds crashes, and the
# debug kernel turns more of them into reports.
TRINITY_SEED ?= 1
TRINITY_TIME ?= 300
TRINITY_OUT ?= debug
trinity:
	VM_APPEND="$(DEBUG_APPEND)" scripts/trinity -o $(TRINITY_OUT) -s $(TRINITY_SEED) -t $(TRINITY_TIME)

# Builds its own kernels, in a worktree of build/linux (build/mutants).
mutants: $(B)/linux/.git/series-stamp
	scripts/mutants $(MUTANTS)

# Uses the kernel and headers already built; never starts a kernel build.
parity:
	scripts/parity

# Any warning from groff -ww or mandoc -Tlint (style level included) fails.
man:
	scripts/man-lint

mbox:
	scripts/mbox

# The mailbox applies with git am to the pristine base and gives the series.
mbox-check: $(B)/linux/.git/series-stamp
	scripts/mbox --check

clean:
	rm -rf build
