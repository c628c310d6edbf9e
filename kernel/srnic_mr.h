/* SPDX-License-Identifier: GPL-2.0 */
/*
 * srnic memory registration: memory regions (MRs) translated through
 * srnic's own memory translation table (MTT), memory windows (MWs), and the
 * key space they share.
 *
 * MTT
 * ---
 * A user or fast-register MR maps [iova, iova + length) onto an array of
 * blocks of 2^page_shift bytes (page_shift >= PAGE_SHIFT), each physically
 * contiguous. The table stores the struct page of the first page of each
 * block; @offset is where iova falls in block 0. Translation is O(1):
 *
 *	off  = iova - mr_iova + offset
 *	page = nth_page(blocks[off >> page_shift], (off & block_mask) >> PAGE_SHIFT)
 *
 * User MRs take the largest block size the pinned pages allow
 * (ib_umem_find_best_pgsz()), so a 2 MiB huge page is one entry. The index
 * is relative to the MR's start, so the iova itself needs no alignment.
 * Fast-register MRs use the ULP's page size (ib_map_mr_sg()). A DMA MR
 * (get_dma_mr) has no table: its iova is a kernel virtual address (srnic
 * registers with a NULL dma_device, so ib_dma_* addresses are kernel VAs).
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
 * consistent snapshot of its key, state, PD, access and range through
 * srnic_mem.seq. An MR is pinned with a kref (kref_get_unless_zero());
 * deregistration marks it INVALID, removes its index, drops the
 * registration's reference and waits for the data-path users, which are
 * bounded in time, before it unpins and frees the pages. MR memory is freed
 * after an RCU grace period, so a lookup racing with the free only sees a
 * zero count. An MW needs no count: its state lives in a separately
 * allocated struct srnic_win freed after a grace period, and a lookup only
 * turns it into a referenced MR. A bound MW holds a reference on its MR and
 * counts in srnic_mr.num_mw; an MR with bound windows cannot be
 * deregistered or invalidated.
 *
 * Lock order: srnic_win.mem.lock, then srnic_mr.mem.lock.
 */
#ifndef SRNIC_MR_H
#define SRNIC_MR_H

#include <linux/completion.h>
#include <linux/kref.h>
#include <linux/rcupdate.h>
#include <linux/seqlock.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

struct srnic_dev;
struct ib_umem;

#define SRNIC_KEY_INDEX_SHIFT	8
#define SRNIC_KEY_BYTE_MASK	0xffU
/* Indices 1..max: MRs and MWs together; must fit the 24 index bits. */
#define SRNIC_KEY_INDEX_MAX	(SRNIC_MAX_MR + SRNIC_MAX_MW)

/* Access rights an MR may carry (besides the ignored optional/hint bits). */
#define SRNIC_MR_ACCESS		(IB_ACCESS_LOCAL_WRITE | \
				 IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_ATOMIC | \
				 IB_ACCESS_MW_BIND)
/* Access rights a window may be bound with. */
#define SRNIC_MW_ACCESS		(IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_ATOMIC)
/* Block sizes of user MRs: every power of two from a page to 1 GiB. */
#define SRNIC_MR_PGSZ_BITMAP	GENMASK(30, PAGE_SHIFT)

enum srnic_mem_state {
	SRNIC_MEM_INVALID,	/* being destroyed: no access, no transition */
	SRNIC_MEM_FREE,		/* fast-reg MR / type 2 MW not registered */
	SRNIC_MEM_VALID,	/* usable with its key */
};

enum srnic_mem_kind {
	SRNIC_MEM_MR,
	SRNIC_MEM_MW,
};

enum srnic_mr_type {
	SRNIC_MR_DMA,		/* get_dma_mr: iova is a kernel VA */
	SRNIC_MR_USER,		/* reg_user_mr: pinned user pages */
	SRNIC_MR_FAST,		/* alloc_mr(IB_MR_TYPE_MEM_REG) */
};

