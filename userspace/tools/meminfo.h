/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The /proc/meminfo fields that measure kernel memory, in KiB: read by
 * srnic_dc_bench and by tests/vm/qp_scale.c (built in a guest by cc alone,
 * hence a header).
 */
#ifndef SRNIC_MEMINFO_H
#define SRNIC_MEMINFO_H

#include <stddef.h>
#include <stdio.h>
#include <string.h>

struct meminfo {
	long slab, sunreclaim, vmalloc, percpu, pagetables, memfree;
};

/* All zero if /proc/meminfo cannot be read */
static inline void meminfo_read(struct meminfo *m)
{
	static const struct {
		const char *key;
		size_t off;
	} f[] = {
		{ "Slab", offsetof(struct meminfo, slab) },
		{ "SUnreclaim", offsetof(struct meminfo, sunreclaim) },
		{ "VmallocUsed", offsetof(struct meminfo, vmalloc) },
		{ "Percpu", offsetof(struct meminfo, percpu) },
		{ "PageTables", offsetof(struct meminfo, pagetables) },
		{ "MemFree", offsetof(struct meminfo, memfree) },
	};
	FILE *in = fopen("/proc/meminfo", "r");
	char line[128], key[64];
	size_t i;
	long v;

	memset(m, 0, sizeof(*m));
	if (!in)
		return;
	while (fgets(line, sizeof(line), in)) {
		if (sscanf(line, "%63[^:]: %ld", key, &v) != 2)
			continue;
		for (i = 0; i < sizeof(f) / sizeof(f[0]); i++)
			if (!strcmp(key, f[i].key))
				*(long *)((char *)m + f[i].off) = v;
	}
	fclose(in);
}

#endif
