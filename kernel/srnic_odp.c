// SPDX-License-Identifier: GPL-2.0
/*
 * srnic on-demand-paging MRs: the MMU interval notifier, faults through
 * hmm_range_fault() and the data path's view of the MTT. The design is
 * described in srnic_odp.h.
 */
#include <linux/hmm.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "srnic.h"
#include "srnic_odp.h"

/* Pages one hmm_range_fault() call takes at most. */
#define SRNIC_ODP_CHUNK		512U
/* Pages a fault asked for by the data path takes beyond what it needs. */
#define SRNIC_ODP_AHEAD		256U

/* The MTT index of @iova (checked against the MR's range at lookup). */
static u32 srnic_odp_index(const struct srnic_mr *mr, u64 iova)
{
	return (iova - mr->mem.iova + mr->offset) >> PAGE_SHIFT;
}

static bool srnic_odp_invalidate(struct mmu_interval_notifier *mni,
				 const struct mmu_notifier_range *range,
				 unsigned long cur_seq)
{
	struct srnic_odp *odp = container_of(mni, struct srnic_odp, notifier);
	struct srnic_mr *mr = odp->mr;
	unsigned long start, end, flags;
	u32 i, last;

	start = max(range->start, odp->va);
	end = min(range->end,
		  odp->va + ((unsigned long)mr->max_blocks << PAGE_SHIFT));
	spin_lock_irqsave(&odp->lock, flags);
	mmu_interval_set_seq(mni, cur_seq);
	if (start < end) {
		last = (end - 1 - odp->va) >> PAGE_SHIFT;
		for (i = (start - odp->va) >> PAGE_SHIFT; i <= last; i++) {
			if (mr->blocks[i] && mr->blocks[i] != SRNIC_ODP_FAILED)
				odp->mapped--;
			mr->blocks[i] = NULL;
		}
	}
	spin_unlock_irqrestore(&odp->lock, flags);
	return true;
}

static const struct mmu_interval_notifier_ops srnic_odp_mn_ops = {
	.invalidate = srnic_odp_invalidate,
};

/*
 * Install the pages of @n entries of hmm_range_fault() from MTT index
 * @first: every one when they were faulted; else those present that will
 * do (writable, when the MR's faults ask for that). @lock held.
 */
static void srnic_odp_install(struct srnic_odp *odp, u32 first, u32 n,
			      const unsigned long *pfns, bool faulted)
{
	unsigned long need = HMM_PFN_VALID | (odp->write ? HMM_PFN_WRITE : 0);
	struct page **blocks = odp->mr->blocks;
	u32 i;

	lockdep_assert_held(&odp->lock);
	for (i = 0; i < n; i++) {
		if (!faulted && (pfns[i] & need) != need)
			continue;
		if (!blocks[first + i] || blocks[first + i] == SRNIC_ODP_FAILED)
			odp->mapped++;
		blocks[first + i] = hmm_pfn_to_page(pfns[i]);
	}
}

/*
 * Fault @n <= SRNIC_ODP_CHUNK pages from MTT index @first in and install
 * them, unless an invalidation overtook the fault (then again). Without
 * @fault, only the pages the process has are taken (none is faulted in).
 */
static int srnic_odp_fault_chunk(struct srnic_odp *odp, struct mm_struct *mm,
				 u32 first, u32 n, bool fault)
{
	unsigned long timeout = jiffies +
				msecs_to_jiffies(HMM_RANGE_DEFAULT_TIMEOUT);
	struct hmm_range range = {
		.notifier = &odp->notifier,
		.start = odp->va + ((unsigned long)first << PAGE_SHIFT),
		.end = odp->va + ((unsigned long)(first + n) << PAGE_SHIFT),
		.default_flags = !fault ? 0 : HMM_PFN_REQ_FAULT |
				 (odp->write ? HMM_PFN_REQ_WRITE : 0),
	};
	unsigned long flags;
	int err;

	/* zeroed: hmm_range_fault() carries some input flags to the output */
	range.hmm_pfns = kcalloc(n, sizeof(*range.hmm_pfns), GFP_KERNEL);
	if (!range.hmm_pfns)
		return -ENOMEM;
	for (;;) {
		range.notifier_seq = mmu_interval_read_begin(&odp->notifier);
		mmap_read_lock(mm);
		err = hmm_range_fault(&range);
		mmap_read_unlock(mm);
		if (err == -EBUSY && time_before(jiffies, timeout))
			continue;
		if (err)
			break;
		spin_lock_irqsave(&odp->lock, flags);
		if (!mmu_interval_read_retry(&odp->notifier,
					     range.notifier_seq)) {
			srnic_odp_install(odp, first, n, range.hmm_pfns,
					  fault);
			spin_unlock_irqrestore(&odp->lock, flags);
			break;
		}
		spin_unlock_irqrestore(&odp->lock, flags);
	}
	kfree(range.hmm_pfns);
	return err;
}

