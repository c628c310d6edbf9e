// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* What srnic_dc_pingpong and srnic_dc_bench share: tool_common.h. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tool_common.h"

int fails;

void ok(const char *name)
{
	printf("ok %s\n", name);
	fflush(stdout);
}

void bad(const char *name, const char *why)
{
	fails++;
	printf("not ok %s: %s\n", name, why);
	fflush(stdout);
}

void die(const char *what)
{
	printf("not ok setup: %s: %s\n", what, strerror(errno));
	exit(1);
}

double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------------ TCP */

int tcp_listen(int port, int backlog)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one,
				 sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(fd, backlog))
		die("listen");
	return fd;
}

int tcp_connect(const char *host, int port, double secs)
{
	struct addrinfo hints = { .ai_family = AF_INET,
				  .ai_socktype = SOCK_STREAM }, *ai;
	double end = now() + secs;
	char sport[8];
	int fd;

	snprintf(sport, sizeof(sport), "%d", port);
	if (getaddrinfo(host, sport, &hints, &ai))
		return -1;
	for (;;) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd >= 0 && !connect(fd, ai->ai_addr, ai->ai_addrlen))
			break;
		if (fd >= 0)
			close(fd);
		fd = -1;
		if (now() > end)
			break;
		usleep(100000);
	}
	freeaddrinfo(ai);
	return fd;
}

void gid_str(const union ibv_gid *g, char *s)
{
	int i;

	for (i = 0; i < 16; i++)
		sprintf(s + 2 * i, "%02x", g->raw[i]);
}

int gid_parse(const char *s, union ibv_gid *g)
{
	unsigned int v;
	int i;

	for (i = 0; i < 16; i++) {
		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -1;
		g->raw[i] = v;
	}
	return 0;
}

/* ------------------------------------------------------------ verbs */

struct ibv_context *dev_ctx_open(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			break;
	if (!list || !list[i]) {
		errno = ENODEV;
		die(name);
	}
	ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx)
		die("ibv_open_device");
	return ctx;
}

struct ibv_ah_attr ah_attr_of(int gidx, const union ibv_gid *gid)
{
	struct ibv_ah_attr a = {
		.is_global = 1,
		.grh = { .dgid = *gid, .sgid_index = gidx, .hop_limit = 64 },
		.port_num = 1,
	};

	return a;
}

struct ibv_ah *ah_make(struct ibv_pd *pd, int gidx, const union ibv_gid *gid)
{
	struct ibv_ah_attr a = ah_attr_of(gidx, gid);

	return ibv_create_ah(pd, &a);
}

void srq_post_buf(struct ibv_srq *srq, struct ibv_mr *mr, void *addr,
		  uint32_t len, uint64_t wr_id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)addr,
		.length = len,
		.lkey = mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 }, *badwr;

	if (ibv_post_srq_recv(srq, &wr, &badwr))
		die("ibv_post_srq_recv");
}

int qp_to(struct ibv_qp *qp, enum ibv_qp_state s, int mask,
	  struct ibv_qp_attr *a)
{
	a->qp_state = s;
	return ibv_modify_qp(qp, a, mask | IBV_QP_STATE);
}

int qp_init(struct ibv_qp *qp, int access)
{
	struct ibv_qp_attr a = { .port_num = 1, .qp_access_flags = access };

	return qp_to(qp, IBV_QPS_INIT, IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		     (access ? IBV_QP_ACCESS_FLAGS : 0), &a);
}

int qp_rts(struct ibv_qp *qp, int retry, int rnr_retry, uint32_t sq_psn)
{
	struct ibv_qp_attr a = {
		.timeout = 14,
		.retry_cnt = retry,
		.rnr_retry = rnr_retry,
		.sq_psn = sq_psn,
		.max_rd_atomic = 16,
	};

	return qp_to(qp, IBV_QPS_RTS, IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
		     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
		     IBV_QP_MAX_QP_RD_ATOMIC, &a);
}

int dc_up(struct ibv_qp *qp, bool dci, int access, int retry, int rnr_retry)
{
	struct ibv_qp_attr a = { .min_rnr_timer = 12 };

	if (qp_init(qp, dci ? 0 : access) ||
	    qp_to(qp, IBV_QPS_RTR, dci ? 0 : IBV_QP_MIN_RNR_TIMER, &a))
		return -1;
	return dci ? qp_rts(qp, retry, rnr_retry, 0) : 0;
}
