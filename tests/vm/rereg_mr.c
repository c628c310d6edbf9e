// SPDX-License-Identifier: GPL-2.0
/*
 * rereg_mr: ibv_rereg_mr on a native-mode device, run by
 * tests/vm/test_native.sh.
 *
 *   rereg_mr DEV GID_INDEX
 *   rereg_mr DEV GID_INDEX unsupported   (expects EOPNOTSUPP: a provider
 *                                         without rereg_mr)
 *
 * Two RC QPs on DEV connected to each other through GID_INDEX; side A
 * writes into side B's MR, which is reregistered between the writes:
 *   - TRANS to a new buffer: the keys stay, a WRITE lands in the new buffer
 *     and not in the old one, the old address is out of range;
 *   - ACCESS without REMOTE_WRITE: a WRITE fails with a remote access error
 *     (a READ still works); with it again, WRITEs work;
 *   - PD: a WRITE through a QP of the old PD fails; back, it works;
 *   - bad arguments: unknown flags (EINVAL from libibverbs), an access the
 *     kernel refuses (ZERO_BASED: EOPNOTSUPP), the MR unchanged after;
 *   - a memory window bound to the MR: EBUSY until it is deallocated.
 *
 * Prints one line per check, "ok NAME" or "not ok NAME: reason", then
 * "rereg_mr: done, N failed"; exits 0 when it ran to the end.
 */
#define _GNU_SOURCE
#include <unistd.h>

#include "vtest.h"

#define LEN		(64 * 1024)
#define WAIT_MS		20000
#define ACCESS		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ)

struct side {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct side a, b;	/* a writes into b's MR */
static int gid_index;

static bool side_create(struct side *s)
{
	s->cq = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	if (!s->cq)
		return false;
	s->qp = vt_rc_qp(pd, s->cq, 8);
	return s->qp;
}

/* One signaled RDMA op of @len from @s; its completion status. */
static int rdma_op(struct side *s, enum ibv_wr_opcode op, void *laddr,
		   uint32_t lkey, uint64_t raddr, uint32_t rkey, uint32_t len)
{
	return vt_rdma_op(s->qp, s->cq, WAIT_MS, op, (uintptr_t)laddr, lkey,
			  raddr, rkey, len);
}

/* Both QPs from any state (an error put them in ERR) to RTS again. */
static bool connect_sides(void)
{
	struct vt_conn c = { .sgid_index = gid_index, .access = ACCESS,
			     .timeout = 14, .rnr_retry = 7, .psn = 0x100 };

	return vt_qp_reset(a.qp, a.cq) && vt_qp_reset(b.qp, b.cq) &&
	       !vt_qp_connect_pair(a.qp, b.qp, &c);
}

static bool all(const uint8_t *p, size_t n, uint8_t v)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != v)
			return false;
	return true;
}

/* WRITE LEN bytes of @v from @src into @mr at @raddr; the status. */
static int write_into(struct ibv_mr *src, struct ibv_mr *mr, uint64_t raddr,
		      uint8_t v)
{
	memset(src->addr, v, LEN);
	return rdma_op(&a, IBV_WR_RDMA_WRITE, src->addr, src->lkey, raddr,
		       mr->rkey, LEN);
}

static void rereg_trans(struct ibv_mr *src, struct ibv_mr *mr, uint8_t *old,
			uint8_t *buf2)
{
	uint32_t lkey = mr->lkey, rkey = mr->rkey;
	int ret, st;

	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, buf2,
			   LEN, 0);
	if (!check("rereg TRANS to a new buffer", !ret, "ret %d errno %d",
		   ret, errno))
		return;
	check("rereg keeps the lkey and rkey",
	      mr->lkey == lkey && mr->rkey == rkey && mr->addr == buf2,
	      "lkey %#x->%#x rkey %#x->%#x", lkey, mr->lkey, rkey, mr->rkey);
	st = write_into(src, mr, (uintptr_t)buf2, 0x5a);
	check("WRITE lands in the new buffer, not the old one",
	      st == IBV_WC_SUCCESS && all(buf2, LEN, 0x5a) && all(old, LEN, 0),
	      "status %d", st);
	st = write_into(src, mr, (uintptr_t)old, 0x66);
	check("WRITE at the old address: remote access error",
	      st == IBV_WC_REM_ACCESS_ERR && all(old, LEN, 0), "status %d", st);
	connect_sides();
}

static void rereg_access(struct ibv_mr *src, struct ibv_mr *mr)
{
	uint64_t at = (uintptr_t)mr->addr;
	int ret, st;

	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!check("rereg ACCESS without REMOTE_WRITE", !ret,
		   "ret %d errno %d", ret, errno))
		return;
	st = write_into(src, mr, at, 0x11);
	check("WRITE into it: remote access error",
	      st == IBV_WC_REM_ACCESS_ERR && !all(mr->addr, LEN, 0x11),
	      "status %d", st);
	connect_sides();
	memset(src->addr, 0, LEN);
	st = rdma_op(&a, IBV_WR_RDMA_READ, src->addr, src->lkey, at, mr->rkey,
		     LEN);
	check("READ from it still works",
	      st == IBV_WC_SUCCESS && all(src->addr, LEN, 0x5a), "status %d",
	      st);
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   ACCESS | IBV_ACCESS_MW_BIND);
	st = ret ? -2 : write_into(src, mr, at, 0x22);
	check("rereg ACCESS with REMOTE_WRITE again: WRITE works",
	      st == IBV_WC_SUCCESS && all(mr->addr, LEN, 0x22),
	      "ret %d errno %d status %d", ret, errno, st);
}

