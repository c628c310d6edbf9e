// SPDX-License-Identifier: GPL-2.0
/*
 * odp_mr: on-demand-paging MRs (IBV_ACCESS_ON_DEMAND), run by
 * tests/vm/test_odp.sh in both modes.
 *
 *   odp_mr DEV GID_INDEX
 *
 * Two RC QPs on DEV connected to each other through GID_INDEX. Side B's
 * "big" MR is an ODP MR over a 1 GiB anonymous mapping that is never
 * touched before the transfers; side A's "local" MR is an ODP MR over
 * 16 MiB, as untouched. Checks:
 *   - the device reports ODP for RC SEND, RECV, WRITE and READ;
 *   - registering the 1 GiB ODP MR adds nothing to VmPin (the pinned
 *     pages of /proc/self/status) and little to VmRSS, while a 16 MiB
 *     ordinary MR adds 16 MiB to VmPin (the measure works);
 *   - WRITE into, READ out of and SEND into untouched pages of the big MR
 *     (and from/into untouched local pages), every byte checked;
 *   - after them VmPin is unchanged and VmRSS grew by what was faulted in
 *     (far less than the MR);
 *   - madvise(MADV_DONTNEED) on a range of the big MR while registered: a
 *     READ of it gives zeros (the old pages are not used), a WRITE into it
 *     lands where the process sees it;
 *   - munmap of a range while registered: a WRITE or READ of it fails with
 *     a remote access error, a SEND from an unmapped local range with a
 *     local protection error; other ranges work again afterwards.
 *
 * Prints one line per check, "ok NAME" or "not ok NAME: reason", then
 * "odp_mr: done, N failed"; exits 0 when it ran to the end.
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <unistd.h>

#include "vtest.h"

#define BIG		(1UL << 30)
#define LOCAL		(16UL << 20)
#define PINNED		(16UL << 20)
#define XFER		(1UL << 20)
#define WAIT_MS		30000
#define ACCESS		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ)
#define ODP		(ACCESS | IBV_ACCESS_ON_DEMAND)

struct side {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct side a, b;	/* a is the requester, b the responder */
static int gid_index;
static uint8_t *big, *local;
static struct ibv_mr *big_mr, *local_mr;

/* A field of /proc/self/status in kB ("VmPin", "VmRSS"); -1 if missing. */
static long status_kb(const char *key)
{
	char line[256];
	size_t n = strlen(key);
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':')
			v = strtol(line + n + 1, NULL, 10);
	fclose(f);
	return v;
}

static bool side_create(struct side *s)
{
	s->cq = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	if (!s->cq)
		return false;
	s->qp = vt_rc_qp(pd, s->cq, 8);
	return s->qp;
}

/* Both QPs from any state to RTS (again); RNR retries without end. */
static bool connect_sides(void)
{
	struct vt_conn c = { .sgid_index = gid_index, .access = ACCESS,
			     .timeout = 14, .rnr_retry = 7, .psn = 0x100 };

	return vt_qp_reset(a.qp, a.cq) && vt_qp_reset(b.qp, b.cq) &&
	       !vt_qp_connect_pair(a.qp, b.qp, &c);
}

/* One signaled @op of @len from A's @laddr; its completion status. */
static int rdma_op(enum ibv_wr_opcode op, void *laddr, void *raddr,
		   uint32_t len)
{
	return vt_rdma_op(a.qp, a.cq, WAIT_MS, op, (uintptr_t)laddr,
			  local_mr->lkey, (uintptr_t)raddr, big_mr->rkey, len);
}

/* A SEND of @len from A's @laddr into B's receive buffer @raddr. */
static int send_into(void *laddr, void *raddr, uint32_t len, int *recv_st)
{
	struct ibv_sge sge = { .addr = (uintptr_t)raddr, .length = len,
			       .lkey = big_mr->lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *badwr;
	int st;

	if (ibv_post_recv(b.qp, &wr, &badwr))
		return -2;
	st = rdma_op(IBV_WR_SEND, laddr, NULL, len);
	*recv_st = st == IBV_WC_SUCCESS ? vt_wait_wc(b.cq, WAIT_MS, NULL) : -3;
	return st;
}

static void fill(uint8_t *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 31 + seed + (i >> 12));
}

static bool same(const uint8_t *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != (uint8_t)(i * 31 + seed + (i >> 12)))
			return false;
	return true;
}

