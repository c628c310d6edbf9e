/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libsrnic: srnic's libibverbs provider (docs/native-provider.md).
 *
 * It drives srnic devices made in native mode (`rdma link add NAME type
 * srnic_native netdev IF`). Native ABI v1 is the rxe ABI: the commands'
 * driver data and responses of <rdma/rdma_user_rxe.h>, mmap'd rings
 * (srnic_ring.h), and an empty POST_SEND write as the send doorbell. The
 * ioctl header's driver id is RDMA_DRIVER_RXE, the id srnic devices keep
 * inside the kernel.
 *
 * Objects embed libibverbs' structure first and add their rings. Every
 * verb reports failure as an errno value (returned, or in errno with a
 * NULL object), never by aborting: the provider runs inside other people's
 * programs.
 */
#ifndef SRNIC_PROVIDER_H
#define SRNIC_PROVIDER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_user_rxe.h>

#include "ibv_private.h"
#include "srnic_ring.h"

#define SRNIC_STRUCT_OF(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

struct srnic_device {
	struct verbs_device vdev;	/* first: libibverbs frees through it */
};

struct srnic_context {
	struct verbs_context vctx;
};

struct srnic_cq {
	struct verbs_cq vcq;
	pthread_spinlock_t lock;	/* the consumer side of @ring */
	struct srnic_ring ring;
	/* a ring slot's least size: the completion, and its timestamps if any */
	size_t min_slot;
	/* ibv_cq_ex polling: the entry read, not yet released (under lock) */
	const struct ib_uverbs_wc *cur;
};

struct srnic_srq {
	struct verbs_srq vsrq;
	pthread_spinlock_t lock;	/* the producer side of @ring */
	struct srnic_ring ring;
	uint32_t max_sge;
};

struct srnic_qp {
	struct verbs_qp vqp;
	pthread_spinlock_t sq_lock;	/* the producer side of @sq */
	pthread_spinlock_t rq_lock;	/* the producer side of @rq */
	struct srnic_ring sq;
	struct srnic_ring rq;		/* unmapped when the QP uses an SRQ */
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline;
	/*
	 * The state this process last set or read. Only the process moves a
	 * QP into RESET, INIT or RTR (the kernel itself only moves it to
	 * ERR), so the RESET/INIT/RTR checks of the post verbs are exact.
	 */
	enum ibv_qp_state state;
	/*
	 * The ibv_wr_*() batch between wr_start and wr_complete/wr_abort,
	 * under sq_lock: WQEs are written at @wr_prod onwards and published
	 * together; @wr_cur is the one the wr_set_*() calls complete, @wr_err
	 * the first error (the batch is then dropped at completion).
	 */
	uint32_t wr_prod;
	unsigned int wr_count;
	struct rxe_send_wqe *wr_cur;
	int wr_err;
	/* DC (srnic_dc.c): SRNIC_DC_TYPE_DCI or _DCT, 0 for other QPs */
	uint32_t dc_type;
	/*
	 * ECE: the options offered (SRNIC_ECE_OPTIONS) until ibv_set_ece,
	 * then the ones it accepted; atomic, as ibv_query_ece may race it.
	 */
	uint32_t ece_options;
};

struct srnic_ah {
	struct ibv_ah ibv_ah;
	uint32_t ah_num;	/* what UD send WQEs name (wr.ud.ah_num) */
};

static inline struct srnic_cq *to_srnic_cq(struct ibv_cq *cq)
{
	return SRNIC_STRUCT_OF(cq, struct srnic_cq, vcq.cq);
}

static inline struct srnic_srq *to_srnic_srq(struct ibv_srq *srq)
{
	return SRNIC_STRUCT_OF(srq, struct srnic_srq, vsrq.srq);
}

static inline struct srnic_qp *to_srnic_qp(struct ibv_qp *qp)
{
	return SRNIC_STRUCT_OF(qp, struct srnic_qp, vqp.qp);
}

static inline struct srnic_ah *to_srnic_ah(struct ibv_ah *ah)
{
	return SRNIC_STRUCT_OF(ah, struct srnic_ah, ibv_ah);
}

/* srnic_main.c */
bool srnic_is_srnic_device(struct ibv_device *dev);

/* srnic_abi.c */
int srnic_rdma_core_release(const char *libibverbs_path);
bool srnic_runtime_ok(void);

