// SPDX-License-Identifier: GPL-2.0
/*
 * dmabuf_mr: RDMA into and out of a dma-buf MR (ibv_reg_dmabuf_mr), run by
 * tests/vm/test_native.sh. No GPU here: a dma-buf of system memory stands
 * in for device memory: a buffer of vgem (the virtual GPU driver: a DRM
 * dumb buffer exported through PRIME, as a GPU's would be), of the system
 * DMA heap (/dev/dma_heap/system) or of udmabuf (a sealed memfd,
 * /dev/udmabuf), whichever the third argument names. Debian's 6.1 has only
 * vgem; 6.12 has all three.
 *
 *   dmabuf_mr DEV GID_INDEX vgem|heap|udmabuf
 *   dmabuf_mr DEV GID_INDEX unsupported    (a vgem buffer; expects
 *                                           EOPNOTSUPP: a provider without
 *                                           reg_dmabuf_mr)
 *
 * Two RC QPs on DEV connected to each other through GID_INDEX (loopback on
 * the wire path), one side's buffer a plain MR, the other's a dma-buf MR
 * at a page-unaligned offset of the buffer. RDMA WRITE into it, RDMA READ
 * out of it, SEND out of it and into it, every byte checked through the
 * buffer's own CPU mapping. Then the buffer's fd and mapping are closed
 * while it is registered: the MR keeps the buffer (a WRITE still lands and
 * a READ brings it back), deregistration frees it. Bad fds and ranges give
 * errors.
 *
 * Prints one line per check, "ok NAME" or "not ok NAME: reason", then
 * "dmabuf_mr: done, N failed"; exits 0 when it ran to the end.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <drm/drm.h>
#include <drm/drm_mode.h>
#include <linux/dma-buf.h>
#include <linux/dma-heap.h>
#include <linux/udmabuf.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vtest.h"

#define BUF_LEN		(1 << 20)	/* the dma-buf */
#define MR_OFF		1000		/* the MR starts here in it */
#define MR_LEN		(BUF_LEN - 2 * MR_OFF)
#define DMR_IOVA	(0x7000000000ull + MR_OFF)	/* the MR's address */
#define WAIT_MS		20000
#define ACCESS		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ)

struct dbuf {
	int fd;			/* the dma-buf */
	int memfd;		/* udmabuf: the memfd behind it; else -1 */
	uint8_t *map;		/* CPU view of the buffer */
};

/* The vgem DRM device, opened; -1 if there is none. */
static int vgem_open(void)
{
	char path[32], name[16];
	int i, fd;

	for (i = 0; i < 16; i++) {
		struct drm_version v = { .name = name, .name_len = sizeof(name) - 1 };

		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		memset(name, 0, sizeof(name));
		if (!ioctl(fd, DRM_IOCTL_VERSION, &v) && !strcmp(name, "vgem"))
			return fd;
		close(fd);
	}
	errno = ENODEV;
	return -1;
}

/* A vgem dumb buffer of BUF_LEN bytes exported as a dma-buf, mapped. */
static int dbuf_vgem(struct dbuf *b)
{
	struct drm_mode_create_dumb c = { .width = 1024, .bpp = 32,
					  .height = BUF_LEN / 4096 };
	struct drm_prime_handle h = { .flags = DRM_CLOEXEC | DRM_RDWR };
	int card = vgem_open(), err = 0;

	if (card < 0)
		return -errno;
	errno = 0;
	if (ioctl(card, DRM_IOCTL_MODE_CREATE_DUMB, &c) ||
	    c.size < BUF_LEN) {
		err = errno ? -errno : -ENOSPC;
		goto out;
	}
	h.handle = c.handle;
	if (ioctl(card, DRM_IOCTL_PRIME_HANDLE_TO_FD, &h)) {
		err = -errno;
		goto out;
	}
	b->fd = h.fd;
	b->memfd = -1;
	b->map = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE, MAP_SHARED,
		      b->fd, 0);
	if (b->map == MAP_FAILED)
		err = -errno;
out:
	/* the dma-buf holds the buffer: the GEM handle and card can go */
	close(card);
	return err;
}

/* A dma-buf of BUF_LEN bytes from the system heap, mapped. */
static int dbuf_heap(struct dbuf *b)
{
	struct dma_heap_allocation_data a = {
		.len = BUF_LEN,
		.fd_flags = O_RDWR | O_CLOEXEC,
	};
	int heap = open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC);

	if (heap < 0)
		return -errno;
	if (ioctl(heap, DMA_HEAP_IOCTL_ALLOC, &a) < 0) {
		int err = -errno;

		close(heap);
		return err;
	}
	close(heap);
	b->fd = a.fd;
	b->memfd = -1;
	b->map = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE, MAP_SHARED,
		      b->fd, 0);
	return b->map == MAP_FAILED ? -errno : 0;
}