/**
 * struct srnic_mem - what a key names: the part of an MR or MW that the
 *	data path checks, without locks
 * @lock: serialises every change of this object (and of the owner's binding
 *	state: srnic_mr.num_mw, srnic_win.mr/qpn); taken with BHs off
 * @seq: write side of @key, @state, @access, @iova, @length (and of
 *	srnic_win.mr/qpn), so readers get a consistent snapshot
 * @key: current lkey == rkey
 * @state: enum srnic_mem_state
 * @access: IB_ACCESS_* rights
 * @iova: first byte
 * @length: bytes; @iova + @length never overflows
 * @pd: the protection domain; immutable
 * @index: the xarray index, @key >> 8; immutable
 * @kind: MR or MW; immutable
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
	struct ib_pd		*pd;
	u32			index;
	enum srnic_mem_kind	kind;
	struct rcu_head		rcu;
};

/**
 * struct srnic_mr - a memory region
 * @ibmr: the ib_core MR; must stay first
 * @mem: key, state, range and access (see struct srnic_mem)
 * @ref: the registration's reference plus one per data-path user and per
 *	bound window
 * @released: completed when @ref drops to zero
 * @sdev: the device
 * @type: enum srnic_mr_type; immutable
 * @page_shift: log2 of the block size
 * @offset: byte offset of @mem.iova in block 0
 * @blocks: first page of each block (NULL for DMA MRs)
 * @nblocks: blocks in use
 * @max_blocks: entries of @blocks (and @fr_blocks); immutable
 * @fr_blocks: fast-reg staging table written by map_mr_sg; installed by
 *	srnic_mr_fast_reg(), so remapping never disturbs a valid mapping
 * @fr_nblocks: entries of @fr_blocks in use
 * @fr_page_shift: block size of @fr_blocks
 * @fr_offset: offset of the mapped iova in @fr_blocks[0]
 * @umem: pinned user memory (user MRs)
 * @num_mw: windows bound to this MR; protected by @mem.lock
 *
 * @page_shift, @offset, @blocks and @nblocks of a fast-reg MR change only in
 * srnic_mr_fast_reg(), which IBA allows only in the FREE state, i.e. when
 * the consumer guarantees no access is in flight. The translation checks its
 * index against @nblocks anyway, so a misbehaving consumer gets wrong data,
 * never an out-of-bounds access.
 */
struct srnic_mr {
	struct ib_mr		ibmr;
	struct srnic_mem	mem;
	struct kref		ref;
	struct completion	released;
	struct srnic_dev	*sdev;
	enum srnic_mr_type	type;
	unsigned int		page_shift;
	u64			offset;
	struct page		**blocks;
	u32			nblocks;
	u32			max_blocks;
	struct page		**fr_blocks;
	u32			fr_nblocks;
	unsigned int		fr_page_shift;
	u64			fr_offset;
	struct ib_umem		*umem;
	unsigned int		num_mw;
};

static inline struct srnic_mr *to_srnic_mr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct srnic_mr, ibmr);
}

/**
 * struct srnic_win - the state of a memory window; what its key names
 * @mem: key, state, bound range and access (see struct srnic_mem)
 * @mr: the bound MR (a reference, counted in its num_mw) or NULL; written
 *	under @mem.lock and @mem.seq
 * @qpn: type 2: the QP the window is bound to; like @mr
 * @type: IB_MW_TYPE_1 or IB_MW_TYPE_2; immutable
 *
 * Allocated apart from the ib_mw, which ib_core frees without waiting for
 * RCU readers; this is freed with kfree_rcu().
 */
