# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# nvme_lib.sh: NVMe over Fabrics on srnic, for the VM tests that run a
# kernel ULP (test_nvmeof.sh, test_teardown.sh). Source it after lib.sh.
#
#   root netns (nvme-rdma and nvmet-rdma only use init_net)
#   nvme-rdma host 10.99.0.2 vethB/srnic1 <== veth ==> vethA/srnic0 10.99.0.1 nvmet-rdma
#   target: subsystem $NVME_NQN, namespace 1 = the file $NVME_IMG (32 MiB,
#   buffered I/O), any host; port 1: RDMA on 10.99.0.1:4420
#
#   nvme_prologue HUNG_SECS   the kernel log cleared, hung-task timeout
#                             HUNG_SECS, sysrq on (wait_done's D-state
#                             dumps), srnic_load with veth, rdma_ucm, nvmet,
#                             nvmet-rdma and nvme-rdma; exits the script if
#                             a module does not load
#   nvmet_subsys_up           configfs mounted, $NVME_IMG made, the subsystem
#                             and its namespace enabled
#   nvmet_port_up             port 1 made and linked to the subsystem
#   nvmet_port_down           port 1 unlinked and removed (if it exists)
#   nvmet_down                port, namespace and subsystem removed
#   nvme_host_up [OPTS]       connect the host through /dev/nvme-fabrics
#                             (",OPTS" appended to the connect string); CTRL
#                             = the controller (nvmeN), NDEV = its namespace
#                             block device; fails if the connect does not
#                             return within 60 s or no block device appears
#                             within 20 s
#   nvme_ns_dev CTRL          the namespace block device of controller CTRL

NVME_NQN=${NVME_NQN:-srnic-nvme}
NVME_IMG=${NVME_IMG:-/tmp/nvme-ns.img}
NVMET_CFS=/sys/kernel/config/nvmet

nvme_prologue() {
	dmesg -C
	echo "$1" >/proc/sys/kernel/hung_task_timeout_secs
	echo 1 >/proc/sys/kernel/sysrq
	srnic_load veth rdma_ucm nvmet nvmet-rdma nvme-rdma || exit 1
}

nvmet_subsys_up() {
	local s=$NVMET_CFS/subsystems/$NVME_NQN
	{ mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config; } &&
		truncate -s 32M "$NVME_IMG" &&
		mkdir "$s" &&
		echo 1 >"$s/attr_allow_any_host" &&
		mkdir "$s/namespaces/1" &&
		echo "$NVME_IMG" >"$s/namespaces/1/device_path" &&
		echo 1 >"$s/namespaces/1/buffered_io" &&
		echo 1 >"$s/namespaces/1/enable"
}

nvmet_port_up() {
	local p=$NVMET_CFS/ports/1
	mkdir "$p" &&
		echo rdma >"$p/addr_trtype" &&
		echo ipv4 >"$p/addr_adrfam" &&
		echo 10.99.0.1 >"$p/addr_traddr" &&
		echo 4420 >"$p/addr_trsvcid" &&
		ln -s "$NVMET_CFS/subsystems/$NVME_NQN" "$p/subsystems/$NVME_NQN"
}

nvmet_port_down() {
	[ -e "$NVMET_CFS/ports/1" ] || return 0
	rm -f "$NVMET_CFS/ports/1/subsystems/$NVME_NQN" &&
		rmdir "$NVMET_CFS/ports/1"
}

nvmet_down() {
	local s=$NVMET_CFS/subsystems/$NVME_NQN
	nvmet_port_down &&
		echo 0 >"$s/namespaces/1/enable" &&
		rmdir "$s/namespaces/1" &&
		rmdir "$s"
}

# _nvme_connect OPTS: one connect; "instance=N,cntlid=M" into /tmp/nvme-ctrl
_nvme_connect() {
	local line
	exec 3<>/dev/nvme-fabrics || return 1
	echo "transport=rdma,traddr=10.99.0.1,trsvcid=4420,host_traddr=10.99.0.2,nqn=$NVME_NQN${1:+,$1}" >&3 ||
		return 1
	read -r line <&3 || return 1
	exec 3>&-
	echo "$line" >/tmp/nvme-ctrl
}

# With native multipath (Debian's kernels) the block device is named after
# the NVMe subsystem's instance, not the controller's: /dev/nvme1n1 for
# controller nvme0 while an earlier subsystem, its controller just deleted,
# still holds instance 0.
nvme_ns_dev() {
	local d b
	# the subsystem that links CTRL (multipath), or CTRL's own directory
	for d in /sys/class/nvme-subsystem/nvme-subsys* "/sys/class/nvme/$1"; do
		[ -e "$d/$1" ] || [ "$d" = "/sys/class/nvme/$1" ] || continue
		for b in "$d"/nvme*n*; do
			b=${b##*/}
			[[ $b =~ ^nvme[0-9]+n[0-9]+$ ]] && [ -b "/dev/$b" ] &&
				{ echo "/dev/$b"; return 0; }
		done
	done
	return 1
}

nvme_host_up() {
	local inst
	rm -f /tmp/nvme-ctrl
	_nvme_connect "${1:-}" &
	wait_done 60 $! || return 1
	inst=$(sed -n 's/^instance=\([0-9]*\),.*/\1/p' /tmp/nvme-ctrl)
	[ -n "$inst" ] || return 1
	CTRL=nvme$inst
	# the namespace scan takes seconds on a busy host
	# shellcheck disable=SC2034 # for the caller
	NDEV=$(settle -t 20 nvme_ns_dev "$CTRL") && return 0
	echo "no namespace block device for $CTRL"
	ls /dev/nvme* /sys/class/nvme-subsystem/*/ 2>&1 | sed 's/^/  | /'
	echo 1 >"/sys/class/nvme/$CTRL/delete_controller"
	return 1
}
