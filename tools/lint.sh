#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Style checks for the kernel side: checkpatch.pl --strict over kernel/,
# include/ and tests/kunit/. checkpatch comes from Debian's linux-source-6.1
# tarball (tools/setup.sh installs it) and is unpacked once into a cache.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${SRNIC_LINT_CACHE:-/var/tmp/srnic-lint}
tarball=$(ls /usr/src/linux-source-6.1.tar.xz 2>/dev/null || true)

if [ ! -x "$cache/scripts/checkpatch.pl" ]; then
	[ -n "$tarball" ] || { echo "lint.sh: linux-source-6.1 missing: run tools/setup.sh" >&2; exit 1; }
	mkdir -p "$cache"
	tar -C "$cache" --strip-components=1 -xJf "$tarball" \
		linux-source-6.1/scripts/checkpatch.pl \
		linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch
fi

mapfile -t files < <(cd "$top" && git ls-files -co --exclude-standard \
	'kernel/*.[ch]' 'include/*.h' 'tests/kunit/*.[ch]')
cd "$top"
[ $# -gt 0 ] && files=("$@")
"$cache/scripts/checkpatch.pl" --strict --no-tree --terse --show-types \
	--ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG -f "${files[@]}"
