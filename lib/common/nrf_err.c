/* SPDX-License-Identifier: BSD-3-Clause */
#include "nrf_err.h"

const char *
nrf_strerror(int err)
{
	switch (err) {
	case 0:
		return "success";
#define NRF_ERR_STR(name, val, msg)                                            \
	case val:                                                              \
		return msg;
		NRF_ERRNO_MAP(NRF_ERR_STR)
#undef NRF_ERR_STR
	default:
		return "unknown error";
	}
}

const char *
nrf_errname(int err)
{
	switch (err) {
	case 0:
		return "OK";
#define NRF_ERR_NAME(name, val, msg)                                           \
	case val:                                                              \
		return #name;
		NRF_ERRNO_MAP(NRF_ERR_NAME)
#undef NRF_ERR_NAME
	default:
		return "NRF_E?";
	}
}
