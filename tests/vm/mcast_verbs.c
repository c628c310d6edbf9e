// SPDX-License-Identifier: GPL-2.0
/*
 * mcast_verbs: UD multicast through stock libibverbs (rxe provider) between
 * two srnic devices, run by tests/vm/test_mcast.sh inside nsA.
 *
 *   mcast_verbs RDEV NETDEV SDEV SGID [SGID6]
 *   MCAST_VERBS_LATE=CMD mcast_verbs RDEV NETDEV SDEV SGID
 *
 * RDEV is the receivers' device, bound to NETDEV in this netns; SDEV the
 * sender's, on the other end of the veth pair, with the index of its IPv4
 * RoCEv2 GID and optionally of its IPv6 one (then an IPv6 group is tested
 * too). pyverbs (rdma-core 44) has no attach_mcast, hence C.
 *
 * MCAST_VERBS_RXDEV names the netdev whose rx_packets show that messages
 * sent after the group was left still arrived (default NETDEV).
 *
 * With MCAST_VERBS_LATE set, only the late-netdev scenario runs: a QP
 * attaches, then CMD (a shell command) makes NETDEV, a VLAN of RDEV's
 * netdev (test_vlan.sh); the VLAN must join the group, the messages sent
 * to it through the VLAN must arrive, and the detach must leave it there.
 *
 * Prints one line per check, "ok NAME" or "not ok NAME: reason", then
 * "mcast_verbs: done, N failed"; exits 0 when it ran to the end.
 *
 * Every message carries a distinct pseudo-random payload derived from its
 * id; a receiver checks the payload byte for byte, the id, the sender's QPN
 * and the IP destination in the GRH area. Receive WQEs complete in order,
 * so "the next completion is message X" proves nothing was delivered in
 * between: that is how the checks after a detach show that no message sent
 * meanwhile reached the QP, without relying on a timeout.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "vtest.h"

#define MSG_LEN		1000		/* fits a 1024 path MTU */
#define GRH_LEN		40
#define SLOT_LEN	(GRH_LEN + MSG_LEN)
#define NSLOTS		64
#define QKEY		0x11223344
#define MCAST_QPN	0xffffff
#define WAIT_MS		20000		/* an expected completion, busy TCG host */

static const char *netdev;

/* libibverbs returns errno values, positive (some paths negative). */
static void expect_err(const char *name, int ret, int want)
{
	if (abs(ret) == want)
		ok(name);
	else
		bad(name, "returned %d, want %d (%s)", ret, want, strerror(want));
}

static void payload(uint32_t id, uint8_t *p)
{
	uint32_t x = id * 2654435761u + 12345;
	int i;

	memcpy(p, &id, sizeof(id));
	for (i = sizeof(id); i < MSG_LEN; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = x;
	}
}

struct ep {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;		/* NSLOTS receive slots, or the send buffer */
	unsigned int posted;	/* receive slots posted so far (ring) */
	const char *name;
};

static struct ibv_qp *create_qp(struct ibv_pd *pd, struct ibv_cq *cq,
				enum ibv_qp_type type)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = NSLOTS, .max_recv_wr = NSLOTS,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = type,
	};

	return ibv_create_qp(pd, &ia);
}

static int ud_to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qkey = QKEY,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		return -1;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

static int ep_init(struct ep *ep, struct ibv_context *ctx, struct ibv_pd *pd,
		   const char *name)
{
	memset(ep, 0, sizeof(*ep));
	ep->ctx = ctx;
	ep->pd = pd;
	ep->name = name;
	ep->buf = calloc(NSLOTS, SLOT_LEN);
	ep->cq = ibv_create_cq(ctx, 2 * NSLOTS, NULL, NULL, 0);
	if (!ep->buf || !ep->cq)
		return -1;
	ep->mr = ibv_reg_mr(pd, ep->buf, NSLOTS * SLOT_LEN,
			    IBV_ACCESS_LOCAL_WRITE);
	ep->qp = create_qp(pd, ep->cq, IBV_QPT_UD);
	if (!ep->mr || !ep->qp)
		return -1;
	return ud_to_rts(ep->qp);
}

static int post_recvs(struct ep *ep, unsigned int n)
{
	while (n--) {
		unsigned int slot = ep->posted++ % NSLOTS;
		struct ibv_sge sge = {
			.addr = (uintptr_t)ep->buf + slot * SLOT_LEN,
			.length = SLOT_LEN,
			.lkey = ep->mr->lkey,
		};
		struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge,
					  .num_sge = 1 }, *badwr;

		memset(ep->buf + slot * SLOT_LEN, 0, SLOT_LEN);
		if (ibv_post_recv(ep->qp, &wr, &badwr))
			return -1;
	}
	return 0;
}

