// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Which devices are ours: srnic devices made in native mode, and never a
 * default-mode one (that one belongs to the stock rxe provider).
 *
 * A native device reports no driver id and uverbs ABI version
 * SRNIC_NATIVE_ABI_VERSION, and its sysfs directory has srnic/provider
 * reading "native" (include/uapi/rdma/srnic.h). The ABI version alone would
 * do for today's kernels; the sysfs file makes the choice a property only
 * srnic has, robust to device renames and to another driver ever using the
 * same ABI number.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <uapi/rdma/srnic.h>

#include "srnic.h"

/* Does @path hold exactly @want followed by an optional newline? */
static bool srnic_file_is(const char *path, const char *want)
{
	size_t len = strlen(want);
	char buf[32];
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n <= 0 || (size_t)n < len || memcmp(buf, want, len))
		return false;
	return (size_t)n == len || ((size_t)n == len + 1 && buf[len] == '\n');
}

/**
 * srnic_match_device() - verbs_device_ops.match_device
 * @sysfs_dev: the device libibverbs found
 *
 * libibverbs calls it for every device it has not matched yet (after the
 * empty match table found nothing), then checks the ABI range itself.
 *
 * Return: true for a native srnic device, if this libibverbs is the one
 * the provider was built for.
 */
bool srnic_match_device(struct verbs_sysfs_dev *sysfs_dev)
{
	char path[SRNIC_IBV_SYSFS_PATH_MAX + 32];
	int n;

	if (sysfs_dev->abi_ver != SRNIC_NATIVE_ABI_VERSION)
		return false;
	if (!srnic_runtime_ok())
		return false;
	n = snprintf(path, sizeof(path), "%.*s/%s/%s",
		     SRNIC_IBV_SYSFS_PATH_MAX, sysfs_dev->ibdev_path,
		     SRNIC_SYSFS_GROUP, SRNIC_SYSFS_PROVIDER);
	if (n < 0 || (size_t)n >= sizeof(path))
		return false;
	return srnic_file_is(path, SRNIC_PROVIDER_NATIVE);
}
