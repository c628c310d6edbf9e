#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# srnic's KUnit tier: build the driver and its suites into a UML kernel
# (KASAN + lockdep + ib_core) with the kernel's own kunit.py, boot it, count.
#
#   tests/kunit/run.sh [FILTER_GLOB [KUNIT_PY_ARGS...]]
#
#   FILTER_GLOB   suites to run, kunit.py syntax (default 'srnic*'; e.g.
#                 'srnic_port' or 'srnic_port.guid*')
#   KUNIT_PY_ARGS passed on to `kunit.py run` (e.g. --kernel_args=...)
#
# Environment:
#   SRNIC_KUNIT_DIR      cache dir, outside the checkout (default
#                        /var/tmp/srnic-kunit): the extracted kernel tree, the
#                        UML build dir, kunit.json and kunit.out
#   SRNIC_KUNIT_TARBALL  kernel source (default /usr/src/linux-source-6.1.tar.xz,
#                        from Debian's linux-source-6.1; tools/setup.sh installs it)
#   SRNIC_KUNIT_JOBS     make jobs (default: nproc)
#
# The first run extracts the tarball (once) and hooks drivers/srnic/ into it;
# every run copies the driver's sources there (only files whose content
# changed, so warm builds stay warm; files gone from the checkout are
# removed), runs kunit.py, and prints "N passed, N failed, N skipped" from
# tests/kunit/kunit_count.py. Exits non-zero on any failure. See README.md.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
FILTER=${1:-srnic*}
[ $# -gt 0 ] && shift
DIR=${SRNIC_KUNIT_DIR:-/var/tmp/srnic-kunit}
TARBALL=${SRNIC_KUNIT_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
JOBS=${SRNIC_KUNIT_JOBS:-$(nproc)}
BUILD=$DIR/build-um
JSON=$DIR/kunit.json
OUT=$DIR/kunit.out

say() { echo "kunit/run.sh: $*" >&2; }
die() { say "$*"; exit 1; }
now() { date +%s; }

case "$DIR/" in
"$REPO"/*) die "SRNIC_KUNIT_DIR ($DIR) must be outside the checkout" ;;
esac
[ -r "$TARBALL" ] || die "no kernel source at $TARBALL (run tools/setup.sh)"
for tool in flex bison bc make gcc python3 xz flock; do
	command -v "$tool" >/dev/null || die "missing $tool (run tools/setup.sh)"
done

mkdir -p "$DIR"
exec 9>"$DIR/.lock"
flock -n 9 || { say "waiting for another run.sh on $DIR"; flock 9; }

# --- 1. the kernel tree: extracted once per tarball ----------------------
t0=$(now)
tree_id=$(stat -c '%n %s %Y' "$TARBALL")
K=
if [ -f "$DIR/.tree" ] && [ "$(sed -n 1p "$DIR/.tree")" = "$tree_id" ]; then
	K=$(sed -n 2p "$DIR/.tree")
	[ -f "$K/tools/testing/kunit/kunit.py" ] || K=
fi
if [ -z "$K" ]; then
	say "extracting $TARBALL into $DIR (once)"
	old=$(sed -n 2p "$DIR/.tree" 2>/dev/null || true)
	rm -rf "$DIR/.tree" "$DIR/.extract" "$BUILD" ${old:+"$old"}
	mkdir "$DIR/.extract"
	tar -C "$DIR/.extract" -xJf "$TARBALL"
	top=$(find "$DIR/.extract" -mindepth 1 -maxdepth 1)
	[ -f "$top/tools/testing/kunit/kunit.py" ] ||
		die "$TARBALL holds no kernel tree with kunit.py"
	K=$DIR/$(basename "$top")
	rm -rf "$K"
	mv "$top" "$K"
	rmdir "$DIR/.extract"
	# the hook: drivers/srnic/ holds the copy made below
	echo 'source "drivers/srnic/kernel/Kconfig"' >>"$K/drivers/Kconfig"
	echo 'source "drivers/srnic/tests/kunit/Kconfig"' >>"$K/drivers/Kconfig"
	echo 'obj-$(CONFIG_RDMA_SRNIC) += srnic/' >>"$K/drivers/Makefile"
	printf '%s\n%s\n' "$tree_id" "$K" >"$DIR/.tree"
fi
# the hook again, idempotently, in case the tree was set up by hand
hook() { grep -qxF "$2" "$1" || echo "$2" >>"$1"; }
hook "$K/drivers/Kconfig" 'source "drivers/srnic/kernel/Kconfig"'
hook "$K/drivers/Kconfig" 'source "drivers/srnic/tests/kunit/Kconfig"'
hook "$K/drivers/Makefile" 'obj-$(CONFIG_RDMA_SRNIC) += srnic/'
t1=$(now)

# --- 2. copy the driver into drivers/srnic/ -------------------------------
# A copy, not a symlink: kbuild's VPATH would otherwise find *.o that an
# out-of-tree `make M=` build left in the checkout. A file is copied only when
# its content differs (it then gets a fresh mtime, so it is rebuilt);
# unchanged files keep theirs. Files no longer in the checkout are removed.
D=$K/drivers/srnic
mkdir -p "$D"
mapfile -t files < <(cd "$REPO" && {
	ls -1 Kbuild kernel/Kconfig tests/kunit/Kconfig
	find -H kernel tests/kunit -type f -name '*.[ch]'
	[ -d include ] && find -H include -type f
} | sort -u)
declare -A want=()
for f in "${files[@]}"; do
	want[$f]=1
	if ! cmp -s "$REPO/$f" "$D/$f"; then
		mkdir -p "$(dirname "$D/$f")"
		cp "$REPO/$f" "$D/$f.tmp" && mv "$D/$f.tmp" "$D/$f"
	fi
done
while IFS= read -r f; do
	[ -n "${want[$f]:-}" ] || { say "removing stale drivers/srnic/$f"; rm -f "$D/$f"; }
done < <(cd "$D" && find . -type f | sed 's|^\./||')
find "$D" -mindepth 1 -type d -empty -delete
t2=$(now)

# --- 3. configure, build, boot, parse: kunit.py ---------------------------
rm -f "$JSON" "$BUILD/test.log"
say "kunit.py run '$FILTER' (build dir $BUILD, $JOBS jobs)"
set +e
(cd "$K" && python3 tools/testing/kunit/kunit.py run \
	--kunitconfig="$REPO/tests/kunit/.kunitconfig" \
	--build_dir="$BUILD" --jobs="$JOBS" --timeout=600 --json="$JSON" \
	"$@" "$FILTER" </dev/null) 2>&1 | grep -v "^stty: 'standard input'" | tee "$OUT"
kunit_rc=${PIPESTATUS[0]}
set -e
t3=$(now)

# --- 4. count ---------------------------------------------------------------
set +e
python3 "$REPO/tests/kunit/kunit_count.py" "$JSON" "$BUILD/test.log"
count_rc=$?
set -e
say "times: tree $((t1 - t0)) s, copy $((t2 - t1)) s, kunit.py $((t3 - t2)) s"

if [ "$count_rc" -ne 0 ] || [ "$kunit_rc" -ne 0 ]; then
	[ "$count_rc" -eq 0 ] &&
		say "kunit.py exited $kunit_rc although every test passed: see $OUT"
	if [ -s "$BUILD/test.log" ]; then
		say "last lines of the kernel log $BUILD/test.log:"
		tail -n 40 "$BUILD/test.log" >&2
	fi
	say "FAILED (kunit.py output: $OUT)"
	exit 1
fi
