// SPDX-License-Identifier: GPL-2.0
/*
 * ece: ECE (ibv_query_ece / ibv_set_ece) on a native-mode device, and
 * rdma_cm's ECE handshake between two of them; run by tests/vm/test_native.sh.
 *
 *   ece DEV GID_INDEX               the verbs on an RC QP of DEV
 *   ece DEV GID_INDEX unsupported   a device the stock rxe provider drives:
 *                                   both verbs EOPNOTSUPP
 *   ece server ADDR PORT            rdma_cm passive side: the REQ carried
 *                                   the client's ECE; receives one SEND
 *   ece client ADDR PORT            rdma_cm active side: sends one SEND
 *
 * srnic's ECE vendor id is the device's vendor id (0xffffff, no IEEE OUI),
 * and it negotiates no option yet (SRNIC_ECE_OPTIONS in
 * include/uapi/rdma/srnic.h is 0): ibv_set_ece takes any vendor's request
 * and accepts none of its options, a comp_mask it does not know is EINVAL.
 * Through rdma_cm (librdmacm queries the QP's ECE when it creates it and
 * sends it in the CM REQ and REP) the passive side reads the client's
 * vendor id with rdma_get_remote_ece before it creates its QP; without the
 * provider's ECE that is 0.
 *
 * Prints one line per check, "ok NAME" or "not ok NAME: reason", then
 * "ece: done, N failed"; exits 0 when it ran to the end.
 */
#define _GNU_SOURCE
#include <unistd.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "vtest.h"

#define SRNIC_VENDOR	0xffffff
#define MLX_VENDOR	0x15b3
#define MSG_LEN		256

static void verbs_part(const char *dev, bool unsupported)
{
	struct ibv_device_attr da;
	struct ibv_context *ctx;
	struct ibv_ece ece;
	struct ibv_qp *qp = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_pd *pd = NULL;
	int ret;

	ctx = open_dev(dev);
	if (!check("open device", ctx, "%s not found", dev))
		return;
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 8, NULL, NULL, 0) : NULL;
	qp = cq ? vt_rc_qp(pd, cq, 4) : NULL;
	if (!check("RC QP", qp && !ibv_query_device(ctx, &da), "%s",
		   strerror(errno)))
		goto out;
	memset(&ece, 0xa5, sizeof(ece));
	ret = ibv_query_ece(qp, &ece);
	if (unsupported) {
		check("ibv_query_ece: EOPNOTSUPP", ret == EOPNOTSUPP,
		      "ret %d", ret);
		ece = (struct ibv_ece){ .vendor_id = SRNIC_VENDOR };
		ret = ibv_set_ece(qp, &ece);
		check("ibv_set_ece: EOPNOTSUPP", ret == EOPNOTSUPP,
		      "ret %d", ret);
		goto out;
	}
	check("ibv_query_ece: the device's vendor id, no option",
	      !ret && ece.vendor_id == da.vendor_id &&
	      ece.vendor_id == SRNIC_VENDOR && !ece.options && !ece.comp_mask,
	      "ret %d vendor %#x (device %#x) options %#x comp_mask %#x",
	      ret, ece.vendor_id, da.vendor_id, ece.options, ece.comp_mask);

	ece = (struct ibv_ece){ .vendor_id = SRNIC_VENDOR, .options = 1,
				.comp_mask = 1 };
	errno = 0;
	ret = ibv_set_ece(qp, &ece);
	check("ibv_set_ece: an unknown comp_mask is EINVAL",
	      ret == EINVAL && errno == EINVAL, "ret %d errno %d", ret, errno);

	ece = (struct ibv_ece){ .vendor_id = SRNIC_VENDOR,
				.options = 0xffffffff };
	ret = ibv_set_ece(qp, &ece);
	check("ibv_set_ece: srnic's vendor, every option asked: none accepted",
	      !ret && !ece.options, "ret %d options %#x", ret, ece.options);

	ece = (struct ibv_ece){ .vendor_id = MLX_VENDOR, .options = 0x3 };
	ret = ibv_set_ece(qp, &ece);
	check("ibv_set_ece: another vendor's options: none in common",
	      !ret && !ece.options, "ret %d options %#x", ret, ece.options);

	memset(&ece, 0xa5, sizeof(ece));
	ret = ibv_query_ece(qp, &ece);
	check("ibv_query_ece after ibv_set_ece: the accepted options",
	      !ret && ece.vendor_id == SRNIC_VENDOR && !ece.options &&
	      !ece.comp_mask, "ret %d vendor %#x options %#x", ret,
	      ece.vendor_id, ece.options);
out:
	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
	if (ctx)
		ibv_close_device(ctx);
}

/* The QP's own ECE, as librdmacm sent it in the REQ or REP. */
static void check_qp_ece(const char *name, struct ibv_qp *qp)
{
	struct ibv_ece ece;
	int ret = ibv_query_ece(qp, &ece);

	check(name, !ret && ece.vendor_id == SRNIC_VENDOR && !ece.options,
	      "ret %d vendor %#x options %#x", ret, ece.vendor_id,
	      ece.options);
}

