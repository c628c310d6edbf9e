#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The main job: build srnic.ko and the userspace tools, then (the host cannot
# load modules) boot Debian's 6.1 kernel in QEMU, load srnic, create two
# devices on a veth pair and show them with stock rdma-core tools.
set -euo pipefail
cd "$(dirname "$0")/.."
make module userspace
exec tests/vm/vmrun --timeout 600 tools/demo-guest.sh
