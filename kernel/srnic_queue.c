// SPDX-License-Identifier: GPL-2.0
/*
 * srnic rings: allocation, resize, and the mmap of user rings.
 *
 * A user ring is one vmalloc_user() buffer behind an rdma_user_mmap_entry
 * of the user's ucontext; the user learns {offset, size} from a verbs
 * response (struct mminfo) and mmaps the uverbs file there (srnic_mmap()).
 *
 * Lifetime of a user ring's buffer
 * --------------------------------
 * The buffer belongs to its mmap entry, whose kref (ib_core's) the ring
 * holds from srnic_queue_init() until srnic_queue_cleanup() calls
 * rdma_user_mmap_entry_remove() (object destroyed, or the ring swapped out
 * by srnic_queue_resize()); srnic_mmap() holds it only while it maps. When
 * the last reference goes, ib_core erases the offset and calls
 * srnic_mmap_free(), which vfree()s the buffer. A VMA does not need the
 * entry: remap_vmalloc_range() maps every page with vm_insert_page(), which
 * takes a page reference that the VMA's PTEs keep until unmapped, so pages
 * the user still maps (a resized-away ring) outlive vfree() and the user
 * can never reach freed memory. Nor does a VMA need the ucontext or srnic's
 * code (its vm_ops are ib_core's, which does not track these VMAs): ib_core
 * may revoke the context and free it, and srnic may be unloaded, while the
 * user still has its rings mapped.
 *
 * Revocation
 * ----------
 * ib_core unmaps on revoke only the VMAs it tracks (rdma_user_mmap_io():
 * physically contiguous I/O memory), not these. So srnic_mmap() records the
 * address space (mmgrab()) in the ucontext, and srnic_ucontext_zap() - on
 * disassociate_ucontext, and when the context is freed - unmaps every VMA
 * of the context's uverbs file in each of them: the pages go back, and a
 * later access faults in ib_core's rdma_umap_fault(), which answers SIGBUS
 * for a VMA it does not track. The VMAs are VM_DONTCOPY, so no other
 * address space (a fork) maps the rings.
 */
#include <linux/fs.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/uverbs_ioctl.h>

#include "srnic.h"

/* The header rdma-core's rxe provider maps (ANCHORS §2.1). */
static_assert(offsetof(struct rxe_queue_buf, producer_index) == 128);
static_assert(offsetof(struct rxe_queue_buf, consumer_index) == 256);
static_assert(offsetof(struct rxe_queue_buf, data) == 384);
static_assert(sizeof(struct mminfo) == 16);

/**
 * struct srnic_mmap_entry - a user ring's buffer, as an mmap offset
 * @rdma: ib_core's entry (offset, kref); first, for container_of()
 * @buf: the vmalloc_user() buffer, freed by srnic_mmap_free()
 */
struct srnic_mmap_entry {
	struct rdma_user_mmap_entry	rdma;
	void				*buf;
};

static struct srnic_mmap_entry *
to_srnic_mmap_entry(struct rdma_user_mmap_entry *entry)
{
	return container_of(entry, struct srnic_mmap_entry, rdma);
}

/* Insert @buf into the ucontext's mmap offsets; fill @mi for the user. */
static int srnic_queue_mmap_insert(struct srnic_queue *q,
				   struct ib_udata *udata, struct mminfo *mi)
{
	struct srnic_ucontext *uc =
		rdma_udata_to_drv_context(udata, struct srnic_ucontext, ibuc);
	struct srnic_mmap_entry *entry;
	int err;

	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry)
		return -ENOMEM;
	entry->buf = q->buf;
	err = rdma_user_mmap_entry_insert(&uc->ibuc, &entry->rdma,
					  q->buf_size);
	if (err) {
		kfree(entry);
		return err;
	}
	q->mmap = entry;
	mi->offset = rdma_user_mmap_get_offset(&entry->rdma);
	mi->size = q->buf_size;
	mi->pad = 0;
	return 0;
}

/**
 * srnic_queue_init() - allocate a ring
 * @sdev: the device
 * @q: the ring, embedded in its object
 * @udata: the verb's udata for a user ring (mmap-able), NULL for a kernel
 *	ring (plain kernel memory)
 * @num_elem: in: entries wanted; out: the capacity (a power of two minus
 *	one, at least what was wanted)
 * @elem_size: bytes per entry (1..SRNIC_QUEUE_MAX_ELEM_SIZE)
 * @dir: which side produces
 * @mi: out, user rings only: the offset and size the user mmaps
 *
 * Context: process context, may sleep.
 * Return: 0, -EINVAL for sizes out of range, or -ENOMEM.
 */
int srnic_queue_init(struct srnic_dev *sdev, struct srnic_queue *q,
		     struct ib_udata *udata, u32 *num_elem, u32 elem_size,
		     enum srnic_queue_dir dir, struct mminfo *mi)
{
	u32 slot_size, slots;
	size_t size;
	int err;

	if (*num_elem > SRNIC_QUEUE_MAX_ELEM || !elem_size ||
	    elem_size > SRNIC_QUEUE_MAX_ELEM_SIZE || WARN_ON(udata && !mi))
		return -EINVAL;

