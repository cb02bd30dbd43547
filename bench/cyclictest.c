/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-cyclictest: the library must do no harm.  Debian's cyclictest
 * (rt-tests) runs on the realtime CPU, once as is and once under the
 * library with its threads marked by policy (RTOFFLOAD_OPTIONS mark=rt),
 * in alternating rounds.  Its loop only makes realtime-safe calls
 * (clock_nanosleep, clock_gettime), which the library must leave alone, so
 * the two latency distributions should be the same.
 *
 * If the library does not know mark=rt (it exits with status 78 on an
 * unknown option), cyclictest runs merely preloaded, and the JSON says
 * "marked": false.
 */
#include "harness.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PRIO	    "90"
#define INTERVAL_US "200"
#define HIST_US	    "10000" /* 1 us bins up to 10 ms; beyond is an overflow */

struct run {
	const char *name;
	int with_lib;
	const char *about;
	struct h_samples all;
	int rounds_ok;
	uint64_t offloaded, local; /* the library's own counters (stats_file) */
	double steal_ms;	   /* the realtime vCPU's steal time during the runs */
};

static struct run runs[] = {
	{.name = "plain", .about = "cyclictest alone"},
	{.name = "library",
	 .with_lib = 1,
	 .about = "cyclictest with the library preloaded, its threads marked"},
};

#define NRUNS (sizeof(runs) / sizeof(runs[0]))

static int marked = 1; /* cleared if the library refuses mark=rt */

static unsigned rounds(void)
{
	return strcmp(h_opt.mode, "quick") == 0 ? 1 : strcmp(h_opt.mode, "long") == 0 ? 5 : 2;
}

static unsigned run_secs(void)
{
	return strcmp(h_opt.mode, "quick") == 0 ? 5 : strcmp(h_opt.mode, "long") == 0 ? 60 : 10;
}

static char *find_program(const char *name)
{
	static char path[4096];
	const char *dirs[] = {"/usr/bin", "/usr/local/bin", "/usr/sbin", "/bin"};

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dirs[i], name);
		if (access(path, X_OK) == 0)
			return path;
	}
	return NULL;
}

static void add_samples(struct h_samples *s, uint64_t value_ns, uint64_t count)
{
	if (s->n + count > s->cap) {
		s->cap = (s->n + count) * 2;
		s->v = realloc(s->v, s->cap * sizeof(uint64_t));
	}
	while (count--)
		s->v[s->n++] = value_ns;
}

/*
 * cyclictest -h prints "BIN COUNT" lines (1 us bins), then "# Max
 * Latencies: N" and "# Histogram Overflows: N".  The histogram becomes
 * samples (bin * 1 us); overflows count as the maximum.
 */
static int parse_histogram(char *text, struct h_samples *s)
{
	uint64_t max_us = 0, overflows = 0, total = 0;
	char *save = NULL;

	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long bin, count;
		if (sscanf(line, "%llu %llu", &bin, &count) == 2 && line[0] != '#') {
			add_samples(s, bin * 1000, count);
			total += count;
		} else if (sscanf(line, "# Max Latencies: %llu", &bin) == 1) {
			max_us = bin;
		} else if (sscanf(line, "# Histogram Overflows: %llu", &count) == 1) {
			overflows = count;
		}
	}
	add_samples(s, max_us * 1000, overflows);
	return total + overflows > 0 ? 0 : -1;
}

/* The library's totals from its stats_file, if it wrote one. */
static void read_library_stats(const char *dir, struct run *r)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4400], text[4096];

	while (d && (e = readdir(d))) {
		if (strncmp(e->d_name, "stats-", 6) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		FILE *f = fopen(path, "re");
		size_t n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
		text[n] = 0;
		if (f)
			fclose(f);
		unlink(path);
		const char *tot = strstr(text, "\"totals\"");
		const char *off = tot ? strstr(tot, "\"offloaded\":") : NULL;
		const char *loc = tot ? strstr(tot, "\"local\":") : NULL;
		if (off)
			r->offloaded += strtoull(off + 12, NULL, 10);
		if (loc)
			r->local += strtoull(loc + 8, NULL, 10);
	}
	if (d)
		closedir(d);
}

static int run_once(const char *prog, struct run *r, const char *ws)
{
	char secs[16], cpu[16], main_cpu[32], opts[4400];
	char *out = NULL;
	size_t len;

	snprintf(secs, sizeof(secs), "%us", run_secs());
	snprintf(cpu, sizeof(cpu), "%d", h_opt.rt_cpu);
	snprintf(main_cpu, sizeof(main_cpu), "--mainaffinity=%d", h_opt.hk_cpu);
	char *argv[] = {(char *)prog, "-m", "-q",	 "-p", PRIO,	"-t", "1",  "-a", cpu,
			main_cpu,     "-i", INTERVAL_US, "-h", HIST_US, "-D", secs, NULL};
	snprintf(opts, sizeof(opts), "rt_cpus=%d:helper_cpus=%d%s:stats_file=%s/stats-%%p.json",
		 h_opt.rt_cpu, h_opt.hk_cpu, marked ? ":mark=rt" : "", ws);
	double steal0 = h_cpu_steal_ms(h_opt.rt_cpu);
	int st = h_run_program(argv, r->with_lib, r->with_lib ? opts : NULL, (int)run_secs() + 30,
			       &out, &len);
	if (st == 78 && r->with_lib && marked) {
		fprintf(stderr, "bench-cyclictest: the library refused mark=rt: running cyclictest "
				"preloaded but unmarked\n");
		marked = 0;
		free(out);
		return run_once(prog, r, ws);
	}
	r->steal_ms += h_cpu_steal_ms(h_opt.rt_cpu) - steal0;
	int ok = st == 0 && len && parse_histogram(out, &r->all) == 0;
	free(out);
	if (r->with_lib)
		read_library_stats(ws, r);
	return ok ? 0 : -1;
}

