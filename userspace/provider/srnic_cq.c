// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues and the ring mapping they share with the work queues.
 *
 * A CQ is a ring the kernel produces struct ib_uverbs_wc entries into
 * (kernel/srnic_cq.c: wc_flags already in the user's encoding); polling
 * copies them out without a system call. Notification requests and resizes
 * are commands.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "srnic.h"

/*
 * Map a ring the kernel announced in @mi, whose slots must hold @min_slot
 * bytes (the fixed part of its entries). The header's sizes are read once
 * here and checked against the mapping, so that no later index or entry
 * can reach outside it whatever the shared header says.
 */
int srnic_ring_map(struct srnic_ring *r, int cmd_fd, const struct mminfo *mi,
		   size_t min_slot)
{
	size_t slots, slot_size;
	uint32_t log2, mask;
	void *p;

	if (mi->size < sizeof(struct rxe_queue_buf))
		return EPROTO;
	p = mmap(NULL, mi->size, PROT_READ | PROT_WRITE, MAP_SHARED, cmd_fd,
		 mi->offset);
	if (p == MAP_FAILED)
		return errno;
	r->buf = p;
	r->map_len = mi->size;
	log2 = r->buf->log2_elem_size;
	mask = r->buf->index_mask;
	slots = (size_t)mask + 1;
	slot_size = log2 < 20 ? (size_t)1 << log2 : 0;
	if (!slot_size || slot_size < min_slot || (mask & (mask + 1)) ||
	    !slots ||
	    slots > (mi->size - sizeof(struct rxe_queue_buf)) / slot_size) {
		srnic_ring_unmap(r);
		return EPROTO;
	}
	r->mask = mask;
	r->slot_size = slot_size;
	return 0;
}

void srnic_ring_unmap(struct srnic_ring *r)
{
	if (r->buf)
		munmap(r->buf, r->map_len);
	memset(r, 0, sizeof(*r));
}

struct srnic_create_cq_cmd {
	struct ibv_create_cq ibv;
};

struct srnic_create_cq_resp {
	struct ib_uverbs_create_cq_resp ibv;
	struct rxe_create_cq_resp drv;
};

/* A new CQ's memory and lock; NULL (errno set) on failure. */
struct srnic_cq *srnic_cq_alloc(void)
{
	struct srnic_cq *cq = calloc(1, sizeof(*cq));
	int err;

	if (!cq)
		return NULL;
	err = pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	if (err) {
		free(cq);
		errno = err;
		return NULL;
	}
	return cq;
}

/* Undo srnic_cq_alloc(). */
void srnic_cq_free(struct srnic_cq *cq)
{
	pthread_spin_destroy(&cq->lock);
	free(cq);
}

/*
 * Map the ring of a CQ the kernel has just created (@err: the create
 * command's result), each slot at least @min_slot bytes. On failure the
 * kernel's CQ is destroyed and @cq freed; errno is set.
 */
int srnic_cq_map(struct srnic_cq *cq, int err, int cmd_fd,
		 const struct mminfo *mi, size_t min_slot)
{
	if (!err) {
		cq->min_slot = min_slot;
		err = srnic_ring_map(&cq->ring, cmd_fd, mi, min_slot);
		if (err)
			ibv_cmd_destroy_cq(&cq->vcq.cq);
	}
	if (err) {
		srnic_cq_free(cq);
		errno = err;
	}
	return err;
}

struct ibv_cq *srnic_create_cq(struct ibv_context *context, int cqe,
			       struct ibv_comp_channel *channel,
			       int comp_vector)
{
	struct srnic_create_cq_resp resp = {};
	struct srnic_create_cq_cmd cmd;
	struct srnic_cq *cq;
	int err;

	cq = srnic_cq_alloc();
	if (!cq)
		return NULL;
	err = ibv_cmd_create_cq(context, cqe, channel, comp_vector,
				&cq->vcq.cq, &cmd.ibv, sizeof(cmd), &resp.ibv,
				sizeof(resp));
	if (srnic_cq_map(cq, err, context->cmd_fd, &resp.drv.mi,
			 sizeof(struct ib_uverbs_wc)))
		return NULL;
	return &cq->vcq.cq;
}

/* One completion, out of the ring: each field read once. */
static void srnic_cqe_to_wc(const struct ib_uverbs_wc *cqe, struct ibv_wc *wc)
{
	wc->wr_id = cqe->wr_id;
	wc->status = cqe->status;
	wc->opcode = cqe->opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	wc->imm_data = cqe->ex.imm_data;
	wc->qp_num = cqe->qp_num;
	wc->src_qp = cqe->src_qp;
	wc->wc_flags = cqe->wc_flags;
	wc->pkey_index = cqe->pkey_index;
	wc->slid = cqe->slid;
	wc->sl = cqe->sl;
	wc->dlid_path_bits = cqe->dlid_path_bits;
}

int srnic_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct srnic_cq *cq = to_srnic_cq(ibcq);
	const struct ib_uverbs_wc *cqe;
	int n;

	pthread_spin_lock(&cq->lock);
	for (n = 0; n < num_entries; n++) {
		cqe = srnic_ring_consume_slot(&cq->ring);
		if (!cqe)
			break;
		srnic_cqe_to_wc(cqe, &wc[n]);
		srnic_ring_consume(&cq->ring);
	}
	pthread_spin_unlock(&cq->lock);
	return n;
}

