/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What srnic's provider needs from libibverbs' private provider ABI
 * (symbol version IBVERBS_PRIVATE_34), declared by us.
 *
 * libibverbs-dev installs no provider header (rdma-core's
 * libibverbs/driver.h is internal), so this file declares the handful of
 * structures and functions a provider shares with the library. It is written
 * from their documented behaviour and checked against the two libraries the
 * project supports, by the static assertions below and by
 * userspace/tests/provider_test.c:
 *
 *   rdma-core 44 (Debian 12)  libibverbs.so.1.14.44.0
 *   rdma-core 56 (Debian 13)  libibverbs.so.1.14.56.1
 *
 * Offsets that the public headers cannot check were read from the machine
 * code of both libraries (objdump -d): verbs_set_ops() copies 76 callbacks;
 * ibverbs_get_device_list() compares verbs_sysfs_dev.abi_ver (offset 968)
 * against the provider's ABI range after calling its match_device(); it
 * copies ibdev_path from offset 176 and the verbs_device's sysfs pointer
 * sits at 696 (ibv_cmd_query_device_any() reads it).
 *
 * The private ABI tag does not freeze these layouts: struct verbs_qp moved
 * its comp_mask by 8 bytes from 44 to 56 (the public struct ibv_qp_ex grew),
 * under the same IBVERBS_PRIVATE_34. The provider is therefore built per
 * rdma-core release (SRNIC_RDMA_CORE_MAJOR, from pkg-config) and refuses to
 * match any device under another one (srnic_abi.c).
 */
#ifndef SRNIC_IBV_PRIVATE_H
#define SRNIC_IBV_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#ifndef SRNIC_RDMA_CORE_MAJOR
#error "SRNIC_RDMA_CORE_MAJOR must name the rdma-core release built against"
#endif
#if SRNIC_RDMA_CORE_MAJOR != 44 && SRNIC_RDMA_CORE_MAJOR != 56
#error "ibv_private.h is checked against rdma-core 44 and 56 only"
#endif

/* libibverbs' intrusive list node (ccan/list.h): two pointers. */
struct srnic_ibv_list_node {
	struct srnic_ibv_list_node *next, *prev;
};

/* One entry of a provider's match table; kind 0 ends the table. */
enum {
	SRNIC_IBV_MATCH_SENTINEL = 0,
};

struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind;
};

/*
 * A device found by libibverbs (netlink, else sysfs), handed to
 * match_device() and alloc_device(). Only the fields up to time_created are
 * declared, in the library's order; the provider reads ibdev_name,
 * ibdev_path and abi_ver.
 */
#define SRNIC_IBV_SYSFS_NAME_MAX	64
#define SRNIC_IBV_SYSFS_PATH_MAX	256

struct verbs_sysfs_dev {
	struct srnic_ibv_list_node entry;
	void *provider_data;
	const struct verbs_match_ent *match;
	unsigned int flags;
	char sysfs_name[SRNIC_IBV_SYSFS_NAME_MAX];
	dev_t sysfs_cdev;
	char ibdev_name[SRNIC_IBV_SYSFS_NAME_MAX];
	char ibdev_path[SRNIC_IBV_SYSFS_PATH_MAX];
	char modalias[512];
	uint64_t node_guid;
	uint32_t driver_id;
	enum ibv_node_type node_type;
	int ibdev_idx;
	uint32_t num_ports;
	uint32_t abi_ver;
	struct timespec time_created;
};

_Static_assert(offsetof(struct verbs_sysfs_dev, ibdev_name) == 112,
	       "verbs_sysfs_dev.ibdev_name (libibverbs 44/56: 112)");
_Static_assert(offsetof(struct verbs_sysfs_dev, ibdev_path) == 176,
	       "verbs_sysfs_dev.ibdev_path (libibverbs 44/56: 176)");
_Static_assert(offsetof(struct verbs_sysfs_dev, abi_ver) == 968,
	       "verbs_sysfs_dev.abi_ver (libibverbs 44/56: 968)");

struct verbs_device;

/*
 * How libibverbs drives a provider. The library keeps the pointer it is
 * given (the structure must live as long as the library: static storage).
 */
struct verbs_device_ops {
	const char *name;
	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	/* never NULL: libibverbs walks it without a check when the device
	 * reports a driver id */
	const struct verbs_match_ent *match_table;
	const struct verbs_device_ops **static_providers;
	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);
	struct verbs_context *(*alloc_context)(struct ibv_device *device,
					       int cmd_fd, void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device,
						int cmd_fd);
	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct verbs_device *device);
};

