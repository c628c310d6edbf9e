#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The main job: build srnic.ko and the userspace tools, then (the host cannot
# load modules) boot Debian's 6.1 kernel in QEMU, load srnic, create two
# devices on a veth pair and show them with stock rdma-core tools.
#
#   tools/demo.sh              build (make module srnicctl), then the VM
#   tools/demo.sh --no-build   use srnic.ko and build/userspace as they are
#
# Works from any checkout path (under /tmp, with spaces, ...).
set -euo pipefail
cd "$(dirname "$0")/.."
case ${1:-} in
--no-build) ;;
"") make module srnicctl ;;
*) echo "usage: tools/demo.sh [--no-build]" >&2; exit 2 ;;
esac
exec tests/vm/vmrun --timeout 600 tools/demo-guest.sh
