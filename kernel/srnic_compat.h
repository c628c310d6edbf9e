/* SPDX-License-Identifier: GPL-2.0 */
/*
 * srnic_compat.h - kernel API differences between the kernels srnic builds
 * against: Linux 6.1 (Debian 12) up to the newest Debian kernel (7.3).
 *
 * Call sites use one spelling, the newest kernel's (timer_delete(),
 * timer_container_of(), hrtimer_setup(), ib_umem_get_va(),
 * <linux/unaligned.h>) where it maps onto older kernels, else a srnic_
 * helper defined here; ib_device_ops whose prototype changed are adapted in
 * srnic_compat.c. These two files are the only places with kernel-version
 * conditionals.
 *
 * The SRNIC_HAVE_* macros come from Kbuild, which greps the headers of the
 * kernel being built against: distributions (RHEL, Ubuntu HWE) backport such
 * changes, so a version number would lie. Version checks are used only where
 * they are exact (Kbuild refuses kernels older than 6.1 in one line).
 */
#ifndef SRNIC_COMPAT_H
#define SRNIC_COMPAT_H

#include <linux/hrtimer.h>
#include <linux/limits.h>
#include <linux/mm.h>
#include <linux/timer.h>
#include <linux/workqueue.h>
#include <net/udp_tunnel.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

/* 6.12: <asm/unaligned.h> became <linux/unaligned.h> */
#ifdef SRNIC_HAVE_LINUX_UNALIGNED_H
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/* 6.2 (and Debian's 6.1): timer_delete*(); 6.15 removed del_timer*() */
#ifndef SRNIC_HAVE_TIMER_DELETE
#define timer_delete(timer)		del_timer(timer)
#define timer_delete_sync(timer)	del_timer_sync(timer)
#endif

/* 6.16: from_timer() renamed timer_container_of() */
#ifndef SRNIC_HAVE_TIMER_CONTAINER_OF
#define timer_container_of(var, timer, field)	from_timer(var, timer, field)
#endif

/*
 * 6.17: WQ_PERCPU says a workqueue is bound to CPUs; later kernels warn at
 * alloc_workqueue() when neither it nor WQ_UNBOUND is given. Before, bound
 * was the default.
 */
#ifdef SRNIC_HAVE_WQ_PERCPU
#define SRNIC_WQ_PERCPU		WQ_PERCPU
#else
#define SRNIC_WQ_PERCPU		0
#endif

/*
 * 6.17: system_dfl_wq is the unbound system workqueue; system_unbound_wq,
 * its old name, is deprecated, and later kernels log a warning for work
 * queued on it.
 */
#ifndef SRNIC_HAVE_SYSTEM_DFL_WQ
#define system_dfl_wq		system_unbound_wq
#endif

/* 6.13: hrtimer_setup() sets the callback too; 6.15 removed hrtimer_init() */
#ifndef SRNIC_HAVE_HRTIMER_SETUP
static inline void
hrtimer_setup(struct hrtimer *timer,
	      enum hrtimer_restart (*function)(struct hrtimer *),
	      clockid_t clock_id, enum hrtimer_mode mode)
{
	hrtimer_init(timer, clock_id, mode);
	timer->function = function;
}
#endif

/* 7.x: ib_umem_get() became ib_umem_get_va() (same arguments) */
#ifndef SRNIC_HAVE_IB_UMEM_GET_VA
#define ib_umem_get_va(device, addr, size, access)	\
	ib_umem_get(device, addr, size, access)
#endif

/*
 * 6.18 removed nth_page(): the memmap is virtually contiguous wherever such a
 * kernel runs, so the n-th page of a physically contiguous range is page + n.
 */
#ifndef SRNIC_HAVE_NTH_PAGE
#define nth_page(page, n)	((page) + (n))
#endif

/* 6.3: vma->vm_flags became read-only, set through vm_flags_set() */
#ifndef SRNIC_HAVE_VM_FLAGS_SET
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}
#endif

/*
 * Unmap the pages of a VMA that is not VM_PFNMAP (zap_vma_ptes() is for
 * those): zap_page_range() in 6.1, zap_page_range_single() from 6.3,
 * zap_vma_range() in 7.x.
 */
#ifndef SRNIC_HAVE_ZAP_VMA_RANGE
static inline void zap_vma_range(struct vm_area_struct *vma,
				 unsigned long address, unsigned long size)
{
#ifdef SRNIC_HAVE_ZAP_PAGE_RANGE
	zap_page_range(vma, address, size);
#else
	zap_page_range_single(vma, address, size, NULL);
#endif
}
#endif

/*
 * 7.x: setup_udp_tunnel_sock() and udp_tunnel_sock_release() take the
 * struct sock, not the struct socket udp_sock_create() returns.
 */
static inline void srnic_udp_tunnel_setup(struct net *net, struct socket *sock,
					  struct udp_tunnel_sock_cfg *cfg)
{
#ifdef SRNIC_HAVE_UDP_TUNNEL_SETUP_SK
	setup_udp_tunnel_sock(net, sock->sk, cfg);
#else
	setup_udp_tunnel_sock(net, sock, cfg);
#endif
}

static inline void srnic_udp_tunnel_release(struct socket *sock)
{
#ifdef SRNIC_HAVE_UDP_TUNNEL_RELEASE_SK
	udp_tunnel_sock_release(sock->sk);
#else
	udp_tunnel_sock_release(sock);
#endif
}

/*
 * 7.x removed ib_device_get_by_name(). srnic_ib_name_taken() tells whether an
 * RDMA device of any driver already has @name where the kernel can say so
 * before registering; everywhere ib_register_device() refuses a taken name
 * with -ENFILE.
 */
static inline bool srnic_ib_name_taken(const char *name)
{
#ifdef SRNIC_HAVE_IB_DEVICE_GET_BY_NAME
	/* RDMA_DRIVER_UNKNOWN matches a device of any driver. */
	struct ib_device *other = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);

	if (!other)
		return false;
	ib_device_put(other);
	return true;
#else
	return false;
#endif
}

/*
 * Verbs whose ib_device_ops prototype changed. srnic implements them with
 * one prototype each (srnic_create_cq(), srnic_resize_cq() in srnic_cq.c,
 * srnic_reg_user_mr() in srnic_mr.c) and srnic_compat.c adapts them in
 * srnic_compat_ops, the table srnic_dev.c merges with the others:
 *   6.11  create_cq takes the uverbs attribute bundle (the udata is in it;
 *         NULL for a kernel CQ)
 *   6.10  reg_user_mr_dmabuf takes the uverbs attribute bundle, not the udata
 *   6.17  reg_user_mr and reg_user_mr_dmabuf take a DMA handle (srnic offers
 *         none: no alloc_dmah)
 *   7.x   create_user_cq beside create_cq (srnic's create serves both);
 *         resize_cq became resize_user_cq (unsigned cqe)
 */
extern const struct ib_device_ops srnic_compat_ops;

#endif /* SRNIC_COMPAT_H */
