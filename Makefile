# memcg-replay - plain Makefile; every library through pkg-config.
#   make            build both programs (build/)
#   make check      build, run every test, the threads under TSan (build-tsan/),
#                   then every test again under ASan+UBSan (build-san/)
#   make test       run the suite once (build/)
#   make bench      build and run the benchmarks
#   make deps       install the Debian packages the build and demo need (root);
#                   with check, test, fuzz, deb or bench beside it, theirs too
#   make fuzz       libFuzzer targets (clang) for FUZZ_SECONDS each (default 600)
#   make demo       the main job: capture (or synthesize) -> replay -> report
#   make install PREFIX=/usr/local

PREFIX	?= /usr/local
BINDIR	?= $(PREFIX)/bin
VERSION	:= 0.1.0

CC	?= cc

# Libraries through pkg-config, per program: memcg-capture does not link
# libtracecmd (trace.dat import is memcg-replay's).
PKGS_CAPTURE	:= libtracefs libtraceevent libbpf sqlite3 libzstd
PKGS_REPLAY	:= libtracecmd libtraceevent libbpf sqlite3 libzstd
PKGS_ALL	:= libtracefs libtraceevent libtracecmd libbpf sqlite3 libzstd

# pkg-config runs when a recipe first needs it, not when make reads this file,
# so `make deps all` installs the packages before anything asks for them.  A
# package it cannot find stops the build with its name.  Each answer is
# computed once per make.
pkg_missing = $(strip $(foreach p,$(1),$(if $(shell pkg-config --exists $(p) 2>/dev/null && echo y),,$(p))))
pkg_query = $(if $(call pkg_missing,$(2)),$(error pkg-config cannot find $(call pkg_missing,$(2)): \
	install it (Debian, as root: make deps) or set PKG_CONFIG_PATH),$(shell pkg-config $(1) $(2)))
empty	:=
space	:= $(empty) $(empty)
pkg_key = PKG$(subst $(space),_,$(subst -,_,$(strip $(1) $(2))))
pkg = $(if $(filter undefined,$(origin $(call pkg_key,$(1),$(2)))),$(eval \
	$(call pkg_key,$(1),$(2)) := $(call pkg_query,$(1),$(2))))$($(call pkg_key,$(1),$(2)))

WARN	:= -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wformat=2 -Wvla
BASE_CFLAGS = -std=gnu11 $(WARN) -D_GNU_SOURCE -DMCR_VERSION=\"$(VERSION)\" $(MOD_CFLAGS)
CFLAGS	?= -O2 -g

# make check, make demo and make deb build with one job per online CPU, unless
# make was given -j itself (its jobserver then rules the sub-makes)
JOBS	?= $(shell nproc 2>/dev/null || echo 1)
PAR	= $(if $(filter -j%,$(MAKEFLAGS)),,-j$(JOBS))

# The layering, enforced: each module sees only the headers it may include
# (docs/HACKING.md, Layering).  sim/base/ (the shared vocabulary: the event record,
# errors and exit codes, the id hash and table) includes nothing of ours; sim/ sees
# sim/base/ only; db/ sees sim/; replay/ and
# capture/ see sim/ and db/; memcg-capture's program (cli/capture/) sees capture/ and
# cli/'s shared helpers, not replay/ (but for --watch's cli/capture/watch.c); cli/,
# tests and benchmarks see all.
INC_BASE	:= -Isim/base
INC_SIM		:= $(INC_BASE) -Isim
INC_DB		:= $(INC_SIM) -Idb
INC_REPLAY	:= $(INC_DB) -Ireplay
INC_CAPTURE	:= $(INC_DB) -Icapture
INC_ALL		:= $(INC_BASE) -Isim -Idb -Ireplay -Icapture -Icli

O	?= build
SAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
TSAN_FLAGS := -O1 -g -fsanitize=thread

