/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What srnic_dc_pingpong and srnic_dc_bench share (tool_common.c): their
 * check lines, the clock, the TCP side channel's sockets and GIDs as text,
 * and the steps of a QP to INIT, RTR and RTS.
 */
#ifndef SRNIC_TOOL_COMMON_H
#define SRNIC_TOOL_COMMON_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

/* ------------------------------------------------------------ checks */

extern int fails;		/* "not ok" lines printed so far */

void ok(const char *name);			/* "ok NAME" */
void bad(const char *name, const char *why);	/* "not ok NAME: why" */
void die(const char *what);	/* "not ok setup: WHAT: strerror(errno)", exit 1 */
double now(void);		/* CLOCK_MONOTONIC, seconds */

/* ------------------------------------------------------------ TCP */

int tcp_listen(int port, int backlog);		/* dies on an error */
/* A connected socket, or -1; tries again for @secs (0: once) */
int tcp_connect(const char *host, int port, double secs);
void gid_str(const union ibv_gid *g, char *s);	/* 32 hex digits, s[33] */
int gid_parse(const char *s, union ibv_gid *g);

/* ------------------------------------------------------------ verbs */

/* The device called @name, opened; dies if there is none. */
struct ibv_context *dev_ctx_open(const char *name);
/* Port 1, to @gid from our GID @gidx, hop limit 64. */
struct ibv_ah_attr ah_attr_of(int gidx, const union ibv_gid *gid);
struct ibv_ah *ah_make(struct ibv_pd *pd, int gidx, const union ibv_gid *gid);

/* One receive of @len bytes at @addr (in @mr) on @srq; dies on an error */
void srq_post_buf(struct ibv_srq *srq, struct ibv_mr *mr, void *addr,
		  uint32_t len, uint64_t wr_id);

int qp_to(struct ibv_qp *qp, enum ibv_qp_state s, int mask,
	  struct ibv_qp_attr *a);
/* RESET -> INIT on port 1; @access: the remote access flags (0: not set) */
int qp_init(struct ibv_qp *qp, int access);
/* RTR -> RTS: timeout 14, @retry, @rnr_retry, @sq_psn, 16 reads/atomics */
int qp_rts(struct ibv_qp *qp, int retry, int rnr_retry, uint32_t sq_psn);
/* A DCT to INIT, RTR (@access, min_rnr_timer 12) or a DCI to INIT, RTR,
 * RTS (qp_rts, PSN 0): a DC QP has no remote attribute. */
int dc_up(struct ibv_qp *qp, bool dci, int access, int retry, int rnr_retry);

#endif
