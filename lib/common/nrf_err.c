/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "nrf_err.h"

static __thread char why_buf[256];
static __thread bool why_set;

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

void
nrf_err_why_set(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why_buf, sizeof(why_buf), fmt, ap);
	va_end(ap);
	why_set = true;
}

const char *
nrf_err_why_take(void)
{
	if (!why_set)
		return NULL;
	why_set = false;
	return why_buf;
}
