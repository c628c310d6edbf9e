// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * XRC domains. A domain is the kernel's object; several processes share
 * one by opening it on the same file (ibv_open_xrcd(3): the inode names
 * it, O_CREAT makes it). Nothing of the provider's own lives in it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>

#include "srnic.h"

struct ibv_xrcd *srnic_open_xrcd(struct ibv_context *context,
				 struct ibv_xrcd_init_attr *attr)
{
	struct ib_uverbs_open_xrcd_resp resp;
	struct ibv_open_xrcd cmd;
	struct verbs_xrcd *xrcd;
	int err;

	xrcd = calloc(1, sizeof(*xrcd));
	if (!xrcd)
		return NULL;
	err = ibv_cmd_open_xrcd(context, xrcd, sizeof(*xrcd), attr, &cmd,
				sizeof(cmd), &resp, sizeof(resp));
	if (err) {
		free(xrcd);
		errno = err;
		return NULL;
	}
	return &xrcd->xrcd;
}

int srnic_close_xrcd(struct ibv_xrcd *ibxrcd)
{
	struct verbs_xrcd *xrcd =
		SRNIC_STRUCT_OF(ibxrcd, struct verbs_xrcd, xrcd);
	int err;

	err = ibv_cmd_close_xrcd(xrcd);
	if (!err)
		free(xrcd);
	return err;
}