static void print_table(struct h_summary *s)
{
	char b[4][16];

	printf("\n== cyclictest (rt-tests) on CPU%d, -p %s -i %s us, %u x %u s each; library "
	       "threads %s\n",
	       h_opt.rt_cpu, PRIO, INTERVAL_US, rounds(), run_secs(),
	       !h_opt.lib ? "not run (no library)"
	       : marked	  ? "marked (mark=rt)"
			  : "NOT marked (mark=rt unsupported)");
	printf("%-10s %9s %9s %9s %9s %9s %8s %8s %8s\n", "run", "samples", "p50", "p99", "p99.9",
	       "max", ">50us", ">100us", "steal");
	for (size_t i = 0; i < NRUNS; i++) {
		struct run *r = &runs[i];
		if (!r->rounds_ok) {
			printf("%-10s (not run)\n", r->name);
			continue;
		}
		printf("%-10s %9llu %9s %9s %9s %9s %8llu %8llu %6.0fms\n", r->name,
		       (unsigned long long)s[i].n, h_fmt_ns(b[0], s[i].p50),
		       h_fmt_ns(b[1], s[i].p99), h_fmt_ns(b[2], s[i].p999),
		       h_fmt_ns(b[3], s[i].max),
		       (unsigned long long)h_count_over(r->all.v, r->all.n, 50000),
		       (unsigned long long)h_count_over(r->all.v, r->all.n, 100000), r->steal_ms);
	}
}

static void write_json(struct h_summary *s, const char *prog)
{
	struct h_json j;

	if (!h_opt.out || hj_open(&j, h_opt.out) != 0)
		return;
	hj_str(&j, "about",
	       "Debian rt-tests cyclictest, alone and under the library; latencies "
	       "have cyclictest's 1 us resolution");
	hj_str(&j, "cyclictest", prog);
	hj_str(&j, "args",
	       "-m -q -p " PRIO " -t 1 -a RT --mainaffinity=HK -i " INTERVAL_US " -h " HIST_US);
	hj_u64(&j, "rounds", rounds());
	hj_u64(&j, "run_s", run_secs());
	hj_bool(&j, "marked", marked);
	hj_arr(&j, "runs", 0);
	for (size_t i = 0; i < NRUNS; i++) {
		struct run *r = &runs[i];
		hj_obj(&j, NULL);
		hj_str(&j, "name", r->name);
		hj_str(&j, "about", r->about);
		hj_u64(&j, "rounds_ok", (uint64_t)r->rounds_ok);
		hj_summary(&j, "latency", &s[i]);
		hj_u64(&j, "over_50us", h_count_over(r->all.v, r->all.n, 50000));
		hj_u64(&j, "over_100us", h_count_over(r->all.v, r->all.n, 100000));
		hj_num(&j, "rt_cpu_steal_ms", r->steal_ms);
		if (r->with_lib) {
			hj_u64(&j, "library_offloaded", r->offloaded);
			hj_u64(&j, "library_local", r->local);
		}
		hj_histogram(&j, "histogram_us", r->all.v, r->all.n);
		hj_end(&j);
	}
	hj_end(&j);
	hj_close(&j);
}

static void write_histograms(void)
{
	char name[64], comment[256];

	for (size_t i = 0; i < NRUNS; i++) {
		struct run *r = &runs[i];
		snprintf(name, sizeof(name), "cyclictest-%s.dat", r->name);
		snprintf(comment, sizeof(comment), "%s: %s", r->name, r->about);
		h_histogram_dat(name, comment, r->all.v, r->all.n);
	}
}

/* cyclictest.md: the sentence of docs/PERFORMANCE.md, from this run. */
static void write_markdown(struct h_summary *s)
{
	FILE *f = h_data_file("cyclictest.md");
	char b[4][16];

	if (!f || !runs[0].rounds_ok || !runs[1].rounds_ok) {
		if (f)
			fclose(f);
		return;
	}
	fprintf(f,
		"Debian's `cyclictest` under the library with its threads %s: p99 %s vs %s alone, "
		"max %s vs %s (%u x %u s each).\n",
		marked ? "marked (`mark=rt`)" : "loaded (not marked)", h_fmt_pretty(b[0], s[1].p99),
		h_fmt_pretty(b[1], s[0].p99), h_fmt_pretty(b[2], s[1].max),
		h_fmt_pretty(b[3], s[0].max), rounds(), run_secs());
	fclose(f);
}

int main(int argc, char **argv)
{
	struct h_summary s[NRUNS];
	char ws[4096];

	h_init(argc, argv);
	const char *prog = find_program("cyclictest");
	if (!prog) {
		fprintf(stderr,
			"bench-cyclictest: cyclictest not found (apt install rt-tests): skipped\n");
		return 0;
	}
	snprintf(ws, sizeof(ws), "%s/rtoffload-cyclictest-XXXXXX", h_opt.tmp);
	if (!mkdtemp(ws)) {
		perror(ws);
		return 1;
	}
	for (unsigned round = 0; round < rounds(); round++) {
		for (size_t i = 0; i < NRUNS; i++) {
			if (runs[i].with_lib && !h_opt.lib)
				continue;
			if (run_once(prog, &runs[i], ws) == 0)
				runs[i].rounds_ok++;
			else
				fprintf(stderr, "bench-cyclictest: %s run failed\n", runs[i].name);
		}
	}
	rmdir(ws);
	for (size_t i = 0; i < NRUNS; i++)
		h_summarize(runs[i].all.v, runs[i].all.n, &s[i]);
	print_table(s);
	write_json(s, prog);
	write_histograms();
	write_markdown(s);
	return 0;
}
