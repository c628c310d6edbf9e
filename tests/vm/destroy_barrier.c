// SPDX-License-Identifier: GPL-2.0
/*
 * destroy_barrier.so: an LD_PRELOAD shim that makes ibv_rc_pingpong's
 * teardown deterministic. Used by tests/vm/test_loss.sh.
 *
 *   SRNIC_BARRIER=PATH LD_PRELOAD=/tmp/destroy_barrier.so ibv_rc_pingpong ...
 *
 * ibv_rc_pingpong has no closing handshake: each side destroys its QP as
 * soon as its own last SEND is acknowledged and its last receive is done.
 * When the ACK of the other side's last SEND is lost (netem), that side
 * retransmits to a QP that is gone and rightly fails with "transport retry
 * counter exceeded". With this shim the process's first ibv_destroy_qp()
 * creates PATH.wait, then waits (60 s at most) for PATH.go before it
 * destroys: the test creates both sides' .go files only once each side
 * waits there or has exited. No QP goes while its peer may still need it,
 * so either side failing is a transport failure.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <infiniband/verbs.h>

static void barrier(const char *base)
{
	char path[4096];
	int fd, i;

	snprintf(path, sizeof(path), "%s.wait", base);
	fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
	snprintf(path, sizeof(path), "%s.go", base);
	for (i = 0; i < 600 && access(path, F_OK); i++)
		usleep(100000);
}

int ibv_destroy_qp(struct ibv_qp *qp)
{
	static int (*real)(struct ibv_qp *qp);
	static int waited;
	const char *base = getenv("SRNIC_BARRIER");

	if (!real)
		real = (int (*)(struct ibv_qp *))dlsym(RTLD_NEXT, "ibv_destroy_qp");
	if (!real)
		return -1;
	if (base && !waited) {
		waited = 1;
		barrier(base);
	}
	return real(qp);
}
