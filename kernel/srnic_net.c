// SPDX-License-Identifier: GPL-2.0
/*
 * srnic net: the RoCEv2 UDP tunnel sockets (port 4791), one IPv4 and one
 * IPv6 socket per network namespace.
 *
 * The sockets of a namespace exist while at least one srnic device bound to
 * a netdev of that namespace exists: the first device creates them, the last
 * one closes them, so a namespace without srnic devices leaves port 4791 to
 * whoever else wants it. A device drops its reference when its netdev is
 * unregistered (which also happens when the netdev leaves the namespace or
 * the namespace is dismantled), before ib_core's queued unregistration runs,
 * so no reference outlives the namespace.
 */
#include <linux/net_namespace.h>
#include <net/netns/generic.h>
#include <net/udp_tunnel.h>

#include "srnic.h"

/**
 * struct srnic_net - per-namespace RoCEv2 state
 * @sock4: IPv4 UDP 4791 tunnel socket, or NULL
 * @sock6: IPv6 UDP 4791 tunnel socket, or NULL (no IPv6 in the namespace)
 * @users: srnic devices holding a reference
 *
 * All fields are protected by srnic_net_mutex.
 */
struct srnic_net {
	struct socket	*sock4;
	struct socket	*sock6;
	unsigned int	users;
};

/* Protects struct srnic_net of every namespace and srnic_dev.net. */
static DEFINE_MUTEX(srnic_net_mutex);

static unsigned int srnic_net_id __read_mostly;

static struct socket *srnic_udp_open(struct net *net, bool ipv6)
{
	struct udp_tunnel_sock_cfg tunnel_cfg = {
		.encap_type = 1,
		.encap_rcv = srnic_udp_encap_recv,
	};
	struct udp_port_cfg port_cfg = {
		.local_udp_port = htons(SRNIC_ROCE_V2_PORT),
	};
	struct socket *sock;
	int err;

	if (ipv6) {
		port_cfg.family = AF_INET6;
		port_cfg.local_ip6 = in6addr_any;
		port_cfg.ipv6_v6only = 1;
		/* RoCEv2 senders transmit a zero UDP checksum. */
		port_cfg.use_udp6_rx_checksums = false;
	} else {
		port_cfg.family = AF_INET;
		port_cfg.local_ip.s_addr = htonl(INADDR_ANY);
	}

	err = udp_sock_create(net, &port_cfg, &sock);
	if (err)
		return ERR_PTR(err);
	srnic_udp_tunnel_setup(net, sock, &tunnel_cfg);
	return sock;
}

static void srnic_net_close(struct srnic_net *sn)
{
	if (sn->sock6)
		srnic_udp_tunnel_release(sn->sock6);
	if (sn->sock4)
		srnic_udp_tunnel_release(sn->sock4);
	sn->sock4 = NULL;
	sn->sock6 = NULL;
}

static int srnic_net_open(struct srnic_net *sn, struct net *net)
{
	struct socket *sock;

	sock = srnic_udp_open(net, false);
	if (IS_ERR(sock)) {
		if (PTR_ERR(sock) == -EADDRINUSE)
			pr_err("UDP port %u is already in use in this network namespace; another RoCE stack (rdma_rxe?) owns it\n",
			       SRNIC_ROCE_V2_PORT);
		return PTR_ERR(sock);
	}
	sn->sock4 = sock;

	if (!ipv6_mod_enabled())
		return 0;
	sock = srnic_udp_open(net, true);
	if (IS_ERR(sock)) {
		/* A namespace may have IPv6 disabled; IPv4 RoCE still works. */
		if (PTR_ERR(sock) == -EAFNOSUPPORT)
			return 0;
		srnic_net_close(sn);
		return PTR_ERR(sock);
	}
	sn->sock6 = sock;
	return 0;
}

/**
 * srnic_net_get() - take a reference on @net's RoCEv2 sockets for @sdev
 * @sdev: the device; it must not hold a reference yet
 * @net: the namespace of its netdev
 *
 * Opens the sockets if @sdev is the namespace's first device.
 *
 * Return: 0, or a negative errno (-EADDRINUSE when another stack owns 4791).
 */
int srnic_net_get(struct srnic_dev *sdev, struct net *net)
{
	struct srnic_net *sn = net_generic(net, srnic_net_id);
	int err;

	mutex_lock(&srnic_net_mutex);
	if (WARN_ON(sdev->net)) {
		err = -EINVAL;
		goto out_unlock;
	}
	if (!sn->users) {
		err = srnic_net_open(sn, net);
		if (err)
			goto out_unlock;
	}
	sn->users++;
	sdev->net = net;
	srnic_registry_add(sdev);
	err = 0;
out_unlock:
	mutex_unlock(&srnic_net_mutex);
	return err;
}

/**
 * srnic_net_put() - drop @sdev's namespace reference, if it still has one
 * @sdev: the device
 *
 * Closes the namespace's sockets when @sdev was its last device. Safe to call
 * more than once.
 */
void srnic_net_put(struct srnic_dev *sdev)
{
	struct srnic_net *sn;

	mutex_lock(&srnic_net_mutex);
	if (!sdev->net)
		goto out_unlock;
	sn = net_generic(sdev->net, srnic_net_id);
	srnic_registry_del(sdev);
	sdev->net = NULL;
	if (!WARN_ON(!sn->users) && !--sn->users)
		srnic_net_close(sn);
out_unlock:
	mutex_unlock(&srnic_net_mutex);
}

static void __net_exit srnic_net_exit_ns(struct net *net)
{
	struct srnic_net *sn = net_generic(net, srnic_net_id);

	/* Devices let go when their netdevs were unregistered, earlier. */
	mutex_lock(&srnic_net_mutex);
	if (WARN_ON(sn->users))
		srnic_net_close(sn);
	mutex_unlock(&srnic_net_mutex);
}

static struct pernet_operations srnic_net_ops = {
	.exit = srnic_net_exit_ns,
	.id = &srnic_net_id,
	.size = sizeof(struct srnic_net),
};

int srnic_net_init(void)
{
	return register_pernet_subsys(&srnic_net_ops);
}

void srnic_net_exit(void)
{
	unregister_pernet_subsys(&srnic_net_ops);
}
