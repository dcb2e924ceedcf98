# memcg-replay - plain Makefile; every library through pkg-config.
#   make            build both programs (build/)
#   make check      build, run every test, then again under ASan+UBSan (build-san/)
#   make test       run the suite once (build/)
#   make bench      build and run the benchmarks
#   make deps       install the Debian packages (root)
#   make demo       the main job: capture (or synthesize) -> replay -> report
#   make install PREFIX=/usr/local

PREFIX	?= /usr/local
BINDIR	?= $(PREFIX)/bin
VERSION	:= 0.1.0

CC	?= cc
PKGS	:= libtracefs libtraceevent libtracecmd libbpf sqlite3 libzstd
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS))
PKG_LIBS   := $(shell pkg-config --libs $(PKGS))

WARN	:= -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wformat=2 -Wvla
BASE_CFLAGS := -std=gnu11 $(WARN) -D_GNU_SOURCE -DMCR_VERSION=\"$(VERSION)\" \
	-Isim -Idb -Ireplay -Icapture -Icli $(PKG_CFLAGS)
CFLAGS	?= -O2 -g
LDLIBS	:= $(PKG_LIBS) -lpthread -lm

O	?= build
SAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

SIM_SRC		:= $(wildcard sim/*.c)
DB_SRC		:= $(wildcard db/*.c)
REPLAY_SRC	:= $(wildcard replay/*.c)
CAPLIB_SRC	:= $(filter-out capture/main.c,$(wildcard capture/*.c))
CLI_SRC		:= $(wildcard cli/*.c)
UNIT_SRC	:= $(wildcard tests/unit/test_*.c)
BENCH_SRC	:= $(wildcard bench/*.c)

obj = $(patsubst %.c,$(O)/%.o,$(1))

LIBS	:= $(O)/libcapture.a $(O)/libreplay.a $(O)/libdb.a $(O)/libsim.a
PROGS	:= $(O)/memcg-replay $(O)/memcg-capture
UNITS	:= $(patsubst tests/unit/%.c,$(O)/tests/%,$(UNIT_SRC))
BENCHES	:= $(patsubst bench/%.c,$(O)/bench/%,$(BENCH_SRC))

all: $(PROGS) $(UNITS) $(BENCHES)

$(O)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

$(O)/libsim.a: $(call obj,$(SIM_SRC))
$(O)/libdb.a: $(call obj,$(DB_SRC))
$(O)/libreplay.a: $(call obj,$(REPLAY_SRC))
$(O)/libcapture.a: $(call obj,$(CAPLIB_SRC))
$(O)/%.a:
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^

$(O)/memcg-replay: $(call obj,$(CLI_SRC)) $(LIBS)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(O)/memcg-capture: $(O)/capture/main.o $(LIBS)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(O)/tests/%: $(O)/tests/unit/%.o $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(O)/bench/%: $(O)/bench/%.o $(LIBS)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

test: all
	MCR_BUILD=$(O) tests/run.sh

check:
	$(MAKE) O=build all
	MCR_BUILD=build tests/run.sh
	$(MAKE) O=build-san CFLAGS="$(SAN_FLAGS)" LDFLAGS="-fsanitize=address,undefined" all
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		MCR_BUILD=build-san MCR_SANITIZED=1 tests/run.sh

bench: all
	MCR_BUILD=$(O) bench/run.sh

demo: all
	MCR_BUILD=$(O) cli/demo.sh

deps:
	apt-get update
	apt-get install -y --no-install-recommends build-essential pkg-config \
		libtracefs-dev libtraceevent-dev libtracecmd-dev trace-cmd \
		libbpf-dev libsqlite3-dev sqlite3 libzstd-dev

install: $(PROGS)
	install -d $(DESTDIR)$(BINDIR)
	install -m 0755 $(PROGS) $(DESTDIR)$(BINDIR)

clean:
	rm -rf build build-san

.PHONY: all test check bench demo deps install clean
.SECONDARY:

-include $(shell find $(O) -name '*.d' 2>/dev/null)
