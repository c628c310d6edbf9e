// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Is the running libibverbs the release this provider was built for?
 *
 * The private structures of ibv_private.h differ between rdma-core
 * releases that export the same IBVERBS_PRIVATE_34 symbols, so the symbol
 * version cannot tell. The library's file name can: Debian and upstream
 * install it as libibverbs.so.1.<abi>.<rdma-core release>.<patch>
 * (libibverbs.so.1.14.44.0, libibverbs.so.1.14.56.1), and the dynamic
 * linker tells where the copy we are bound to lives. A release we cannot
 * read is treated as a mismatch: the provider then matches no device,
 * which is what an absent provider does, instead of corrupting memory.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "srnic.h"

/**
 * srnic_rdma_core_release() - the rdma-core release of a libibverbs file
 * @libibverbs_path: the file's real path (symlinks resolved)
 *
 * Return: the third component of the version in the file name
 * (libibverbs.so.1.14.44.0: 44), or -1 if the name has no such version.
 */
int srnic_rdma_core_release(const char *libibverbs_path)
{
	static const char stem[] = "libibverbs.so.";
	const char *base = strrchr(libibverbs_path, '/');
	const char *p;
	char *end;
	int field;
	long v;

	base = base ? base + 1 : libibverbs_path;
	if (strncmp(base, stem, sizeof(stem) - 1))
		return -1;
	p = base + sizeof(stem) - 1;
	/* skip the soname major and the library ABI: "1." and "14." */
	for (field = 0; field < 2; field++) {
		p = strchr(p, '.');
		if (!p)
			return -1;
		p++;
	}
	v = strtol(p, &end, 10);
	if (end == p || (*end != '.' && *end) || v <= 0 || v > INT_MAX)
		return -1;
	return (int)v;
}

static int srnic_running_release(void)
{
	char real[PATH_MAX];
	Dl_info info;

	/*
	 * Any libibverbs function the provider is bound to names the file;
	 * not verbs_register_driver_34, which the host test interposes.
	 */
	if (!dladdr((void *)verbs_set_ops, &info) ||
	    !info.dli_fname || !realpath(info.dli_fname, real))
		return -1;
	return srnic_rdma_core_release(real);
}

/**
 * srnic_runtime_ok() - may the provider match devices in this process?
 *
 * Decided once, on the first call (the constructor's); a mismatch is
 * logged once through libibverbs' log (VERBS_LOG_LEVEL=2 shows it).
 *
 * Return: true if libibverbs is the rdma-core release built against.
 */
bool srnic_runtime_ok(void)
{
	static int ok = -1;
	int release;

	if (ok >= 0)
		return ok;
	release = srnic_running_release();
	ok = release == SRNIC_RDMA_CORE_MAJOR;
	if (!ok)
		__verbs_log(NULL, SRNIC_VERBS_LOG_WARN,
			    "libsrnic: built for rdma-core %d, running with %d (-1: unknown): srnic native devices are not matched\n",
			    SRNIC_RDMA_CORE_MAJOR, release);
	return ok;
}