static void rereg_pd(struct ibv_mr *src, struct ibv_mr *mr)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
	uint64_t at = (uintptr_t)mr->addr;
	int ret, st;

	if (!check("second PD", pd2, "%s", strerror(errno)))
		return;
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0);
	if (check("rereg PD", !ret && mr->pd == pd2, "ret %d errno %d", ret,
		  errno)) {
		st = write_into(src, mr, at, 0x33);
		check("WRITE through a QP of the old PD: remote access error",
		      st == IBV_WC_REM_ACCESS_ERR && all(mr->addr, LEN, 0x22),
		      "status %d", st);
		connect_sides();
	}
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd, NULL, 0, 0);
	st = ret ? -2 : write_into(src, mr, at, 0x44);
	check("rereg PD back: WRITE works",
	      st == IBV_WC_SUCCESS && all(mr->addr, LEN, 0x44),
	      "ret %d errno %d status %d", ret, errno, st);
	ret = ibv_dealloc_pd(pd2);
	check("the other PD is free again", !ret, "%s", strerror(ret));
}

static void rereg_bad(struct ibv_mr *src, struct ibv_mr *mr)
{
	uint64_t at = (uintptr_t)mr->addr;
	int ret, st;

	errno = 0;
	ret = ibv_rereg_mr(mr, 1 << 7, NULL, NULL, 0, 0);
	check("rereg with unknown flags: EINVAL",
	      ret == IBV_REREG_MR_ERR_INPUT && errno == EINVAL,
	      "ret %d errno %d", ret, errno);
	errno = 0;
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ZERO_BASED);
	check("rereg to an access srnic refuses (ZERO_BASED): EOPNOTSUPP",
	      ret == IBV_REREG_MR_ERR_CMD && errno == EOPNOTSUPP,
	      "ret %d errno %d", ret, errno);
	st = write_into(src, mr, at, 0x55);
	check("after a refused rereg the MR is unchanged: WRITE works",
	      st == IBV_WC_SUCCESS && all(mr->addr, LEN, 0x55), "status %d",
	      st);
}

static void rereg_bound_mw(struct ibv_mr *mr)
{
	struct ibv_mw_bind bind = {
		.wr_id = 7, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = mr, .addr = (uintptr_t)mr->addr,
			       .length = 4096,
			       .mw_access_flags = IBV_ACCESS_REMOTE_WRITE },
	};
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	int ret, st;

	if (!check("alloc a type 1 window", mw, "%s", strerror(errno)))
		return;
	ret = ibv_bind_mw(b.qp, mw, &bind);
	st = ret ? -2 : vt_wait_wc(b.cq, WAIT_MS, NULL);
	if (check("bind it to the MR", st == IBV_WC_SUCCESS,
		  "ret %d status %d", ret, st)) {
		errno = 0;
		ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL,
				   0, ACCESS | IBV_ACCESS_MW_BIND);
		check("rereg with a bound window: EBUSY",
		      ret == IBV_REREG_MR_ERR_CMD && errno == EBUSY,
		      "ret %d errno %d", ret, errno);
	}
	ret = ibv_dealloc_mw(mw);
	check("dealloc the window", !ret, "%s", strerror(ret));
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   ACCESS);
	check("rereg once the window is gone", !ret, "ret %d errno %d", ret,
	      errno);
}

int main(int argc, char **argv)
{
	uint8_t *s = NULL, *buf1 = NULL, *buf2 = NULL;
	struct ibv_mr *src, *mr;
	int ret;

	if (argc < 3 || (argc == 4 && strcmp(argv[3], "unsupported"))) {
		fprintf(stderr, "usage: rereg_mr DEV GID_INDEX [unsupported]\n");
		return 2;
	}
	gid_index = atoi(argv[2]);
	ctx = open_dev(argv[1]);
	if (!ctx) {
		bad("open device", "%s not found", argv[1]);
		goto out;
	}
	pd = ibv_alloc_pd(ctx);
	s = aligned_alloc(4096, LEN);
	buf1 = aligned_alloc(4096, LEN);
	buf2 = aligned_alloc(4096, LEN);
	if (!check("PD and buffers", pd && s && buf1 && buf2, "%s",
		   strerror(errno)))
		goto out;
	memset(buf1, 0, LEN);
	memset(buf2, 0, LEN);
	src = ibv_reg_mr(pd, s, LEN, ACCESS);
	mr = ibv_reg_mr(pd, buf1, LEN, ACCESS | IBV_ACCESS_MW_BIND);
	if (!check("MRs", src && mr, "%s", strerror(errno)))
		goto out;
	if (argc == 4) {
		errno = 0;
		ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL,
				   0, IBV_ACCESS_LOCAL_WRITE);
		check("ibv_rereg_mr: EOPNOTSUPP", ret && errno == EOPNOTSUPP,
		      "ret %d errno %d", ret, errno);
		goto out;
	}
	if (!check("two RC QPs connected through the GID",
		   side_create(&a) && side_create(&b) && connect_sides(),
		   "%s", strerror(errno)))
		goto out;
	rereg_trans(src, mr, buf1, buf2);
	rereg_access(src, mr);
	rereg_pd(src, mr);
	rereg_bad(src, mr);
	rereg_bound_mw(mr);
	ret = ibv_dereg_mr(mr);
	check("dereg the reregistered MR", !ret, "%s", strerror(ret));
out:
	printf("rereg_mr: done, %d failed\n", fails);
	return 0;
}