$(O)/sim/%.o:		MOD_CFLAGS = $(INC_SIM)
# shorter stem than $(O)/sim/%.o: the vocabulary sees only itself
$(O)/sim/base/%.o:	MOD_CFLAGS = $(INC_BASE)
$(O)/db/%.o:		MOD_CFLAGS = $(INC_DB) $(call pkg,--cflags,sqlite3 libzstd)
$(O)/replay/%.o:	MOD_CFLAGS = $(INC_REPLAY) $(call pkg,--cflags,sqlite3)
$(O)/capture/%.o:	MOD_CFLAGS = $(INC_CAPTURE) $(call pkg,--cflags,$(PKGS_ALL))
$(O)/cli/%.o $(O)/tests/%.o $(O)/bench/%.o: MOD_CFLAGS = $(INC_ALL) $(call pkg,--cflags,$(PKGS_ALL))
# shorter stem than $(O)/cli/%.o: GNU make applies this one to cli/capture/
$(O)/cli/capture/%.o:	MOD_CFLAGS = $(INC_CAPTURE) -Icli $(call pkg,--cflags,$(PKGS_CAPTURE))
# --watch replays while capturing: the one file of it that sees replay/
$(O)/cli/capture/watch.o: MOD_CFLAGS = $(INC_CAPTURE) -Ireplay -Icli $(call pkg,--cflags,$(PKGS_CAPTURE))
# memcg-statlog: the C library only (and the exit codes' enum)
$(O)/cli/statlog/%.o:	MOD_CFLAGS = $(INC_BASE)

