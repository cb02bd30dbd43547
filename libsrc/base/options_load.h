/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * options_load.c: the library's options (rto_opt), from RTOFFLOAD_OPTIONS.
 *
 * Concurrency: rto_opt is written once, by rto_options_load() in the
 * constructor, before any thread is marked or a helper starts; read
 * everywhere afterwards without synchronisation.
 */
#ifndef RTO_OPTIONS_LOAD_H
#define RTO_OPTIONS_LOAD_H

#include "rto_base.h"
#include "options.h"

RTO_HIDDEN extern struct rto_options rto_opt;
/* rto_opt from the environment; a bad option ends the program (exit 78). */
RTO_HIDDEN void rto_options_load(void);

#endif /* RTO_OPTIONS_LOAD_H */