struct srnic_win {
	struct srnic_mem	mem;
	struct srnic_mr		*mr;
	u32			qpn;
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

/*
 * Data-path API (transport engines). Any context up to softirq; no lock is
 * taken except by the work-request functions (a spinlock, BHs off).
 *
 * Zero-length accesses: IBA lets an SGE or RDMA operation of length 0 carry
 * any key, valid or not. srnic_mr_get_lkey()/srnic_mr_get_rkey() with
 * @len == 0 therefore check nothing and return NULL ("no MR needed");
 * callers may as well skip the lookup. Every function below accepts that
 * NULL together with a length of 0, and srnic_mr_put(NULL) does nothing.
 */

/**
 * srnic_mr_get_lkey() - look an MR up by lkey for a local access (SGE)
 * @sdev: the device
 * @pd: the PD of the QP
 * @lkey: the key
 * @iova: first byte accessed
 * @len: bytes accessed (0: see above)
 * @access: IB_ACCESS_LOCAL_WRITE to write into the MR, 0 to read from it
 *
 * Return: the MR with a reference (release with srnic_mr_put()), NULL if
 * @len is 0, or ERR_PTR: -EINVAL (no MR with this key, not VALID, other
 * PD), -EACCES (access not granted), -ERANGE (outside the MR).
 */
struct srnic_mr *srnic_mr_get_lkey(struct srnic_dev *sdev, struct ib_pd *pd,
				   u32 lkey, u64 iova, u64 len, int access);

/**
 * struct srnic_sge_cursor - a position in a scatter list
 * @sge: the list
 * @num: its entries
 * @i: current entry
 * @off: byte offset into entry @i
 */
struct srnic_sge_cursor {
	const struct ib_sge	*sge;
	u32			num;
	u32			i;
	u32			off;
};

/**
 * srnic_sge_cursor_init() - place a cursor at byte @off of a scatter list
 * @c: the cursor
 * @sge: the list
 * @num: its entries
 * @off: byte offset from the start of the list
 */
void srnic_sge_cursor_init(struct srnic_sge_cursor *c,
			   const struct ib_sge *sge, u32 num, u32 off);

/**
 * srnic_sge_cursor_next() - translate the next piece of a scatter list
 * @c: the cursor, advanced past the piece
 * @sdev: the device
 * @pd: the PD of the QP
 * @len: at most this many bytes
 * @access: as for srnic_mr_get_lkey()
 * @iova: set to the piece's first byte
 * @n: set to its length (1..@len)
 *
 * The piece is the rest of the current SGE, up to @len bytes; its lkey is
 * checked through srnic_mr_get_lkey().
 *
 * Return: the MR with a reference (srnic_mr_put()), an ERR_PTR from
 * srnic_mr_get_lkey(), or NULL when the list has no bytes left.
 */
struct srnic_mr *srnic_sge_cursor_next(struct srnic_sge_cursor *c,
				       struct srnic_dev *sdev, struct ib_pd *pd,
				       u32 len, int access, u64 *iova, u32 *n);

/**
 * srnic_mr_get_rkey() - look up the MR behind an rkey for a remote access
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
 * Return: as srnic_mr_get_lkey().
 */
struct srnic_mr *srnic_mr_get_rkey(struct srnic_dev *sdev, struct ib_pd *pd,
				   u32 qpn, u32 rkey, u64 iova, u64 len,
				   int access);

/**
 * srnic_mr_put() - release an MR from srnic_mr_get_lkey()/_rkey()
 * @mr: the MR, or NULL
 */
void srnic_mr_put(struct srnic_mr *mr);

/*
 * Copies between an MR range and kernel memory. The range was checked at
 * lookup; a translation outside the table only WARNs (and copies nothing
 * more).
 */
void srnic_mr_copy_to(struct srnic_mr *mr, u64 iova, const void *src,
		      u32 len);
void srnic_mr_copy_from(struct srnic_mr *mr, u64 iova, void *dst, u32 len);

/**
 * srnic_mr_copy_from_skb() - RX: copy skb payload into an MR
 * @mr: the MR
 * @iova: where to
 * @skb: the packet, linear or not (it is not linearized)
 * @off: offset in @skb
 * @len: bytes
 *
 * Return: 0, or -EFAULT if @skb holds less than @off + @len bytes (or the
 * translation failed).
 */
int srnic_mr_copy_from_skb(struct srnic_mr *mr, u64 iova,
			   const struct sk_buff *skb, int off, u32 len);

/**
 * srnic_mr_add_frags() - TX zero copy: append an MR range to an skb
 * @mr: the MR
 * @iova: first byte
 * @len: bytes
 * @skb: an skb that is not cloned
 *
 * Appends one page fragment per page touched (or grows the last fragment
 * when the range continues it), each holding a page reference, so the skb
 * may outlive the MR. Updates len, data_len and truesize, and marks the
 * fragments shared (SKBFL_SHARED_FRAG: the consumer may still write them).
 *
 * Return: 0, or -EMSGSIZE with @skb unchanged when the range would not fit
 * in MAX_SKB_FRAGS or a page cannot be a fragment (slab memory, a DMA-MR
 * address outside the linear map): the caller then copies instead.
 */
int srnic_mr_add_frags(struct srnic_mr *mr, u64 iova, u32 len,
		       struct sk_buff *skb);

/**
 * srnic_mr_atomic_map() - map the u64 an atomic operation works on
 * @mr: the MR (the 8 bytes were range- and access-checked at lookup)
 * @iova: address of the u64
 *
 * Return: a kmap_local pointer (release with srnic_mr_atomic_unmap(), in
 * LIFO order with other kmap_local mappings), or NULL if @iova or the
 * memory behind it is not 8-byte aligned (IBA: misaligned atomic). An
 * aligned u64 never crosses a page, let alone a block.
 */
u64 *srnic_mr_atomic_map(struct srnic_mr *mr, u64 iova);
void srnic_mr_atomic_unmap(u64 *p);

/*
 * Work requests, executed by the requester (or, for remote invalidation,
 * the responder). @pd is the QP's PD. Return 0 or -EINVAL (with the MR/MW
 * unchanged) when IBA's rules refuse the operation.
 */

/**
 * srnic_mr_fast_reg() - IB_WR_REG_MR
 * @sdev: the device
 * @pd: the QP's PD, which must be the MR's
 * @wr: the work request: @wr->mr mapped by ib_map_mr_sg(), FREE, of this
 *	device; @wr->key differs from the MR's key in the key byte at most
 *
 * Kernel QPs only: @wr->mr is a kernel pointer, never take it from a user
 * WQE.
 */
int srnic_mr_fast_reg(struct srnic_dev *sdev, struct ib_pd *pd,
		      const struct ib_reg_wr *wr);

/**
 * srnic_mr_invalidate() - local invalidate or send-with-invalidate
 * @sdev: the device
 * @pd: the QP's PD, which must be the object's
 * @key: the exact current key of a fast-reg MR without bound windows or of
 *	a type 2 window; a FREE one stays FREE (not an error)
 */
int srnic_mr_invalidate(struct srnic_dev *sdev, struct ib_pd *pd, u32 key);

/**
 * srnic_mw_bind() - IB_WR_BIND_MW (type 2) or a type 1 bind
 * @sdev: the device
 * @pd: the QP's PD, which must be the window's and the MR's
 * @qpn: the QP (a type 2 window gets bound to it)
 * @mw_rkey: the window's current rkey
 * @new_rkey: its rkey after the bind: same index, any key byte
 * @mr_lkey: the MR to bind to (ignored when @length is 0)
 * @addr: first byte of the window, an MR iova
 * @length: bytes; 0 unbinds a type 1 window
 * @access: IB_ACCESS_REMOTE_* (zero-based windows are not supported)
 */
int srnic_mw_bind(struct srnic_dev *sdev, struct ib_pd *pd, u32 qpn,
		  u32 mw_rkey, u32 new_rkey, u32 mr_lkey, u64 addr, u64 length,
		  int access);

/* Per-device state: srnic_dev_add() and srnic_dealloc_driver(). */
void srnic_mr_dev_init(struct srnic_dev *sdev);
void srnic_mr_dev_fini(struct srnic_dev *sdev);

/* get_dma_mr, dereg_mr, alloc_mr and map_mr_sg */
extern const struct ib_device_ops srnic_mr_ops;
/* alloc_mw, dealloc_mw and the size of struct srnic_mw */
extern const struct ib_device_ops srnic_mw_ops;
/* ib_device_ops.reg_user_mr through srnic_compat_ops */
struct ib_mr *srnic_reg_user_mr(struct ib_pd *pd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata);

/* Internal: shared by srnic_mr.c and srnic_mw.c. */
int srnic_mem_add(struct srnic_dev *sdev, struct srnic_mem *mem);
struct srnic_mr *srnic_mr_lookup(struct srnic_dev *sdev, u32 key);
int srnic_mem_check(const struct srnic_mem *mem, const struct ib_pd *pd,
		    u32 key, u64 iova, u64 len, int access);
struct srnic_mr *srnic_mw_get_mr(struct srnic_mem *mem, struct ib_pd *pd,
				 u32 qpn, u32 rkey, u64 iova, u64 len,
				 int access);
int srnic_mw_invalidate(struct srnic_mem *mem, struct ib_pd *pd, u32 key);

#if IS_ENABLED(CONFIG_RDMA_SRNIC_KUNIT_TEST)
/* KUnit: an MR over kernel pages, with a given block size. */
struct srnic_mr *srnic_mr_reg_pages(struct ib_pd *pd, struct page **blocks,
				    u32 nblocks, unsigned int page_shift,
				    u64 offset, u64 iova, u64 length,
				    int access);
#endif

#endif /* SRNIC_MR_H */