BASE_SRC	:= $(wildcard sim/base/*.c)
SIM_SRC		:= $(wildcard sim/*.c)
DB_SRC		:= $(wildcard db/*.c)
# replay/infer/: the inference, its own folder; only infer.h (in replay/) is its face
REPLAY_SRC	:= $(wildcard replay/*.c replay/infer/*.c)
LIVE_SRC	:= $(wildcard capture/live*.c)
IMPORT_SRC	:= $(wildcard capture/import*.c)
SYNTH_SRC	:= $(wildcard capture/synth*.c)
CAPLIB_SRC	:= $(filter-out $(LIVE_SRC) $(IMPORT_SRC) $(SYNTH_SRC),$(wildcard capture/*.c))
# what memcg-capture shares with memcg-replay's tool layer: messages, exit codes
CLI_COMMON_SRC	:= cli/msg.c cli/exit.c cli/num.c cli/outfile.c
# memcg-replay's tool layer (not recursive: cli/capture/ is memcg-capture's)
CLI_SRC		:= $(wildcard cli/*.c cli/report/*.c)
# memcg-capture's program
CAPTURE_MAIN_SRC := $(wildcard cli/capture/*.c)
# memcg-statlog's program: the memory.stat read log beside trace-cmd record
STATLOG_SRC	:= $(wildcard cli/statlog/*.c)
UNIT_SRC	:= $(wildcard tests/unit/test_*.c)
BENCH_SRC	:= $(wildcard bench/*.c)

obj = $(patsubst %.c,$(O)/%.o,$(1))

# libcapture: the cgroup walk, cgroup table, BTF names and tracepoint decoding
# that live capture and import share; liblive, libimport, libsynth: one each.
LIBS	:= $(O)/liblive.a $(O)/libimport.a $(O)/libsynth.a $(O)/libcapture.a \
	   $(O)/libreplay.a $(O)/libdb.a $(O)/libsim.a $(O)/libbase.a
CAPTURE_LIBS := $(O)/liblive.a $(O)/libcapture.a $(O)/libreplay.a $(O)/libdb.a $(O)/libsim.a \
	   $(O)/libbase.a
REPLAY_LIBS := $(O)/libimport.a $(O)/libsynth.a $(O)/libcapture.a $(O)/libreplay.a \
	   $(O)/libdb.a $(O)/libsim.a $(O)/libbase.a
PROGS	:= $(O)/memcg-replay $(O)/memcg-capture $(O)/memcg-statlog
UNITS	:= $(patsubst tests/unit/%.c,$(O)/tests/%,$(UNIT_SRC))
BENCHES	:= $(patsubst bench/%.c,$(O)/bench/%,$(BENCH_SRC))

all: $(PROGS) $(UNITS) $(BENCHES)

$(O)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

$(O)/libbase.a: $(call obj,$(BASE_SRC))
$(O)/libsim.a: $(call obj,$(SIM_SRC))
$(O)/libdb.a: $(call obj,$(DB_SRC))
$(O)/libreplay.a: $(call obj,$(REPLAY_SRC))
$(O)/libcapture.a: $(call obj,$(CAPLIB_SRC))
$(O)/liblive.a: $(call obj,$(LIVE_SRC))
$(O)/libimport.a: $(call obj,$(IMPORT_SRC))
$(O)/libsynth.a: $(call obj,$(SYNTH_SRC))
$(O)/%.a:
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^

$(O)/memcg-replay: $(call obj,$(CLI_SRC)) $(REPLAY_LIBS)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(call pkg,--libs,$(PKGS_REPLAY)) -lpthread -lm

$(O)/memcg-capture: $(call obj,$(CAPTURE_MAIN_SRC) $(CLI_COMMON_SRC)) $(CAPTURE_LIBS)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(call pkg,--libs,$(PKGS_CAPTURE)) -lpthread -lm

$(O)/memcg-statlog: $(call obj,$(STATLOG_SRC))
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^

$(O)/tests/%: $(O)/tests/unit/%.o $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(call pkg,--libs,$(PKGS_ALL)) -lpthread -lm

# the plotting kit is the report's (cli/), tested on its own
$(O)/tests/test_svg: $(O)/cli/svg.o
# memcg-capture --prom's writer, tested on its own
$(O)/tests/test_prom: $(O)/cli/capture/prom.o

$(O)/bench/%: $(O)/bench/%.o $(LIBS)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(call pkg,--libs,$(PKGS_ALL)) -lpthread -lm

# Proves the layering holds: a module's include path must refuse the headers of
# the modules above it (and accept its own, so the refusal is the path's doing).
# Each line: module flags, a header it must not see, a header it must see.
LAYER_PROBES := \
	INC_BASE:sim.h:event.h INC_BASE:statlines.h:error.h \
	INC_SIM:db.h:sim.h INC_SIM:replay.h:event.h \
	INC_DB:replay.h:db.h INC_DB:synth.h:error.h INC_DB:cli.h:db.h \
	INC_REPLAY:synth.h:replay.h INC_REPLAY:cli.h:db.h INC_REPLAY:infer-local.h:infer.h \
	INC_CAPTURE:replay.h:synth.h INC_CAPTURE:cli.h:import.h
check-layers:
	@fail=0; for p in $(LAYER_PROBES); do \
		mod=$${p%%:*}; rest=$${p#*:}; bad=$${rest%%:*}; good=$${rest#*:}; \
		case $$mod in \
		INC_BASE) inc="$(INC_BASE)";; INC_SIM) inc="$(INC_SIM)";; INC_DB) inc="$(INC_DB)";; \
		INC_REPLAY) inc="$(INC_REPLAY)";; INC_CAPTURE) inc="$(INC_CAPTURE)";; esac; \
		if ! echo "#include \"$$good\"" | $(CC) $$inc $(call pkg,--cflags,$(PKGS_ALL)) \
				-E -o /dev/null -x c - 2>/dev/null; then \
			echo "check-layers: $$mod cannot include its own $$good"; fail=1; \
		elif echo "#include \"$$bad\"" | $(CC) $$inc $(call pkg,--cflags,$(PKGS_ALL)) \
				-E -o /dev/null -x c - 2>/dev/null; then \
			echo "check-layers: $$mod can include $$bad"; fail=1; \
		fi; \
	done; \
	if grep -rn --include='*.[ch]' '#include "\.\./' sim db replay capture cli; then \
		echo "check-layers: a relative include walks around the include paths"; fail=1; \
	fi; \
	if grep -rn --include='*.[ch]' 'int main(' sim db replay capture; then \
		echo "check-layers: a library folder holds a program's main() (programs live in cli/)"; \
		fail=1; \
	fi; \
	[ $$fail = 0 ] && echo "check-layers: $(words $(LAYER_PROBES)) forbidden includes refused"

test: all
	MCR_BUILD=$(O) tests/run.sh

check:
	$(MAKE) check-layers
	$(MAKE) $(PAR) O=build all
	MCR_BUILD=build MCR_DEB_TEST=1 tests/run.sh
	$(MAKE) $(PAR) fuzz-replay
	@# the runs' threads and the prepass beside the pass, every model, under ThreadSanitizer:
	@# a report ends the command (exit 66), which the test counts as a failure
	$(MAKE) $(PAR) O=build-tsan CFLAGS="$(TSAN_FLAGS)" LDFLAGS="-fsanitize=thread" build-tsan/memcg-replay
	TSAN_OPTIONS=halt_on_error=1 MCR_BUILD=build-tsan bash tests/cli/test_threads.sh
	$(MAKE) $(PAR) O=build-san CFLAGS="$(SAN_FLAGS)" LDFLAGS="-fsanitize=address,undefined" all
	@# last, so that the suite's "N passed, N failed, N skipped" ends the output
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		MCR_BUILD=build-san MCR_SANITIZED=1 tests/run.sh

bench: all
	MCR_BUILD=$(O) bench/run.sh

demo:
	$(MAKE) $(PAR) all
	MCR_BUILD=$(O) cli/demo.sh

# `make deps` installs (apt-get, root) what the build and `make demo` need; with a
# goal that needs more beside it (`make deps check`), that goal's tools as well:
# the suite's (man pages, completion, the .deb, the HTML report in a browser,
# libFuzzer, live trace-cmd and iperf3 tests) or the benchmarks'.  `make
# deps-test` installs the suite's without running it.
DEPS_BUILD	:= build-essential pkg-config \
		   libtracefs-dev libtraceevent-dev libtracecmd-dev \
		   libbpf-dev libsqlite3-dev sqlite3 libzstd-dev
DEPS_TEST	:= trace-cmd help2man man-db bash-completion \
		   debhelper dpkg-dev devscripts lintian fakeroot \
		   chromium libxml2-utils python3 iperf3 zstd \
		   clang libclang-rt-14-dev
DEPS_BENCH	:= trace-cmd iperf3 bc
DEPS_TEST_GOALS	:= check test deps-test fuzz fuzz-build fuzz-replay man install deb deb-test
DEPS_BENCH_GOALS := bench
deps:
	apt-get update
	apt-get install -y --no-install-recommends $(DEPS_BUILD) \
		$(if $(filter $(DEPS_TEST_GOALS),$(MAKECMDGOALS)),$(DEPS_TEST)) \
		$(if $(filter $(DEPS_BENCH_GOALS),$(MAKECMDGOALS)),$(DEPS_BENCH))

deps-test: deps

clean:
	rm -rf build build-san build-tsan build-deb build-fuzz

# `make deps demo`, `make deps check`: nothing may start before deps is done.
ifneq ($(filter deps deps-test,$(MAKECMDGOALS)),)
.NOTPARALLEL:
endif

# ---- fuzzing (libFuzzer, Debian's clang): tests/fuzz/fuzz_*.c, seeds in tests/fuzz/corpus/NAME
#   make fuzz FUZZ_SECONDS=N   each target for N seconds, ASan+UBSan; what it
#                              finds goes to build-fuzz/corpus/NAME, crashes to build-fuzz/
#   make fuzz-replay           each target once over the corpus in the repository (make check)
FUZZ_O		:= build-fuzz
FUZZ_CC		?= clang
FUZZ_SECONDS	?= 600
# one input may take seconds on a loaded host (the trace.dat probe forks a child)
FUZZ_TIMEOUT	?= 120
FUZZ_SAN	:= -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined \
		   -fno-omit-frame-pointer
FUZZ_TARGETS	:= $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
# libtracecmd 1.3.1 leaks the trace clock name it parses from a v6 file (its sscanf
# frame is found only with fast_unwind_on_malloc=0)
# the trace.dat probe child (capture/import_child.c) lets libtracecmd malloc sizes read from the
# file; NULL, as glibc returns, not an ASan abort of that child
FUZZ_ENV	:= LSAN_OPTIONS=suppressions=$(CURDIR)/tests/fuzz/lsan.supp \
		   ASAN_OPTIONS=allocator_may_return_null=1:fast_unwind_on_malloc=0 \
		   UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

$(O)/fuzz/fuzz_%: $(O)/tests/fuzz/fuzz_%.o $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -fsanitize=fuzzer -o $@ $^ $(call pkg,--libs,$(PKGS_ALL)) -lpthread -lm

fuzz-build:
	$(MAKE) O=$(FUZZ_O) CC=$(FUZZ_CC) CFLAGS="$(FUZZ_SAN) -fsanitize=fuzzer-no-link" \
		LDFLAGS="-fsanitize=address,undefined" $(patsubst %,$(FUZZ_O)/fuzz/fuzz_%,$(FUZZ_TARGETS))

fuzz: fuzz-build
	@for t in $(FUZZ_TARGETS); do \
		mkdir -p $(FUZZ_O)/corpus/$$t; \
		echo "fuzz $$t: $(FUZZ_SECONDS) s"; \
		$(FUZZ_ENV) $(FUZZ_O)/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=$(FUZZ_TIMEOUT) \
			-rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=$(FUZZ_O)/ \
			$(FUZZ_O)/corpus/$$t tests/fuzz/corpus/$$t || exit 1; \
	done

fuzz-replay: fuzz-build
	@for t in $(FUZZ_TARGETS); do \
		$(FUZZ_ENV) $(FUZZ_O)/fuzz/fuzz_$$t -runs=0 -timeout=$(FUZZ_TIMEOUT) -artifact_prefix=$(FUZZ_O)/ \
			tests/fuzz/corpus/$$t/* \
			>$(FUZZ_O)/replay-$$t.log 2>&1 || { cat $(FUZZ_O)/replay-$$t.log; exit 1; }; \
		echo "fuzz-replay $$t: $$(ls tests/fuzz/corpus/$$t | wc -l) inputs, no finding"; \
	done

.PHONY: all test check check-layers bench demo deps deps-test install clean fuzz fuzz-build fuzz-replay
.SECONDARY:

# ---- man pages, install, Debian package (sources in cli/man, cli/completion, cli/debian)
#   make man        build/man/*.1 from each program's --help (help2man) + cli/man/*.h2m,
#                   and the hand-written cli/man/*.5 (the database) with VERSION filled in
#   make install    PREFIX=/usr/local (Debian: PREFIX=/usr), DESTDIR for staging
#   make install-systemd  memcg-capture.service, its report timer, wrapper and
#                   /etc/default/memcg-capture (SYSTEMDUNITDIR, LIBEXECDIR, SYSCONFDIR)
#   make deb        build-deb/*.deb with dpkg-buildpackage, then lintian
#   make deb-test   make deb, then install, run and remove the packages (root)
MANDIR	?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
# one page per command: cli/man/memcg-replay-COMMAND.h2m (tests/cli/test_man.sh checks
# there is one for every command of memcg-replay --help)
SUBCMDS	:= $(patsubst cli/man/memcg-replay-%.h2m,%,$(wildcard cli/man/memcg-replay-*.h2m))
MANPAGES := $(O)/man/memcg-capture.1 $(O)/man/memcg-replay.1 $(O)/man/memcg-statlog.1 \
	$(patsubst %,$(O)/man/memcg-replay-%.1,$(SUBCMDS))
# section 5: the file format, written by hand (no program prints it)
MANPAGES5 := $(patsubst cli/man/%.5,$(O)/man/%.5,$(wildcard cli/man/*.5))
COMPLETIONS := cli/completion/memcg-replay cli/completion/memcg-capture
DEB_TOP	:= build-deb
DEB_SRC	:= $(DEB_TOP)/memcg-replay-$(VERSION)

man: $(MANPAGES) $(MANPAGES5)

$(O)/man/%.5: cli/man/%.5 Makefile
	@mkdir -p $(dir $@)
	sed 's/@VERSION@/$(VERSION)/g' $< >$@

$(O)/man/memcg-capture.1: cli/man/memcg-capture.h2m cli/man/mkman.sh $(O)/memcg-capture
	@mkdir -p $(dir $@)
	cli/man/mkman.sh $(O)/memcg-capture $< $@

$(O)/man/memcg-statlog.1: cli/man/memcg-statlog.h2m cli/man/mkman.sh $(O)/memcg-statlog
	@mkdir -p $(dir $@)
	cli/man/mkman.sh $(O)/memcg-statlog $< $@

$(O)/man/memcg-replay.1: cli/man/memcg-replay.h2m cli/man/mkman.sh $(O)/memcg-replay
	@mkdir -p $(dir $@)
	cli/man/mkman.sh $(O)/memcg-replay $< $@

$(O)/man/memcg-replay-%.1: cli/man/memcg-replay-%.h2m cli/man/mkman.sh $(O)/memcg-replay
	@mkdir -p $(dir $@)
	cli/man/mkman.sh $(O)/memcg-replay $* $< $@

install: $(PROGS) $(MANPAGES) $(MANPAGES5)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 \
		$(DESTDIR)$(BASHCOMPDIR)
	install -m 0755 $(PROGS) $(DESTDIR)$(BINDIR)
	install -m 0644 $(MANPAGES) $(DESTDIR)$(MANDIR)/man1
	install -m 0644 $(MANPAGES5) $(DESTDIR)$(MANDIR)/man5
	install -m 0644 $(COMPLETIONS) $(DESTDIR)$(BASHCOMPDIR)

# The systemd units of memcg-capture (cli/systemd, written for PREFIX=/usr),
# its wrapper and /etc/default/memcg-capture, which is never replaced nor
# removed once edited.  Not part of install: a package (Debian: cli/debian/rules)
# or an administrator installs them.
SYSCONFDIR	?= /etc
LIBEXECDIR	?= $(PREFIX)/lib/memcg-capture
SYSTEMDUNITDIR	?= $(PREFIX)/lib/systemd/system
UNITFILES	:= cli/systemd/memcg-capture.service cli/systemd/memcg-capture-report.service \
		   cli/systemd/memcg-capture-report.timer
SVC_PATHS	= -e 's|/usr/lib/memcg-capture/|$(LIBEXECDIR)/|g' -e 's|/usr/bin/|$(BINDIR)/|g'

install-systemd:
	install -d $(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(SYSCONFDIR)/default
	for u in $(UNITFILES); do \
		sed $(SVC_PATHS) $$u >$(DESTDIR)$(SYSTEMDUNITDIR)/$${u##*/}.tmp && \
		chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/$${u##*/}.tmp && \
		mv $(DESTDIR)$(SYSTEMDUNITDIR)/$${u##*/}.tmp $(DESTDIR)$(SYSTEMDUNITDIR)/$${u##*/} || exit 1; \
	done
	sed $(SVC_PATHS) cli/systemd/memcg-capture-service >$(DESTDIR)$(LIBEXECDIR)/memcg-capture-service.tmp
	chmod 0755 $(DESTDIR)$(LIBEXECDIR)/memcg-capture-service.tmp
	mv $(DESTDIR)$(LIBEXECDIR)/memcg-capture-service.tmp $(DESTDIR)$(LIBEXECDIR)/memcg-capture-service
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/default/memcg-capture ]; then \
		echo "kept $(DESTDIR)$(SYSCONFDIR)/default/memcg-capture"; \
	else \
		echo "install -m 0644 cli/systemd/memcg-capture.default $(DESTDIR)$(SYSCONFDIR)/default/memcg-capture"; \
		install -m 0644 cli/systemd/memcg-capture.default $(DESTDIR)$(SYSCONFDIR)/default/memcg-capture; \
	fi

uninstall-systemd:
	rm -f $(addprefix $(DESTDIR)$(SYSTEMDUNITDIR)/,$(notdir $(UNITFILES))) \
		$(DESTDIR)$(LIBEXECDIR)/memcg-capture-service
	-rmdir $(DESTDIR)$(LIBEXECDIR) 2>/dev/null
	@cmp -s cli/systemd/memcg-capture.default $(DESTDIR)$(SYSCONFDIR)/default/memcg-capture && \
		rm -f $(DESTDIR)$(SYSCONFDIR)/default/memcg-capture || \
		{ [ ! -e $(DESTDIR)$(SYSCONFDIR)/default/memcg-capture ] || \
		  echo "kept $(DESTDIR)$(SYSCONFDIR)/default/memcg-capture (edited)"; }

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(PROGS))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(MANPAGES))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man5/,$(notdir $(MANPAGES5))) \
		$(addprefix $(DESTDIR)$(BASHCOMPDIR)/,$(notdir $(COMPLETIONS)))

