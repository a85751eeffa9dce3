/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mem_malloc() pools of nrfwd's own lwIP build (MEM_USE_POOLS, decision
 * 0010), smallest first. The 1600-byte one holds a full TCP segment on a
 * 1500-byte MTU written with TCP_WRITE_FLAG_COPY: pbuf header, link/IP/TCP
 * headers, MSS payload; the 9216-byte one the same on a 9000-byte MTU
 * (runtime.dpdk.mtu, decision 0048; only touched there, and by the 1600
 * pool's overflow: MEM_USE_POOLS_TRY_BIGGER_POOL).
 */
#if MEM_USE_POOLS
LWIP_MALLOC_MEMPOOL_START
LWIP_MALLOC_MEMPOOL(4096, 256)
LWIP_MALLOC_MEMPOOL(16384, 1600)
LWIP_MALLOC_MEMPOOL(1024, 9216)
LWIP_MALLOC_MEMPOOL_END
#endif