/* Wait up to @ms for one completion; 1 if got, 0 if none. */
static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc, long ms)
{
	long end = now_ms() + ms;
	int n;

	do {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n < 0 ? 0 : 1;
		usleep(1000);
	} while (now_ms() < end);
	return 0;
}

/* The sender: one UD QP with its send buffer in slot 0. */
static int send_msg(struct ep *s, struct ibv_ah *ah, uint32_t id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)s->buf,
		.length = MSG_LEN,
		.lkey = s->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = ah, .remote_qpn = MCAST_QPN,
			   .remote_qkey = QKEY },
	}, *badwr;
	struct ibv_wc wc;

	payload(id, s->buf);
	if (ibv_post_send(s->qp, &wr, &badwr))
		return -1;
	if (!poll_one(s->cq, &wc, WAIT_MS) || wc.status != IBV_WC_SUCCESS)
		return -1;
	return 0;
}

/*
 * The next receive completion of @ep must be message @id from @src_qpn,
 * addressed (GRH area) to @dst (4 or 16 bytes at the IP header's offset).
 * Returns 0 or fills @why.
 */
static int expect_msg(struct ep *ep, uint32_t id, uint32_t src_qpn,
		      const uint8_t *dst, int dst_len, char *why, size_t wlen)
{
	uint8_t want[MSG_LEN];
	const uint8_t *slot, *grh_dst;
	struct ibv_wc wc;
	uint32_t got;
	int i;

	if (!poll_one(ep->cq, &wc, WAIT_MS)) {
		snprintf(why, wlen, "no completion for message %u", id);
		return -1;
	}
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV) {
		snprintf(why, wlen, "status %s opcode %d",
			 ibv_wc_status_str(wc.status), wc.opcode);
		return -1;
	}
	if (wc.byte_len != SLOT_LEN || wc.src_qp != src_qpn ||
	    !(wc.wc_flags & IBV_WC_GRH)) {
		snprintf(why, wlen, "byte_len %u src_qp %u flags %#x",
			 wc.byte_len, wc.src_qp, wc.wc_flags);
		return -1;
	}
	slot = ep->buf + wc.wr_id * SLOT_LEN;
	memcpy(&got, slot + GRH_LEN, sizeof(got));
	if (got != id) {
		snprintf(why, wlen, "got message %u, want %u", got, id);
		return -1;
	}
	payload(id, want);
	for (i = 0; i < MSG_LEN; i++) {
		if (slot[GRH_LEN + i] != want[i]) {
			snprintf(why, wlen, "message %u byte %d: %#x, want %#x",
				 id, i, slot[GRH_LEN + i], want[i]);
			return -1;
		}
	}
	/* IPv4 header at 20 (daddr at +16), IPv6 header at 0 (daddr at +24) */
	grh_dst = dst_len == 4 ? slot + 20 + 16 : slot + 24;
	if (memcmp(grh_dst, dst, dst_len)) {
		snprintf(why, wlen, "GRH destination is not the group");
		return -1;
	}
	return 0;
}

/* Messages first..first+n-1 all arrive at @ep, in order, intact. */
static void expect_msgs(const char *name, struct ep *ep, uint32_t first,
			int n, uint32_t src_qpn, const uint8_t *dst, int dst_len)
{
	char why[160];
	int i;

	for (i = 0; i < n; i++) {
		if (expect_msg(ep, first + i, src_qpn, dst, dst_len, why,
			       sizeof(why))) {
			bad(name, "%s", why);
			return;
		}
	}
	ok(name);
}

static bool cq_empty(struct ep *ep, long ms)
{
	struct ibv_wc wc;

	return !poll_one(ep->cq, &wc, ms);
}

/* Is @group (as ip prints it) a multicast address of the netdev? */
static bool ip_member(const char *group)
{
	char cmd[128], line[256], a[128];
	bool found = false;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "ip maddr show dev %s", netdev);
	f = popen(cmd, "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " inet%*[6] %127s", a) == 1 ||
		    sscanf(line, " inet %127s", a) == 1)
			found |= !strcmp(a, group);
	pclose(f);
	return found;
}

static uint64_t read_u64(const char *fmt, const char *arg)
{
	char path[256];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), fmt, arg);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

/*
 * The packets received on MCAST_VERBS_RXDEV, or else on NETDEV. A bridge
 * hands a group's packets up only while the host is a member (multicast
 * snooping): for a bridge, its port's counter shows what arrived.
 */