# The source tree (the fixed top-level layout) is copied into $(DEB_SRC), cli/debian
# becomes its debian/, and debian/changelog is written from VERSION above, the one
# place the version lives (the programs get it as MCR_VERSION).
deb:
	rm -rf $(DEB_TOP)
	mkdir -p $(DEB_SRC)
	tar -c --exclude-vcs capture replay sim db cli tests bench .ci Makefile README.md | \
		tar -x -C $(DEB_SRC)
	cp -a cli/debian $(DEB_SRC)/debian
	maint=$$(sed -n 's/^Maintainer: //p' cli/debian/control); \
	date=$$(date -R $${SOURCE_DATE_EPOCH:+-d @$$SOURCE_DATE_EPOCH}); \
	printf '%s\n' "memcg-replay ($(VERSION)) unstable; urgency=medium" "" \
		"  * Version $(VERSION) (written by make deb from the Makefile's VERSION)." "" \
		" -- $$maint  $$date" >$(DEB_SRC)/debian/changelog
	cd $(DEB_SRC) && dpkg-buildpackage -us -uc -b -J$(JOBS)
	lintian --info --display-info $(DEB_TOP)/*.changes

# install the packages, run them, remove them (root; CI: .ci/run)
deb-test: deb
	MCR_BUILD=$(O) bash tests/package/test_deb.sh

.PHONY: man uninstall deb deb-test install-systemd uninstall-systemd

-include $(shell find $(O) -name '*.d' 2>/dev/null)
