# SPDX-License-Identifier: GPL-2.0
#
# Wrapper around kbuild (srnic.ko) and CMake (userspace/). See README.md.
#
#   make                 srnic.ko + userspace tools
#   make module          srnic.ko against $(KDIR)
#   make userspace       C++ tools and their unit tests (build/userspace)
#   make check           sparse (C=2) over the module
#   make style           checkpatch --strict over kernel/ and include/
#   make test            every test tier (tests/run.sh)
#   make bench           perftest benchmark in a VM (tools/bench.sh)
#   make module-clean    kbuild products only
#   make clean           everything built, build/ included

# The running kernel's build dir when it exists; otherwise (a host whose kernel
# has no headers, such as this project's CI machines) the newest Debian 6.1
# headers, which is also the kernel the VM tests boot.
KDIR ?= $(firstword $(wildcard /lib/modules/$(shell uname -r)/build) \
		    $(lastword $(sort $(wildcard /lib/modules/6.1.*/build))))
W ?= 1
BUILD ?= $(CURDIR)/build

KBUILD_ARGS := -C $(KDIR) M=$(CURDIR) CONFIG_RDMA_SRNIC=m W=$(W)

.PHONY: all module module-debug module-clean userspace check style test bench demo clean

all: module userspace

module:
	@test -n "$(KDIR)" || { echo "no kernel build dir: run tools/setup.sh or set KDIR" >&2; exit 1; }
	$(MAKE) $(KBUILD_ARGS) modules

module-debug:
	$(MAKE) $(KBUILD_ARGS) SRNIC_DEBUG=y modules

userspace:
	cmake -S userspace -B $(BUILD)/userspace -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(BUILD)/userspace -j2

check:
	$(MAKE) $(KBUILD_ARGS) C=2 CF="-D__CHECK_ENDIAN__" modules

style:
	tools/lint.sh

test:
	tests/run.sh

bench:
	tools/bench.sh

demo:
	tools/demo.sh

module-clean:
	@if [ -n "$(KDIR)" ]; then $(MAKE) -C $(KDIR) M=$(CURDIR) clean; fi

clean: module-clean
	rm -rf $(BUILD)
