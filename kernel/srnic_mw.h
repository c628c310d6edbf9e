/* SPDX-License-Identifier: GPL-2.0 */
/*
 * srnic memory windows (srnic_mw.c): memory objects of kind SRNIC_MEM_MW
 * (srnic_mem.h), bound to a range of a memory region by a work request.
 */
#ifndef SRNIC_MW_H
#define SRNIC_MW_H

#include <rdma/ib_verbs.h>

#include "srnic_mem.h"

/* Access rights a window may be bound with. */
#define SRNIC_MW_ACCESS		(IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_ATOMIC)

/**
 * struct srnic_win - the state of a memory window; what its key names
 * @mem: key, state, binding, bound range and access (see struct srnic_mem)
 * @type: IB_MW_TYPE_1 or IB_MW_TYPE_2; immutable
 *
 * Allocated apart from the ib_mw, which ib_core frees without waiting for
 * RCU readers; this is freed with kfree_rcu().
 */
struct srnic_win {
	struct srnic_mem	mem;
	enum ib_mw_type		type;
};

/**
 * struct srnic_mw - a memory window
 * @ibmw: the ib_core MW; must stay first
 * @win: its state
 */
struct srnic_mw {
	struct ib_mw		ibmw;
	struct srnic_win	*win;
};

static inline struct srnic_mw *to_srnic_mw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct srnic_mw, ibmw);
}

/**
 * srnic_mw_bind() - IB_WR_BIND_MW (type 2) or a type 1 bind, executed by
 *	the requester
 * @sdev: the device
 * @pd: the QP's PD, which must be the window's and the MR's
 * @qpn: the QP (a type 2 window gets bound to it)
 * @mw_rkey: the window's current rkey
 * @new_rkey: its rkey after the bind: same index, any key byte
 * @mr_lkey: the MR to bind to (ignored when @length is 0)
 * @addr: first byte of the window, an MR iova
 * @length: bytes; 0 unbinds a type 1 window
 * @access: IB_ACCESS_REMOTE_* (zero-based windows are not supported)
 *
 * Return: 0, or -EINVAL (with the window and the MR unchanged) when IBA's
 * rules refuse the bind.
 */
int srnic_mw_bind(struct srnic_dev *sdev, struct ib_pd *pd, u32 qpn,
		  u32 mw_rkey, u32 new_rkey, u32 mr_lkey, u64 addr, u64 length,
		  int access);

/* alloc_mw, dealloc_mw and the size of struct srnic_mw */
extern const struct ib_device_ops srnic_mw_ops;

#endif /* SRNIC_MW_H */
