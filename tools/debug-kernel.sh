#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# debug-kernel.sh: a 6.1 debug kernel for the data-path VM tests
# (tests/tier_debug.sh), built once from Debian's linux-source-6.1 and cached
# by the hash of its recipe.
#
#   tools/debug-kernel.sh build   build it unless cached; print its directory
#   tools/debug-kernel.sh dir     print the cached directory, or fail (exit 1)
#                                 with one line saying how to build it
#   tools/debug-kernel.sh hash    print the recipe hash
#
# The recipe: Debian's own 6.1 config (/boot/config-6.1.*-amd64, else the
# linux-headers' .config), trimmed by `make localmodconfig` to the modules
# the guests load (MODULES below, with their dependencies as the stock
# kernel's modprobe resolves them), built-ins a guest never uses switched off
# (TRIM: LSMs, Xen, EFI, netfilter, framebuffer, ...), then DEBUG: KASAN
# (generic, outline: quicker to build than inline, vmalloc), KFENCE, UBSAN, lockdep (PROVE_LOCKING, PROVE_RCU),
# DEBUG_ATOMIC_SLEEP, DEBUG_LIST, DEBUG_OBJECTS (timers, work, RCU heads),
# kmemleak (no automatic scan: the tests scan when they end), soft/hard lockup,
# hung-task and workqueue-stall detectors that panic. No DEBUG_INFO, no BTF
# (the data-path tests need neither; test_observe's bpftrace does, and is
# not run on this kernel), no module signing. Release: 6.1.N-srnic-debug.
#
# The cache, $SRNIC_DEBUGK/HASH/ (default /var/tmp/srnic-debugk):
#   linux/          the configured, built tree: `make KDIR=.../linux`
#                   builds srnic.ko for this kernel
#   root/boot/vmlinuz-KVER, root/lib/modules/KVER/
#                   what tests/vm/vmrun boots (VMRUN_KERNEL_DIR=.../root
#                   VMRUN_PVH=0: through PVH this kernel exits silently)
#   build.log       the build's output; configured: the tree is configured
#                   (an interrupted build resumes from there); ready:
#                   written last (KVER)
# HASH covers this recipe, the base config, the linux-source-6.1 and gcc
# versions: any change builds a new kernel next to the old one.
#
# The build runs at nice 19 with $JOBS jobs (default: the CPU count);
# ~35-50 min on 2 busy cores. Needs: linux-source-6.1, flex, bison, bc,
# libelf-dev, libssl-dev (tools/setup.sh).
set -euo pipefail
export LC_ALL=C

readonly PROG=debug-kernel.sh
readonly ROOT=${SRNIC_DEBUGK:-/var/tmp/srnic-debugk}
readonly TARBALL=/usr/src/linux-source-6.1.tar.xz
readonly LOCALVERSION=-srnic-debug
# Bump when the build steps change in a way the hash cannot see.
readonly RECIPE_VERSION=1

die() { echo "$PROG: $*" >&2; exit 1; }
msg() { echo "$PROG: $*" >&2; }

# What the guests load: vmrun's initramfs and NIC, the tests' modprobes
# (tests/vm/*.sh), and a few links tests may add. Dependencies are added.
readonly MODULES=(
	virtio_pci virtio_net 9pnet_virtio 9p overlay
	veth dummy tun bridge vxlan macvlan 8021q bonding loop
	ib_core ib_uverbs ib_umad rdma_ucm rdma_cm iw_cm ib_cm rdma_rxe
	udp_tunnel ip6_udp_tunnel
	sch_netem sch_htb sch_red sch_tbf sch_prio
	nvme_rdma nvmet_rdma nvmet nvme_fabrics nvme_core configfs
)