/* Mark MTT entry @i failed (unless it holds a page by now). */
static void srnic_odp_mark_failed(struct srnic_odp *odp, u32 i)
{
	unsigned long flags;

	spin_lock_irqsave(&odp->lock, flags);
	if (!odp->mr->blocks[i])
		odp->mr->blocks[i] = SRNIC_ODP_FAILED;
	spin_unlock_irqrestore(&odp->lock, flags);
}

/*
 * Fault MTT entries @first..@last in. Should that fail, page by page: the
 * pages up to @need that fail are marked SRNIC_ODP_FAILED (what the data
 * path waits for must end), and the read-ahead beyond @need stops at the
 * first failure.
 */
static int srnic_odp_fault_range(struct srnic_odp *odp, u32 first, u32 need,
				 u32 last)
{
	struct mm_struct *mm = odp->notifier.mm;
	int err = 0, ret;
	u32 i, n;

	if (!mmget_not_zero(mm)) {
		/* the process is exiting: its pages are gone for good */
		for (i = first; i <= need; i++)
			srnic_odp_mark_failed(odp, i);
		return -EFAULT;
	}
	for (i = first; i <= last; i += n) {
		n = min(last - i + 1, SRNIC_ODP_CHUNK);
		err = srnic_odp_fault_chunk(odp, mm, i, n, true);
		if (err)
			break;
		cond_resched();
	}
	for (; err && i <= last; i++) {
		ret = srnic_odp_fault_chunk(odp, mm, i, 1, true);
		if (!ret)
			continue;
		if (i > need)
			break;
		if (ret != -ENOMEM && ret != -EBUSY)
			srnic_odp_mark_failed(odp, i);
	}
	mmput(mm);
	return err;
}

int srnic_odp_fault(struct srnic_mr *mr, u64 iova, u64 len)
{
	u32 first, last;

	might_sleep();
	if (!len)
		return 0;
	first = srnic_odp_index(mr, iova);
	last = srnic_odp_index(mr, iova + len - 1);
	return srnic_odp_fault_range(mr->odp, first, last, last);
}

/* Take the pages of [@iova, @iova + @len) the process has; fault none. */
static int srnic_odp_take_present(struct srnic_mr *mr, u64 iova, u64 len)
{
	struct srnic_odp *odp = mr->odp;
	struct mm_struct *mm = odp->notifier.mm;
	u32 i, n, last;
	int err = 0;

	if (!len || !mmget_not_zero(mm))
		return 0;	/* nothing, or an exiting process: none there */
	last = srnic_odp_index(mr, iova + len - 1);
	for (i = srnic_odp_index(mr, iova); !err && i <= last; i += n) {
		n = min(last - i + 1, SRNIC_ODP_CHUNK);
		err = srnic_odp_fault_chunk(odp, mm, i, n, false);
		cond_resched();
	}
	mmput(mm);
	return err;
}

