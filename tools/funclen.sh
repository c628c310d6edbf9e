#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# List the kernel/*.c functions longer than a limit (default 80 lines) and
# exit 1 if there is any. A function runs from its opening "{" in column 0
# to its closing "}" in column 0, both lines counted (the signature is not);
# its name is the identifier before the first "(" of the last column-0 line
# before it. tests/tier_style.sh runs it.
# Usage: tools/funclen.sh [max-lines [file...]]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
max=${1:-80}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- "$top"/kernel/*.c
awk -v max="$max" '
FNR == 1 { name = "?"; open = 0 }
!open && /^[A-Za-z_].*\(/ {
	s = $0
	sub(/\(.*/, "", s)
	n = split(s, w, /[ \t*]+/)
	name = w[n]
}
/^\{/ { open = FNR; next }
open && /^\}/ {
	len = FNR - open + 1
	if (len > max) {
		f = FILENAME
		sub(/.*\//, "", f)
		printf "kernel/%s:%d: %s is %d lines (max %d)\n", f, open, name, len, max
		over++
	}
	open = 0
}
END { exit over ? 1 : 0 }
' "$@"
