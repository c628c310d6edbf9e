/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The user side of srnic's rings (native ABI v1 = the rxe ring layout,
 * <rdma/rdma_user_rxe.h> struct rxe_queue_buf): a header with the slot size
 * (log2_elem_size), index_mask, the producer index and the consumer index,
 * each in its own cache line, then index_mask + 1 slots. One slot always
 * stays free: prod == cons is empty, prod + 1 == cons (masked) is full.
 * Indices are stored masked.
 *
 * Each side owns one index and only reads the other's. The kernel reads ours
 * with an acquire load and validates it, so the order that matters here is:
 * a producer writes the slot, then publishes its index with a release store;
 * a consumer reads the peer index with an acquire load before the slot, and
 * releases the slot with a release store of its own index.
 *
 * The kernel writes the sizes into the header at creation (kernel/
 * srnic_queue.c); they are read once at map time and never trusted again
 * from shared memory. Callers serialise each ring with the lock of the
 * object that owns it.
 */
#ifndef SRNIC_RING_H
#define SRNIC_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/rdma_user_rxe.h>

struct srnic_ring {
	struct rxe_queue_buf *buf;	/* the mapping; NULL if none */
	size_t map_len;			/* bytes mapped */
	uint32_t mask;			/* slots - 1: the capacity */
	uint32_t slot_size;		/* bytes per slot */
};

int srnic_ring_map(struct srnic_ring *r, int cmd_fd,
		   const struct mminfo *mi, size_t min_slot);
void srnic_ring_unmap(struct srnic_ring *r);

static inline void *srnic_ring_slot(const struct srnic_ring *r, uint32_t i)
{
	return r->buf->data + (size_t)(i & r->mask) * r->slot_size;
}

/* Producer side (SQ, RQ, SRQ): the slot to fill, or NULL if full. */
static inline void *srnic_ring_produce_slot(const struct srnic_ring *r)
{
	uint32_t prod = __atomic_load_n(&r->buf->producer_index,
					__ATOMIC_RELAXED);
	/* the kernel has finished with a slot before it moves past it */
	uint32_t cons = __atomic_load_n(&r->buf->consumer_index,
					__ATOMIC_ACQUIRE);

	if (((prod + 1 - cons) & r->mask) == 0)
		return NULL;
	return srnic_ring_slot(r, prod);
}

static inline void srnic_ring_produce(struct srnic_ring *r)
{
	uint32_t prod = __atomic_load_n(&r->buf->producer_index,
					__ATOMIC_RELAXED);

	/* the slot is written before the kernel may read it */
	__atomic_store_n(&r->buf->producer_index, (prod + 1) & r->mask,
			 __ATOMIC_RELEASE);
}

/* Consumer side (CQ): the next entry, or NULL if empty. */
static inline const void *srnic_ring_consume_slot(const struct srnic_ring *r)
{
	uint32_t cons = __atomic_load_n(&r->buf->consumer_index,
					__ATOMIC_RELAXED);
	/* the entry was written before the kernel published it */
	uint32_t prod = __atomic_load_n(&r->buf->producer_index,
					__ATOMIC_ACQUIRE);

	if (prod == cons)
		return NULL;
	return srnic_ring_slot(r, cons);
}

static inline void srnic_ring_consume(struct srnic_ring *r)
{
	uint32_t cons = __atomic_load_n(&r->buf->consumer_index,
					__ATOMIC_RELAXED);

	/* the entry is copied out before the kernel may reuse its slot */
	__atomic_store_n(&r->buf->consumer_index, (cons + 1) & r->mask,
			 __ATOMIC_RELEASE);
}

#endif /* SRNIC_RING_H */