	slot_size = roundup_pow_of_two(max_t(u32, elem_size,
					     cache_line_size()));
	slots = roundup_pow_of_two(*num_elem + 1);
	size = struct_size(q->buf, data, (size_t)slots * slot_size);
	/* mminfo.size is a u32 */
	if (size > U32_MAX)
		return -EINVAL;

	memset(q, 0, sizeof(*q));
	q->sdev = sdev;
	q->dir = dir;
	q->elem_size = elem_size;
	q->log2_elem_size = ilog2(slot_size);
	q->index_mask = slots - 1;
	q->buf_size = size;
	/* Both zero the memory: a new ring starts empty, indices at 0. */
	q->buf = udata ? vmalloc_user(size) : vzalloc(size);
	if (!q->buf)
		return -ENOMEM;
	q->buf->log2_elem_size = q->log2_elem_size;
	q->buf->index_mask = q->index_mask;

	if (udata) {
		err = srnic_queue_mmap_insert(q, udata, mi);
		if (err)
			goto err_free_buf;
	}
	*num_elem = q->index_mask;
	return 0;

err_free_buf:
	vfree(q->buf);
	q->buf = NULL;
	return err;
}

/**
 * srnic_queue_cleanup() - free a ring
 * @q: the ring; no longer used by either kernel side
 *
 * A user ring's buffer is only unpublished here; it is freed when the user
 * has unmapped it too (srnic_mmap_free()).
 *
 * Context: process context, may sleep.
 */
void srnic_queue_cleanup(struct srnic_queue *q)
{
	if (q->mmap)
		rdma_user_mmap_entry_remove(&q->mmap->rdma);
	else
		vfree(q->buf);
	q->mmap = NULL;
	q->buf = NULL;
}

/*
 * Move the live entries of @old to the start of @new, then make @new the
 * ring. The index each side owns restarts in @new at the position the
 * protocol expects: consumer at 0, producer at the entry count.
 */
static int srnic_queue_swap_locked(struct srnic_queue *q,
				   struct srnic_queue *new, spinlock_t *lock)
{
	u32 count, cons, i;

	lockdep_assert_held(lock);

	if (srnic_queue_corrupt(q))
		return -EIO;
	count = srnic_queue_count(q);
	if (count > new->index_mask)
		return -EINVAL;

	cons = srnic_queue_consumer_index(q);
	for (i = 0; i < count; i++)
		memcpy(srnic_queue_addr(new, i), srnic_queue_addr(q, cons + i),
		       1U << q->log2_elem_size);

	new->buf->consumer_index = 0;
	new->buf->producer_index = count;
	new->index = new->dir == SRNIC_QUEUE_FROM_USER ? 0 : count;
	new->peer_seen = new->dir == SRNIC_QUEUE_FROM_USER ? count : 0;
	swap(*q, *new);
	return 0;
}

/**
 * srnic_queue_resize() - give a ring a new capacity, keeping its entries
 * @q: the ring
 * @udata: the verb's udata for a user ring, NULL for a kernel ring
 * @num_elem: in: entries wanted; out: the new capacity
 * @mi: out, user rings only: where the user maps the new buffer
 * @lock: the kernel side's lock; taken (irqsave) while the live entries
 *	are copied and the buffers swapped
 *
 * A user ring gets a new buffer and mmap offset; the user maps it once the
 * verb returns (the old one stays valid until unmapped). The user must not
 * move its own index meanwhile: rdma-core holds its queue lock across the
 * resize verb. If writing @mi back to the user fails after this returns,
 * the user keeps using a buffer the kernel no longer reads: only the user
 * itself is harmed.
 *
 * Context: process context, may sleep; @lock not held.
 * Return: 0; -EINVAL if the entries do not fit; -EIO if the peer's index is
 * corrupt; -ENOMEM.
 */
int srnic_queue_resize(struct srnic_queue *q, struct ib_udata *udata,
		       u32 *num_elem, struct mminfo *mi, spinlock_t *lock)
{
	struct srnic_queue new;
	unsigned long flags;
	u32 n = *num_elem;
	int err;

	err = srnic_queue_init(q->sdev, &new, udata, &n, q->elem_size,
			       q->dir, mi);
	if (err)
		return err;

	spin_lock_irqsave(lock, flags);
	err = srnic_queue_swap_locked(q, &new, lock);
	spin_unlock_irqrestore(lock, flags);

	/* On success @new now holds the old ring. */
	srnic_queue_cleanup(&new);
	if (!err)
		*num_elem = n;
	return err;
}

/**
 * srnic_queue_report_corrupt() - log a peer index that breaks the protocol
 * @q: the ring
 * @peer: the value read
 */
void srnic_queue_report_corrupt(const struct srnic_queue *q, u32 peer)
{
	ibdev_warn_ratelimited(&q->sdev->ib_dev,
			       "%s ring %s index %#x is corrupt (mask %#x, own index %#x, window from %#x)\n",
			       q->mmap ? "user" : "kernel",
			       q->dir == SRNIC_QUEUE_FROM_USER ? "producer" :
								 "consumer",
			       peer, q->index_mask, q->index, q->peer_seen);
}

