/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mem_malloc() pools of nrfwd's own lwIP build (MEM_USE_POOLS, decision
 * 0010), smallest first. The large one holds a full TCP segment written
 * with TCP_WRITE_FLAG_COPY: pbuf header, link/IP/TCP headers, MSS payload.
 */
#if MEM_USE_POOLS
LWIP_MALLOC_MEMPOOL_START
LWIP_MALLOC_MEMPOOL(4096, 256)
LWIP_MALLOC_MEMPOOL(16384, 1600)
LWIP_MALLOC_MEMPOOL_END
#endif
