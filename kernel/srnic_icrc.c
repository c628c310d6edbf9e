// SPDX-License-Identifier: GPL-2.0
/*
 * srnic ICRC: the invariant CRC that ends every RoCEv2 packet.
 *
 * IBA Annex A17.3.3: the ICRC is the CRC-32 of Ethernet (polynomial
 * 0x04C11DB7, reflected, i.e. crc32_le) over
 *   - 8 bytes of ones standing for the masked LRH (folded into
 *     SRNIC_ICRC_SEED),
 *   - the IP header, with IPv4 TOS, TTL and header checksum, or IPv6
 *     traffic class, flow label and hop limit, replaced by ones,
 *   - the UDP header, with the checksum replaced by ones,
 *   - the BTH, with byte 4 (FECN, BECN, resv6) replaced by ones,
 *   - everything after the BTH up to the ICRC: extension headers, payload
 *     and pad bytes.
 * These are the fields routers and switches may rewrite (ECN marking, TTL
 * decrement, checksum recomputation), so the ICRC survives them. The value
 * sent is the one's complement of the final CRC register, least significant
 * byte first, like the Ethernet FCS; rdma_rxe and RoCE hardware agree on
 * that.
 */
#include <linux/crc32.h>
#include <linux/highmem.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <linux/udp.h>

#include "srnic_hdr.h"

/* Worst case of the masked part: IPv4 with 40 bytes of options. */
#define SRNIC_ICRC_MASKED_MAX	(60 + sizeof(struct udphdr) + SRNIC_BTH_LEN)

/*
 * Length of the IP + UDP + BTH headers that start with @first (the first
 * byte of the IP header), or 0 if this is neither a valid IPv4 nor an IPv6
 * header.
 */
static unsigned int srnic_icrc_masked_len(u8 first)
{
	unsigned int iplen;

	switch (first >> 4) {
	case 4:
		iplen = (first & 0xf) * 4;
		if (iplen < sizeof(struct iphdr))
			return 0;
		break;
	case 6:
		iplen = sizeof(struct ipv6hdr);
		break;
	default:
		return 0;
	}
	return iplen + sizeof(struct udphdr) + SRNIC_BTH_LEN;
}

/*
 * Mask the variant fields of the IP + UDP + BTH headers in @hdr (a private
 * copy, @mlen bytes from srnic_icrc_masked_len()) and CRC them.
 */
static u32 srnic_icrc_masked(u8 *hdr, unsigned int mlen)
{
	unsigned int udp = mlen - SRNIC_BTH_LEN - sizeof(struct udphdr);
	u8 *bth = hdr + mlen - SRNIC_BTH_LEN;

	if (hdr[0] >> 4 == 4) {
		struct iphdr *ip4 = (struct iphdr *)hdr;

		ip4->tos = 0xff;
		ip4->ttl = 0xff;
		ip4->check = (__force __sum16)0xffff;
	} else {
		struct ipv6hdr *ip6 = (struct ipv6hdr *)hdr;

		/* keep the version nibble; traffic class + flow label */
		hdr[0] |= 0x0f;
		memset(ip6->flow_lbl, 0xff, sizeof(ip6->flow_lbl));
		ip6->hop_limit = 0xff;
	}
	((struct udphdr *)(hdr + udp))->check = (__force __sum16)0xffff;
	bth[SRNIC_BTH_ICRC_MASKED_BYTE] = 0xff;

	return crc32_le(SRNIC_ICRC_SEED, hdr, mlen);
}

/**
 * srnic_icrc_buf() - ICRC of a RoCEv2 packet in a linear buffer
 * @pkt: the packet, starting at its IPv4 or IPv6 header
 * @len: bytes covered: from the IP header to just before the ICRC (i.e. the
 *	packet length minus SRNIC_ICRC_LEN)
 *
 * The IP header must be followed directly by the UDP header (no IPv6
 * extension headers; IPv4 options are covered as they are).
 *
 * Byte order: the 4 ICRC bytes on the wire, read as a little-endian u32,
 * equal the return value: the receiver checks
 * ``srnic_icrc_buf(pkt, len) == get_unaligned_le32(pkt + len)`` and the
 * sender stores ``put_unaligned_le32(srnic_icrc_buf(pkt, len), pkt + len)``.
 *
 * If @len cannot hold the IP, UDP and BTH headers, or the IP version is
 * neither 4 nor 6, nothing is masked: the result is the CRC of the raw
 * bytes, which a correct sender's ICRC matches only by chance. Receivers
 * validate lengths and opcodes first.
 *
 * Context: any.
 * Return: the ICRC value (already inverted).
 */