/* An address space that mapped a ring of a srnic_ucontext (@mms). */
struct srnic_umm {
	struct list_head	node;
	struct mm_struct	*mm;
};

/**
 * srnic_ucontext_add_mm() - remember that @mm maps rings of @uc
 * @uc: the context
 * @mm: the address space, held by mmgrab() until srnic_ucontext_zap()
 *
 * Context: process context, the mmap lock of @mm held (mmap(2)).
 * Return: 0 or -ENOMEM.
 */
int srnic_ucontext_add_mm(struct srnic_ucontext *uc, struct mm_struct *mm)
{
	struct srnic_umm *umm;
	int err = 0;

	mutex_lock(&uc->mm_lock);
	list_for_each_entry(umm, &uc->mms, node)
		if (umm->mm == mm)
			goto out_unlock;
	umm = kmalloc(sizeof(*umm), GFP_KERNEL);
	if (!umm) {
		err = -ENOMEM;
		goto out_unlock;
	}
	mmgrab(mm);
	umm->mm = mm;
	list_add(&umm->node, &uc->mms);
out_unlock:
	mutex_unlock(&uc->mm_lock);
	return err;
}

/* Unmap every VMA of @ufile (a uverbs file) in @mm, if @mm still lives. */
static void srnic_zap_mm(struct mm_struct *mm, const void *ufile)
{
	VMA_ITERATOR(vmi, mm, 0);
	struct vm_area_struct *vma;

	if (!mmget_not_zero(mm))
		return;
	mmap_read_lock(mm);
	for_each_vma(vmi, vma)
		if (vma->vm_file && vma->vm_file->private_data == ufile)
			zap_vma_range(vma, vma->vm_start,
				      vma->vm_end - vma->vm_start);
	mmap_read_unlock(mm);
	mmput(mm);
}

/**
 * srnic_ucontext_zap() - unmap the rings of @uc wherever they are mapped
 * @uc: the context, being revoked or freed
 *
 * The mapped pages are freed then (their objects are gone already); the
 * VMAs stay, and fault. Forgets the address spaces.
 *
 * Context: process context; no mmap lock held (each is taken here, after
 * @uc->mm_lock is dropped: srnic_mmap() nests them the other way).
 */
void srnic_ucontext_zap(struct srnic_ucontext *uc)
{
	struct srnic_umm *umm, *next;
	LIST_HEAD(mms);

	mutex_lock(&uc->mm_lock);
	list_splice_init(&uc->mms, &mms);
	mutex_unlock(&uc->mm_lock);
	list_for_each_entry_safe(umm, next, &mms, node) {
		srnic_zap_mm(umm->mm, uc->ibuc.ufile);
		mmdrop(umm->mm);
		kfree(umm);
	}
}

/**
 * srnic_mmap() - ib_device_ops.mmap: map a user ring
 * @uctx: the user context the offset belongs to
 * @vma: a MAP_SHARED mapping exactly as long as the ring (page-rounded)
 *
 * Context: process context (mmap(2) on the uverbs file).
 * Return: 0, or -EINVAL for an unknown offset or a wrong mapping.
 */
int srnic_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *entry;
	unsigned long len = vma->vm_end - vma->vm_start;
	int err;

	entry = rdma_user_mmap_entry_get_pgoff(uctx, vma->vm_pgoff);
	if (!entry) {
		ibdev_dbg(uctx->device, "mmap: no ring at pgoff %#lx\n",
			  vma->vm_pgoff);
		return -EINVAL;
	}
	if (len != entry->npages << PAGE_SHIFT ||
	    !(vma->vm_flags & VM_SHARED)) {
		ibdev_dbg(uctx->device,
			  "mmap: pgoff %#lx: length %lu (ring %zu pages) or not MAP_SHARED\n",
			  vma->vm_pgoff, len, entry->npages);
		err = -EINVAL;
		goto out_put;
	}
	err = srnic_ucontext_add_mm(container_of(uctx, struct srnic_ucontext,
						 ibuc), vma->vm_mm);
	if (err)
		goto out_put;
	vm_flags_set(vma, VM_DONTCOPY | VM_DONTEXPAND);
	/* The VMA's PTEs hold the pages; nothing holds the entry (above). */
	err = remap_vmalloc_range(vma, to_srnic_mmap_entry(entry)->buf, 0);
out_put:
	rdma_user_mmap_entry_put(entry);
	return err;
}

/**
 * srnic_mmap_free() - ib_device_ops.mmap_free: the last reference is gone
 * @entry: a srnic_mmap_entry: neither a ring nor a VMA uses it any more
 *
 * Context: process context (munmap, exit, or a verb destroying the ring).
 */
void srnic_mmap_free(struct rdma_user_mmap_entry *entry)
{
	struct srnic_mmap_entry *e = to_srnic_mmap_entry(entry);

	vfree(e->buf);
	kfree(e);
}

const struct ib_device_ops srnic_queue_ops = {
	.mmap = srnic_mmap,
	.mmap_free = srnic_mmap_free,
};