/* A dma-buf over a sealed memfd (udmabuf), mapped through the memfd. */
static int dbuf_udmabuf(struct dbuf *b)
{
	struct udmabuf_create c = { .flags = UDMABUF_FLAGS_CLOEXEC,
				    .size = BUF_LEN };
	int dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);

	if (dev < 0)
		return -errno;
	b->memfd = memfd_create("dmabuf_mr", MFD_ALLOW_SEALING);
	if (b->memfd < 0 || ftruncate(b->memfd, BUF_LEN) < 0 ||
	    fcntl(b->memfd, F_ADD_SEALS, F_SEAL_SHRINK) < 0)
		goto fail;
	c.memfd = b->memfd;
	b->fd = ioctl(dev, UDMABUF_CREATE, &c);
	if (b->fd < 0)
		goto fail;
	close(dev);
	b->map = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE, MAP_SHARED,
		      b->memfd, 0);
	return b->map == MAP_FAILED ? -errno : 0;
fail:
	close(dev);
	return -errno;
}

/* Bracket CPU access to a heap buffer (a no-op cost for udmabuf's memfd). */
static void dbuf_sync(struct dbuf *b, bool end)
{
	struct dma_buf_sync s = {
		.flags = DMA_BUF_SYNC_RW |
			 (end ? DMA_BUF_SYNC_END : DMA_BUF_SYNC_START),
	};

	if (b->fd >= 0)
		ioctl(b->fd, DMA_BUF_IOCTL_SYNC, &s);
}

static void pattern(uint8_t *p, size_t n, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;
	size_t i;

	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = x;
	}
}

/* First differing offset of @got against pattern @seed, or -1. */
static long diff_at(const uint8_t *got, size_t n, uint32_t seed)
{
	uint8_t *want = malloc(n);
	long at = -1;
	size_t i;

	if (!want)
		return 0;
	pattern(want, n, seed);
	for (i = 0; i < n && at < 0; i++)
		if (got[i] != want[i])
			at = i;
	free(want);
	return at;
}

struct side {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct side a, b;	/* a: the plain MR's side; b: the dma-buf's */

static bool side_create(struct side *s)
{
	s->cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!s->cq)
		return false;
	s->qp = vt_rc_qp(pd, s->cq, 8);
	return s->qp;
}

/*
 * One signaled RDMA op of @len from @s (local @lkey/@laddr, remote
 * @rkey/@raddr); its completion status.
 */
static int rdma_op(struct side *s, enum ibv_wr_opcode op, uint64_t laddr,
		   uint32_t lkey, uint64_t raddr, uint32_t rkey, uint32_t len)
{
	return vt_rdma_op(s->qp, s->cq, WAIT_MS, op, laddr, lkey, raddr, rkey,
			  len);
}

static int post_recv(struct side *s, uint64_t addr, uint32_t lkey,
		     uint32_t len)
{
	struct ibv_sge sge = { .addr = addr, .length = len, .lkey = lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *badwr;

	return ibv_post_recv(s->qp, &wr, &badwr);
}

/* SEND @len from @from (lkey) into @to's posted receive; both complete. */
static int send_recv(struct side *from, uint64_t saddr, uint32_t skey,
		     struct side *to, uint64_t raddr, uint32_t rkey,
		     uint32_t len)
{
	int err = post_recv(to, raddr, rkey, len);

	if (err)
		return err;
	err = rdma_op(from, IBV_WR_SEND, saddr, skey, 0, 0, len);
	return err ? err : vt_wait_wc(to->cq, WAIT_MS, NULL);
}

static bool connect_sides(int gid_index)
{
	struct vt_conn c = { .sgid_index = gid_index, .access = ACCESS,
			     .timeout = 14, .rnr_retry = 7, .psn = 0x100 };

	return !vt_qp_connect_pair(a.qp, b.qp, &c);
}

/* The whole exchange against dma-buf MR @dmr over @d; plain MR @pmr/@p. */
static void exchange(struct dbuf *d, struct ibv_mr *dmr, struct ibv_mr *pmr,
		     uint8_t *p)
{
	uint64_t iova = DMR_IOVA;
	uint8_t *dview = d->map + MR_OFF;
	long at;
	int st;

	/* RDMA WRITE into the dma-buf MR */
	pattern(p, MR_LEN, 1);
	st = rdma_op(&a, IBV_WR_RDMA_WRITE, (uintptr_t)p, pmr->lkey, iova,
		     dmr->rkey, MR_LEN);
	dbuf_sync(d, false);
	at = st ? -2 : diff_at(dview, MR_LEN, 1);
	dbuf_sync(d, true);
	check("RDMA WRITE into the dma-buf MR, every byte", !st && at < 0,
	      "status %d, first difference at %ld", st, at);
	dbuf_sync(d, false);
	check("bytes around the MR untouched", dview[-1] == 0 &&
	      dview[MR_LEN] == 0, "before %u after %u", dview[-1],
	      dview[MR_LEN]);
	dbuf_sync(d, true);

	/* RDMA READ out of it, after the CPU rewrote it */
	dbuf_sync(d, false);
	pattern(dview, MR_LEN, 2);
	dbuf_sync(d, true);
	memset(p, 0, MR_LEN);
	st = rdma_op(&a, IBV_WR_RDMA_READ, (uintptr_t)p, pmr->lkey, iova,
		     dmr->rkey, MR_LEN);
	at = st ? -2 : diff_at(p, MR_LEN, 2);
	check("RDMA READ out of the dma-buf MR, every byte", !st && at < 0,
	      "status %d, first difference at %ld", st, at);

	/* SEND gathered from it, SEND scattered into it */
	memset(p, 0, MR_LEN);
	st = send_recv(&b, iova, dmr->lkey, &a, (uintptr_t)p, pmr->lkey,
		       MR_LEN);
	at = st ? -2 : diff_at(p, MR_LEN, 2);
	check("SEND from the dma-buf MR, every byte", !st && at < 0,
	      "status %d, first difference at %ld", st, at);
	pattern(p, MR_LEN, 3);
	st = send_recv(&a, (uintptr_t)p, pmr->lkey, &b, iova, dmr->lkey,
		       MR_LEN);
	dbuf_sync(d, false);
	at = st ? -2 : diff_at(dview, MR_LEN, 3);
	dbuf_sync(d, true);
	check("SEND into the dma-buf MR, every byte", !st && at < 0,
	      "status %d, first difference at %ld", st, at);
}

/* Bad arguments: errors, no MR. */
static void bad_args(struct dbuf *d)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_dmabuf_mr(pd, 0, 4096, 0, 12345, ACCESS);
	check("an fd that is no file: EBADF", !mr && errno == EBADF,
	      "mr %p errno %d", (void *)mr, errno);
	errno = 0;
	mr = ibv_reg_dmabuf_mr(pd, 0, 4096, 0, 0, ACCESS);
	check("a file that is no dma-buf: EINVAL", !mr && errno == EINVAL,
	      "mr %p errno %d", (void *)mr, errno);
	errno = 0;
	mr = ibv_reg_dmabuf_mr(pd, BUF_LEN - 4096, 8192, 0, d->fd, ACCESS);
	check("a range past the buffer's end: EINVAL", !mr && errno == EINVAL,
	      "mr %p errno %d", (void *)mr, errno);
}

