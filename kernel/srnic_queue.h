/* SPDX-License-Identifier: GPL-2.0 */
/*
 * srnic rings: the work and completion queues srnic shares with user space
 * (rdma-core's rxe provider) and with kernel ULPs.
 *
 * Layout (the rxe user ABI, <rdma/rdma_user_rxe.h>)
 * -------------------------------------------------
 * One buffer: a struct rxe_queue_buf header (log2_elem_size @0, index_mask
 * @4, producer_index @128, consumer_index @256) followed by the slots @384.
 * A slot is the element size rounded up to a power of two and to at least a
 * cache line; the slot count is a power of two and one slot always stays
 * free, so the capacity is index_mask = slots - 1 and prod == cons means
 * empty. Indices are stored masked, in [0, index_mask]: rdma-core compares
 * them raw. The library reads log2_elem_size and index_mask from the header,
 * so the kernel picks the sizes.
 *
 * Ownership and trust
 * -------------------
 *   FROM_USER (SQ, RQ, SRQ): the user (or ULP) produces, the kernel consumes.
 *   TO_USER   (CQ):          the kernel produces, the user (or ULP) consumes.
 * The kernel keeps a private copy of the index it owns (@index) and only
 * mirrors it into the header; it never reads it back from there. The index
 * the other side owns (the "peer" index) is read with smp_load_acquire(),
 * pairing with the peer's release store, and validated: it must be in
 * range, and it may only move forward inside the window the protocol
 * allows (a producer never passes the consumer, a consumer never passes the
 * producer). A peer index that fails either test is "corrupt": the ring
 * then looks empty to a kernel consumer and full to a kernel producer, a
 * rate-limited warning is logged and srnic_queue_corrupt() reports it, so
 * the owner can move its object to the error state. The contents of slots
 * written by the peer are never trusted either: consumers copy an entry out
 * (each field read once) before validating it.
 *
 * Kernel objects use the same rings in kernel memory: the ULP side then
 * runs in the kernel too, through the srnic_queue_k*() helpers.
 *
 * Locking
 * -------
 * The two sides of a ring are lock-free with respect to each other. Each
 * side must serialise its own calls with a lock of the owning object: the
 * kernel side (every function without a k in its name) with one lock, the
 * ULP side (srnic_queue_k*()) with one lock, which may be the same.
 * srnic_queue_resize() swaps the buffer under the kernel side's lock, so
 * every kernel-side caller must hold it; on a kernel object whose ULP side
 * uses another lock, the owner must also exclude the ULP side.
 */
#ifndef SRNIC_QUEUE_H
#define SRNIC_QUEUE_H

#include <linux/bits.h>
#include <linux/compiler.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_user_rxe.h>

struct srnic_dev;
struct srnic_mmap_entry;

/**
 * enum srnic_queue_dir - which side produces
 * @SRNIC_QUEUE_FROM_USER: the user/ULP produces, srnic consumes (SQ/RQ/SRQ)
 * @SRNIC_QUEUE_TO_USER: srnic produces, the user/ULP consumes (CQ)
 */
enum srnic_queue_dir {
	SRNIC_QUEUE_FROM_USER,
	SRNIC_QUEUE_TO_USER,
};

/* Sanity bounds of srnic_queue_init(); verbs enforce tighter limits. */
#define SRNIC_QUEUE_MAX_ELEM		BIT(20)
#define SRNIC_QUEUE_MAX_ELEM_SIZE	BIT(16)

/**
 * struct srnic_queue - a ring shared with a user process or a kernel ULP
 * @sdev: owning device, for messages
 * @buf: header and slots; vmalloc_user() memory for a user ring
 * @mmap: the mmap entry of a user ring, NULL for a kernel ring
 * @buf_size: bytes in @buf (header included)
 * @elem_size: element size asked for at init, before rounding
 * @log2_elem_size: log2 of the slot size
 * @index_mask: slot count - 1, which is also the capacity
 * @dir: which side produces
 * @index: the index the kernel owns (consumer of a FROM_USER ring, producer
 *	of a TO_USER ring), always masked; mirrored into @buf
 * @peer_seen: the last validated value of the peer's index, the start of
 *	the window the peer may move in
 *
 * Embedded in the object that owns it. Every field but @index and
 * @peer_seen changes only in srnic_queue_resize(), under the kernel side's
 * lock; @index and @peer_seen belong to the kernel side (see the locking
 * rules at the top of this file).
 */
