// SPDX-License-Identifier: GPL-2.0
/*
 * Host test of libsrnic, the native provider: needs no RDMA device, no
 * srnic module and no root.
 *
 *   provider_test <build>/provider/libsrnic
 *
 * The argument is what a user puts in RDMAV_DRIVERS; libibverbs appends
 * "-rdmav34.so" to such a path and dlopen()s it with RTLD_NOW, and so does
 * this test. It checks that
 *   - the library loads with every libibverbs symbol resolved (BIND_NOW),
 *     and its constructor registers exactly one provider, "srnic", whose
 *     match table is empty but not NULL and whose ABI range is srnic's
 *     native one (the registration is observed by interposing
 *     verbs_register_driver_34, then forwarded to libibverbs);
 *   - match_device() accepts a native srnic device and refuses a
 *     default-mode one, a device without srnic/, and a wrong ABI version
 *     (fake sysfs trees in a temporary directory);
 *   - the rdma-core release is read from libibverbs' file name;
 *   - ibv_get_device_list() works with RDMAV_DRIVERS naming the provider,
 *     in a child process (a crash there fails the test, not the run).
 * The structure layouts of ibv_private.h are checked when this file
 * compiles (its static assertions run against the installed headers).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <uapi/rdma/srnic.h>

#include "ibv_private.h"

int srnic_rdma_core_release(const char *libibverbs_path);

static int failures;

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: check failed: %s\n",	\
				__FILE__, __LINE__, #cond);		\
			failures++;					\
		}							\
	} while (0)

static const struct verbs_device_ops *registered;
static int registrations;

/*
 * Interposes libibverbs' entry point (the executable is linked with
 * --export-dynamic, so its definition comes first in the lookup scope):
 * record what the provider registers, then let libibverbs have it.
 */
void verbs_register_driver_34(const struct verbs_device_ops *ops)
{
	void (*real)(const struct verbs_device_ops *);

	registered = ops;
	registrations++;
	real = (void (*)(const struct verbs_device_ops *))
		dlvsym(RTLD_NEXT, "verbs_register_driver_34",
		       "IBVERBS_PRIVATE_34");
	if (real)
		real(ops);
}

static void *load_provider(const char *drivers_entry)
{
	char so[PATH_MAX];
	void *h;

	snprintf(so, sizeof(so), "%s-rdmav34.so", drivers_entry);
	h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		fprintf(stderr, "dlopen %s: %s\n", so, dlerror());
	return h;
}

static void check_registration(void)
{
	const struct verbs_device_ops *ops = registered;

	CHECK(registrations == 1);
	if (!ops)
		return;
	CHECK(strcmp(ops->name, "srnic") == 0);
	CHECK(ops->match_table != NULL);
	if (ops->match_table)
		CHECK(ops->match_table[0].kind == SRNIC_IBV_MATCH_SENTINEL);
	CHECK(ops->match_min_abi_version == SRNIC_NATIVE_ABI_VERSION);
	CHECK(ops->match_max_abi_version == SRNIC_NATIVE_ABI_VERSION);
	CHECK(ops->match_device != NULL);
	CHECK(ops->alloc_device != NULL);
	CHECK(ops->uninit_device != NULL);
	CHECK(ops->alloc_context != NULL);
}

/* <root>/<dev>/srnic/provider holding @mode (NULL: no srnic/ at all). */
static void make_fake_dev(const char *root, const char *dev, const char *mode)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, dev);
	CHECK(mkdir(path, 0755) == 0);
	if (!mode)
		return;
	snprintf(path, sizeof(path), "%s/%s/%s", root, dev, SRNIC_SYSFS_GROUP);
	CHECK(mkdir(path, 0755) == 0);
	snprintf(path, sizeof(path), "%s/%s/%s/%s", root, dev,
		 SRNIC_SYSFS_GROUP, SRNIC_SYSFS_PROVIDER);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(mode, f);
		fclose(f);
	}
}