/* The provider allocates it (alloc_device), the library fills it in. */
struct verbs_device {
	struct ibv_device device;	/* first */
	const struct verbs_device_ops *ops;
	int refcount;			/* atomic_int in the library */
	struct srnic_ibv_list_node entry;
	struct verbs_sysfs_dev *sysfs;
	uint64_t core_support;
};

_Static_assert(offsetof(struct verbs_device, ops) == 664,
	       "verbs_device.ops (libibverbs 44/56: 664)");
_Static_assert(offsetof(struct verbs_device, sysfs) == 696,
	       "verbs_device.sysfs (libibverbs 44/56: 696)");

/* Memory regions: ibv_cmd_reg_mr() fills mr_type (and, in newer libraries,
 * access); the provider allocates the whole structure. */
struct verbs_mr {
	struct ibv_mr ibv_mr;
	int mr_type;
	int access;
};

struct verbs_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
};

struct verbs_xrcd {
	struct ibv_xrcd xrcd;
	uint32_t comp_mask;
	uint32_t handle;
};

struct verbs_srq {
	struct ibv_srq srq;
	enum ibv_srq_type srq_type;
	struct verbs_xrcd *xrcd;
	struct ibv_cq *cq;
	uint32_t srq_num;
};

/* verbs_qp.comp_mask: the qp_ex part is valid (ibv_qp_to_qp_ex()) */
enum {
	SRNIC_VERBS_QP_EX = 1 << 1,
};

struct verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask;
	struct verbs_xrcd *xrcd;
};

#if SRNIC_RDMA_CORE_MAJOR == 44
_Static_assert(offsetof(struct verbs_qp, comp_mask) == 352,
	       "verbs_qp.comp_mask in rdma-core 44");
#else
_Static_assert(offsetof(struct verbs_qp, comp_mask) == 360,
	       "verbs_qp.comp_mask in rdma-core 56");
#endif

/*
 * Every callback a provider may give, in the library's order (sorted by
 * name; 76 in both 44 and 56). verbs_set_ops() copies the non-NULL ones; a
 * verb left NULL answers EOPNOTSUPP (or ENOSYS) through libibverbs' dummy.
 */
struct ibv_ops_wr;
struct ibv_ece;

