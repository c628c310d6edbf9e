/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vtest.h: what the VM tests' C programs (mcast_verbs.c, ring_fuzz.c,
 * uverbs_fuzz.c, qp_scale.c) share: one line per check, "ok NAME" or
 * "not ok NAME: reason" (counted in fails; check() picks one by a
 * condition), a monotonic clock, and opening an RDMA device by name.
 * Header only: each program is built from its one .c file in the guest.
 */
#ifndef SRNIC_VTEST_H
#define SRNIC_VTEST_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

static int fails;

static inline void ok(const char *name)
{
	printf("ok %s\n", name);
	fflush(stdout);
}

static inline void vbad(const char *name, const char *fmt, va_list ap)
{
	fails++;
	printf("not ok %s: ", name);
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
}

static inline __attribute__((format(printf, 2, 3)))
void bad(const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vbad(name, fmt, ap);
	va_end(ap);
}

/* ok NAME if @cond, else not ok NAME with the printf-style reason. */
static inline __attribute__((format(printf, 3, 4)))
bool check(const char *name, bool cond, const char *fmt, ...)
{
	va_list ap;

	if (cond) {
		ok(name);
		return true;
	}
	va_start(ap, fmt);
	vbad(name, fmt, ap);
	va_end(ap);
	return false;
}

static inline long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

static inline void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* The device named @name, opened; NULL if there is none. */
static inline struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *c = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			c = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return c;
}

#endif /* SRNIC_VTEST_H */
