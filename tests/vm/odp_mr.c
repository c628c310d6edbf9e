// SPDX-License-Identifier: GPL-2.0
/*
 * odp_mr: on-demand-paging MRs (IBV_ACCESS_ON_DEMAND), run by
 * tests/vm/test_odp.sh in both modes.
 *
 *   odp_mr DEV GID_INDEX [native] [3<DEV's hw_counters/send_rnr_err]
 *
 * Two RC QPs on DEV connected to each other through GID_INDEX. Side B's
 * "big" MR is an ODP MR over a 1 GiB anonymous mapping that is never
 * touched before the transfers; side A's "local" MR is an ODP MR over
 * 16 MiB, as untouched. Checks:
 *   - the device reports ODP for RC SEND, RECV, WRITE, READ and atomics;
 *   - registering the 1 GiB ODP MR adds nothing to VmPin (the pinned
 *     pages of /proc/self/status) and little to VmRSS, while a 16 MiB
 *     ordinary MR adds 16 MiB to VmPin (the measure works);
 *   - WRITE into, READ out of and SEND into untouched pages of the big MR
 *     (and from/into untouched local pages), every byte checked;
 *   - after them VmPin is unchanged and VmRSS grew by what was faulted in
 *     (far less than the MR);
 *   - FETCH_ADDs and CMP_SWPs on untouched pages of the big MR, their
 *     results into untouched local pages: the right values on both sides,
 *     after RNR NAKs (the responder's send_rnr_err moves: a fault);
 *   - native (srnic's provider): ibv_advise_mr() PREFETCH_WRITE (FLUSH)
 *     and PREFETCH of untouched ranges: a WRITE into and a READ of them
 *     then meet no RNR NAK (send_rnr_err stays, while it moves for a WRITE
 *     into an untouched range without advice); PREFETCH_NO_FAULT takes the
 *     pages the process has (a READ of them meets no RNR NAK) and faults
 *     none in (a WRITE into an untouched range it named meets RNR NAKs);
 *     VmPin stays; a bad lkey and a range past the MR give EFAULT. Default
 *     mode: the stock provider has no advise_mr (EOPNOTSUPP);
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
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vtest.h"

#define BIG		(1UL << 30)
#define LOCAL		(16UL << 20)
#define PINNED		(16UL << 20)
#define XFER		(1UL << 20)
#define WAIT_MS		30000
#define ACCESS		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)
#define MIB		(1UL << 20)
#define ODP		(ACCESS | IBV_ACCESS_ON_DEMAND)

struct side {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct side a, b;	/* a is the requester, b the responder */
static int gid_index;
static const char *dev_name;
static bool native;
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

/*
 * The device's RNR NAKs sent (both QPs are on it); -1 if unreadable. From
 * fd 3 if the caller opened DEV's send_rnr_err there (a network namespace
 * may not show the device's sysfs), else from sysfs. ib_core answers a
 * sysfs hw_counters read from a copy up to its lifespan old (10 ms, in
 * jiffies): an atomic's RNR NAK and retry can both fit in that, and the
 * read after them showed the read before (on 7.3, once). Waiting 30 ms
 * first makes every read fresh.
 */