struct verbs_context_ops {
	int (*advise_mr)(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
			 uint32_t flags, struct ibv_sge *sg_list,
			 uint32_t num_sges);
	struct ibv_dm *(*alloc_dm)(struct ibv_context *context,
				   struct ibv_alloc_dm_attr *attr);
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	struct ibv_mr *(*alloc_null_mr)(struct ibv_pd *pd);
	struct ibv_pd *(*alloc_parent_domain)(
		struct ibv_context *context,
		struct ibv_parent_domain_init_attr *attr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	struct ibv_td *(*alloc_td)(struct ibv_context *context,
				   struct ibv_td_init_attr *init_attr);
	void (*async_event)(struct ibv_context *context,
			    struct ibv_async_event *event);
	int (*attach_counters_point_flow)(struct ibv_counters *counters,
					  struct ibv_counter_attach_attr *attr,
					  struct ibv_flow *flow);
	int (*attach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw,
		       struct ibv_mw_bind *mw_bind);
	int (*close_xrcd)(struct ibv_xrcd *xrcd);
	void (*cq_event)(struct ibv_cq *cq);
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd, struct ibv_ah_attr *attr);
	struct ibv_counters *(*create_counters)(
		struct ibv_context *context,
		struct ibv_counters_init_attr *init_attr);
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector);
	struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *context,
					  struct ibv_cq_init_attr_ex *init_attr);
	struct ibv_flow *(*create_flow)(struct ibv_qp *qp,
					struct ibv_flow_attr *flow_attr);
	struct ibv_flow_action *(*create_flow_action_esp)(
		struct ibv_context *context,
		struct ibv_flow_action_esp_attr *attr);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *attr);
	struct ibv_rwq_ind_table *(*create_rwq_ind_table)(
		struct ibv_context *context,
		struct ibv_rwq_ind_table_init_attr *init_attr);
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *attr);
	struct ibv_srq *(*create_srq_ex)(struct ibv_context *context,
					 struct ibv_srq_init_attr_ex *attr);
	struct ibv_wq *(*create_wq)(struct ibv_context *context,
				    struct ibv_wq_init_attr *attr);
	int (*dealloc_mw)(struct ibv_mw *mw);
	int (*dealloc_pd)(struct ibv_pd *pd);
	int (*dealloc_td)(struct ibv_td *td);
	int (*dereg_mr)(struct verbs_mr *vmr);
	int (*destroy_ah)(struct ibv_ah *ah);
	int (*destroy_counters)(struct ibv_counters *counters);
	int (*destroy_cq)(struct ibv_cq *cq);
	int (*destroy_flow)(struct ibv_flow *flow);
	int (*destroy_flow_action)(struct ibv_flow_action *action);
	int (*destroy_qp)(struct ibv_qp *qp);
	int (*destroy_rwq_ind_table)(struct ibv_rwq_ind_table *table);
	int (*destroy_srq)(struct ibv_srq *srq);
	int (*destroy_wq)(struct ibv_wq *wq);
	int (*detach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	void (*free_context)(struct ibv_context *context);
	int (*free_dm)(struct ibv_dm *dm);
	int (*get_srq_num)(struct ibv_srq *srq, uint32_t *srq_num);
	struct ibv_dm *(*import_dm)(struct ibv_context *context,
				    uint32_t dm_handle);
	struct ibv_mr *(*import_mr)(struct ibv_pd *pd, uint32_t mr_handle);
	struct ibv_pd *(*import_pd)(struct ibv_context *context,
				    uint32_t pd_handle);
	int (*modify_cq)(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr);
	int (*modify_flow_action_esp)(struct ibv_flow_action *action,
				      struct ibv_flow_action_esp_attr *attr);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask);
	int (*modify_qp_rate_limit)(struct ibv_qp *qp,
				    struct ibv_qp_rate_limit_attr *attr);
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr,
			  int attr_mask);
	int (*modify_wq)(struct ibv_wq *wq, struct ibv_wq_attr *attr);
	struct ibv_qp *(*open_qp)(struct ibv_context *context,
				  struct ibv_qp_open_attr *attr);
	struct ibv_xrcd *(*open_xrcd)(struct ibv_context *context,
				      struct ibv_xrcd_init_attr *attr);
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);
	int (*post_srq_ops)(struct ibv_srq *srq, struct ibv_ops_wr *op,
			    struct ibv_ops_wr **bad_op);
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			     struct ibv_recv_wr **bad_wr);
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr,
			       size_t attr_size);
	int (*query_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr);
	int (*query_qp_data_in_order)(struct ibv_qp *qp,
				      enum ibv_wr_opcode op, uint32_t flags);
	int (*query_rt_values)(struct ibv_context *context,
			       struct ibv_values_ex *values);
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr);
	int (*read_counters)(struct ibv_counters *counters,
			     uint64_t *counters_value, uint32_t ncounters,
			     uint32_t flags);
	struct ibv_mr *(*reg_dm_mr)(struct ibv_pd *pd, struct ibv_dm *dm,
				    uint64_t dm_offset, size_t length,
				    unsigned int access);
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset,
					size_t length, uint64_t iova, int fd,
					int access);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access);
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			void *addr, size_t length, int access);
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
	int (*set_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	void (*unimport_dm)(struct ibv_dm *dm);
	void (*unimport_mr)(struct ibv_mr *mr);
	void (*unimport_pd)(struct ibv_pd *pd);
};

_Static_assert(sizeof(struct verbs_context_ops) == 76 * sizeof(void *),
	       "verbs_context_ops: 76 callbacks in rdma-core 44 and 56");

/*
 * Commands: what the ibv_cmd_*() helpers take. Each is the uverbs write
 * header followed by the kernel's core command (<rdma/ib_user_verbs.h>);
 * driver data, if any, follows in the provider's own wrapper. The helpers
 * fill the header and the core fields themselves.
 */
#define SRNIC_IBV_CMD(name, core)				\
	struct name {						\
		struct ib_uverbs_cmd_hdr hdr;			\
		struct core core;				\
	}