static bool zero(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static void check_caps(void)
{
	uint32_t want = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
			IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ;
	struct ibv_device_attr_ex attr;
	int err = ibv_query_device_ex(ctx, NULL, &attr);

	check("query_device_ex: ODP supported, RC SEND/RECV/WRITE/READ",
	      !err && (attr.odp_caps.general_caps & IBV_ODP_SUPPORT) &&
	      (attr.odp_caps.per_transport_caps.rc_odp_caps & want) == want,
	      "err %d general %#llx rc %#x", err,
	      (unsigned long long)attr.odp_caps.general_caps,
	      attr.odp_caps.per_transport_caps.rc_odp_caps);
}

/* Register the ODP MRs; VmPin and VmRSS around it, and around a pinned MR. */
static bool register_mrs(long *pin0, long *rss0)
{
	long pin, rss;
	struct ibv_mr *mr;
	void *p;

	big = mmap(NULL, BIG, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	local = mmap(NULL, LOCAL, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (big == MAP_FAILED || local == MAP_FAILED)
		return false;
	*pin0 = status_kb("VmPin");
	*rss0 = status_kb("VmRSS");
	big_mr = ibv_reg_mr(pd, big, BIG, ODP);
	local_mr = ibv_reg_mr(pd, local, LOCAL, ODP);
	if (!check("register ODP MRs (1 GiB and 16 MiB, untouched)",
		   big_mr && local_mr, "%s", strerror(errno)))
		return false;
	pin = status_kb("VmPin");
	rss = status_kb("VmRSS");
	printf("# VmPin %ld -> %ld kB, VmRSS %ld -> %ld kB after registering 1 GiB + 16 MiB ODP\n",
	       *pin0, pin, *rss0, rss);
	check("ODP registration pins nothing (VmPin unchanged)",
	      pin >= 0 && pin == *pin0, "VmPin %ld -> %ld kB", *pin0, pin);
	check("ODP registration faults nothing in (VmRSS +< 8 MiB)",
	      rss - *rss0 < 8192, "VmRSS %ld -> %ld kB", *rss0, rss);

	/* the measure works: an ordinary MR pins its pages */
	p = aligned_alloc(4096, PINNED);
	mr = p ? ibv_reg_mr(pd, p, PINNED, ACCESS) : NULL;
	pin = status_kb("VmPin");
	printf("# VmPin %ld kB with an ordinary 16 MiB MR\n", pin);
	check("an ordinary 16 MiB MR shows in VmPin (+16 MiB)",
	      mr && pin - *pin0 == (long)(PINNED >> 10), "VmPin %ld -> %ld kB",
	      *pin0, pin);
	if (mr)
		ibv_dereg_mr(mr);
	free(p);
	return true;
}

static void transfers(void)
{
	uint8_t *w = big + 512 * (1UL << 20), *r = big + 700 * (1UL << 20);
	uint8_t *s = big + 300 * (1UL << 20) + 100;
	int st, rst;

	/* WRITE: local pages touched by the CPU, remote ones untouched */
	fill(local, XFER, 1);
	st = rdma_op(IBV_WR_RDMA_WRITE, local, w, XFER);
	check("WRITE 1 MiB into untouched ODP pages, bytes checked",
	      st == IBV_WC_SUCCESS && same(w, XFER, 1), "status %d", st);
	/* READ: into untouched local pages */
	fill(r, XFER, 2);
	st = rdma_op(IBV_WR_RDMA_READ, local + 4 * XFER, r, XFER);
	check("READ 1 MiB into untouched local ODP pages, bytes checked",
	      st == IBV_WC_SUCCESS && same(local + 4 * XFER, XFER, 2),
	      "status %d", st);
	/* READ of untouched remote pages: zeros */
	memset(local, 0xee, XFER);
	st = rdma_op(IBV_WR_RDMA_READ, local, big + 900 * (1UL << 20), XFER);
	check("READ 1 MiB of untouched ODP pages: zeros",
	      st == IBV_WC_SUCCESS && zero(local, XFER), "status %d", st);
	/* SEND: from untouched-then-filled local pages into untouched ones */
	fill(local + 8 * XFER, 256 * 1024, 3);
	st = send_into(local + 8 * XFER, s, 256 * 1024, &rst);
	check("SEND 256 KiB into an untouched ODP receive buffer, bytes checked",
	      st == IBV_WC_SUCCESS && rst == IBV_WC_SUCCESS &&
	      same(s, 256 * 1024, 3), "status %d recv %d", st, rst);
}

static void dontneed(void)
{
	uint8_t *w = big + 512 * (1UL << 20);
	int st;

	/* w holds pattern 1 from transfers(): drop its pages */
	if (!check("madvise(MADV_DONTNEED) 1 MiB while registered",
		   !madvise(w, XFER, MADV_DONTNEED), "%s", strerror(errno)))
		return;
	memset(local, 0xee, XFER);
	st = rdma_op(IBV_WR_RDMA_READ, local, w, XFER);
	check("READ after DONTNEED: zeros, not the old pages",
	      st == IBV_WC_SUCCESS && zero(local, XFER), "status %d", st);
	fill(local, XFER, 4);
	st = rdma_op(IBV_WR_RDMA_WRITE, local, w, XFER);
	check("WRITE after DONTNEED lands where the process sees it",
	      st == IBV_WC_SUCCESS && same(w, XFER, 4), "status %d", st);
}

static void unmapped(void)
{
	uint8_t *gone = big + 800 * (1UL << 20);
	uint8_t *lgone = local + 12 * XFER;
	int st, rst;

	/* fault it in first, so the invalidation has pages to take away */
	fill(local, XFER, 5);
	st = rdma_op(IBV_WR_RDMA_WRITE, local, gone, XFER);
	check("WRITE into a range before it is unmapped",
	      st == IBV_WC_SUCCESS && same(gone, XFER, 5), "status %d", st);
	if (!check("munmap 1 MiB of the big MR while registered",
		   !munmap(gone, XFER), "%s", strerror(errno)))
		return;
	st = rdma_op(IBV_WR_RDMA_WRITE, local, gone, XFER);
	check("WRITE into the unmapped range: remote access error",
	      st == IBV_WC_REM_ACCESS_ERR, "status %d", st);
	connect_sides();
	st = rdma_op(IBV_WR_RDMA_READ, local, gone + 4096, 4096);
	check("READ of the unmapped range: remote access error",
	      st == IBV_WC_REM_ACCESS_ERR, "status %d", st);
	connect_sides();
	if (!check("munmap 1 MiB of the local MR while registered",
		   !munmap(lgone, XFER), "%s", strerror(errno)))
		return;
	st = send_into(lgone, big + 310 * (1UL << 20), 4096, &rst);
	check("SEND from an unmapped local range: local protection error",
	      st == IBV_WC_LOC_PROT_ERR, "status %d", st);
	connect_sides();
	fill(local, XFER, 6);
	st = rdma_op(IBV_WR_RDMA_WRITE, local, big + 600 * (1UL << 20), XFER);
	check("WRITE into a mapped range works again after the errors",
	      st == IBV_WC_SUCCESS && same(big + 600 * (1UL << 20), XFER, 6),
	      "status %d", st);
}

int main(int argc, char **argv)
{
	long pin0, rss0, pin, rss;

	if (argc < 3) {
		fprintf(stderr, "usage: %s DEV GID_INDEX\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	gid_index = atoi(argv[2]);
	ctx = open_dev(argv[1]);
	if (!ctx) {
		bad("open device", "%s not found", argv[1]);
		goto out;
	}
	pd = ibv_alloc_pd(ctx);
	if (!pd || !side_create(&a) || !side_create(&b)) {
		bad("PD, CQs and QPs", "%s", strerror(errno));
		goto out;
	}
	check_caps();
	if (!register_mrs(&pin0, &rss0))
		goto out;
	if (!check("connect the QPs", connect_sides(), "%s", strerror(errno)))
		goto out;
	transfers();
	pin = status_kb("VmPin");
	rss = status_kb("VmRSS");
	printf("# VmPin %ld kB, VmRSS %ld -> %ld kB after the transfers\n",
	       pin, rss0, rss);
	check("after the transfers nothing is pinned (VmPin unchanged)",
	      pin == pin0, "VmPin %ld -> %ld kB", pin0, pin);
	check("only what was touched is mapped (VmRSS +< 64 MiB of 1 GiB)",
	      rss - rss0 < 65536, "VmRSS %ld -> %ld kB", rss0, rss);
	dontneed();
	unmapped();
	check("deregister the ODP MRs",
	      !ibv_dereg_mr(big_mr) && !ibv_dereg_mr(local_mr), "%s",
	      strerror(errno));
out:
	printf("odp_mr: done, %d failed\n", fails);
	return 0;
}
