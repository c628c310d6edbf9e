#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Style tier: checkpatch --strict per kernel source file, function length
# (tools/funclen.sh), sparse over the module, and the kernel files' import
# graph (tools/imports.sh). Prints one PASS/FAIL line per check and
# "N passed, N failed".
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
pass=0
fail=0
ok() { echo "PASS: $1"; pass=$((pass + 1)); }
ko() { echo "FAIL: $1"; fail=$((fail + 1)); }

mapfile -t files < <(git ls-files -co --exclude-standard \
	'kernel/*.[ch]' 'include/*.h' 'tests/kunit/*.[ch]')
for f in "${files[@]}"; do
	if out=$(tools/lint.sh "$f" 2>&1); then
		ok "checkpatch --strict $f"
	else
		echo "$out"
		ko "checkpatch --strict $f"
	fi
done

# No kernel function longer than 80 lines (issue 12).
if out=$(tools/funclen.sh 2>&1); then
	ok "no kernel function over 80 lines (tools/funclen.sh)"
else
	echo "$out"
	ko "no kernel function over 80 lines (tools/funclen.sh)"
fi

# sparse: force a full re-check so that warnings are never hidden by make.
out=$(make -s module-clean >/dev/null 2>&1; make -s check 2>&1)
if grep -E 'warning:|error:' <<<"$out"; then
	ko "sparse (make check) is clean"
else
	ok "sparse (make check) is clean"
fi

# One-way imports between kernel files, from the objects sparse just built.
if out=$(tools/imports.sh 2>&1); then
	ok "kernel imports one way (tools/imports.sh)"
else
	echo "$out"
	ko "kernel imports one way (tools/imports.sh)"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