SRNIC_IBV_CMD(ibv_get_context, ib_uverbs_get_context);
SRNIC_IBV_CMD(ibv_query_port, ib_uverbs_query_port);
SRNIC_IBV_CMD(ibv_alloc_pd, ib_uverbs_alloc_pd);
SRNIC_IBV_CMD(ibv_reg_mr, ib_uverbs_reg_mr);
SRNIC_IBV_CMD(ibv_rereg_mr, ib_uverbs_rereg_mr);
SRNIC_IBV_CMD(ibv_alloc_mw, ib_uverbs_alloc_mw);
SRNIC_IBV_CMD(ibv_create_cq, ib_uverbs_create_cq);
SRNIC_IBV_CMD(ibv_resize_cq, ib_uverbs_resize_cq);
SRNIC_IBV_CMD(ibv_create_qp, ib_uverbs_create_qp);
SRNIC_IBV_CMD(ibv_query_qp, ib_uverbs_query_qp);
SRNIC_IBV_CMD(ibv_modify_qp, ib_uverbs_modify_qp);
SRNIC_IBV_CMD(ibv_create_srq, ib_uverbs_create_srq);
SRNIC_IBV_CMD(ibv_modify_srq, ib_uverbs_modify_srq);
SRNIC_IBV_CMD(ibv_query_srq, ib_uverbs_query_srq);
SRNIC_IBV_CMD(ibv_open_xrcd, ib_uverbs_open_xrcd);
SRNIC_IBV_CMD(ibv_create_xsrq, ib_uverbs_create_xsrq);
SRNIC_IBV_CMD(ibv_open_qp, ib_uverbs_open_qp);

_Static_assert(sizeof(struct ibv_rereg_mr) == 56,
	       "ibv_cmd_rereg_mr() sends 56 bytes (libibverbs 44/56)");

/* Extended commands: the write header, then the extended header. */
struct srnic_ibv_ex_hdr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_ex_cmd_hdr ex_hdr;
};

struct ibv_create_cq_ex {
	struct srnic_ibv_ex_hdr hdr;
	struct ib_uverbs_ex_create_cq core;
};

/* The entry point: a provider's constructor calls it once at dlopen(). */
void verbs_register_driver_34(const struct verbs_device_ops *ops);

void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);
void verbs_uninit_context(struct verbs_context *context);
void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops);

/* Log levels of __verbs_log() (VERBS_LOG_LEVEL in the environment). */
enum {
	SRNIC_VERBS_LOG_ERR = 1,
	SRNIC_VERBS_LOG_WARN = 2,
};

void __verbs_log(struct verbs_context *ctx, uint32_t level,
		 const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

int ibv_cmd_get_context(struct verbs_context *context,
			struct ibv_get_context *cmd, size_t cmd_size,
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);
int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp,
			     size_t *resp_size);
int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr,
		       struct ibv_query_port *cmd, size_t cmd_size);
int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd,
		     struct ibv_alloc_pd *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_pd(struct ibv_pd *pd);
int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
		   uint64_t hca_va, int access, struct verbs_mr *vmr,
		   struct ibv_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size);
/*
 * Reregistration: the same arguments in rdma-core 44 and 56 (their machine
 * code takes the first six in registers, pd, cmd, cmd_sz, resp and resp_sz
 * from the stack, and sends a 56-byte command). On success it copies the
 * new lkey and rkey into @vmr; it returns an errno value.
 */
int ibv_cmd_rereg_mr(struct verbs_mr *vmr, uint32_t flags, void *addr,
		     size_t length, uint64_t hca_va, int access,
		     struct ibv_pd *pd, struct ibv_rereg_mr *cmd,
		     size_t cmd_sz, struct ib_uverbs_rereg_mr_resp *resp,
		     size_t resp_sz);
int ibv_cmd_dereg_mr(struct verbs_mr *vmr);
/*
 * ibv_advise_mr(3) as the ioctl UVERBS_METHOD_ADVISE_MR: the same five
 * register arguments in rdma-core 44 and 56 (their machine code reads the
 * PD's handle, the advice, the flags and num_sge ibv_sges at sg_list, no
 * stack argument); it returns an errno value.
 */
int ibv_cmd_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		      uint32_t flags, struct ibv_sge *sg_list,
		      uint32_t num_sge);
/*
 * A dma-buf MR. rdma-core 56 added a last argument (driver attributes, NULL
 * for none; read from the stack by its code, checked in its machine code),
 * 44 has none: SRNIC_CMD_REG_DMABUF_MR() calls either.
 */
#if SRNIC_RDMA_CORE_MAJOR == 44
int ibv_cmd_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
			  uint64_t iova, int fd, int access,
			  struct verbs_mr *vmr);
#define SRNIC_CMD_REG_DMABUF_MR(pd, off, len, iova, fd, access, vmr) \
	ibv_cmd_reg_dmabuf_mr(pd, off, len, iova, fd, access, vmr)
#else
struct ibv_command_buffer;
int ibv_cmd_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
			  uint64_t iova, int fd, int access,
			  struct verbs_mr *vmr,
			  struct ibv_command_buffer *driver);