struct srnic_queue {
	struct srnic_dev	*sdev;
	struct rxe_queue_buf	*buf;
	struct srnic_mmap_entry	*mmap;
	size_t			buf_size;
	u32			elem_size;
	u32			log2_elem_size;
	u32			index_mask;
	enum srnic_queue_dir	dir;
	u32			index;
	u32			peer_seen;
};

int srnic_queue_init(struct srnic_dev *sdev, struct srnic_queue *q,
		     struct ib_udata *udata, u32 *num_elem, u32 elem_size,
		     enum srnic_queue_dir dir, struct mminfo *mi);
void srnic_queue_cleanup(struct srnic_queue *q);
int srnic_queue_resize(struct srnic_queue *q, struct ib_udata *udata,
		       u32 *num_elem, struct mminfo *mi, spinlock_t *lock);
void srnic_queue_report_corrupt(const struct srnic_queue *q, u32 peer);

int srnic_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void srnic_mmap_free(struct rdma_user_mmap_entry *entry);

extern const struct ib_device_ops srnic_queue_ops;

static inline u32 *srnic_queue_peer_ptr(const struct srnic_queue *q)
{
	return q->dir == SRNIC_QUEUE_FROM_USER ? &q->buf->producer_index :
						 &q->buf->consumer_index;
}

/*
 * Is @peer a value the peer's index may take now? In range, and inside the
 * window that starts at the last validated value: relative to the kernel's
 * own index, a producer only grows its lead and a consumer only moves up to
 * the producer.
 */
static inline bool srnic_queue_peer_valid(const struct srnic_queue *q,
					  u32 peer)
{
	u32 mask = q->index_mask;

	if (unlikely(peer & ~mask))
		return false;
	if (q->dir == SRNIC_QUEUE_FROM_USER)
		return ((peer - q->index) & mask) >=
		       ((q->peer_seen - q->index) & mask);
	return ((peer - q->peer_seen) & mask) <=
	       ((q->index - q->peer_seen) & mask);
}

/*
 * Read the peer's index (acquire: the peer's slot writes before its release
 * store are visible after this). Return false, and warn, if it is corrupt.
 */
static inline bool srnic_queue_peer_index(const struct srnic_queue *q,
					  u32 *peer)
{
	/* pairs with the peer's release store of its index */
	u32 v = smp_load_acquire(srnic_queue_peer_ptr(q));

	if (unlikely(!srnic_queue_peer_valid(q, v))) {
		srnic_queue_report_corrupt(q, v);
		return false;
	}
	*peer = v;
	return true;
}

/**
 * srnic_queue_corrupt() - does the peer's index break the ring protocol?
 * @q: the ring (kernel side's lock held)
 *
 * Return: true if the index the user (or ULP) owns is out of range or has
 * moved where the protocol does not let it.
 */
static inline bool srnic_queue_corrupt(const struct srnic_queue *q)
{
	/* pairs with the peer's release store of its index */
	u32 v = smp_load_acquire(srnic_queue_peer_ptr(q));

	return !srnic_queue_peer_valid(q, v);
}

/**
 * srnic_queue_count() - entries produced and not yet consumed
 * @q: the ring (kernel side's lock held)
 *
 * The kernel side's view: a corrupt peer index makes a FROM_USER ring look
 * empty (nothing to consume) and a TO_USER ring full (no room to produce).
 *
 * Return: the number of entries, at most @q->index_mask.
 */
static inline u32 srnic_queue_count(const struct srnic_queue *q)
{
	u32 peer;

	if (!srnic_queue_peer_index(q, &peer))
		return q->dir == SRNIC_QUEUE_FROM_USER ? 0 : q->index_mask;
	if (q->dir == SRNIC_QUEUE_FROM_USER)
		return (peer - q->index) & q->index_mask;
	return (q->index - peer) & q->index_mask;
}

/**
 * srnic_queue_empty() - no entry to consume?
 * @q: the ring (kernel side's lock held)
 *
 * Return: srnic_queue_count() == 0.
 */
static inline bool srnic_queue_empty(const struct srnic_queue *q)
{
	return srnic_queue_count(q) == 0;
}

/**
 * srnic_queue_full() - no slot to produce into?
 * @q: the ring (kernel side's lock held)
 *
 * Return: srnic_queue_count() == the capacity.
 */
static inline bool srnic_queue_full(const struct srnic_queue *q)
{
	return srnic_queue_count(q) == q->index_mask;
}

