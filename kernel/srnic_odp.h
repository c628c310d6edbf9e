/* SPDX-License-Identifier: GPL-2.0 */
/*
 * srnic on-demand-paging (ODP) memory regions (srnic_odp.c).
 *
 * An ODP MR (IB_ACCESS_ON_DEMAND) pins nothing. Its MTT has one entry per
 * page of [start, start + length) of the registering process, NULL until
 * the page is faulted in, and is kept coherent with the process's page
 * tables by an MMU interval notifier:
 *
 * - Faults (srnic_odp_fault(), process context: it sleeps) run
 *   hmm_range_fault() on the range and install the pages under @lock, if
 *   no invalidation ran meanwhile (mmu_interval_read_retry()).
 * - Invalidation (munmap, madvise(MADV_DONTNEED), migration, reclaim) clears
 *   the entries of the range under @lock, so no page pointer outlives it.
 * - The data path (srnic_mtt.c) copies only under @lock, after checking that
 *   every page it touches is there (srnic_odp_check()). A page that is not
 *   gives -EAGAIN and queues a fault of the range (and some read-ahead) on a
 *   work item: the responder answers RNR NAK and the requester tries again
 *   from process context; a page whose fault failed (the range is no longer
 *   mapped, or not writable) gives -EFAULT, an access error.
 *
 * Lock order: a QP's resp_lock or req_lock, then an ODP MR's @lock, then
 * the responder's atomic lock (an atomic on an ODP page runs under @lock:
 * srnic_mr_atomic()). Nothing else is taken under @lock.
 */
#ifndef SRNIC_ODP_H
#define SRNIC_ODP_H

#include <linux/mmu_notifier.h>
#include <rdma/ib_verbs.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>

struct srnic_mr;

/* An MTT entry whose fault failed: accesses get -EFAULT until it is faulted again. */
#define SRNIC_ODP_FAILED	((struct page *)ERR_PTR(-EFAULT))

/**
 * struct srnic_odp - the ODP state of an MR
 * @notifier: the MMU interval notifier over the MR's pages
 * @lock: protects the MR's MTT entries (srnic_mr.blocks), @mapped and the
 *	notifier's sequence (mmu_interval_set_seq()); taken with IRQs off
 * @mr: the MR
 * @va: user address of MTT entry 0 (page aligned)
 * @write: faults ask for writable pages (the MR has a write right)
 * @mapped: entries that hold a page
 * @work: faults the range @want_first..@want_last (MTT indices) asked for
 *	from the data path
 * @want_first: see @work; protected by @lock
 * @want_last: see @work; protected by @lock
 * @want: a range is asked for; protected by @lock
 */
struct srnic_odp {
	struct mmu_interval_notifier notifier;
	spinlock_t		lock;	/* MTT entries, @mapped, @want*; IRQ-safe */
	struct srnic_mr		*mr;
	unsigned long		va;
	bool			write;
	u32			mapped;
	struct work_struct	work;
	u32			want_first;
	u32			want_last;
	bool			want;
};

/*
 * Registration and release (process context, the registering process).
 * srnic_odp_init() sets up @mr->odp for an MR whose table (@mr->blocks,
 * one entry per page) is allocated and empty; srnic_odp_release() undoes
 * it once no data-path user holds the MR.
 */
int srnic_odp_init(struct srnic_mr *mr, u64 start, u64 length, int access);
void srnic_odp_release(struct srnic_mr *mr);

/*
 * Data path (any context). srnic_odp_check(): does every page of [@iova,
 * @iova + @len) hold a page? 0, -EAGAIN (one is not faulted in) or -EFAULT
 * (one failed to fault). Exact under @lock (srnic_mtt.c copies under it),
 * a hint without. srnic_odp_request(): queue a fault of the range (and
 * some read-ahead) on the work item; @lock not held.
 */
int srnic_odp_check(struct srnic_mr *mr, u64 iova, u64 len);
void srnic_odp_request(struct srnic_mr *mr, u64 iova, u64 len);

/*
 * srnic_odp_ready() - are the pages of [@iova, @iova + @len) mapped? A hint
 * (no lock; the copy checks again): 0, or -EAGAIN (a fault is queued) or
 * -EFAULT as srnic_odp_lock(). Only the first SRNIC_ODP_READY_MAX bytes are
 * looked at: any context.
 */
#define SRNIC_ODP_READY_MAX	SZ_1M
int srnic_odp_ready(struct srnic_mr *mr, u64 iova, u64 len);

/*
 * srnic_odp_fault() - fault [@iova, @iova + @len) of the MR in now
 * Context: process; sleeps. Return: 0, or an error of hmm_range_fault()
 * (the pages that failed are marked SRNIC_ODP_FAILED).
 */
int srnic_odp_fault(struct srnic_mr *mr, u64 iova, u64 len);

/* ib_device_ops.advise_mr (ibv_advise_mr), process context */
int srnic_odp_advise_mr(struct ib_pd *pd,
			enum ib_uverbs_advise_mr_advice advice, u32 flags,
			struct ib_sge *sg_list, u32 num_sge,
			struct uverbs_attr_bundle *attrs);

/* Entries that hold a page (rdma resource show mr -dd). */
u32 srnic_odp_mapped(struct srnic_mr *mr);

#endif /* SRNIC_ODP_H */
