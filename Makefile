# SPDX-License-Identifier: GPL-2.0
#
# vmamerge - user-facing make targets.  Kbuild (the file next to this one)
# describes the module itself.
#
#   make                  module for the running kernel, and the CLI
#   make KVER=<release>   module for another installed header tree
#   make KDIR=<dir>       module against any prepared kernel tree
#   sudo make install     dkms install for the running kernel, CLI, udev rule
#                         (PREFIX=/usr/local, DESTDIR=, UDEVRULESDIR=;
#                         tools/install.sh)
#   sudo make uninstall
#   make check            the test suite CI runs (sets up everything it needs)
#   make check-long       the debug twins and the SMP set; must pass on a
#                         module before make check accepts it
#   make port KVER=<rel>  validate another Debian build (tools/port.sh)
#   make lab              the end-to-end test on Debian 12 and 13 (tests/lab/)
#   make demo             boot a guest and show what vmamerge does

KVER ?= $(shell uname -r)
KDIR ?= /lib/modules/$(KVER)/build
PREFIX ?= /usr/local
# udev reads /etc/udev/rules.d (the administrator's) and /usr/lib/udev/rules.d
# (packages': debian/rules sets it)
UDEVRULESDIR ?= /etc/udev/rules.d
VERSION_DKMS := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' $(CURDIR)/dkms.conf)

HOSTCC ?= cc
KLP_CONVERT := module/klp-convert/klp-convert
# The series (6.1, 6.12) of the tree we build against, from its release.
SERIES = $(shell sed -n 's/^\#define UTS_RELEASE "\([0-9]*\.[0-9]*\).*/\1/p' \
	   $(KDIR)/include/generated/utsrelease.h)

.PHONY: all module cli klp-convert install uninstall check check-long lab demo bench soak kcsan \
	clean check-kdir port

all: module cli

check-kdir:
	@test -f $(KDIR)/Makefile || { \
	  echo "vmamerge: no kernel headers in $(KDIR)."; \
	  echo "  Install them: sudo apt-get install linux-headers-$(KVER)"; \
	  exit 1; }
	@grep -q '^CONFIG_LIVEPATCH=y' $(KDIR)/.config || { \
	  echo "vmamerge: kernel $(KVER) is built without CONFIG_LIVEPATCH;"; \
	  echo "  vmamerge is a livepatch module and needs a kernel with it."; \
	  exit 1; }

$(KLP_CONVERT): module/klp-convert/klp-convert.c
	$(HOSTCC) -O2 -Wall -Wextra -o $@ $<

klp-convert: $(KLP_CONVERT)

# A build that module/builds.list does not list is built only when its
# image is proven equivalent to a listed build's (module/admit.sh; the
# image: VMLINUZ=PATH, else /boot/vmlinuz-<release>; KCONFIG=PATH, KFP=PATH).
# Then build, turn the listed internal symbols into livepatch relocations,
# and prove that no replacement function ends in a tail call.
# One version for module, CLI and dkms: dkms.conf's PACKAGE_VERSION.
module: check-kdir $(KLP_CONVERT)
	VMLINUZ="$(VMLINUZ)" KCONFIG="$(KCONFIG)" KFP="$(KFP)" \
		sh module/admit.sh $(KDIR) admitted.list
	$(MAKE) -C $(KDIR) M=$(CURDIR) \
		KCPPFLAGS="$(KCPPFLAGS) -DVMAMERGE_VERSION=$(VERSION_DKMS)" modules
	$(KLP_CONVERT) --series $(SERIES) module/ksyms.list vmamerge.ko
	sh module/check-tailcalls.sh vmamerge.ko

cli:
	$(MAKE) -C userspace

# tools/install.sh: dkms for the module, the CLI built in a temporary
# directory (never as root in this checkout), a manifest of what was
# written; a failed install undoes itself, uninstall says what it could not
# undo.  DESTDIR=...: files only, no dkms (packaging).
install uninstall:
	VERSION=$(VERSION_DKMS) KVER=$(KVER) PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) \
		UDEVRULESDIR=$(UDEVRULESDIR) bash tools/install.sh $@

check:
	bash tests/check.sh

# The debug twins and the SMP set (tests/check.sh, "Two parts"); writes
# tests/long-check.record, which make check verifies.
check-long:
	VMAMERGE_CHECK=long bash tests/check.sh

# Validate another Debian kernel build and add it to module/builds.list
# (tools/port.sh; docs/testing.md, "Porting to a new build").
port:
	bash tools/port.sh $(KVER)

# The end-to-end lab test on real Debian systems alone (tests/lab/; make
# check runs both, alongside the kernel guests).
LAB_SUITES ?= bookworm trixie
lab:
	@rc=0; for s in $(LAB_SUITES); do bash tests/lab/lab.sh $$s || rc=1; done; exit $$rc

demo:
	bash tests/demo.sh

bench:
	bash tests/bench/bench.sh

# Long data-checking torture runs in every kernel's guest (SOAK_S seconds
# each; needs the module builds of a previous `make check`).
SOAK_S ?= 3600
soak:
	bash tests/soak.sh $(SOAK_S)

# The module's suites on the KCSAN twins (the kernel's data-race detector;
# KCSAN_S seconds of torture each; needs the caches of `make check`).
KCSAN_S ?= 600
kcsan:
	bash tests/kcsan.sh $(KCSAN_S)

clean:
	-test ! -f $(KDIR)/Makefile || $(MAKE) -C $(KDIR) M=$(CURDIR) clean
	rm -f $(KLP_CONVERT) ksyms-weak.h .ksyms-weak.h.cmd admitted.list \
		validated-builds.h .validated-builds.h.cmd \
		vmamerge-hook-offsets.h module/kernel-*/hook_offsets.s
	-$(MAKE) -C userspace clean
