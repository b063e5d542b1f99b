/* SPDX-License-Identifier: GPL-2.0 */
/*
 * struct encoded_iov of the series' <linux/fs.h>, declared for the
 * user-space test tools so that they build with any kernel's UAPI headers,
 * also those of a kernel without encoded I/O, which they then probe.
 */
#ifndef KSERIES_TESTS_ENC_IOV_H
#define KSERIES_TESTS_ENC_IOV_H

#include <stdint.h>

struct enc_iov {
	uint64_t len;
	uint64_t unencoded_len;
	uint64_t unencoded_offset;
	uint32_t compression;
	uint32_t encryption;
};

#endif