# Built-in parts of Debian's config a TCG guest on 9p never uses: off, to
# save build time (not checked: what else selects them keeps them).
readonly TRIM=(
	-d SECURITY_SELINUX -d SECURITY_APPARMOR -d SECURITY_TOMOYO
	-d IMA -d EVM -d INTEGRITY -d AUDIT -d XEN -d EFI -d NETFILTER
	-d VT -d FB -d WIRELESS -d WLAN -d ETHERNET -d CPU_FREQ -d HWMON
	-d HIBERNATION -d SUSPEND -d MD -d I2C -d SPI -d PINCTRL -d GPIOLIB
	-d WATCHDOG -d X86_SGX -d MICROCODE -d INTEL_IOMMU -d AMD_IOMMU
	-d PCI_IOV -d ZSWAP -d RAS -d EDAC -d DMADEVICES -d AGP -d X86_MCE
	-d KEXEC -d KEXEC_FILE -d CRASH_DUMP -d THERMAL
)

# scripts/config arguments applied after localmodconfig and TRIM; each
# -e/-d/--set-* is checked in the final .config.
readonly DEBUG=(
	--set-str LOCALVERSION "$LOCALVERSION" -d LOCALVERSION_AUTO
	-d DEBUG_INFO -d DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT -e DEBUG_INFO_NONE
	-d DEBUG_INFO_BTF -d DEBUG_INFO_BTF_MODULES
	-d SECURITY_LOCKDOWN_LSM -d SECURITY_LOCKDOWN_LSM_EARLY
	-d MODULE_SIG -d MODULE_SIG_ALL --set-str SYSTEM_TRUSTED_KEYS ""
	-e KASAN -e KASAN_GENERIC -e KASAN_OUTLINE -e KASAN_VMALLOC
	-e KFENCE --set-val KFENCE_SAMPLE_INTERVAL 100
	-e UBSAN -e UBSAN_BOUNDS -e UBSAN_SHIFT -e UBSAN_DIV_ZERO -e UBSAN_BOOL
	-e UBSAN_ENUM -e UBSAN_SANITIZE_ALL -d UBSAN_TRAP -d UBSAN_ALIGNMENT
	-e PROVE_LOCKING -e PROVE_RCU -e DEBUG_ATOMIC_SLEEP -e DEBUG_LIST
	-e DEBUG_OBJECTS -e DEBUG_OBJECTS_TIMERS -e DEBUG_OBJECTS_WORK
	-e DEBUG_OBJECTS_RCU_HEAD
	-e DEBUG_KMEMLEAK --set-val DEBUG_KMEMLEAK_MEM_POOL_SIZE 16000
	-d DEBUG_KMEMLEAK_DEFAULT_OFF -d DEBUG_KMEMLEAK_AUTO_SCAN
	-e SOFTLOCKUP_DETECTOR -e BOOTPARAM_SOFTLOCKUP_PANIC
	-e HARDLOCKUP_DETECTOR -e BOOTPARAM_HARDLOCKUP_PANIC
	-e DETECT_HUNG_TASK -e BOOTPARAM_HUNG_TASK_PANIC
	--set-val DEFAULT_HUNG_TASK_TIMEOUT 120
	-e WQ_WATCHDOG
)

base_config() {
	local c
	c=$(for c in /boot/config-6.1.*-amd64; do [ -f "$c" ] && echo "$c"; done | sort -V | tail -n1)
	[ -n "$c" ] || c=$(for c in /usr/src/linux-headers-6.1.*-amd64/.config; do
		[ -f "$c" ] && echo "$c"
	done | sort -V | tail -n1)
	[ -n "$c" ] || die "no Debian 6.1 config (/boot/config-6.1.*-amd64 or linux-headers-6.1.*-amd64): tools/setup.sh"
	echo "$c"
}

recipe_hash() {
	local c
	c=$(base_config)
	[ -f "$TARBALL" ] || die "$TARBALL missing: apt-get install linux-source-6.1 (tools/setup.sh)"
	{
		echo "$RECIPE_VERSION"
		printf '%s\n' "${MODULES[@]}" "${TRIM[@]}" "${DEBUG[@]}"
		cat "$c"
		dpkg-query -W -f='${Version}\n' linux-source-6.1 2>/dev/null || stat -c %s "$TARBALL"
		gcc --version | head -n1
	} | sha256sum | cut -c1-16
}

cached_dir() {
	local d
	d=$ROOT/$(recipe_hash)
	[ -f "$d/ready" ] && echo "$d"
	return 0
}

