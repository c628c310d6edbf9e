// SPDX-License-Identifier: GPL-2.0
/*
 * srnic protection domains. A PD is a pure container: ib_core tracks its
 * users, and objects created later (QPs, MRs, AHs, MWs) check that their
 * peers share it.
 */
#include "srnic.h"

int srnic_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	return 0;
}

int srnic_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	return 0;
}
