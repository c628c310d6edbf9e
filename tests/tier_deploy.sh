#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Deploy tier: what a user does to put srnic on a machine. On the host
# (tests/deploy/host.sh): make install/uninstall into a staging root, a real
# DKMS build of dkms.conf (private tree), the srnic-dkms and srnic-tools
# .deb packages. In one guest (tests/deploy/guest.sh): insmod's
# dependencies, make install + modprobe + autoload, DKMS install + autoload +
# traffic, apt install of both packages + autoload + srnicctl, each removed
# again. Then tests/deploy/anypath.sh: a clone under /tmp in a path with
# spaces builds and runs tools/demo.sh.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
. tests/tally.sh
logdir=${SRNIC_TEST_LOGS:-$top/build/test-logs}/deploy
mkdir -p "$logdir"

make -s module userspace >/dev/null || { echo "make module userspace failed"; echo "0 passed, 1 failed"; exit 1; }
D=$top/build/deploy
# DKMS cannot take a path with spaces (nor kbuild's modules_install): from a
# checkout in one, the staging directory is one the guest also sees (the
# host's root, read-only under its overlay), without spaces
case $top in
*[[:space:]]*) D=/var/cache/srnic-deploy/$(printf %s "$top" | md5sum | cut -c1-12) ;;
esac
# the guest boots the kernel the module and the DKMS build are for
VMRUN_KVER=$(make -s --no-print-directory kernelrelease)
export VMRUN_KVER

tally deploy-host "$logdir/host.log" tests/deploy/host.sh "$D"
tally deploy-guest "$logdir/guest.log" tests/vm/vmrun --timeout 900 tests/deploy/guest.sh "$D"
tally deploy-anypath "$logdir/anypath.log" tests/deploy/anypath.sh

printf '%s\n' "${TALLY_LINES[@]}"
echo "$TALLY_PASS passed, $TALLY_FAIL failed"
[ "$TALLY_FAIL" -eq 0 ]