/*
 * Drop @qpn's entries from @cq, for a QP that went to RESET. IBA leaves
 * such completions to the CI; consumers that restart a QP from RESET
 * (pyverbs' rereg tests among them) expect none of its old flushes, as
 * mlx4 and mlx5 give them. Only entries the kernel has published are
 * moved, towards the producer end; the slots freed at the consumer end are
 * handed back last, so the kernel never writes where an entry is moved.
 */
void srnic_cq_clean(struct srnic_cq *cq, uint32_t qpn)
{
	struct srnic_ring *r = &cq->ring;
	const struct ib_uverbs_wc *cqe;
	uint32_t cons, prod, i, n = 0;

	pthread_spin_lock(&cq->lock);
	cons = __atomic_load_n(&r->buf->consumer_index, __ATOMIC_RELAXED);
	prod = __atomic_load_n(&r->buf->producer_index, __ATOMIC_ACQUIRE);
	for (i = prod; i != cons;) {
		i = (i - 1) & r->mask;
		cqe = srnic_ring_slot(r, i);
		if (cqe->qp_num == qpn)
			n++;
		else if (n)
			memcpy(srnic_ring_slot(r, i + n), cqe, sizeof(*cqe));
	}
	if (n)
		__atomic_store_n(&r->buf->consumer_index, (cons + n) & r->mask,
				 __ATOMIC_RELEASE);
	pthread_spin_unlock(&cq->lock);
}

int srnic_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	return ibv_cmd_req_notify_cq(ibcq, solicited_only);
}

struct srnic_resize_cq_cmd {
	struct ibv_resize_cq ibv;
};

struct srnic_resize_cq_resp {
	struct ib_uverbs_resize_cq_resp ibv;
	struct rxe_resize_cq_resp drv;
};

/*
 * The kernel copies the live entries into a new ring and returns where to
 * map it; the CQ lock keeps pollers off both rings meanwhile (the kernel
 * requires that the consumer index does not move during the resize).
 */
int srnic_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct srnic_cq *cq = to_srnic_cq(ibcq);
	struct srnic_resize_cq_resp resp = {};
	struct srnic_resize_cq_cmd cmd;
	struct srnic_ring ring = {};
	int err;

	pthread_spin_lock(&cq->lock);
	err = ibv_cmd_resize_cq(ibcq, cqe, &cmd.ibv, sizeof(cmd), &resp.ibv,
				sizeof(resp));
	if (!err)
		err = srnic_ring_map(&ring, ibcq->context->cmd_fd,
				     &resp.drv.mi, cq->min_slot);
	if (!err) {
		srnic_ring_unmap(&cq->ring);
		cq->ring = ring;
	}
	pthread_spin_unlock(&cq->lock);
	return err;
}

int srnic_destroy_cq(struct ibv_cq *ibcq)
{
	struct srnic_cq *cq = to_srnic_cq(ibcq);
	int err;

	err = ibv_cmd_destroy_cq(ibcq);
	if (err)
		return err;
	srnic_ring_unmap(&cq->ring);
	srnic_cq_free(cq);
	return 0;
}
