/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * srnic: names shared by the kernel module and its user-space tools.
 *
 * Verbs themselves use rdma-core's rxe ABI (<rdma/rdma_user_rxe.h>); this
 * file holds only what srnic adds around it:
 *
 *   rdma link add NAME type SRNIC_LINK_TYPE netdev IFNAME
 *
 *   /sys/class/infiniband/<dev>/SRNIC_SYSFS_GROUP/
 *       SRNIC_SYSFS_VERSION   module version, "x.y.z\n"
 *       SRNIC_SYSFS_NETDEV    name of the bound netdev, "eth0\n"
 *
 * A device is an srnic device exactly when that directory exists.
 */
#ifndef _UAPI_RDMA_SRNIC_H
#define _UAPI_RDMA_SRNIC_H

#define SRNIC_LINK_TYPE		"srnic"
#define SRNIC_SYSFS_GROUP	"srnic"
#define SRNIC_SYSFS_VERSION	"version"
#define SRNIC_SYSFS_NETDEV	"netdev"

/* RoCEv2 destination UDP port (IBA Annex A17). */
#define SRNIC_ROCE_V2_UDP_PORT	4791

#endif /* _UAPI_RDMA_SRNIC_H */