static long rnr_naks(void)
{
	char path[256], buf[32];
	ssize_t n;
	int fd;

	usleep(30000);
	n = pread(3, buf, sizeof(buf) - 1, 0);
	if (n <= 0) {
		snprintf(path, sizeof(path),
			 "/sys/class/infiniband/%s/ports/1/hw_counters/send_rnr_err",
			 dev_name);
		fd = open(path, O_RDONLY);
		n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		if (fd >= 0)
			close(fd);
	}
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return strtol(buf, NULL, 10);
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

/* One signaled atomic from A into B's big MR, its result at @res. */
static int atomic_op(enum ibv_wr_opcode op, uint64_t *res, void *raddr,
		     uint64_t cmp_add, uint64_t swap)
{
	struct ibv_sge sge = { .addr = (uintptr_t)res, .length = sizeof(*res),
			       .lkey = local_mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.atomic = { .remote_addr = (uintptr_t)raddr,
			       .compare_add = cmp_add, .swap = swap,
			       .rkey = big_mr->rkey },
	}, *badwr;
	int err = ibv_post_send(a.qp, &wr, &badwr);

	return err ? err : vt_wait_wc(a.cq, WAIT_MS, NULL);
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
			IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
			IBV_ODP_SUPPORT_ATOMIC;
	struct ibv_device_attr_ex attr;
	int err = ibv_query_device_ex(ctx, NULL, &attr);

	check("query_device_ex: ODP supported, RC SEND/RECV/WRITE/READ/ATOMIC",
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

/*
 * Atomics on untouched pages of the big MR, their results into untouched
 * pages of the local one: RNR NAKs while the target pages are faulted in,
 * then the right values.
 */
static void atomics(void)
{
	uint64_t *t1 = (uint64_t *)(big + 100 * MIB);
	uint64_t *t2 = (uint64_t *)(big + 150 * MIB + 8);
	uint64_t *res1 = (uint64_t *)(local + 13 * MIB);
	uint64_t *res2 = (uint64_t *)(local + 14 * MIB + 16);
	uint64_t *res3 = (uint64_t *)(local + 15 * MIB + 24);
	long r0 = rnr_naks();
	int st;

	st = atomic_op(IBV_WR_ATOMIC_FETCH_AND_ADD, res1, t1, 7, 0);
	check("FETCH_ADD 7 on an untouched ODP page: returned 0, the word is 7",
	      st == IBV_WC_SUCCESS && *res1 == 0 && *t1 == 7,
	      "status %d, returned %llu, word %llu", st,
	      (unsigned long long)*res1, (unsigned long long)*t1);
	st = atomic_op(IBV_WR_ATOMIC_FETCH_AND_ADD, res2, t1, 5, 0);
	check("FETCH_ADD 5 more, its result into an untouched local page: 7, word 12",
	      st == IBV_WC_SUCCESS && *res2 == 7 && *t1 == 12,
	      "status %d, returned %llu, word %llu", st,
	      (unsigned long long)*res2, (unsigned long long)*t1);
	check("the atomics on untouched pages met RNR NAKs (send_rnr_err moved)",
	      r0 >= 0 && rnr_naks() > r0, "send_rnr_err %ld -> %ld", r0,
	      rnr_naks());
	st = atomic_op(IBV_WR_ATOMIC_CMP_AND_SWP, res3, t2, 0, 0x1234);
	check("CMP_SWP 0 -> 0x1234 on another untouched ODP page: returned 0",
	      st == IBV_WC_SUCCESS && *res3 == 0 && *t2 == 0x1234,
	      "status %d, returned %#llx, word %#llx", st,
	      (unsigned long long)*res3, (unsigned long long)*t2);
	st = atomic_op(IBV_WR_ATOMIC_CMP_AND_SWP, res2, t2, 5, 9);
	check("a CMP_SWP that does not match: returned 0x1234, the word stays",
	      st == IBV_WC_SUCCESS && *res2 == 0x1234 && *t2 == 0x1234,
	      "status %d, returned %#llx, word %#llx", st,
	      (unsigned long long)*res2, (unsigned long long)*t2);
}

/* ibv_advise_mr() of @n ranges of @len bytes at @p[]: its return value. */
static int advise(enum ibv_advise_mr_advice advice, uint32_t flags,
		  uint8_t *const *p, uint32_t n, uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge[2];
	uint32_t i;

	for (i = 0; i < n; i++) {
		sge[i].addr = (uintptr_t)p[i];
		sge[i].length = len;
		sge[i].lkey = lkey;
	}
	return ibv_advise_mr(pd, advice, flags, sge, n);
}

/*
 * ibv_advise_mr(): a prefetched range needs no RNR NAK, an untouched one
 * does; PREFETCH_NO_FAULT takes only what the process has.
 */
static void advice(long pin0)
{
	uint8_t *x1 = big + 200 * MIB, *x2 = big + 250 * MIB;
	uint8_t *x3 = big + 350 * MIB, *x4 = big + 400 * MIB;
	uint8_t *x5 = big + 450 * MIB;
	uint8_t *nf[2] = { x4, x5 };
	long r;
	int st, err;

	if (!native) {
		err = advise(IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &x2, 1, XFER,
			     big_mr->lkey);
		check("default mode: ibv_advise_mr EOPNOTSUPP (the stock provider has none)",
		      err == EOPNOTSUPP, "returned %d", err);
		return;
	}
	fill(local, XFER, 7);
	r = rnr_naks();
	st = rdma_op(IBV_WR_RDMA_WRITE, local, x1, XFER);
	check("without advice a WRITE into untouched pages meets RNR NAKs",
	      st == IBV_WC_SUCCESS && same(x1, XFER, 7) && rnr_naks() > r,
	      "status %d, send_rnr_err %ld -> %ld", st, r, rnr_naks());
	err = advise(IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
		     IBV_ADVISE_MR_FLAG_FLUSH, &x2, 1, XFER, big_mr->lkey);
	check("ibv_advise_mr PREFETCH_WRITE, FLUSH, 1 MiB untouched",
	      !err, "%s", strerror(err));
	r = rnr_naks();
	st = rdma_op(IBV_WR_RDMA_WRITE, local, x2, XFER);
	check("a WRITE into the prefetched range meets no RNR NAK",
	      st == IBV_WC_SUCCESS && same(x2, XFER, 7) && rnr_naks() == r,
	      "status %d, send_rnr_err %ld -> %ld", st, r, rnr_naks());
	err = advise(IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &x3, 1, XFER,
		     big_mr->lkey);
	check("ibv_advise_mr PREFETCH (no FLUSH), 1 MiB untouched", !err,
	      "%s", strerror(err));
	memset(local, 0xee, XFER);
	r = rnr_naks();
	st = rdma_op(IBV_WR_RDMA_READ, local, x3, XFER);
	check("a READ of the prefetched range: zeros, no RNR NAK",
	      st == IBV_WC_SUCCESS && zero(local, XFER) && rnr_naks() == r,
	      "status %d, send_rnr_err %ld -> %ld", st, r, rnr_naks());

	/* NO_FAULT: x4 touched by the process, x5 not */
	fill(x4, XFER, 8);
	err = advise(IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT,
		     IBV_ADVISE_MR_FLAG_FLUSH, nf, 2, XFER, big_mr->lkey);
	check("ibv_advise_mr PREFETCH_NO_FAULT, FLUSH, a touched and an untouched range",
	      !err, "%s", strerror(err));
	r = rnr_naks();
	st = rdma_op(IBV_WR_RDMA_READ, local, x4, XFER);
	check("a READ of the touched range meets no RNR NAK, bytes checked",
	      st == IBV_WC_SUCCESS && same(local, XFER, 8) && rnr_naks() == r,
	      "status %d, send_rnr_err %ld -> %ld", st, r, rnr_naks());
	fill(local, XFER, 9);
	r = rnr_naks();
	st = rdma_op(IBV_WR_RDMA_WRITE, local, x5, XFER);
	check("PREFETCH_NO_FAULT faulted nothing in: a WRITE into the untouched range meets RNR NAKs",
	      st == IBV_WC_SUCCESS && same(x5, XFER, 9) && rnr_naks() > r,
	      "status %d, send_rnr_err %ld -> %ld", st, r, rnr_naks());
	check("after the prefetches nothing is pinned (VmPin unchanged)",
	      status_kb("VmPin") == pin0, "VmPin %ld -> %ld kB", pin0,
	      status_kb("VmPin"));

	err = advise(IBV_ADVISE_MR_ADVICE_PREFETCH, IBV_ADVISE_MR_FLAG_FLUSH,
		     &x2, 1, XFER, big_mr->lkey ^ 0x5a);
	check("ibv_advise_mr with a bad lkey: EFAULT", err == EFAULT,
	      "returned %d", err);
	x1 = big + BIG - 4096;
	err = advise(IBV_ADVISE_MR_ADVICE_PREFETCH, IBV_ADVISE_MR_FLAG_FLUSH,
		     &x1, 1, 8192, big_mr->lkey);
	check("ibv_advise_mr of a range past the MR's end: EFAULT",
	      err == EFAULT, "returned %d", err);
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
		fprintf(stderr, "usage: %s DEV GID_INDEX [native]\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	dev_name = argv[1];
	gid_index = atoi(argv[2]);
	native = argc > 3 && !strcmp(argv[3], "native");
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
	atomics();
	advice(pin0);
	dontneed();
	unmapped();
	check("deregister the ODP MRs",
	      !ibv_dereg_mr(big_mr) && !ibv_dereg_mr(local_mr), "%s",
	      strerror(errno));
out:
	printf("odp_mr: done, %d failed\n", fails);
	return 0;
}
