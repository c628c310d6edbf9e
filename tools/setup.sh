#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Install everything srnic needs to build and test on Debian 12 (bookworm).
# Idempotent: run it as often as you like. Needs root (apt-get).
#
#   tools/setup.sh            install build, VM-test, KUnit and userspace deps
#
# What it installs, by purpose:
#   kernel module   linux-headers-amd64 (the 6.1 headers the module builds against),
#                   sparse (make check)
#   other kernels   tools/kernels.sh setup: Debian's 6.12 (bookworm-backports) image
#                   and headers, and the newest Debian kernel (headers in a chroot of
#                   its suite, image unpacked) for the build and compat tiers;
#                   debootstrap, zstd (6.12+ bzImages)
#   VM tests        linux-image-amd64 (the kernel the VM boots; same version as the
#                   headers), qemu-system-x86, busybox-static, kmod, iproute2,
#                   rdma-core, ibverbs-utils, rdmacm-utils, perftest, python3-pyverbs,
#                   debootstrap (the Debian 13 chroot of tools/trixie-chroot.sh)
#   benchmarks      gnuplot-nox (the picture of tools/dcqcn-bench.sh)
#   KUnit (UML)     linux-source-6.1, flex, bison, bc
#   debug kernel    the same and libssl-dev (tools/debug-kernel.sh, tier debug)
#   userspace       cmake, g++, libgtest-dev, libgmock-dev, libmnl-dev, libfmt-dev,
#                   nlohmann-json3-dev, libcli11-dev, libbpf-dev, bpftool, clang, llvm
#   deploy tier     dkms (pulls sudo), dpkg-dev (dpkg-shlibdeps), man-db, git
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
	echo "setup.sh: must run as root (apt-get install)" >&2
	exit 1
fi
if ! grep -q '^12' /etc/debian_version 2>/dev/null; then
	echo "setup.sh: warning: written for Debian 12; continuing" >&2
fi

pkgs=(
	# module build
	build-essential linux-headers-amd64 sparse libelf-dev
	# VM tier
	linux-image-amd64 qemu-system-x86 busybox-static kmod iproute2 cpio xz-utils
	zstd
	binutils procps
	rdma-core ibverbs-utils rdmacm-utils perftest python3-pyverbs
	debootstrap
	# tools/dcqcn-bench.sh picture
	gnuplot-nox
	libibverbs-dev librdmacm-dev
	# KUnit tier
	linux-source-6.1 flex bison bc python3
	# debug kernel (tools/debug-kernel.sh): its certs/ tools need OpenSSL
	libssl-dev
	# userspace
	cmake g++ pkg-config libgtest-dev libgmock-dev libmnl-dev libfmt-dev
	nlohmann-json3-dev libcli11-dev libbpf-dev bpftool clang llvm
	# VM tier: bpftrace one-liners over the srnic tracepoints (test_observe)
	bpftrace
	# deploy tier: DKMS, .deb packages (tools/dkms.sh, tools/mkdeb.sh), man
	dkms dpkg-dev man-db git
)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done

if [ "${#missing[@]}" -eq 0 ]; then
	echo "setup.sh: all ${#pkgs[@]} packages present"
else
	echo "setup.sh: installing ${#missing[@]} packages: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Linux 6.12 and the newest Debian kernel (build and compat tiers)
"$(dirname "$0")/kernels.sh" setup

# rdma_rxe and srnic both claim RDMA_DRIVER_RXE and UDP 4791; keep the host
# from autoloading rxe (harmless where the host cannot load modules at all).
# The VM tier loads rdma_rxe explicitly, by path, for baseline runs only.
echo "setup.sh: done"