# lsmod-style list of MODULES and their dependencies, for localmodconfig
lsmod_file() {
	local kver m line n
	kver=$(basename "$(base_config)")
	kver=${kver#config-}
	echo "Module Size Used by"
	for m in "${MODULES[@]}"; do
		echo "$m 0 0"
		[ -d "/lib/modules/$kver" ] || continue
		modprobe -S "$kver" --show-depends "$m" 2>/dev/null | while read -r line; do
			case $line in insmod\ *) ;; *) continue ;; esac
			n=${line#insmod }
			n=${n%% *}
			n=${n##*/}
			n=${n%%.ko*}
			echo "${n//-/_} 0 0"
		done
	done | sort -u
}

# check_config: every option DEBUG asks for is in .config as asked
check_config() {
	local i=0 opt want have bad=0
	while [ $i -lt ${#DEBUG[@]} ]; do
		case ${DEBUG[$i]} in
		-e) opt=${DEBUG[$((i + 1))]}; want=y; i=$((i + 2)) ;;
		-d) opt=${DEBUG[$((i + 1))]}; want=n; i=$((i + 2)) ;;
		--set-str) opt=${DEBUG[$((i + 1))]}; want="\"${DEBUG[$((i + 2))]}\""; i=$((i + 3)) ;;
		--set-val) opt=${DEBUG[$((i + 1))]}; want=${DEBUG[$((i + 2))]}; i=$((i + 3)) ;;
		*) die "bad DEBUG entry ${DEBUG[$i]}" ;;
		esac
		have=$(sed -n "s/^CONFIG_$opt=\(.*\)\$/\1/p" .config)
		[ -n "$have" ] || have=n
		if [ "$have" != "$want" ]; then
			msg "CONFIG_$opt is $have, wanted $want"
			bad=1
		fi
	done
	[ $bad = 0 ] || die "the debug options did not all stick (see above)"
}

build() {
	local hash d kver t0 jobs
	hash=$(recipe_hash)
	d=$ROOT/$hash
	mkdir -p "$ROOT"
	exec 8>"$ROOT/.lock-$hash"
	flock -n 8 || { msg "another build of $hash is running; waiting"; flock 8; }
	if [ -f "$d/ready" ]; then
		echo "$d"
		return
	fi
	jobs=${JOBS:-$(nproc)}
	t0=$SECONDS
	# an interrupted build resumes once its tree is configured
	if [ ! -f "$d/configured" ]; then
		rm -rf "$d"
		mkdir -p "$d"
	fi
	msg "building in $d (nice 19, $jobs jobs; log: $d/build.log)"
	(
		set -euo pipefail
		cd "$d"
		if [ ! -f configured ]; then
			tar -xf "$TARBALL"
			mv linux-source-6.1 linux
			cd linux
			cp "$(base_config)" .config
			make olddefconfig
			lsmod_file >"$d/lsmod"
			yes '' | make LSMOD="$d/lsmod" localmodconfig
			scripts/config "${TRIM[@]}" "${DEBUG[@]}"
			make olddefconfig
			check_config
			touch "$d/configured"
		fi
		cd "$d/linux"
		nice -n 19 make -j"$jobs" bzImage modules
		kver=$(make -s kernelrelease)
		nice -n 19 make INSTALL_MOD_PATH="$d/root" modules_install
		mkdir -p "$d/root/boot"
		cp arch/x86/boot/bzImage "$d/root/boot/vmlinuz-$kver"
		cp .config "$d/root/boot/config-$kver"
		ln -sfn "$d/linux" "$d/root/lib/modules/$kver/build"
		rm -f "$d/root/lib/modules/$kver/source"
	) >>"$d/build.log" 2>&1 || die "build failed: tail $d/build.log"
	kver=$(make -s -C "$d/linux" kernelrelease)
	echo "$kver" >"$d/ready"
	msg "built $kver in $(( (SECONDS - t0) / 60 )) min $(( (SECONDS - t0) % 60 )) s"
	echo "$d"
}

case ${1:-} in
build) build ;;
dir)
	d=$(cached_dir)
	[ -n "$d" ] || die "no cached debug kernel for recipe $(recipe_hash) in $ROOT (build with tools/debug-kernel.sh build)"
	echo "$d"
	;;
hash) recipe_hash ;;
*) sed -n '7,11p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