static uint64_t rx_packets(void)
{
	const char *dev = getenv("MCAST_VERBS_RXDEV");

	return read_u64("/sys/class/net/%s/statistics/rx_packets",
			dev ? dev : netdev);
}

/* Whether rx_packets() reaches @want within 2 s (packets take a while). */
static bool rx_reaches(uint64_t want)
{
	for (int i = 0; i < 200; i++) {
		if (rx_packets() >= want)
			return true;
		usleep(10000);
	}
	return false;
}

static struct ibv_ah *group_ah(struct ibv_pd *pd, const union ibv_gid *mgid,
			       int sgid_index)
{
	struct ibv_ah_attr a = {
		.is_global = 1,
		.grh = { .dgid = *mgid, .sgid_index = sgid_index,
			 .hop_limit = 8 },
		.port_num = 1,
	};

	return ibv_create_ah(pd, &a);
}

static void gid_v4(union ibv_gid *g, const char *ip)
{
	memset(g, 0, sizeof(*g));
	g->raw[10] = 0xff;
	g->raw[11] = 0xff;
	inet_pton(AF_INET, ip, g->raw + 12);
}

/* The main scenario: fan-out, one QP without WQEs, detach, re-attach. */
static void test_fanout(struct ep *a, struct ep *b,
			struct ep *c, struct ep *s, int sgid)
{
	union ibv_gid g;
	uint8_t dst[4];
	struct ibv_ah *ah;
	uint64_t rx0;

	gid_v4(&g, "239.1.2.3");
	memcpy(dst, g.raw + 12, 4);

	check("attach QP A to 239.1.2.3", !ibv_attach_mcast(a->qp, &g, 0),
	      "attach failed");
	check("attach QP B to 239.1.2.3", !ibv_attach_mcast(b->qp, &g, 0),
	      "attach failed");
	check("attach QP C (no receive WQE) to 239.1.2.3",
	      !ibv_attach_mcast(c->qp, &g, 0), "attach failed");
	check("attaching QP A again succeeds (no-op)",
	      !ibv_attach_mcast(a->qp, &g, 0), "second attach failed");
	check("the netdev joined IP group 239.1.2.3", ip_member("239.1.2.3"),
	      "not in ip maddr");

	ah = group_ah(s->pd, &g, sgid);
	if (!ah) {
		bad("AH for the group", "ibv_create_ah: %s", strerror(errno));
		return;
	}
	post_recvs(a, 40);
	post_recvs(b, 40);
	for (uint32_t id = 1; id <= 16; id++)
		if (send_msg(s, ah, id)) {
			bad("send 16 messages to the group", "message %u", id);
			break;
		}
	expect_msgs("QP A got all 16 messages, data verified", a, 1, 16,
		    s->qp->qp_num, dst, 4);
	expect_msgs("QP B got all 16 messages, data verified", b, 1, 16,
		    s->qp->qp_num, dst, 4);
	check("QP C (no receive WQE) completed nothing", cq_empty(c, 200),
	      "a completion");

	/* A leaves: B still gets everything, A nothing. */
	check("detach QP A", !ibv_detach_mcast(a->qp, &g, 0), "detach failed");
	for (uint32_t id = 100; id < 104; id++)
		send_msg(s, ah, id);
	expect_msgs("after A's detach QP B gets messages 100-103", b, 100, 4,
		    s->qp->qp_num, dst, 4);
	check("group still joined while B and C are attached",
	      ip_member("239.1.2.3"), "left too early");

	/* Everyone leaves: the host leaves the IP group. */
	check("detach QP B", !ibv_detach_mcast(b->qp, &g, 0), "detach failed");
	check("detach QP C", !ibv_detach_mcast(c->qp, &g, 0), "detach failed");
	check("the netdev left IP group 239.1.2.3 after the last detach",
	      !ip_member("239.1.2.3"), "still in ip maddr");
	expect_err("detaching QP B again fails with EINVAL",
		   ibv_detach_mcast(b->qp, &g, 0), EINVAL);
	rx0 = rx_packets();
	for (uint32_t id = 200; id < 204; id++)
		send_msg(s, ah, id);
	check("messages 200-203 still reach the netdev",
	      rx_reaches(rx0 + 4), "rx_packets did not grow by 4 in 2 s");
	check("no completion on A or B after the detach",
	      cq_empty(a, 500) && cq_empty(b, 100), "a completion");

