// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "srnic_port": the pure parts of kernel/srnic_port.c.
 *
 *   - srnic_port_active_mtu(): netdev MTU -> IB active MTU, at every
 *     boundary (IB MTU + 84 bytes of worst-case RoCEv2 overhead);
 *   - srnic_port_guid_from_mac(): EUI-64 from a MAC, byte for byte;
 *   - srnic_port_state(): port state of an unregistered dummy netdev,
 *     for each combination of running/carrier;
 *   - the constant port attributes ib_core reads before registration
 *     (immutable data, link layer, P_Key table).
 *
 * Linked into srnic.o when CONFIG_RDMA_SRNIC_KUNIT_TEST=y; run it with
 * tests/kunit/run.sh 'srnic_port'.
 */
#include <kunit/test.h>
#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include <rdma/ib_mad.h>

/*
 * Relative to this file, so it resolves both in the out-of-tree build
 * (M=, where ccflags' -I$(src)/kernel is absolute) and in run.sh's in-tree
 * O= build (where a relative -I$(src)/kernel names a dir of the build tree).
 */
#include "../../kernel/srnic.h"

static const char *srnic_port_test_mtu_name(enum ib_mtu mtu)
{
	switch (mtu) {
	case IB_MTU_256:	return "256";
	case IB_MTU_512:	return "512";
	case IB_MTU_1024:	return "1024";
	case IB_MTU_2048:	return "2048";
	case IB_MTU_4096:	return "4096";
	}
	return "invalid";
}

/* srnic_port_active_mtu() */

struct srnic_port_mtu_case {
	unsigned int netdev_mtu;
	enum ib_mtu expected;
};

/* Boundaries: IB MTU n fits from netdev MTU n + 84 on. */
static const struct srnic_port_mtu_case srnic_port_mtu_cases[] = {
	{ 0,		IB_MTU_256 },	/* nothing fits: the smallest IB MTU */
	{ 84,		IB_MTU_256 },	/* headers only */
	{ 339,		IB_MTU_256 },	/* 256 does not fit either */
	{ 340,		IB_MTU_256 },	/* 256 + 84 */
	{ 595,		IB_MTU_256 },
	{ 596,		IB_MTU_512 },	/* 512 + 84 */
	{ 1107,		IB_MTU_512 },
	{ 1108,		IB_MTU_1024 },	/* 1024 + 84 */
	{ 1500,		IB_MTU_1024 },	/* Ethernet default */
	{ 2131,		IB_MTU_1024 },
	{ 2132,		IB_MTU_2048 },	/* 2048 + 84 */
	{ 4179,		IB_MTU_2048 },
	{ 4180,		IB_MTU_4096 },	/* 4096 + 84 */
	{ 9000,		IB_MTU_4096 },	/* jumbo */
	{ 65535,	IB_MTU_4096 },	/* loopback */
	{ UINT_MAX,	IB_MTU_4096 },
};

static void srnic_port_mtu_case_desc(const struct srnic_port_mtu_case *c,
				     char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "netdev mtu %u -> ib mtu %s",
		 c->netdev_mtu, srnic_port_test_mtu_name(c->expected));
}

KUNIT_ARRAY_PARAM(srnic_port_mtu, srnic_port_mtu_cases,
		  srnic_port_mtu_case_desc);

static void active_mtu_fits_worst_case_headers(struct kunit *test)
{
	const struct srnic_port_mtu_case *c = test->param_value;
	enum ib_mtu got = srnic_port_active_mtu(c->netdev_mtu);

	KUNIT_EXPECT_EQ_MSG(test, got, c->expected,
			    "netdev mtu %u: got IB MTU %s, want %s",
			    c->netdev_mtu, srnic_port_test_mtu_name(got),
			    srnic_port_test_mtu_name(c->expected));
}

/* srnic_port_guid_from_mac() */

struct srnic_port_guid_case {
	const char *name;
	u8 mac[ETH_ALEN];
	u8 guid[8];
};

static const struct srnic_port_guid_case srnic_port_guid_cases[] = {
	{
		/* QEMU's default: locally administered, U/L bit set -> cleared */
		.name = "52:54:00:12:34:56",
		.mac  = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 },
		.guid = { 0x50, 0x54, 0x00, 0xff, 0xfe, 0x12, 0x34, 0x56 },
	},
	{
		.name = "02:00:00:00:00:01",
		.mac  = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 },
		.guid = { 0x00, 0x00, 0x00, 0xff, 0xfe, 0x00, 0x00, 0x01 },
	},
	{
		/* universally administered: U/L bit clear -> set */
		.name = "00:11:22:33:44:55",
		.mac  = { 0x00, 0x11, 0x22, 0x33, 0x44, 0x55 },
		.guid = { 0x02, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x55 },
	},
	{
		/* only the U/L bit flips, the group bit stays */
		.name = "ff:ff:ff:ff:ff:ff",
		.mac  = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
		.guid = { 0xfd, 0xff, 0xff, 0xff, 0xfe, 0xff, 0xff, 0xff },
	},
};

