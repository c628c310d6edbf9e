# SPDX-License-Identifier: GPL-2.0
# Sourced by tests/tier_build.sh and tests/tier_compat.sh: srnic.ko for one
# kernel, kept in build/ko/ under a hash of the module's sources, so that the
# compat tier boots the module the build tier built and checked for that
# kernel instead of building it again (about a minute per kernel in CI).
# Run from the checkout's top directory. The kept files do not end in .ko:
# kbuild's own clean (make -C KDIR M=... clean, which make module-clean does
# not use) deletes every *.ko, *.ko.* and *.[aios] below the checkout,
# build/ included.

# src_hash PATH...: hash of the tracked files under PATH..., as they are in
# the working tree
src_hash() {
	git ls-files -z -- "$@" | LC_ALL=C sort -z | xargs -0 cat | sha256sum |
		cut -c1-16
}

# kocache_key: src_hash of what the module build reads
kocache_key() { src_hash Makefile Kbuild kernel include; }

# kocache_put KVER: keep ./srnic.ko, built for KVER
kocache_put() {
	mkdir -p build/ko && cp srnic.ko "build/ko/$1-$(kocache_key).srnic-module"
}

# kocache_get KVER: ./srnic.ko for KVER from build/ko/; fails if none is kept
# for these sources
kocache_get() {
	local f
	f=build/ko/$1-$(kocache_key).srnic-module
	[ -f "$f" ] || return 1
	make -s module-clean >/dev/null 2>&1
	cp "$f" srnic.ko
}