#define SRNIC_CMD_REG_DMABUF_MR(pd, off, len, iova, fd, access, vmr) \
	ibv_cmd_reg_dmabuf_mr(pd, off, len, iova, fd, access, vmr, NULL)
#endif
/*
 * Memory windows: the same arguments in rdma-core 44 and 56 (their machine
 * code reads the same registers and one stack argument, resp_size).
 */
int ibv_cmd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type,
		     struct ibv_mw *mw, struct ibv_alloc_mw *cmd,
		     size_t cmd_size, struct ib_uverbs_alloc_mw_resp *resp,
		     size_t resp_size);
int ibv_cmd_dealloc_mw(struct ibv_mw *mw);
int ibv_cmd_create_cq(struct ibv_context *context, int cqe,
		      struct ibv_comp_channel *channel, int comp_vector,
		      struct ibv_cq *cq, struct ibv_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_create_cq_ex(struct ibv_context *context,
			 const struct ibv_cq_init_attr_ex *cq_attr,
			 struct verbs_cq *cq, struct ibv_create_cq_ex *cmd,
			 size_t cmd_size,
			 struct ib_uverbs_ex_create_cq_resp *resp,
			 size_t resp_size, uint32_t cmd_flags);
int ibv_cmd_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe, struct ibv_resize_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_resize_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_destroy_cq(struct ibv_cq *cq);
int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq,
		       struct ibv_srq_init_attr *attr,
		       struct ibv_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp,
		       size_t resp_size);
int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		       int srq_attr_mask, struct ibv_modify_srq *cmd,
		       size_t cmd_size);
int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		      struct ibv_query_srq *cmd, size_t cmd_size);
int ibv_cmd_destroy_srq(struct ibv_srq *srq);
/*
 * XRC (the same arguments in rdma-core 44 and 56). open_xrcd and open_qp
 * take the size of the provider's verbs_xrcd / verbs_qp (the library fills
 * the fields that fit); create_srq_ex fills verbs_srq's type, domain, CQ
 * and, for an XRC SRQ, srq_num from the response.
 */
int ibv_cmd_open_xrcd(struct ibv_context *context, struct verbs_xrcd *xrcd,
		      int vxrcd_size, struct ibv_xrcd_init_attr *attr,
		      struct ibv_open_xrcd *cmd, size_t cmd_size,
		      struct ib_uverbs_open_xrcd_resp *resp, size_t resp_size);
int ibv_cmd_close_xrcd(struct verbs_xrcd *xrcd);
int ibv_cmd_create_srq_ex(struct ibv_context *context, struct verbs_srq *srq,
			  struct ibv_srq_init_attr_ex *attr_ex,
			  struct ibv_create_xsrq *cmd, size_t cmd_size,
			  struct ib_uverbs_create_srq_resp *resp,
			  size_t resp_size);
int ibv_cmd_open_qp(struct ibv_context *context, struct verbs_qp *qp,
		    int vqp_sz, struct ibv_qp_open_attr *attr,
		    struct ibv_open_qp *cmd, size_t cmd_size,
		    struct ib_uverbs_create_qp_resp *resp, size_t resp_size);
int ibv_cmd_create_qp(struct ibv_pd *pd, struct ibv_qp *qp,
		      struct ibv_qp_init_attr *attr,
		      struct ibv_create_qp *cmd, size_t cmd_size,
		      struct ib_uverbs_create_qp_resp *resp, size_t resp_size);
int ibv_cmd_create_qp_ex(struct ibv_context *context, struct verbs_qp *qp,
			 struct ibv_qp_init_attr_ex *attr_ex,
			 struct ibv_create_qp *cmd, size_t cmd_size,
			 struct ib_uverbs_create_qp_resp *resp,
			 size_t resp_size);
int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *qp_attr,
		     int attr_mask, struct ibv_qp_init_attr *qp_init_attr,
		     struct ibv_query_qp *cmd, size_t cmd_size);
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct ibv_modify_qp *cmd,
		      size_t cmd_size);
int ibv_cmd_destroy_qp(struct ibv_qp *qp);
int ibv_cmd_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr);
int ibv_cmd_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr);
int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah,
		      struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp, size_t resp_size);
int ibv_cmd_destroy_ah(struct ibv_ah *ah);
int ibv_cmd_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);
int ibv_cmd_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);

#endif /* SRNIC_IBV_PRIVATE_H */
