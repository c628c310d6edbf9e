// SPDX-License-Identifier: GPL-2.0
/*
 * srnic protection domains. A PD is a pure container: ib_core tracks its
 * users, and objects created later (QPs, MRs, AHs, MWs) check that their
 * peers share it. The device counts them against max_pd.
 */
#include "srnic.h"

/* The last PD serial given out (struct srnic_pd); 64 bits never wrap. */
static atomic64_t srnic_pd_serial_last = ATOMIC64_INIT(0);

int srnic_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct srnic_dev *sdev = to_srnic_dev(ibpd->device);

	/* No more than the device reports (max_pd). */
	if (!atomic_add_unless(&sdev->pd_count, 1, SRNIC_MAX_PD))
		return -ENOMEM;
	container_of(ibpd, struct srnic_pd, ibpd)->serial =
		atomic64_inc_return(&srnic_pd_serial_last);
	return 0;
}

int srnic_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	atomic_dec(&to_srnic_dev(ibpd->device)->pd_count);
	return 0;
}