/**
 * srnic_queue_addr() - the slot of an index
 * @q: the ring
 * @index: any value; it is masked
 *
 * Return: the slot's address, inside the ring whatever @index is.
 */
static inline void *srnic_queue_addr(const struct srnic_queue *q, u32 index)
{
	return q->buf->data + ((index & q->index_mask) << q->log2_elem_size);
}

/**
 * srnic_queue_consumer_index() - where the consumer is
 * @q: the ring (kernel side's lock held)
 *
 * Return: for a FROM_USER ring the kernel's own consumer index; for a
 * TO_USER ring the peer's, validated (if it is corrupt: the start of the
 * window it may move in, an in-range value).
 */
static inline u32 srnic_queue_consumer_index(const struct srnic_queue *q)
{
	u32 peer;

	if (q->dir == SRNIC_QUEUE_FROM_USER)
		return q->index;
	return srnic_queue_peer_index(q, &peer) ? peer : q->peer_seen;
}

/**
 * srnic_queue_producer_index() - where the producer is
 * @q: the ring (kernel side's lock held)
 *
 * Return: for a TO_USER ring the kernel's own producer index; for a
 * FROM_USER ring the peer's, validated (the consumer index if corrupt, so
 * that the ring looks empty).
 */
static inline u32 srnic_queue_producer_index(const struct srnic_queue *q)
{
	u32 peer;

	if (q->dir == SRNIC_QUEUE_TO_USER)
		return q->index;
	return srnic_queue_peer_index(q, &peer) ? peer : q->index;
}

/**
 * srnic_queue_consumer_addr() - the next entry of a FROM_USER ring
 * @q: the ring (kernel side's lock held; not empty)
 *
 * The slot is shared with the producer: copy the entry out, reading each
 * field once, and validate the copy.
 *
 * Return: the slot at the kernel's consumer index.
 */
static inline void *srnic_queue_consumer_addr(const struct srnic_queue *q)
{
	WARN_ON_ONCE(q->dir != SRNIC_QUEUE_FROM_USER);
	return srnic_queue_addr(q, q->index);
}

/**
 * srnic_queue_advance_consumer() - release the entry of a FROM_USER ring
 * @q: the ring (kernel side's lock held; not empty)
 *
 * Publishes the new consumer index with a release store: the copy of the
 * entry is complete before the producer may reuse the slot.
 */
static inline void srnic_queue_advance_consumer(struct srnic_queue *q)
{
	u32 peer;
	bool ok;

	if (WARN_ON_ONCE(q->dir != SRNIC_QUEUE_FROM_USER))
		return;
	/*
	 * Move the peer's window up to its current index. After a corrupt
	 * read it keeps its start: entries up to there may have been read
	 * ahead already (srnic_queue_fetch()). It never starts behind the
	 * consumer.
	 */
	ok = srnic_queue_peer_index(q, &peer);
	if (!ok)
		peer = q->peer_seen;
	q->index = (q->index + 1) & q->index_mask;
	q->peer_seen = ((peer - q->index) & q->index_mask) == q->index_mask ?
		       q->index : peer;
	/* the entry is copied out before the producer may reuse its slot */
	smp_store_release(&q->buf->consumer_index, q->index);
}

/**
 * srnic_queue_fetch() - entries to read ahead of the consumer
 * @q: a FROM_USER ring (kernel side's lock held)
 * @fetch: the index up to which the kernel has read entries ahead of its
 *	consumer index (entries it keeps in the ring until they complete:
 *	the SQ); in [consumer, producer]
 * @n: out: the entries from @fetch to the producer index
 *
 * The producer index the kernel read ahead to is the new start of the
 * peer's window: a producer behind @fetch moved back over entries already
 * taken and is corrupt, like one out of range. So @n is at most the
 * capacity minus what was read ahead, whatever the peer writes.
 *
 * Return: false (and @n untouched) if the producer index is corrupt.
 */
static inline bool srnic_queue_fetch(struct srnic_queue *q, u32 fetch, u32 *n)
{
	u32 mask = q->index_mask;
	u32 peer;

	if (!srnic_queue_peer_index(q, &peer))
		return false;
	if (((peer - q->index) & mask) < ((fetch - q->index) & mask)) {
		srnic_queue_report_corrupt(q, peer);
		return false;
	}
	q->peer_seen = peer;
	*n = (peer - fetch) & mask;
	return true;
}

