// SPDX-License-Identifier: GPL-2.0
/*
 * revoke_mmap: are a revoked context's rings unmapped? Run by
 * tests/vm/test_teardown.sh.
 *
 *   revoke_mmap DEV READY_FILE GONE_FILE
 *
 * Opens DEV, creates a CQ (the rxe provider mmaps its ring from the uverbs
 * file: the only such mapping in /proc/self/maps then), checks that the
 * ring header reads back (index_mask = the CQ's capacity), creates
 * READY_FILE and waits up to 60 s for IBV_EVENT_DEVICE_FATAL: the script
 * removes the device meanwhile, and creates GONE_FILE once the removal has
 * returned (ib_core queues the event before it revokes the context's
 * mappings, so the event alone does not mean they are gone). Then it reads
 * the ring header again, which must fault (SIGBUS): the device is gone, so
 * must be the pages it shared.
 *
 * Prints "ok NAME" or "not ok NAME: reason" per check, then
 * "revoke_mmap: done"; exits 0 when it ran to the end.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_user_rxe.h>

#include "vtest.h"

#define CQE	100

static sigjmp_buf fault_jmp;
static volatile sig_atomic_t fault_sig;

static void on_fault(int sig)
{
	fault_sig = sig;
	siglongjmp(fault_jmp, 1);
}

/* The start of the one mapping of /dev/infiniband/uverbs* (or NULL). */
static struct rxe_queue_buf *ring_find(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	struct rxe_queue_buf *ring = NULL;
	char line[512];
	int n = 0;

	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, "/dev/infiniband/uverbs"))
			continue;
		ring = (struct rxe_queue_buf *)(uintptr_t)strtoull(line, NULL, 16);
		n++;
	}
	fclose(f);
	return n == 1 ? ring : NULL;
}

/* Wait up to 60 s for IBV_EVENT_DEVICE_FATAL. */
static int wait_fatal(struct ibv_context *ctx)
{
	long end = now_ms() + 60000;
	struct ibv_async_event ev;

	while (now_ms() < end) {
		struct timeval tv = { 0, 200000 };
		fd_set fds;
		int fatal;

		FD_ZERO(&fds);
		FD_SET(ctx->async_fd, &fds);
		if (select(ctx->async_fd + 1, &fds, NULL, NULL, &tv) <= 0)
			continue;
		if (ibv_get_async_event(ctx, &ev))
			return 0;
		fatal = ev.event_type == IBV_EVENT_DEVICE_FATAL;
		ibv_ack_async_event(&ev);
		if (fatal)
			return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_fault };
	volatile struct rxe_queue_buf *ring;
	struct ibv_context *ctx;
	struct ibv_cq *cq;
	uint32_t mask;
	FILE *ready;
	long end;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 4) {
		fprintf(stderr, "usage: %s DEV READY_FILE GONE_FILE\n", argv[0]);
		return 2;
	}
	ctx = open_dev(argv[1]);
	cq = ctx ? ibv_create_cq(ctx, CQE, NULL, NULL, 0) : NULL;
	if (!cq) {
		bad("open the device, create a CQ", "failed on %s", argv[1]);
		return 1;
	}
	ring = ring_find();
	if (!ring) {
		bad("the CQ ring is mapped", "not one uverbs mapping");
		return 1;
	}
	mask = ring->index_mask;
	if (mask + 1 < CQE || (mask & (mask + 1)))
		bad("the CQ ring header reads back", "index_mask %u", mask);
	else
		ok("the CQ ring header reads back");
	ready = fopen(argv[2], "w");
	if (!ready)
		return 1;
	fclose(ready);

	if (wait_fatal(ctx))
		ok("IBV_EVENT_DEVICE_FATAL");
	else
		bad("IBV_EVENT_DEVICE_FATAL", "none in 60 s");
	for (end = now_ms() + 60000; now_ms() < end; sleep_ms(100))
		if (!access(argv[3], F_OK))
			break;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	if (!sigsetjmp(fault_jmp, 1)) {
		mask = ring->index_mask;
		bad("after the revoke the ring faults",
		    "still mapped: index_mask reads %u", mask);
	} else if (fault_sig == SIGBUS) {
		ok("after the revoke the ring faults (SIGBUS)");
	} else {
		bad("after the revoke the ring faults", "signal %d, not SIGBUS",
		    (int)fault_sig);
	}
	printf("revoke_mmap: done\n");
	return 0;
}