int main(int argc, char **argv)
{
	struct dbuf d = { .fd = -1, .memfd = -1, .map = MAP_FAILED };
	struct ibv_mr *dmr, *pmr;
	uint8_t *p;
	int err;

	if (argc != 4) {
		fprintf(stderr, "usage: dmabuf_mr DEV GID_INDEX vgem|heap|udmabuf|unsupported\n");
		return 2;
	}
	ctx = open_dev(argv[1]);
	if (!ctx) {
		bad("open device", "%s not found", argv[1]);
		goto out;
	}
	pd = ibv_alloc_pd(ctx);
	if (!pd) {
		bad("ibv_alloc_pd", "%s", strerror(errno));
		goto out;
	}
	if (!strcmp(argv[3], "udmabuf"))
		err = dbuf_udmabuf(&d);
	else if (!strcmp(argv[3], "heap"))
		err = dbuf_heap(&d);
	else
		err = dbuf_vgem(&d);
	if (err) {
		bad("make a dma-buf", "%s: %s", argv[3], strerror(-err));
		goto out;
	}
	errno = 0;
	dmr = ibv_reg_dmabuf_mr(pd, MR_OFF, MR_LEN, DMR_IOVA, d.fd, ACCESS);
	if (!strcmp(argv[3], "unsupported")) {
		check("ibv_reg_dmabuf_mr: EOPNOTSUPP", !dmr &&
		      errno == EOPNOTSUPP, "mr %p errno %d", (void *)dmr, errno);
		goto out;
	}
	if (!check("ibv_reg_dmabuf_mr", dmr, "%s", strerror(errno)))
		goto out;
	p = aligned_alloc(4096, MR_LEN + 4096);
	pmr = p ? ibv_reg_mr(pd, p, MR_LEN, ACCESS) : NULL;
	if (!check("plain MR", pmr, "%s", strerror(errno)))
		goto out;
	if (!check("two RC QPs connected through the GID",
		   side_create(&a) && side_create(&b) &&
		   connect_sides(atoi(argv[2])), "%s", strerror(errno)))
		goto out;

	exchange(&d, dmr, pmr, p);
	bad_args(&d);

	/* The buffer's every other holder lets go: the MR keeps it. */
	munmap(d.map, BUF_LEN);
	close(d.fd);
	if (d.memfd >= 0)
		close(d.memfd);
	pattern(p, MR_LEN, 4);
	err = rdma_op(&a, IBV_WR_RDMA_WRITE, (uintptr_t)p, pmr->lkey,
		      DMR_IOVA, dmr->rkey, MR_LEN);
	memset(p, 0, MR_LEN);
	err = err ? err : rdma_op(&a, IBV_WR_RDMA_READ, (uintptr_t)p,
				  pmr->lkey, DMR_IOVA, dmr->rkey, MR_LEN);
	check("fd and mapping closed while registered: WRITE then READ back",
	      !err && diff_at(p, MR_LEN, 4) < 0, "status %d", err);
	err = ibv_dereg_mr(dmr);
	check("deregistration frees the buffer", !err, "%s", strerror(err));
out:
	printf("dmabuf_mr: done, %d failed\n", fails);
	return 0;
}
