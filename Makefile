# SPDX-License-Identifier: GPL-2.0
#
# Wrapper around kbuild (srnic.ko) and CMake (userspace/). See README.md.
#
#   make                 srnic.ko + userspace tools
#   make module          srnic.ko against $(KDIR) (KVER=RELEASE: that kernel's)
#   make userspace       C++ tools and their unit tests (build/userspace)
#   make srnicctl        only the tools (what tools/demo.sh needs)
#   make check           sparse (C=2) over the module
#   make style           checkpatch --strict over kernel/ and include/
#   make test            every test tier (tests/run.sh)
#   make bench           perftest benchmark in a VM (tools/bench.sh)
#   make install         srnic.ko into /lib/modules/<kver>/updates/, depmod
#                        (DESTDIR or INSTALL_MOD_PATH: a staging root)
#   make uninstall       remove it again, depmod
#   make kernelrelease   the release of the kernel KDIR builds for
#   make dkms-install    register, build and install through DKMS (tools/dkms.sh)
#   make dkms-remove     remove it from DKMS
#   make deb             srnic-dkms and srnic-tools .deb packages (tools/mkdeb.sh)
#   make module-clean    kbuild products only
#   make clean           everything built, build/ included

# The kernel to build for: KVER=RELEASE (its /lib/modules/RELEASE/build) or
# KDIR=DIR. Default: the running kernel's build dir when it exists; otherwise
# (a host whose kernel has no headers, such as this project's CI machines) the
# newest Debian 6.1 headers. tests/vm/vmrun boots the kernel srnic.ko was
# built for. A KVER whose headers live in a tools/kernels.sh chroot (newer
# kernels whose kbuild tools need a newer glibc) is built through it.
SRNIC_KERNELS ?= /var/tmp/srnic-kernels
ifneq ($(KVER),)
KDIR ?= /lib/modules/$(KVER)/build
ifeq ($(wildcard $(KDIR)/Makefile),)
SRNIC_KCHROOT := $(wildcard $(SRNIC_KERNELS)/$(KVER)/ready)
endif
endif
KDIR ?= $(firstword $(wildcard /lib/modules/$(shell uname -r)/build) \
		    $(lastword $(sort $(wildcard /lib/modules/6.1.*/build))))
W ?= 1
BUILD ?= $(CURDIR)/build

# kbuild cannot take a directory with spaces in M=: build such a checkout
# through a per-user symlink without any (/tmp/srnic-kbuild-<uid>-<hash>).
srnic_empty :=
srnic_space := $(srnic_empty) $(srnic_empty)
SRNIC_M := $(if $(findstring $(srnic_space),$(CURDIR)),$(shell \
	l=/tmp/srnic-kbuild-$$(id -u)-$$(printf %s '$(CURDIR)' | md5sum | cut -c1-12); \
	[ "$$(readlink "$$l" 2>/dev/null)" = '$(CURDIR)' ] || ln -sfn '$(CURDIR)' "$$l"; \
	echo "$$l"),$(CURDIR))

KBUILD_ARGS := -C $(KDIR) M=$(SRNIC_M) CONFIG_RDMA_SRNIC=m W=$(W)

.PHONY: all module module-debug module-clean userspace srnicctl check style test bench demo clean \
	install uninstall kernelrelease dkms-install dkms-remove deb

all: module userspace

# One line saying what to install when KDIR cannot build srnic.
define srnic_kcheck
	@kdir='$(KDIR)'; kver='$(KVER)'; \
	if [ -z "$$kdir" ]; then \
		echo "srnic: no kernel headers: install linux-headers-amd64 (tools/setup.sh) or set KVER=/KDIR=" >&2; exit 1; \
	elif [ ! -f "$$kdir/Makefile" ] && [ -n "$$kver" ]; then \
		echo "srnic: no headers for Linux $$kver ($$kdir): install linux-headers-$$kver" >&2; exit 1; \
	elif [ ! -f "$$kdir/Makefile" ]; then \
		echo "srnic: KDIR=$$kdir is not a kernel build dir (no Makefile): install linux-headers-<release> or fix KDIR" >&2; exit 1; \
	fi; \
	rel=$$(cat "$$kdir/include/config/kernel.release" 2>/dev/null || echo unknown); \
	case $$rel in \
	[0-5].*|6.0|6.0.*|6.0-*) echo "srnic: Linux $$rel is not supported (6.1 or newer): install linux-headers-amd64 of Debian 12 or newer" >&2; exit 1 ;; \
	unknown) echo "srnic: KDIR=$$kdir has no include/config/kernel.release: not a configured kernel build dir" >&2; exit 1 ;; \
	esac
endef