	/* Back in: the very next message each gets is the new one. */
	check("re-attach QP A", !ibv_attach_mcast(a->qp, &g, 0), "failed");
	check("re-attach QP B", !ibv_attach_mcast(b->qp, &g, 0), "failed");
	send_msg(s, ah, 300);
	expect_msgs("re-attached A's next message is 300 (none of 100-203)",
		    a, 300, 1, s->qp->qp_num, dst, 4);
	expect_msgs("re-attached B's next message is 300 (none of 200-203)",
		    b, 300, 1, s->qp->qp_num, dst, 4);
	ibv_detach_mcast(a->qp, &g, 0);
	ibv_detach_mcast(b->qp, &g, 0);
	check("left 239.1.2.3 again", !ip_member("239.1.2.3"), "still joined");
	ibv_destroy_ah(ah);
}

static void test_ipv6(struct ep *a, struct ep *b, struct ep *s, int sgid6)
{
	union ibv_gid g;
	struct ibv_ah *ah;

	inet_pton(AF_INET6, "ff0e::db8:1", g.raw);
	check("attach QP A to ff0e::db8:1", !ibv_attach_mcast(a->qp, &g, 0),
	      "attach failed");
	check("attach QP B to ff0e::db8:1", !ibv_attach_mcast(b->qp, &g, 0),
	      "attach failed");
	check("the netdev joined IPv6 group ff0e::db8:1",
	      ip_member("ff0e::db8:1"), "not in ip maddr");
	ah = group_ah(s->pd, &g, sgid6);
	if (!ah) {
		bad("AH for the IPv6 group", "ibv_create_ah: %s",
		    strerror(errno));
		return;
	}
	for (uint32_t id = 400; id < 408; id++)
		send_msg(s, ah, id);
	expect_msgs("IPv6 group: QP A got 8 messages, data verified", a, 400,
		    8, s->qp->qp_num, g.raw, 16);
	expect_msgs("IPv6 group: QP B got 8 messages, data verified", b, 400,
		    8, s->qp->qp_num, g.raw, 16);
	ibv_detach_mcast(a->qp, &g, 0);
	ibv_detach_mcast(b->qp, &g, 0);
	check("left IPv6 group ff0e::db8:1", !ip_member("ff0e::db8:1"),
	      "still joined");
	ibv_destroy_ah(ah);
}

/* Wait up to WAIT_MS for ip_member(@group) to be true. */
static bool wait_member(const char *group)
{
	long end = now_ms() + WAIT_MS;

	while (!ip_member(group)) {
		if (now_ms() > end)
			return false;
		sleep_ms(100);
	}
	return true;
}

/* A netdev made after the attach (@cmd) joins the group too. */
static void test_late(struct ep *a, struct ep *s, int sgid, const char *cmd)
{
	union ibv_gid g;
	struct ibv_ah *ah;
	uint8_t dst[4];

	gid_v4(&g, "239.1.2.6");
	memcpy(dst, g.raw + 12, 4);
	check("late: attach QP A to 239.1.2.6", !ibv_attach_mcast(a->qp, &g, 0),
	      "attach failed");
	check("late: MCAST_VERBS_LATE made the netdev after the attach",
	      system(cmd) == 0, "'%s' failed", cmd);
	check("late: the netdev made after the attach joined 239.1.2.6",
	      wait_member("239.1.2.6"), "not in ip maddr after %d ms",
	      WAIT_MS);
	ah = group_ah(s->pd, &g, sgid);
	if (!ah) {
		bad("late: AH for the group", "ibv_create_ah: %s",
		    strerror(errno));
		return;
	}
	post_recvs(a, 8);
	for (uint32_t id = 500; id < 508; id++)
		send_msg(s, ah, id);
	expect_msgs("late: QP A got the 8 messages through it, data verified",
		    a, 500, 8, s->qp->qp_num, dst, 4);
	check("late: detach QP A", !ibv_detach_mcast(a->qp, &g, 0),
	      "detach failed");
	check("late: the netdev left 239.1.2.6 with the last detach",
	      if_nametoindex(netdev) && !ip_member("239.1.2.6"),
	      "still in ip maddr, or no netdev %s", netdev);
	ibv_destroy_ah(ah);
}

