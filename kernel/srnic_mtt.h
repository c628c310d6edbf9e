/* SPDX-License-Identifier: GPL-2.0 */
/*
 * srnic memory translation table (MTT): how an MR's iova becomes pages, and
 * the data-path accessors that copy through it (srnic_mtt.c).
 *
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
 * The table lives in struct srnic_mr (srnic_mr.h: @page_shift, @offset,
 * @blocks, @nblocks), filled by registration in srnic_mr.c.
 */
#ifndef SRNIC_MTT_H
#define SRNIC_MTT_H

#include <linux/skbuff.h>
#include <linux/types.h>

struct srnic_mr;

/*
 * Data-path accessors of an MR from srnic_mr_get_lkey()/_rkey(). Any
 * context up to softirq.
 *
 * Copies between an MR range and kernel memory. The range was checked at
 * lookup; a translation outside the table only WARNs (and copies nothing
 * more). Return: 0, or for an ODP MR -EAGAIN (a page is not faulted in
 * yet; a fault is queued and nothing was copied) or -EFAULT (a page failed
 * to fault), or -EFAULT from a translation that failed.
 */
int srnic_mr_copy_to(struct srnic_mr *mr, u64 iova, const void *src, u32 len);
int srnic_mr_copy_from(struct srnic_mr *mr, u64 iova, void *dst, u32 len);

/**
 * srnic_mr_copy_from_skb() - RX: copy skb payload into an MR
 * @mr: the MR
 * @iova: where to
 * @skb: the packet, linear or not (it is not linearized)
 * @off: offset in @skb
 * @len: bytes
 *
 * Return: 0, or -EFAULT if @skb holds less than @off + @len bytes (or the
 * translation failed); for an ODP MR also -EAGAIN, as srnic_mr_copy_to().
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
 * address outside the linear map, any page of an ODP MR): the caller then
 * copies instead.
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
 * memory behind it is not 8-byte aligned (IBA: misaligned atomic) or the
 * MR is an ODP MR (whose page may go once mapped: srnic_mr_atomic()). An
 * aligned u64 never crosses a page, let alone a block.
 */
u64 *srnic_mr_atomic_map(struct srnic_mr *mr, u64 iova);
void srnic_mr_atomic_unmap(u64 *p);

/**
 * srnic_mr_atomic() - run an atomic operation on the u64 at @iova of @mr
 * @mr: the MR (the 8 bytes were range- and access-checked at lookup)
 * @iova: address of the u64
 * @op: the operation, called with the u64 mapped; for an ODP MR under the
 *	MR's ODP lock, so it may take no lock but an innermost one
 * @ctx: @op's argument
 *
 * Any MR, ODP ones included (their page must be there: srnic_odp.h).
 * Return: 0 (@op ran); -EINVAL if @iova or the memory behind it is not
 * 8-byte aligned; for an ODP MR -EAGAIN (the page is not faulted in; a
 * fault is queued) or -EFAULT (its fault failed). @op ran only on 0.
 */
int srnic_mr_atomic(struct srnic_mr *mr, u64 iova,
		    void (*op)(u64 *p, void *ctx), void *ctx);

#endif /* SRNIC_MTT_H */