u32 srnic_icrc_buf(const void *pkt, unsigned int len)
{
	u8 hdr[SRNIC_ICRC_MASKED_MAX];
	unsigned int mlen = 0;
	u32 crc;

	if (len)
		mlen = srnic_icrc_masked_len(*(const u8 *)pkt);
	if (!mlen || mlen > len)
		return ~crc32_le(SRNIC_ICRC_SEED, pkt, len);

	memcpy(hdr, pkt, mlen);
	crc = srnic_icrc_masked(hdr, mlen);
	crc = crc32_le(crc, (const u8 *)pkt + mlen, len - mlen);
	return ~crc;
}

/*
 * Continue @crc over @len bytes of @skb from @offset (relative to
 * skb->data; negative offsets reach back into the linear head, where the
 * network header lives after the receive path pulled it). Walks the
 * linear part, the page frags (mapping one page at a time) and the
 * frag_list, like skb_copy_bits() but without copying. The caller has
 * checked that the bytes exist.
 */
static u32 srnic_icrc_skb_bits(const struct sk_buff *skb, int offset,
			       int len, u32 crc)
{
	const struct sk_buff *frag_iter;
	int start = skb_headlen(skb);
	int i, n;

	n = start - offset;
	if (n > 0) {
		n = min(n, len);
		crc = crc32_le(crc, skb->data + offset, n);
		len -= n;
		if (!len)
			return crc;
		offset += n;
	}

	for (i = 0; i < skb_shinfo(skb)->nr_frags; i++) {
		const skb_frag_t *frag = &skb_shinfo(skb)->frags[i];
		int end = start + skb_frag_size(frag);
		u32 p_off, p_len, done;
		struct page *p;

		n = end - offset;
		if (n > 0) {
			n = min(n, len);
			skb_frag_foreach_page(frag,
					      skb_frag_off(frag) + offset - start,
					      n, p, p_off, p_len, done) {
				u8 *vaddr = kmap_local_page(p);

				crc = crc32_le(crc, vaddr + p_off, p_len);
				kunmap_local(vaddr);
			}
			len -= n;
			if (!len)
				return crc;
			offset += n;
		}
		start = end;
	}

	skb_walk_frags(skb, frag_iter) {
		int end = start + frag_iter->len;

		n = end - offset;
		if (n > 0) {
			n = min(n, len);
			crc = srnic_icrc_skb_bits(frag_iter, offset - start, n,
						  crc);
			len -= n;
			if (!len)
				return crc;
			offset += n;
		}
		start = end;
	}
	return crc;
}

/**
 * srnic_icrc_skb() - ICRC of a RoCEv2 packet in an skb
 * @skb: the packet; skb_network_header() must point at its IPv4 or IPv6
 *	header, which may lie before skb->data (e.g. after the UDP header
 *	was pulled). May be non-linear (page frags, frag_list): nothing is
 *	linearized, copied (beyond the masked headers) or allocated.
 * @len: bytes covered, counted from the network header: the packet length
 *	minus SRNIC_ICRC_LEN
 *
 * Same result and byte order as srnic_icrc_buf() over the same bytes:
 * compare with get_unaligned_le32() of the 4 ICRC bytes that follow.
 * If @skb holds fewer than @len bytes from the network header on, only the
 * bytes present are covered (callers check the length first).
 *
 * Context: any (maps pages with kmap_local_page()).
 * Return: the ICRC value (already inverted).
 */
u32 srnic_icrc_skb(const struct sk_buff *skb, unsigned int len)
{
	int off = skb_network_offset(skb);
	int avail = (int)skb->len - off;
	u8 hdr[SRNIC_ICRC_MASKED_MAX];
	unsigned int mlen = 0;
	const u8 *p;
	u32 crc;

	if (unlikely(avail < 0))
		avail = 0;
	if (unlikely(len > (unsigned int)avail))
		len = avail;

	p = len ? skb_header_pointer(skb, off, 1, hdr) : NULL;
	if (p)
		mlen = srnic_icrc_masked_len(*p);
	if (!mlen || mlen > len)
		return ~srnic_icrc_skb_bits(skb, off, len, SRNIC_ICRC_SEED);

	/* a private copy to mask, wherever the headers lie */
	if (skb_copy_bits(skb, off, hdr, mlen))
		return ~srnic_icrc_skb_bits(skb, off, len, SRNIC_ICRC_SEED);
	crc = srnic_icrc_masked(hdr, mlen);
	crc = srnic_icrc_skb_bits(skb, off + mlen, len - mlen, crc);
	return ~crc;
}