static bool try_match(const char *root, const char *dev, uint32_t abi)
{
	struct verbs_sysfs_dev *sd = calloc(1, sizeof(*sd));
	bool ok;

	if (!sd)
		return false;
	snprintf(sd->ibdev_name, sizeof(sd->ibdev_name), "%s", dev);
	snprintf(sd->ibdev_path, sizeof(sd->ibdev_path), "%s/%s", root, dev);
	sd->abi_ver = abi;
	ok = registered->match_device(sd);
	free(sd);
	return ok;
}

static void check_matching(void)
{
	char root[] = "/tmp/srnic_provider_test.XXXXXX";
	char cmd[PATH_MAX + 16];

	if (!registered || !registered->match_device)
		return;
	CHECK(mkdtemp(root) != NULL);
	make_fake_dev(root, "native0", SRNIC_PROVIDER_NATIVE "\n");
	make_fake_dev(root, "rxe0", SRNIC_PROVIDER_RXE "\n");
	make_fake_dev(root, "mlx5_0", NULL);
	make_fake_dev(root, "odd0", SRNIC_PROVIDER_NATIVE "x\n");

	CHECK(try_match(root, "native0", SRNIC_NATIVE_ABI_VERSION));
	/* a default-mode srnic device: rxe's ABI and provider */
	CHECK(!try_match(root, "rxe0", 2));
	CHECK(!try_match(root, "rxe0", SRNIC_NATIVE_ABI_VERSION));
	CHECK(!try_match(root, "native0", 2));
	CHECK(!try_match(root, "mlx5_0", SRNIC_NATIVE_ABI_VERSION));
	CHECK(!try_match(root, "odd0", SRNIC_NATIVE_ABI_VERSION));
	CHECK(!try_match(root, "gone0", SRNIC_NATIVE_ABI_VERSION));

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	CHECK(system(cmd) == 0);
}

static void check_device_alloc(void)
{
	struct verbs_sysfs_dev sd = { .abi_ver = SRNIC_NATIVE_ABI_VERSION };
	struct verbs_device *vdev;

	if (!registered)
		return;
	vdev = registered->alloc_device(&sd);
	CHECK(vdev != NULL);
	if (vdev)
		registered->uninit_device(vdev);
}

static void check_release_parse(void)
{
	CHECK(srnic_rdma_core_release("/usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0") == 44);
	CHECK(srnic_rdma_core_release("/lib/libibverbs.so.1.14.56.1") == 56);
	CHECK(srnic_rdma_core_release("libibverbs.so.1.14.56") == 56);
	CHECK(srnic_rdma_core_release("/usr/lib/libibverbs.so.1") == -1);
	CHECK(srnic_rdma_core_release("/usr/lib/libibverbs.so.1.14") == -1);
	CHECK(srnic_rdma_core_release("/usr/lib/libmlx5.so.1.24.44.0") == -1);
	CHECK(srnic_rdma_core_release("/x/libibverbs.so.1.14.x4.0") == -1);
}

/* libibverbs with the provider named by RDMAV_DRIVERS, in a child. */
static void check_device_list(const char *drivers_entry)
{
	int status = 0;
	pid_t pid;

	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		struct ibv_device **list;
		int n = -1;

		setenv("RDMAV_DRIVERS", drivers_entry, 1);
		list = ibv_get_device_list(&n);
		/* no device here is the usual host; ENOSYS: no RDMA at all */
		if (!list && errno != ENOSYS)
			_exit(1);
		if (list)
			ibv_free_device_list(list);
		_exit(n >= 0 || errno == ENOSYS ? 0 : 2);
	}
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(int argc, char **argv)
{
	void *h;

	if (argc != 2) {
		fprintf(stderr, "usage: %s <dir>/libsrnic\n", argv[0]);
		return 2;
	}
	check_release_parse();
	check_device_list(argv[1]);
	h = load_provider(argv[1]);
	CHECK(h != NULL);
	if (h) {
		check_registration();
		check_matching();
		check_device_alloc();
	}
	if (failures) {
		fprintf(stderr, "provider_test: %d check(s) failed\n", failures);
		return 1;
	}
	printf("provider_test: ok (rdma-core %d)\n", SRNIC_RDMA_CORE_MAJOR);
	return 0;
}
