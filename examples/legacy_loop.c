/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * legacy_loop: the same 1 kHz control loop as rt_loop, written the way
 * existing programs are, with no knowledge of librtoffload: no header, no
 * API call, nothing linked.  It stands for the binary you cannot rebuild.
 *
 * Its loop runs in a thread created the classic way, with an explicit
 * SCHED_FIFO policy and a CPU affinity in the pthread attributes, so a
 * policy that marks threads from the outside (RTOFFLOAD_OPTIONS mark=rt
 * or mark=cpus, the `rtoffload --mark` launcher) has something real to
 * find.  The probe beside it (loop_common.h) is made the same way, so
 * mark=rt marks it too, as it would any realtime thread of the program;
 * it makes no call the library wraps (clock_nanosleep is not wrapped).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loop_common.h"

static void *control_thread(void *arg)
{
	loop_run(arg);
	return NULL;
}

static void attr_realtime(pthread_attr_t *attr, const struct loop_cfg *cfg, int cpu)
{
	struct sched_param sp = {.sched_priority = cfg->prio};
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_attr_init(attr);
	pthread_attr_setaffinity_np(attr, sizeof(set), &set);
	pthread_attr_setinheritsched(attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(attr, SCHED_FIFO);
	pthread_attr_setschedparam(attr, &sp);
}

/* SCHED_FIFO if we may, else the same thread at normal priority. */
static pthread_t start_control(const struct loop_cfg *cfg, struct loop_rt *rt, struct loop *l)
{
	pthread_attr_t attr;
	pthread_t t;
	int cpu = loop_choose_cpu(cfg), err;

	attr_realtime(&attr, cfg, cpu);
	err = pthread_create(&t, &attr, control_thread, l);
	rt->cpu = cpu;
	rt->fifo = cfg->prio;
	if (err == EPERM) {
		rt->fifo = 0;
		pthread_attr_setinheritsched(&attr, PTHREAD_INHERIT_SCHED);
		err = pthread_create(&t, &attr, control_thread, l);
	}
	loop_rt_notes(cfg, rt, rt->fifo ? 0 : EPERM);
	pthread_attr_destroy(&attr);
	if (err) {
		loop_note(cfg, "pthread_create: %s", strerror(err));
		exit(1);
	}
	return t;
}

int main(int argc, char **argv)
{
	struct loop_cfg cfg = {0};
	struct loop_rt rt = {0};
	struct loop *l;

	loop_parse_args(&cfg, argc, argv);
	loop_lock_memory(&rt);
	l = loop_open(&cfg);
	loop_probe_start(l, cfg.probe_cpu >= 0 ? cfg.probe_cpu : loop_choose_cpu(&cfg));
	pthread_join(start_control(&cfg, &rt, l), NULL);
	loop_probe_join(l);
	loop_report(l, &rt, stdout);
	loop_write_histogram(l);
	loop_close(l);
	return 0;
}
