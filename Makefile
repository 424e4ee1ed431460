# SPDX-License-Identifier: GPL-2.0
#
# vmamerge - user-facing make targets.  Kbuild (the file next to this one)
# describes the module itself.
#
#   make                  module for the running kernel, and the CLI
#   make KVER=<release>   module for another installed header tree
#   make KDIR=<dir>       module against any prepared kernel tree
#   sudo make install     dkms install for the running kernel, CLI, udev rule
#   sudo make uninstall
#   make check            the whole test suite (sets up everything it needs)
#   make port KVER=<rel>  validate another Debian build (tools/port.sh)
#   make demo             boot a guest and show what vmamerge does

KVER ?= $(shell uname -r)
KDIR ?= /lib/modules/$(KVER)/build
PREFIX ?= /usr/local
VERSION_DKMS := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' $(CURDIR)/dkms.conf)

HOSTCC ?= cc
KLP_CONVERT := module/klp-convert/klp-convert
# The series (6.1, 6.12) of the tree we build against, from its release.
SERIES = $(shell sed -n 's/^\#define UTS_RELEASE "\([0-9]*\.[0-9]*\).*/\1/p' \
	   $(KDIR)/include/generated/utsrelease.h)

.PHONY: all module cli klp-convert install uninstall check demo bench soak \
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

# Build, then turn the listed internal symbols into livepatch relocations,
# and prove that no replacement function ends in a tail call.
# One version for module, CLI and dkms: dkms.conf's PACKAGE_VERSION.
module: check-kdir $(KLP_CONVERT)
	$(MAKE) -C $(KDIR) M=$(CURDIR) \
		KCPPFLAGS="$(KCPPFLAGS) -DVMAMERGE_VERSION=$(VERSION_DKMS)" modules
	$(KLP_CONVERT) --series $(SERIES) module/ksyms.list vmamerge.ko
	sh module/check-tailcalls.sh vmamerge.ko

cli:
	$(MAKE) -C userspace

install: cli
	dkms remove vmamerge/$(VERSION_DKMS) --all >/dev/null 2>&1 || true
	rm -rf /usr/src/vmamerge-$(VERSION_DKMS)
	mkdir -p /usr/src/vmamerge-$(VERSION_DKMS)
	cp -a Kbuild Makefile dkms.conf module /usr/src/vmamerge-$(VERSION_DKMS)/
	$(MAKE) -C /usr/src/vmamerge-$(VERSION_DKMS) clean >/dev/null
	dkms add vmamerge/$(VERSION_DKMS)
	sed 's/@VERSION@/$(VERSION_DKMS)/' tools/kernel-postinst \
		>$(DESTDIR)/etc/kernel/postinst.d/vmamerge
	chmod 0755 $(DESTDIR)/etc/kernel/postinst.d/vmamerge
	$(DESTDIR)/etc/kernel/postinst.d/vmamerge $(KVER)
	install -D -m 0755 userspace/vmamerge $(DESTDIR)$(PREFIX)/bin/vmamerge
	install -D -m 0644 module/uapi/vmamerge.h \
		$(DESTDIR)$(PREFIX)/include/linux/vmamerge.h
	install -D -m 0644 userspace/99-vmamerge.rules \
		$(DESTDIR)/etc/udev/rules.d/99-vmamerge.rules
	install -d $(DESTDIR)$(PREFIX)/share/man/man8
	sed 's/@VERSION@/$(VERSION_DKMS)/' userspace/vmamerge.8 \
		>$(DESTDIR)$(PREFIX)/share/man/man8/vmamerge.8
	install -D -m 0644 userspace/vmamerge.bash-completion \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/vmamerge
	-udevadm control --reload-rules

uninstall:
	-test ! -d /sys/kernel/livepatch/vmamerge || \
		echo 0 > /sys/kernel/livepatch/vmamerge/enabled
	-for i in $$(seq 1 30); do \
		test -d /sys/kernel/livepatch/vmamerge || break; sleep 1; done
	-rmmod vmamerge 2>/dev/null
	-dkms remove vmamerge/$(VERSION_DKMS) --all
	rm -rf /usr/src/vmamerge-$(VERSION_DKMS)
	rm -f $(DESTDIR)$(PREFIX)/bin/vmamerge \
		$(DESTDIR)/etc/kernel/postinst.d/vmamerge \
		$(DESTDIR)$(PREFIX)/include/linux/vmamerge.h \
		$(DESTDIR)/etc/udev/rules.d/99-vmamerge.rules \
		$(DESTDIR)$(PREFIX)/share/man/man8/vmamerge.8 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/vmamerge

check:
	bash tests/check.sh

# Validate another Debian kernel build and add it to module/builds.list
# (tools/port.sh; docs/testing.md, "Porting to a new build").
port:
	bash tools/port.sh $(KVER)

demo:
	bash tests/demo.sh

bench:
	bash tests/bench/bench.sh

# Long data-checking torture runs in every kernel's guest (SOAK_S seconds
# each; needs the module builds of a previous `make check`).
SOAK_S ?= 3600
soak:
	bash tests/soak.sh $(SOAK_S)

clean:
	-test ! -f $(KDIR)/Makefile || $(MAKE) -C $(KDIR) M=$(CURDIR) clean
	rm -f $(KLP_CONVERT) ksyms-weak.h .ksyms-weak.h.cmd \
		validated-builds.h .validated-builds.h.cmd
	-$(MAKE) -C userspace clean