# kbuild with one job per CPU unless the caller gave -j (make -jN module):
# expanded in the recipe, where MAKEFLAGS holds the caller's -j
SRNIC_JOBS = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(shell nproc))

ifneq ($(SRNIC_KCHROOT),)
module module-debug check:
	tools/kernels.sh make $(KVER) $@ W=$(W)
else
module:
	$(srnic_kcheck)
	$(MAKE) $(SRNIC_JOBS) $(KBUILD_ARGS) modules

module-debug:
	$(srnic_kcheck)
	$(MAKE) $(SRNIC_JOBS) $(KBUILD_ARGS) SRNIC_DEBUG=y modules

check:
	$(srnic_kcheck)
	$(MAKE) $(SRNIC_JOBS) $(KBUILD_ARGS) C=2 CF="-D__CHECK_ENDIAN__" modules

endif

# What `make module` writes, for any kernel. Not kbuild's own clean (make
# M=... clean): it deletes every *.o, *.ko and *.[aios] below the checkout,
# build/ included (the userspace objects, the hwsim module, kept srnic.ko
# files).
module-clean:
	rm -f srnic.ko srnic.o srnic.mod srnic.mod.c srnic.mod.o Module.symvers \
		modules.order .module-common.o .*.cmd kernel/*.o kernel/.*.cmd

userspace:
	cmake -S userspace -B "$(BUILD)/userspace" -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build "$(BUILD)/userspace" -j2

srnicctl:
	cmake -S userspace -B "$(BUILD)/userspace" -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build "$(BUILD)/userspace" -j2 --target srnicctl

style:
	tools/lint.sh

test:
	tests/run.sh

bench:
	tools/bench.sh

demo:
	tools/demo.sh

clean: module-clean
	rm -rf "$(BUILD)"

# ---------------------------------------------------------------- install
# The release of the kernel KDIR belongs to (the module's vermagic; Debian's
# include/config/kernel.release says 6.1.192 where this says 6.1.0-57-amd64).
KREL = $(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"$$/\1/p' $(KDIR)/include/generated/utsrelease.h 2>/dev/null)
# Distribution headers have no signing key: don't let modules_install try
# (sign with your own key, or use DKMS, for Secure Boot: see README.md).
SIGN_ARGS = $(if $(wildcard $(KDIR)/certs/signing_key.x509),,CONFIG_MODULE_SIG_ALL=)
INSTALL_MOD_PATH ?= $(DESTDIR)
INSTALL_MOD_DIR := updates
DEPMOD ?= depmod
MODDIR = $(INSTALL_MOD_PATH)/lib/modules/$(KREL)/$(INSTALL_MOD_DIR)

install:
	@test -n "$(KREL)" || { echo "no kernel release in $(KDIR)/include/generated/utsrelease.h: set KDIR" >&2; exit 1; }
	@test -z "$(KVER)" || test "$(KVER)" = "$(KREL)" || \
		{ echo "KVER=$(KVER) but KDIR $(KDIR) is for $(KREL)" >&2; exit 1; }
	@test -f srnic.ko || { echo "srnic.ko not built: run make module first" >&2; exit 1; }
	@case "$(INSTALL_MOD_PATH)" in *" "*) echo "kbuild's modules_install cannot take a path with spaces: $(INSTALL_MOD_PATH)" >&2; exit 1;; esac
	$(MAKE) $(KBUILD_ARGS) INSTALL_MOD_PATH="$(INSTALL_MOD_PATH)" \
		INSTALL_MOD_DIR=$(INSTALL_MOD_DIR) $(SIGN_ARGS) modules_install
	$(DEPMOD) -a $(if $(INSTALL_MOD_PATH),-b "$(INSTALL_MOD_PATH)") $(KREL)

uninstall:
	@test -n "$(KREL)" || { echo "no kernel release in $(KDIR)/include/generated/utsrelease.h: set KDIR" >&2; exit 1; }
	rm -f "$(MODDIR)"/srnic.ko "$(MODDIR)"/srnic.ko.xz "$(MODDIR)"/srnic.ko.gz "$(MODDIR)"/srnic.ko.zst
	$(DEPMOD) -a $(if $(INSTALL_MOD_PATH),-b "$(INSTALL_MOD_PATH)") $(KREL)

kernelrelease:
	@echo $(KREL)

dkms-install:
	@test -n "$(KREL)" || { echo "no kernel headers in KDIR=$(KDIR): install linux-headers-$$(uname -r) or set KDIR" >&2; exit 1; }
	tools/dkms.sh install -k $(KREL)

dkms-remove:
	tools/dkms.sh remove

deb:
	tools/mkdeb.sh