/* One range of ibv_advise_mr() in ODP MR @mr. */
static int srnic_odp_prefetch(struct srnic_mr *mr,
			      enum ib_uverbs_advise_mr_advice advice,
			      const struct ib_sge *sge)
{
	int err;

	if (advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
		return srnic_odp_take_present(mr, sge->addr, sge->length);
	err = srnic_odp_fault(mr, sge->addr, sge->length);
	/* a page the process has not mapped (so) is the caller's fault */
	return err && err != -ENOMEM ? -EFAULT : err;
}

/*
 * ib_device_ops.advise_mr (ibv_advise_mr): PREFETCH and PREFETCH_WRITE
 * fault the ranges of ODP MRs in, PREFETCH_NO_FAULT takes the pages the
 * process has. Every range is checked first (its lkey in @pd, in the MR's
 * bounds, writable for PREFETCH_WRITE), else -EFAULT and nothing is done,
 * as ibv_advise_mr(3) says. The work is done before returning, with or
 * without IB_UVERBS_ADVISE_MR_FLAG_FLUSH (the flag asks no more than
 * that). Ranges of other MRs need nothing: their pages are pinned.
 */
int srnic_odp_advise_mr(struct ib_pd *pd,
			enum ib_uverbs_advise_mr_advice advice, u32 flags,
			struct ib_sge *sg_list, u32 num_sge,
			struct uverbs_attr_bundle *attrs)
{
	struct srnic_dev *sdev = to_srnic_dev(pd->device);
	int access = 0, err = 0;
	struct srnic_mr *mr;
	u32 i;

	if (advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE)
		access = IB_ACCESS_LOCAL_WRITE;
	else if (advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH &&
		 advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
		return -EOPNOTSUPP;
	for (i = 0; i < num_sge; i++) {
		mr = srnic_mr_get_lkey(sdev, pd, sg_list[i].lkey,
				       sg_list[i].addr, sg_list[i].length,
				       access);
		if (IS_ERR(mr))
			return -EFAULT;
		srnic_mr_put(mr);
	}
	for (i = 0; i < num_sge && !err; i++) {
		mr = srnic_mr_get_lkey(sdev, pd, sg_list[i].lkey,
				       sg_list[i].addr, sg_list[i].length,
				       access);
		if (IS_ERR(mr))
			return -EFAULT;	/* deregistered meanwhile */
		if (mr && mr->type == SRNIC_MR_ODP)
			err = srnic_odp_prefetch(mr, advice, &sg_list[i]);
		srnic_mr_put(mr);
	}
	return err;
}

/* The data path's faults, with read-ahead. */
static void srnic_odp_work(struct work_struct *work)
{
	struct srnic_odp *odp = container_of(work, struct srnic_odp, work);
	u32 first, need, last;
	unsigned long flags;

	spin_lock_irqsave(&odp->lock, flags);
	first = odp->want_first;
	need = odp->want_last;
	odp->want = false;
	spin_unlock_irqrestore(&odp->lock, flags);
	last = min(need + SRNIC_ODP_AHEAD, odp->mr->max_blocks - 1);
	srnic_odp_fault_range(odp, first, need, last);
}

/*
 * Ask the work item to fault MTT entries @first..@last in. One range at a
 * time: a second asker while one waits is not remembered (the responder's
 * peer asks again after its RNR wait, the requester faults for itself).
 */
static void srnic_odp_want(struct srnic_odp *odp, u32 first, u32 last)
{
	unsigned long flags;

	spin_lock_irqsave(&odp->lock, flags);
	if (!odp->want) {
		odp->want = true;
		odp->want_first = first;
		odp->want_last = last;
		queue_work(system_dfl_wq, &odp->work);
	}
	spin_unlock_irqrestore(&odp->lock, flags);
}

/*
 * Entries @first..@last: 0 if all hold pages, else -EFAULT if one failed
 * or -EAGAIN. Without @lock a hint only.
 */
static int srnic_odp_check_range(struct srnic_odp *odp, u32 first, u32 last)
{
	struct page **blocks = odp->mr->blocks;
	struct page *page;
	u32 i;

	for (i = first; i <= last; i++) {
		page = READ_ONCE(blocks[i]);
		if (page == SRNIC_ODP_FAILED)
			return -EFAULT;
		if (!page)
			return -EAGAIN;
	}
	return 0;
}

int srnic_odp_check(struct srnic_mr *mr, u64 iova, u64 len)
{
	if (!len)
		return 0;
	return srnic_odp_check_range(mr->odp, srnic_odp_index(mr, iova),
				     srnic_odp_index(mr, iova + len - 1));
}

void srnic_odp_request(struct srnic_mr *mr, u64 iova, u64 len)
{
	if (len)
		srnic_odp_want(mr->odp, srnic_odp_index(mr, iova),
			       srnic_odp_index(mr, iova + len - 1));
}

int srnic_odp_ready(struct srnic_mr *mr, u64 iova, u64 len)
{
	int err;

	len = min_t(u64, len, SRNIC_ODP_READY_MAX);
	err = srnic_odp_check(mr, iova, len);
	if (err == -EAGAIN)
		srnic_odp_request(mr, iova, len);
	return err;
}

u32 srnic_odp_mapped(struct srnic_mr *mr)
{
	unsigned long flags;
	u32 n;

	spin_lock_irqsave(&mr->odp->lock, flags);
	n = mr->odp->mapped;
	spin_unlock_irqrestore(&mr->odp->lock, flags);
	return n;
}

int srnic_odp_init(struct srnic_mr *mr, u64 start, u64 length, int access)
{
	struct srnic_odp *odp;
	int err;

	odp = kzalloc(sizeof(*odp), GFP_KERNEL);
	if (!odp)
		return -ENOMEM;
	spin_lock_init(&odp->lock);
	INIT_WORK(&odp->work, srnic_odp_work);
	odp->mr = mr;
	odp->va = start & PAGE_MASK;
	odp->write = access & (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			       IB_ACCESS_REMOTE_ATOMIC);
	err = mmu_interval_notifier_insert(&odp->notifier, current->mm,
					   odp->va,
					   (unsigned long)mr->max_blocks << PAGE_SHIFT,
					   &srnic_odp_mn_ops);
	if (err) {
		kfree(odp);
		return err;
	}
	mr->odp = odp;
	return 0;
}

void srnic_odp_release(struct srnic_mr *mr)
{
	struct srnic_odp *odp = mr->odp;

	if (!odp)
		return;
	cancel_work_sync(&odp->work);
	mmu_interval_notifier_remove(&odp->notifier);
	kfree(odp);
	mr->odp = NULL;
}
