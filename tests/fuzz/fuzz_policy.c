/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target for the policy_file= parser (libsrc/core/policy.c): one rule
 * a line, "NAME HANDLING" or "NAME:HANDLING", '#' comments, blank lines.
 *
 * The file is read in the constructor of a program whose user may not be
 * the file's author, so the parser must never read or write outside the
 * text, and what it leaves must hold what the wrappers rely on.  Each input
 * is the whole file, NUL-terminated in a buffer of exactly its size, parsed
 * as rto_policy_load() parses it (class rules, then function rules) into a
 * small table of call descriptors, then checked:
 *
 *   success: every descriptor's handling is one of enum rto_handling, and
 *            async only on a call that can queue (RTO_F_CAN_ASYNC);
 *   error:   a one-line printable message, NUL-terminated inside the buffer
 *            rto_policy_load() gives (160 bytes), on a line number between
 *            1 and the number of lines;
 *   always:  the same input gives the same table, line and message.
 *
 * Build and run: tests/fuzz/run_fuzz.sh [seconds] (both targets).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.c" /* its static parser, apply_file() */

int rto_fault_watch;
int rto_async_paths; /* read by rto_policy_has_async(), not by the parser */

void rto_die(int status, const char *fmt, ...)
{
	(void)status;
	(void)fmt;
	abort(); /* not reached: only apply_file() runs here */
}

static void nothing(void *args)
{
	(void)args;
}

/* A few calls of each kind the rules name: classes, async writes, others. */
RTO_FN_FULL(write, RTO_CLASS_DESC, RTO_OFFLOAD, nothing, RTO_F_CAN_ASYNC | RTO_F_CANCEL);
RTO_FN_FULL(fsync, RTO_CLASS_DESC, RTO_OFFLOAD, nothing, RTO_F_CANCEL);
RTO_FN_FULL(fwrite, RTO_CLASS_STDIO, RTO_OFFLOAD, nothing, RTO_F_CAN_ASYNC);
RTO_FN_FULL(printf, RTO_CLASS_STDIO, RTO_OFFLOAD, nothing, RTO_F_CAN_ASYNC);
RTO_FN_FULL(fgets, RTO_CLASS_STDIO, RTO_OFFLOAD, nothing, RTO_F_CANCEL);
RTO_FN_FULL(stat, RTO_CLASS_PATH, RTO_OFFLOAD, nothing, 0);
RTO_FN_FULL(readdir, RTO_CLASS_DIR, RTO_OFFLOAD, nothing, 0);
RTO_FN_FULL(getaddrinfo, RTO_CLASS_DNS, RTO_OFFLOAD, nothing, 0);
RTO_FN_FULL(accept, RTO_CLASS_NET, RTO_LOCAL, nothing, RTO_F_CANCEL);
RTO_FN_FULL(mmap, RTO_CLASS_MEMORY, RTO_OFFLOAD, nothing, 0);
RTO_FN_FULL(system, RTO_CLASS_PROCESS, RTO_OFFLOAD, nothing, RTO_F_CANCEL);

#define NFNS	11
#define ERR_LEN 160 /* rto_policy_load()'s buffer */

#define CHECK(cond)                                                                             \
	do {                                                                                    \
		if (!(cond)) {                                                                  \
			fprintf(stderr, "fuzz_policy: invariant failed: %s (line %d)\n", #cond, \
				__LINE__);                                                      \
			abort();                                                                \
		}                                                                               \
	} while (0)

static unsigned char defaults[NFNS];

static void reset(void)
{
	int i = 0;

	for (struct rto_fn *const *f = __start_rto_fns; f < __stop_rto_fns; f++, i++)
		(*f)->handling = defaults[i];
	rto_fault_watch = 0;
}

/* Both passes, as rto_policy_load() runs them over a file. */
static int parse(const char *text, char *err, int *line)
{
	memset(err, 0x55, ERR_LEN); /* no '\0' in it unless the parser writes one */
	*line = -1;
	for (int pass = 0; pass < 2; pass++)
		if (apply_file(text, pass, err, ERR_LEN, line) < 0)
			return -1;
	return 0;
}

static void snapshot(unsigned char out[NFNS])
{
	int i = 0;

	for (struct rto_fn *const *f = __start_rto_fns; f < __stop_rto_fns; f++, i++)
		out[i] = (*f)->handling;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	CHECK(__stop_rto_fns - __start_rto_fns == NFNS);
	snapshot(defaults);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[ERR_LEN], err2[ERR_LEN];
	unsigned char first[NFNS], second[NFNS];
	int line, line2;
	char *text = malloc(size + 1);

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	reset();
	int ret = parse(text, err, &line);
	snapshot(first);
	int watch = rto_fault_watch;
	if (ret == 0) {
		int i = 0;
		for (struct rto_fn *const *f = __start_rto_fns; f < __stop_rto_fns; f++, i++) {
			CHECK((*f)->handling < NHANDLINGS);
			CHECK((*f)->handling != RTO_ASYNC || ((*f)->flags & RTO_F_CAN_ASYNC));
		}
	} else {
		const char *nul = memchr(err, '\0', sizeof(err));
		CHECK(nul != NULL);
		for (const char *p = err; p < nul; p++)
			CHECK(*p != '\n' && *p != '\0');
		size_t lines = 1;
		for (const char *p = text; *p; p++)
			lines += *p == '\n';
		CHECK(line >= 1 && (size_t)line <= lines);
	}

	/* The same again: same result, same table, same message and line. */
	reset();
	CHECK(parse(text, err2, &line2) == ret);
	snapshot(second);
	CHECK(memcmp(first, second, sizeof(first)) == 0);
	CHECK(rto_fault_watch == watch);
	if (ret < 0)
		CHECK(line == line2 && strcmp(err, err2) == 0);

	free(text);
	return 0;
}