static struct rdma_addrinfo *cm_addr(const char *addr, const char *port,
				     bool passive)
{
	struct rdma_addrinfo hints = {
		.ai_flags = passive ? RAI_PASSIVE : 0,
		.ai_port_space = RDMA_PS_TCP,
	};
	struct rdma_addrinfo *res = NULL;

	if (rdma_getaddrinfo(addr, port, &hints, &res)) {
		bad("rdma_getaddrinfo", "%s:%s: %s", addr, port,
		    strerror(errno));
		return NULL;
	}
	return res;
}

static void cm_part(bool server, const char *addr, const char *port)
{
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 2, .max_recv_wr = 2,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};
	struct rdma_cm_id *listen_id = NULL, *id = NULL;
	struct rdma_addrinfo *res;
	struct ibv_mr *mr = NULL;
	struct ibv_wc wc;
	uint8_t buf[MSG_LEN];
	struct ibv_ece ece;
	int i, ret;

	res = cm_addr(addr, port, server);
	if (!res)
		return;
	if (!server) {
		for (i = 0; i < MSG_LEN; i++)
			buf[i] = (uint8_t)(i * 7 + 3);
		if (!check("client: rdma_create_ep (QP created)",
			   !rdma_create_ep(&id, res, NULL, &qa), "%s",
			   strerror(errno)))
			goto out;
		check_qp_ece("client: its QP's ECE is srnic's", id->qp);
		mr = rdma_reg_msgs(id, buf, MSG_LEN);
		if (!check("client: connected",
			   mr && !rdma_connect(id, NULL), "%s",
			   strerror(errno)))
			goto out;
		/* librdmacm gave the REP's ECE to ibv_set_ece */
		check_qp_ece("client: ECE after the REP", id->qp);
		ret = rdma_post_send(id, NULL, buf, MSG_LEN, mr, 0);
		if (!ret)
			ret = rdma_get_send_comp(id, &wc) != 1;
		check("client: SEND completed",
		      !ret && wc.status == IBV_WC_SUCCESS, "ret %d status %d",
		      ret, ret ? -1 : (int)wc.status);
		rdma_disconnect(id);
		goto out;
	}
	if (!check("server: listening",
		   !rdma_create_ep(&listen_id, res, NULL, NULL) &&
		   !rdma_listen(listen_id, 1), "%s", strerror(errno)))
		goto out;
	if (!check("server: connect request", !rdma_get_request(listen_id, &id),
		   "%s", strerror(errno)))
		goto out;
	/* before a QP exists: what the REQ carried */
	memset(&ece, 0, sizeof(ece));
	ret = rdma_get_remote_ece(id, &ece);
	check("server: the REQ carried the client's ECE (srnic's vendor id)",
	      !ret && ece.vendor_id == SRNIC_VENDOR && !ece.options,
	      "ret %d vendor %#x options %#x", ret, ece.vendor_id, ece.options);
	if (!check("server: QP created", !rdma_create_qp(id, NULL, &qa), "%s",
		   strerror(errno)))
		goto out;
	check_qp_ece("server: its QP's ECE after the client's was set", id->qp);
	memset(buf, 0, MSG_LEN);
	mr = rdma_reg_msgs(id, buf, MSG_LEN);
	if (!check("server: accepted",
		   mr && !rdma_post_recv(id, NULL, buf, MSG_LEN, mr) &&
		   !rdma_accept(id, NULL), "%s", strerror(errno)))
		goto out;
	ret = rdma_get_recv_comp(id, &wc) != 1;
	for (i = 0; !ret && i < MSG_LEN; i++)
		if (buf[i] != (uint8_t)(i * 7 + 3))
			ret = 2;
	check("server: the SEND's bytes arrived",
	      !ret && wc.status == IBV_WC_SUCCESS && wc.byte_len == MSG_LEN,
	      "ret %d status %d len %u", ret, (int)wc.status, wc.byte_len);
	rdma_disconnect(id);
out:
	if (mr)
		rdma_dereg_mr(mr);
	if (id)
		rdma_destroy_ep(id);
	if (listen_id)
		rdma_destroy_ep(listen_id);
	rdma_freeaddrinfo(res);
}

int main(int argc, char **argv)
{
	if (argc == 4 && (!strcmp(argv[1], "server") ||
			  !strcmp(argv[1], "client")))
		cm_part(!strcmp(argv[1], "server"), argv[2], argv[3]);
	else if (argc == 3 || (argc == 4 && !strcmp(argv[3], "unsupported")))
		verbs_part(argv[1], argc == 4);
	else {
		fprintf(stderr, "usage: ece DEV GID_INDEX [unsupported] | "
			"ece server|client ADDR PORT\n");
		return 2;
	}
	printf("ece: done, %d failed\n", fails);
	return 0;
}