static void srnic_port_guid_case_desc(const struct srnic_port_guid_case *c,
				      char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(srnic_port_guid, srnic_port_guid_cases,
		  srnic_port_guid_case_desc);

static void guid_from_mac_is_modified_eui64(struct kunit *test)
{
	const struct srnic_port_guid_case *c = test->param_value;
	__be64 guid = srnic_port_guid_from_mac(c->mac);
	const u8 *got = (const u8 *)&guid;
	int i;

	/* Network byte order: compare the bytes, not the integer. */
	for (i = 0; i < sizeof(guid); i++)
		KUNIT_EXPECT_EQ_MSG(test, got[i], c->guid[i],
				    "mac %s: guid byte %d", c->name, i);
}

/* srnic_port_state() on an unregistered dummy Ethernet netdev */

static int srnic_port_test_netdev_init(struct kunit_resource *res, void *ctx)
{
	struct net_device *ndev;

	ndev = alloc_netdev(0, "srnic_kt%d", NET_NAME_UNKNOWN, ether_setup);
	if (!ndev)
		return -ENOMEM;
	res->data = ndev;
	return 0;
}

static void srnic_port_test_netdev_free(struct kunit_resource *res)
{
	struct net_device *ndev = res->data;

	/* Undo what the test faked; the device was never registered. */
	clear_bit(__LINK_STATE_START, &ndev->state);
	free_netdev(ndev);
}

/* A never-registered netdev, freed when the test ends (even on failure). */
static struct net_device *srnic_port_test_alloc_netdev(struct kunit *test)
{
	return kunit_alloc_resource(test, srnic_port_test_netdev_init,
				    srnic_port_test_netdev_free, GFP_KERNEL,
				    NULL);
}

struct srnic_port_state_case {
	const char *name;
	bool running;
	bool carrier;
	enum ib_port_state expected;
};

static const struct srnic_port_state_case srnic_port_state_cases[] = {
	{ "down, no carrier",	false,	false,	IB_PORT_DOWN },
	{ "down, carrier",	false,	true,	IB_PORT_DOWN },
	{ "up, no carrier",	true,	false,	IB_PORT_DOWN },
	{ "up, carrier",	true,	true,	IB_PORT_ACTIVE },
};

static void srnic_port_state_case_desc(const struct srnic_port_state_case *c,
				       char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(srnic_port_state, srnic_port_state_cases,
		  srnic_port_state_case_desc);

static void port_state_follows_running_and_carrier(struct kunit *test)
{
	const struct srnic_port_state_case *c = test->param_value;
	struct net_device *ndev;

	ndev = srnic_port_test_alloc_netdev(test);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ndev);

	/* A fresh netdev is neither running nor registered. */
	KUNIT_ASSERT_FALSE(test, netif_running(ndev));
	KUNIT_ASSERT_EQ(test, ndev->reg_state, NETREG_UNINITIALIZED);

	/*
	 * Fake what dev_open() and the driver would do. On an unregistered
	 * netdev the carrier helpers only flip the state bit (no linkwatch).
	 */
	if (c->running)
		set_bit(__LINK_STATE_START, &ndev->state);
	if (c->carrier)
		netif_carrier_on(ndev);
	else
		netif_carrier_off(ndev);

	KUNIT_EXPECT_EQ_MSG(test, srnic_port_state(ndev), c->expected,
			    "%s: want %s", c->name,
			    c->expected == IB_PORT_ACTIVE ? "ACTIVE" : "DOWN");
}

/* Constant port attributes; the callbacks get an unregistered, zeroed device. */

static struct ib_device *srnic_port_test_ibdev(struct kunit *test)
{
	struct srnic_dev *sdev = kunit_kzalloc(test, sizeof(*sdev), GFP_KERNEL);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, sdev);
	return &sdev->ib_dev;
}

static void port_immutable_is_roce_v2_ethernet(struct kunit *test)
{
	struct ib_device *ibdev = srnic_port_test_ibdev(test);
	struct ib_port_immutable imm = {};

	KUNIT_ASSERT_EQ(test, srnic_get_port_immutable(ibdev, SRNIC_PORT_NUM, &imm), 0);
	KUNIT_EXPECT_EQ(test, imm.core_cap_flags, RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP);
	KUNIT_EXPECT_EQ(test, imm.pkey_tbl_len, SRNIC_PKEY_TBL_LEN);
	KUNIT_EXPECT_EQ(test, imm.gid_tbl_len, SRNIC_GID_TBL_LEN);
	KUNIT_EXPECT_EQ(test, imm.max_mad_size, IB_MGMT_MAD_SIZE);
	KUNIT_EXPECT_EQ(test, srnic_get_link_layer(ibdev, SRNIC_PORT_NUM),
			IB_LINK_LAYER_ETHERNET);
}

static void query_pkey_has_only_the_default_entry(struct kunit *test)
{
	struct ib_device *ibdev = srnic_port_test_ibdev(test);
	u16 pkey = 0;

	KUNIT_EXPECT_EQ(test, srnic_query_pkey(ibdev, SRNIC_PORT_NUM, 0, &pkey), 0);
	KUNIT_EXPECT_EQ(test, pkey, 0xffff);

	pkey = 0x1234;
	KUNIT_EXPECT_EQ(test, srnic_query_pkey(ibdev, SRNIC_PORT_NUM,
					       SRNIC_PKEY_TBL_LEN, &pkey), -EINVAL);
	KUNIT_EXPECT_EQ(test, pkey, 0x1234);	/* untouched on error */
}

static struct kunit_case srnic_port_test_cases[] = {
	KUNIT_CASE_PARAM(active_mtu_fits_worst_case_headers,
			 srnic_port_mtu_gen_params),
	KUNIT_CASE_PARAM(guid_from_mac_is_modified_eui64,
			 srnic_port_guid_gen_params),
	KUNIT_CASE_PARAM(port_state_follows_running_and_carrier,
			 srnic_port_state_gen_params),
	KUNIT_CASE(port_immutable_is_roce_v2_ethernet),
	KUNIT_CASE(query_pkey_has_only_the_default_entry),
	{}
};

static struct kunit_suite srnic_port_test_suite = {
	.name = "srnic_port",
	.test_cases = srnic_port_test_cases,
};

kunit_test_suite(srnic_port_test_suite);