/**
 * srnic_queue_producer_addr() - the slot to fill in a TO_USER ring
 * @q: the ring (kernel side's lock held; not full)
 *
 * Return: the slot at the kernel's producer index.
 */
static inline void *srnic_queue_producer_addr(const struct srnic_queue *q)
{
	WARN_ON_ONCE(q->dir != SRNIC_QUEUE_TO_USER);
	return srnic_queue_addr(q, q->index);
}

/**
 * srnic_queue_advance_producer() - publish the filled slot of a TO_USER ring
 * @q: the ring (kernel side's lock held; not full)
 *
 * smp_store_release(): the slot's contents are visible before the new
 * producer index.
 */
static inline void srnic_queue_advance_producer(struct srnic_queue *q)
{
	u32 peer;
	bool ok;

	if (WARN_ON_ONCE(q->dir != SRNIC_QUEUE_TO_USER))
		return;
	/*
	 * Move the peer's window up to its current index, so that the
	 * producer never gets a full ring ahead of it. After a corrupt read,
	 * restart it one past the producer: the loosest window.
	 */
	ok = srnic_queue_peer_index(q, &peer);
	q->index = (q->index + 1) & q->index_mask;
	q->peer_seen = ok ? peer : (q->index + 1) & q->index_mask;
	/* the slot is written before the consumer may read it */
	smp_store_release(&q->buf->producer_index, q->index);
}

/*
 * The ULP side of a kernel object's ring. These must never be used on a
 * user ring: there the other side is a user process.
 */

/**
 * srnic_queue_kfull() - is a kernel FROM_USER ring full, as its ULP sees it?
 * @q: the ring (ULP side's lock held)
 *
 * Return: true if the ULP must not produce.
 */
static inline bool srnic_queue_kfull(const struct srnic_queue *q)
{
	u32 prod = READ_ONCE(q->buf->producer_index);
	/* pairs with srnic_queue_advance_consumer(): the slot is free */
	u32 cons = smp_load_acquire(&q->buf->consumer_index);

	return ((prod + 1 - cons) & q->index_mask) == 0;
}

/**
 * srnic_queue_kproduce_addr() - the slot a ULP fills next (FROM_USER ring)
 * @q: the ring (ULP side's lock held; not srnic_queue_kfull())
 *
 * Return: the slot at the ULP's producer index.
 */
static inline void *srnic_queue_kproduce_addr(const struct srnic_queue *q)
{
	WARN_ON_ONCE(q->mmap || q->dir != SRNIC_QUEUE_FROM_USER);
	return srnic_queue_addr(q, READ_ONCE(q->buf->producer_index));
}

/**
 * srnic_queue_kadvance_producer() - publish a ULP's entry (FROM_USER ring)
 * @q: the ring (ULP side's lock held)
 */
static inline void srnic_queue_kadvance_producer(struct srnic_queue *q)
{
	u32 prod = READ_ONCE(q->buf->producer_index);

	if (WARN_ON_ONCE(q->mmap || q->dir != SRNIC_QUEUE_FROM_USER))
		return;
	/* pairs with srnic_queue_peer_index(): the slot is written */
	smp_store_release(&q->buf->producer_index, (prod + 1) & q->index_mask);
}

/**
 * srnic_queue_kconsume_addr() - the entry a ULP reads next (TO_USER ring)
 * @q: the ring (ULP side's lock held; not empty)
 *
 * Return: the slot at the ULP's consumer index.
 */
static inline void *srnic_queue_kconsume_addr(const struct srnic_queue *q)
{
	WARN_ON_ONCE(q->mmap || q->dir != SRNIC_QUEUE_TO_USER);
	return srnic_queue_addr(q, READ_ONCE(q->buf->consumer_index));
}

/**
 * srnic_queue_kadvance_consumer() - release a ULP's entry (TO_USER ring)
 * @q: the ring (ULP side's lock held)
 */
static inline void srnic_queue_kadvance_consumer(struct srnic_queue *q)
{
	u32 cons = READ_ONCE(q->buf->consumer_index);

	if (WARN_ON_ONCE(q->mmap || q->dir != SRNIC_QUEUE_TO_USER))
		return;
	/* pairs with srnic_queue_peer_index(): the entry is read */
	smp_store_release(&q->buf->consumer_index, (cons + 1) & q->index_mask);
}

#endif /* SRNIC_QUEUE_H */
