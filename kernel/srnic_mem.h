/* SPDX-License-Identifier: GPL-2.0 */
/*
 * srnic memory objects: the layer beneath memory regions (srnic_mr.c) and
 * memory windows (srnic_mw.c). It owns what the two share: the key space,
 * the state a key names, lookup by key and kind, references, invalidation
 * and the binding of a window to a region. MR and MW sit on top of it and
 * never call each other.
 *
 * Keys
 * ----
 * lkey == rkey == index << 8 | key byte. The index comes from the device's
 * xarray (srnic_dev.mr_keys), shared by MRs and MWs so that a key names
 * exactly one object. The key byte starts random and then is what the
 * consumer asks for: IB_WR_REG_MR's key (ib_update_fast_reg_key()) and the
 * new rkey of a bind.
 *
 * Lifetimes and locking
 * ---------------------
 * The data path takes no lock: it finds the object under RCU and reads a
 * consistent snapshot of its key, state, PD, access, range and binding
 * through srnic_mem.seq. An object is pinned with a kref
 * (kref_get_unless_zero()); destruction marks it INVALID, removes its index,
 * drops the creator's reference and waits for the data-path users, which
 * are bounded in time (srnic_mem_del()). Objects are freed after an RCU
 * grace period, so a lookup racing with the free only sees a zero count.
 *
 * Binding
 * -------
 * A bound window (kind MW) names a range of a region (kind MR): @target,
 * a reference counted in the region's @nbound. A remote access through the
 * window's rkey is checked against the window and resolves to the region
 * (srnic_mem_get_rkey()); the window itself is read under RCU only. A
 * region with bound windows cannot be deregistered or invalidated. Only a
 * VALID object is bound: leaving VALID drops the binding.
 *
 * Lock order: a window's srnic_mem.lock, then its region's.
 */
#ifndef SRNIC_MEM_H
#define SRNIC_MEM_H

#include <linux/completion.h>
#include <linux/kref.h>
#include <linux/rcupdate.h>
#include <linux/seqlock.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

struct srnic_dev;

#define SRNIC_KEY_INDEX_SHIFT	8
#define SRNIC_KEY_BYTE_MASK	0xffU
/* Indices 1..max: MRs and MWs together; must fit the 24 index bits. */
#define SRNIC_KEY_INDEX_MAX	(SRNIC_MAX_MR + SRNIC_MAX_MW)
/* srnic_mem.qpn of an object any QP of its PD may use (QPNs have 24 bits) */
#define SRNIC_MEM_ANY_QPN	U32_MAX

enum srnic_mem_state {
	SRNIC_MEM_INVALID,	/* being destroyed: no access, no transition */
	SRNIC_MEM_FREE,		/* fast-reg MR / type 2 MW not registered */
	SRNIC_MEM_VALID,	/* usable with its key */
};

enum srnic_mem_kind {
	SRNIC_MEM_MR,
	SRNIC_MEM_MW,
};

/**
 * struct srnic_mem - what a key names: the part of an MR or MW that the
 *	data path checks, without locks
 * @lock: serialises every change of this object (and of @nbound); taken
 *	with BHs off
 * @seq: write side of @key, @state, @access, @iova, @length, @target and
 *	@qpn, so readers get a consistent snapshot
 * @key: current lkey == rkey
 * @state: enum srnic_mem_state
 * @access: IB_ACCESS_* rights
 * @iova: first byte
 * @length: bytes; @iova + @length never overflows
 * @target: MW: the MR it is bound to (a reference, counted in the MR's
 *	@nbound), or NULL; MR: NULL
 * @qpn: the QP a type 2 window is bound to; SRNIC_MEM_ANY_QPN otherwise
 * @nbound: MR: windows bound to it; protected by @lock
 * @pd: the protection domain; immutable
 * @index: the xarray index, @key >> 8; immutable
 * @kind: MR or MW; immutable
 * @wr_invalidate: a work request may invalidate it (fast-reg MR, type 2
 *	MW); immutable
 * @ref: the creator's reference plus one per data-path user and (MR) per
 *	bound window
 * @released: completed when @ref drops to zero
 * @rcu: frees the container after a grace period
 */
struct srnic_mem {
	spinlock_t		lock;	/* serialises writers; BH-safe */
	seqcount_spinlock_t	seq;	/* lets readers snapshot the fields */
	u32			key;
	enum srnic_mem_state	state;
	int			access;
	u64			iova;
	u64			length;
	struct srnic_mem	*target;
	u32			qpn;
	unsigned int		nbound;
	struct ib_pd		*pd;
	u32			index;
	enum srnic_mem_kind	kind;
	bool			wr_invalidate;
	struct kref		ref;
	struct completion	released;
	struct rcu_head		rcu;
};

/*
 * Creation and destruction (process context). srnic_mem_init() prepares a
 * new object, unreachable until srnic_mem_add() gives it a key;
 * srnic_mem_del() takes the key away again and returns once no data-path
 * user holds the object. The container is then freed with kfree_rcu() on
 * @rcu.
 */
void srnic_mem_init(struct srnic_mem *mem, enum srnic_mem_kind kind,
		    struct ib_pd *pd, enum srnic_mem_state state,
		    bool wr_invalidate);
int srnic_mem_add(struct srnic_dev *sdev, struct srnic_mem *mem);
void srnic_mem_del(struct srnic_dev *sdev, struct srnic_mem *mem);