static void test_errors(struct ep *a, struct ibv_pd *pd, struct ibv_cq *cq)
{
	union ibv_gid g, uni;
	struct ibv_qp *rc;

	gid_v4(&g, "239.1.2.5");
	gid_v4(&uni, "10.99.0.1");
	rc = create_qp(pd, cq, IBV_QPT_RC);
	if (!rc) {
		bad("create an RC QP", "%s", strerror(errno));
	} else {
		expect_err("attach of an RC QP fails with EINVAL",
			   ibv_attach_mcast(rc, &g, 0), EINVAL);
		ibv_destroy_qp(rc);
	}
	expect_err("attach to a unicast GID fails with EINVAL",
		   ibv_attach_mcast(a->qp, &uni, 0), EINVAL);
	expect_err("detach from a group never joined fails with EINVAL",
		   ibv_detach_mcast(a->qp, &g, 0), EINVAL);
	check("no IP group joined by the failed calls", !ip_member("239.1.2.5"),
	      "239.1.2.5 joined");
}

/*
 * max_mcast_qp_attach QPs fit in a group, one more does not. ib_core does
 * not let a process destroy an attached QP; the QPs stay attached when the
 * program exits, and test_mcast.sh checks that the exit cleanup detached
 * them (the host left 239.1.2.4).
 */
static void test_limits(struct ibv_pd *pd, struct ibv_cq *cq, int per_group)
{
	struct ibv_qp **qps = calloc(per_group + 1, sizeof(*qps));
	union ibv_gid g;
	int i, n = 0;

	gid_v4(&g, "239.1.2.4");
	for (i = 0; i <= per_group; i++) {
		qps[i] = create_qp(pd, cq, IBV_QPT_UD);
		if (!qps[i] || ud_to_rts(qps[i]))
			break;
	}
	if (i <= per_group) {
		bad("create max_mcast_qp_attach + 1 UD QPs", "QP %d: %s", i,
		    strerror(errno));
		goto out;
	}
	for (i = 0; i < per_group; i++)
		n += !ibv_attach_mcast(qps[i], &g, 0);
	check("max_mcast_qp_attach QPs attach to one group", n == per_group,
	      "some attach failed");
	expect_err("one QP more fails with ENOMEM",
		   ibv_attach_mcast(qps[per_group], &g, 0), ENOMEM);
	check("the full group is joined", ip_member("239.1.2.4"), "not joined");
	expect_err("destroying an attached QP fails with EBUSY",
		   ibv_destroy_qp(qps[0]), EBUSY);
out:
	/* left for the exit cleanup: the QPs, attached */
	free(qps);
}

int main(int argc, char **argv)
{
	struct ibv_context *rctx, *sctx;
	struct ibv_device_attr da;
	struct ibv_pd *rpd, *spd;
	struct ep a, b, c, s;
	int sgid;

	if (argc != 5 && argc != 6) {
		fprintf(stderr, "usage: %s RDEV NETDEV SDEV SGID [SGID6]\n",
			argv[0]);
		return 2;
	}
	netdev = argv[2];
	sgid = atoi(argv[4]);

	rctx = open_dev(argv[1]);
	sctx = open_dev(argv[3]);
	if (!rctx || !sctx) {
		fprintf(stderr, "cannot open %s or %s\n", argv[1], argv[3]);
		return 1;
	}
	if (ibv_query_device(rctx, &da)) {
		fprintf(stderr, "query_device: %s\n", strerror(errno));
		return 1;
	}
	printf("caps: max_mcast_grp %d max_mcast_qp_attach %d max_total_mcast_qp_attach %d\n",
	       da.max_mcast_grp, da.max_mcast_qp_attach,
	       da.max_total_mcast_qp_attach);
	check("query_device reports multicast caps",
	      da.max_mcast_grp > 0 && da.max_mcast_qp_attach > 1 &&
	      da.max_total_mcast_qp_attach >= da.max_mcast_qp_attach,
	      "a zero or inconsistent cap");

	rpd = ibv_alloc_pd(rctx);
	spd = ibv_alloc_pd(sctx);
	if (!rpd || !spd || ep_init(&a, rctx, rpd, "A") ||
	    ep_init(&b, rctx, rpd, "B") || ep_init(&c, rctx, rpd, "C") ||
	    ep_init(&s, sctx, spd, "S")) {
		fprintf(stderr, "setting up the QPs: %s\n", strerror(errno));
		return 1;
	}

	if (getenv("MCAST_VERBS_LATE")) {
		test_late(&a, &s, sgid, getenv("MCAST_VERBS_LATE"));
		printf("mcast_verbs: done, %d failed\n", fails);
		return 0;
	}
	test_errors(&a, rpd, a.cq);
	test_fanout(&a, &b, &c, &s, sgid);
	if (argc == 6)
		test_ipv6(&a, &b, &s, atoi(argv[5]));
	test_limits(rpd, c.cq, da.max_mcast_qp_attach);

	printf("mcast_verbs: done, %d failed\n", fails);
	return 0;
}
