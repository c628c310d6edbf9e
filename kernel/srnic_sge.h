/* SPDX-License-Identifier: GPL-2.0 */
/*
 * srnic scatter/gather lists: the one walk over a list of SGEs (srnic_sge.c)
 * that the transport uses wherever a message meets local memory - the
 * requester's payload (a copy, or zero-copy page fragments), the
 * responder's placement into a receive WQE and the completer's placement of
 * READ responses. Every piece of an SGE is looked up by its lkey when it is
 * used (srnic_mr_get_lkey()), then copied through the MR's translation
 * (srnic_mtt.h).
 */
#ifndef SRNIC_SGE_H
#define SRNIC_SGE_H

#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>

struct srnic_dev;

/**
 * struct srnic_sge_cursor - a position in a scatter list
 * @sdev: the device
 * @pd: the PD of the QP, which every lkey must be of
 * @sge: the list
 * @num: its entries
 * @i: current entry
 * @off: byte offset into entry @i
 * @pos: byte offset from the start of the list; advanced by each piece
 *	walked without error, so after a failed walk it counts the bytes done
 */
struct srnic_sge_cursor {
	struct srnic_dev	*sdev;
	struct ib_pd		*pd;
	const struct ib_sge	*sge;
	u32			num;
	u32			i;
	u32			off;
	u32			pos;
};

/**
 * srnic_sge_cursor_init() - place a cursor at byte @off of a scatter list
 * @c: the cursor
 * @sdev: the device
 * @pd: the PD of the QP
 * @sge: the list
 * @num: its entries
 * @off: byte offset from the start of the list
 */
void srnic_sge_cursor_init(struct srnic_sge_cursor *c, struct srnic_dev *sdev,
			   struct ib_pd *pd, const struct ib_sge *sge, u32 num,
			   u32 off);

/*
 * Walks of @len bytes from the cursor on, which they advance. Each returns
 * 0, an error of srnic_mr_get_lkey() (-EINVAL, -EACCES, -ERANGE), -EINVAL
 * when the list ends first, or the error of the copy named below (for an
 * ODP MR's piece also -EAGAIN or -EFAULT: srnic_mr_copy_to()); @c->pos
 * then says how far it got, and the cursor stands on the piece that
 * failed. Any context up to softirq.
 */

/* Gather: copy from the list's memory into @dst. */
int srnic_sge_copy_from(struct srnic_sge_cursor *c, void *dst, u32 len);
/* Scatter: copy @src into the list's memory (local write access). */
int srnic_sge_copy_to(struct srnic_sge_cursor *c, const void *src, u32 len);
/*
 * Scatter: copy @skb's bytes from @skb_off on into the list's memory (local
 * write access); -EFAULT as srnic_mr_copy_from_skb().
 */
int srnic_sge_copy_from_skb(struct srnic_sge_cursor *c,
			    const struct sk_buff *skb, int skb_off, u32 len);
/*
 * Zero copy: append the list's memory to @skb as page fragments, piece by
 * piece through srnic_mr_add_frags() (-EMSGSIZE: they do not fit, copy
 * instead; @skb then holds the pieces before).
 */
int srnic_sge_add_frags(struct srnic_sge_cursor *c, u32 len,
			struct sk_buff *skb);

/*
 * ODP (srnic_odp.h). srnic_sge_ready(): are the pages of the list's @len
 * bytes from the cursor on that lie in ODP MRs faulted in (for @access)?
 * A hint, no copy: 0, or -EAGAIN (faults are queued) or -EFAULT as
 * srnic_odp_ready(), with the cursor on the piece that is not. Any context.
 *
 * srnic_sge_fault(): fault in the piece the cursor stands on (after a walk
 * that returned -EAGAIN), up to SRNIC_ODP_READY_MAX bytes of it. Process
 * context: it sleeps. Return: 0 or an error of the lookup or of
 * srnic_odp_fault().
 */
int srnic_sge_ready(struct srnic_sge_cursor *c, u32 len, int access);
int srnic_sge_fault(struct srnic_sge_cursor *c, int access);

#endif /* SRNIC_SGE_H */