/**
 * srnic_mem_replace() - let a new MR take over a VALID MR's index and key
 * @sdev: the device
 * @old: the MR, its lock held; left INVALID, for srnic_mem_del()
 * @mem: the new MR, initialised and VALID but not added
 *
 * Reregistration: the consumer keeps using its keys and finds the new MR
 * behind them; an access that already holds @old ends on @old, whose pages
 * stay until srnic_mem_del() has waited for it. From here two objects carry
 * the key, but only @mem is in the key space and @old is INVALID.
 *
 * Return: 0, or -EBUSY (windows are bound to @old) with nothing changed.
 */
int srnic_mem_replace(struct srnic_dev *sdev, struct srnic_mem *old,
		      struct srnic_mem *mem);

/**
 * srnic_mem_set_state() - make an object FREE or INVALID
 * @mem: the object, its lock held
 * @state: SRNIC_MEM_FREE or SRNIC_MEM_INVALID
 *
 * A bound window lets go of its region (see "Binding").
 */
void srnic_mem_set_state(struct srnic_mem *mem, enum srnic_mem_state state);

/**
 * srnic_mem_bind() - make a window VALID with a new key and binding
 * @mem: the window, its lock held
 * @key: its new key
 * @target: the region, referenced and already counted in its @nbound (the
 *	reference passes to the window), or NULL for an unbound window
 * @qpn: the QP to bind to, or SRNIC_MEM_ANY_QPN
 * @iova: first byte of the window
 * @length: bytes
 * @access: IB_ACCESS_REMOTE_* rights
 *
 * The region the window was bound to before is let go.
 */
void srnic_mem_bind(struct srnic_mem *mem, u32 key, struct srnic_mem *target,
		    u32 qpn, u64 iova, u64 length, int access);

/**
 * srnic_mem_hold_target() - count one more window on a region
 * @target: the region (referenced by the caller)
 * @pd: the window's PD
 * @lkey: the region's key, as the bind names it
 * @iova: first byte of the window
 * @len: bytes
 * @access: rights the region must have (IB_ACCESS_MW_BIND and what the
 *	window's rights need)
 *
 * Context: the window's lock held (BHs off); takes the region's.
 * Return: 0 with @target's @nbound one higher, or -EINVAL (key, state, PD,
 * rights or range).
 */
int srnic_mem_hold_target(struct srnic_mem *target, const struct ib_pd *pd,
			  u32 lkey, u64 iova, u64 len, int access);

/*
 * Lookups. Any context up to softirq; no lock is taken.
 *
 * Zero-length accesses: IBA lets an SGE or RDMA operation of length 0 carry
 * any key, valid or not. srnic_mem_get_lkey()/srnic_mem_get_rkey() with
 * @len == 0 therefore check nothing and return NULL ("no memory needed");
 * callers may as well skip the lookup. srnic_mem_put(NULL) does nothing.
 */

/**
 * srnic_mem_get() - the object of @kind whose index @key names, unchecked
 * @sdev: the device
 * @key: the key (only its index is used)
 * @kind: what it must be
 *
 * Return: the object with a reference (release with srnic_mem_put()), or
 * NULL (no such object, another kind, being freed).
 */
struct srnic_mem *srnic_mem_get(struct srnic_dev *sdev, u32 key,
				enum srnic_mem_kind kind);

/**
 * srnic_mem_get_lkey() - look an MR up by lkey for a local access (SGE)
 * @sdev: the device
 * @pd: the PD of the QP
 * @lkey: the key
 * @iova: first byte accessed
 * @len: bytes accessed (0: see above)
 * @access: IB_ACCESS_LOCAL_WRITE to write into the MR, 0 to read from it
 *
 * Return: the MR's srnic_mem with a reference (release with
 * srnic_mem_put()), NULL if @len is 0, or ERR_PTR: -EINVAL (no MR with this
 * key, not VALID, other PD), -EACCES (access not granted), -ERANGE (outside
 * the MR).
 */
struct srnic_mem *srnic_mem_get_lkey(struct srnic_dev *sdev, struct ib_pd *pd,
				     u32 lkey, u64 iova, u64 len, int access);

/**
 * srnic_mem_get_rkey() - look up the MR behind an rkey for a remote access
 * @sdev: the device
 * @pd: the PD of the QP
 * @qpn: the QP number (a type 2 window must be bound to it)
 * @rkey: the key: an MR's, or a bound window's
 * @iova: first byte accessed (an MR iova: zero-based windows are refused)
 * @len: bytes accessed (0: see above)
 * @access: IB_ACCESS_REMOTE_READ, _WRITE or _ATOMIC
 *
 * Through a window, @access and the range are checked against the window
 * (PD for both types, QP for type 2); the MR it is bound to is returned.
 *
 * Return: as srnic_mem_get_lkey().
 */
struct srnic_mem *srnic_mem_get_rkey(struct srnic_dev *sdev, struct ib_pd *pd,
				     u32 qpn, u32 rkey, u64 iova, u64 len,
				     int access);

/**
 * srnic_mem_put() - release an object from a srnic_mem_get*() lookup
 * @mem: the object, or NULL
 */
void srnic_mem_put(struct srnic_mem *mem);

/**
 * srnic_mem_invalidate() - local invalidate or send-with-invalidate
 * @sdev: the device
 * @pd: the QP's PD, which must be the object's
 * @key: the exact current key of a fast-reg MR without bound windows or of
 *	a type 2 window; a FREE one stays FREE (not an error)
 *
 * Return: 0, or -EINVAL (with the object unchanged) when IBA's rules
 * refuse it.
 */
int srnic_mem_invalidate(struct srnic_dev *sdev, struct ib_pd *pd, u32 key);

/* Per-device state: srnic_dev_add() and srnic_dealloc_driver(). */
void srnic_mem_dev_init(struct srnic_dev *sdev);
void srnic_mem_dev_fini(struct srnic_dev *sdev);

#endif /* SRNIC_MEM_H */