/* srnic_match.c */
bool srnic_match_device(struct verbs_sysfs_dev *sysfs_dev);

/* srnic_cq.c */
struct ibv_cq *srnic_create_cq(struct ibv_context *context, int cqe,
			       struct ibv_comp_channel *channel,
			       int comp_vector);
int srnic_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc);
int srnic_req_notify_cq(struct ibv_cq *ibcq, int solicited_only);
int srnic_resize_cq(struct ibv_cq *ibcq, int cqe);
int srnic_destroy_cq(struct ibv_cq *ibcq);
struct srnic_cq *srnic_cq_alloc(void);
void srnic_cq_free(struct srnic_cq *cq);
int srnic_cq_map(struct srnic_cq *cq, int err, int cmd_fd,
		 const struct mminfo *mi, size_t min_slot);
void srnic_cq_clean(struct srnic_cq *cq, uint32_t qpn);

/* srnic_cq_ex.c */
struct ibv_cq_ex *srnic_create_cq_ex(struct ibv_context *context,
				     struct ibv_cq_init_attr_ex *attr);

/* srnic_srq.c */
struct ibv_srq *srnic_create_srq(struct ibv_pd *pd,
				 struct ibv_srq_init_attr *attr);
int srnic_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		     int attr_mask);
int srnic_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr);
int srnic_destroy_srq(struct ibv_srq *ibsrq);
int srnic_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr);
int srnic_recv_wqe_fill(struct rxe_recv_wqe *wqe, const struct ibv_recv_wr *wr,
			uint32_t max_sge);
struct ibv_srq *srnic_create_srq_ex(struct ibv_context *context,
				    struct ibv_srq_init_attr_ex *attr);
int srnic_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num);

/* srnic_xrcd.c */
struct ibv_xrcd *srnic_open_xrcd(struct ibv_context *context,
				 struct ibv_xrcd_init_attr *attr);
int srnic_close_xrcd(struct ibv_xrcd *ibxrcd);

/* srnic_qp.c */
struct ibv_qp *srnic_create_qp(struct ibv_pd *pd,
			       struct ibv_qp_init_attr *attr);
int srnic_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		   int attr_mask, struct ibv_qp_init_attr *init_attr);
int srnic_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		    int attr_mask);
struct ibv_qp *srnic_create_qp_ex(struct ibv_context *context,
				  struct ibv_qp_init_attr_ex *attr);
struct ibv_qp *srnic_open_qp(struct ibv_context *context,
			     struct ibv_qp_open_attr *attr);
int srnic_destroy_qp(struct ibv_qp *ibqp);
int srnic_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr);
int srnic_query_ece(struct ibv_qp *ibqp, struct ibv_ece *ece);
int srnic_set_ece(struct ibv_qp *ibqp, struct ibv_ece *ece);
struct srnic_qp *srnic_qp_alloc(void);
void srnic_qp_free(struct srnic_qp *qp);
int srnic_qp_map(struct srnic_qp *qp, int cmd_fd,
		 const struct rxe_create_qp_resp *drv, bool has_rq);
void srnic_qp_set_limits(struct srnic_qp *qp, const struct ibv_qp_cap *cap);

/* srnic_mw.c */
struct ibv_mw *srnic_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int srnic_dealloc_mw(struct ibv_mw *mw);
int srnic_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		  struct ibv_mw_bind *mw_bind);
int srnic_bind_check(const struct ibv_qp *qp, const struct ibv_mw *mw,
		     uint32_t rkey, const struct ibv_mw_bind_info *info);
void srnic_wqe_fill_bind(struct rxe_send_wqe *wqe, const struct ibv_mw *mw,
			 uint32_t rkey, const struct ibv_mw_bind_info *info);

/* srnic_wr.c */
bool srnic_wr_ops_supported(uint64_t send_ops_flags);
void srnic_qp_set_wr_ops(struct srnic_qp *qp);
void srnic_wr_fail(struct srnic_qp *qp, int err);

/* srnic_send.c */
bool srnic_opcode_ok(enum ibv_qp_type type, enum ibv_wr_opcode op);
int srnic_sq_doorbell(struct srnic_qp *qp);
int srnic_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad_wr);

#endif /* SRNIC_PROVIDER_H */
