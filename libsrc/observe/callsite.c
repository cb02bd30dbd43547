/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where does my realtime code do this?  warn and strict events, and with
 * report_offloads=1 every offload, are attributed to the call site: the
 * return addresses of the caller's stack, hashed.  The first event of a
 * site is reported with a symbolized libunwind backtrace; later ones are
 * only counted, and the counts are listed at exit.
 *
 *   ==PID==rtoffload: warn 'fsync' from realtime thread 'ctl' (tid N)
 *       #0 0x55d0c0a1b2c3 in save_state (/usr/bin/app+0x1b2c3)
 *       ...
 *   SUMMARY: rtoffload: warn 'fsync' in save_state
 *
 * This is a diagnostic path: the first report of a site unwinds and writes
 * on the caller's thread.  Repeats cost one unw_backtrace and a lock-free
 * lookup.  Suppressions (suppressions=PATH) take "function:GLOB" (the
 * wrapped call) and "stack:GLOB" (any frame's function) lines.
 *
 * faults:warn (policy=) adds the event 'fault': a marked thread's page
 * faults are read (getrusage RUSAGE_THREAD, two system calls per wrapped
 * call: a diagnostic mode too) before and after each wrapped call, and a
 * call that took any is reported by site like a warn, with the faults
 * counted per site.  The faults of an offloaded call's own work are the
 * helper's, not the caller's; those the reports themselves take (unwinding
 * the first time) are left out.
 */
#define UNW_LOCAL_ONLY
#include "backstop.h"
#include "options.h"
#include "rto_fast.h"
#include "fault_count.h"
#include "fn.h"
#include "callsite.h"
#include "resolve.h"
#include "sanitizer.h"
#include "real.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <libunwind.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rtoffload.h"

#define SITES 4096 /* power of two */
#define DEPTH 32

struct site {
	uint64_t key; /* hash of the stack and the event; 0: free */
	uint64_t count;
	uint64_t total_ns, max_ns;
	uint64_t minor, major; /* fault: the faults its calls took */
	struct rto_fn *fn;
	int event;
	int suppressed;
	char where[64]; /* first frame outside the library */
};

static struct site sites[SITES];
static unsigned reports;
static int report_fd = 2;

static const char *const event_names[] = {"warn",  "strict",	"offload",
					  "fault", "pool_full", "trap"};

int rto_fault_watch; /* faults:warn */

/* ---- suppressions ---------------------------------------------------------- */

static char supp_text[16384];

static int suppressed_by(const char *kind, const char *name)
{
	size_t kn = strlen(kind);

	for (const char *s = supp_text; *s;) {
		size_t n = strcspn(s, "\n");
		char pat[256];
		if (n > kn && n - kn < sizeof(pat) && memcmp(s, kind, kn) == 0) {
			memcpy(pat, s + kn, n - kn);
			pat[n - kn] = '\0';
			if (fnmatch(pat, name, 0) == 0)
				return 1;
		}
		s += n + (s[n] == '\n');
	}
	return 0;
}

/* report_max= and on_strict=, copied at load (rto_callsite_init); read-only afterwards. */
static unsigned report_max;
static int on_strict;

static void load_suppressions(const char *path)
{
	int fd = (int)rto_syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	long n = 0, total = 0;

	if (fd < 0)
		rto_die(RTO_EXIT_CONFIG, "RTOFFLOAD_OPTIONS: suppressions=%s: cannot read it",
			path);
	while ((size_t)total < sizeof(supp_text) - 1 &&
	       (n = rto_syscall(SYS_read, fd, supp_text + total, sizeof(supp_text) - 1 - total)) >
		       0)
		total += n;
	rto_syscall(SYS_close, fd);
	supp_text[total] = '\0';
	/* Check the syntax now: a typo must not silently suppress nothing. */
	int line = 0;
	for (const char *s = supp_text; *s;) {
		size_t len = strcspn(s, "\n");
		line++;
		if (len && *s != '#' && strncmp(s, "function:", 9) && strncmp(s, "stack:", 6))
			rto_die(RTO_EXIT_CONFIG,
				"suppressions %s:%d: expected 'function:GLOB' or 'stack:GLOB'",
				path, line);
		s += len + (s[len] == '\n');
	}
}

/* ---- output -------------------------------------------------------------- */

static void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void out(const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 1)
		n = sizeof(line) - 1;
	if (n > 0)
		rto_syscall(SYS_write, report_fd, line, (size_t)n);
}

void rto_callsite_init(const struct rto_options *o)
{
	report_max = o->report_max;
	on_strict = o->on_strict;
	if (o->suppressions[0])
		load_suppressions(o->suppressions);
	if (!o->report_path[0])
		return;
	report_fd = (int)rto_syscall(SYS_openat, AT_FDCWD, o->report_path,
				     O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (report_fd < 0)
		rto_die(RTO_EXIT_CONFIG, "RTOFFLOAD_OPTIONS: report_path=%s: cannot open it",
			o->report_path);
}

/* ---- the site table --------------------------------------------------------- */

static uint64_t hash_stack(void **ips, int n, int event, struct rto_fn *fn)
{
	uint64_t h = 0xcbf29ce484222325u ^ (uint64_t)event ^ (uintptr_t)fn;

	for (int i = 0; i < n; i++)
		h = (h ^ (uintptr_t)ips[i]) * 0x100000001b3u;
	return h ? h : 1;
}

/* The site for key, claimed if new (*fresh = 1).  Lock-free, bounded probing. */
static struct site *site_of(uint64_t key, int *fresh)
{
	*fresh = 0;
	for (unsigned i = 0; i < 64; i++) {
		struct site *s = &sites[(key + i) & (SITES - 1)];
		uint64_t seen = CMM_LOAD_SHARED(s->key);
		if (seen == 0)
			seen = uatomic_cmpxchg(&s->key, 0, key);
		if (seen == 0) {
			*fresh = 1;
			return s;
		}
		if (seen == key)
			return s;
	}
	return NULL; /* table full: counted nowhere */
}

static int in_library(unw_word_t ip)
{
	static Dl_info self;
	Dl_info info;

	if (!self.dli_fbase)
		dladdr((void *)rto_callsite_init, &self);
	return dladdr((void *)ip, &info) && info.dli_fbase == self.dli_fbase;
}

/*
 * A sanitizer's interceptor between the program and our wrapper (ASan's
 * read, TSan's write...): the call site is the program's frame under it.
 */
static int in_sanitizer_runtime(unw_word_t ip)
{
	static const char *const runtimes[] = {"/libasan.so", "/libtsan.so", "/libubsan.so",
					       "/liblsan.so", "/libclang_rt."};
	Dl_info info;

	if (!dladdr((void *)ip, &info) || !info.dli_fname)
		return 0;
	for (size_t i = 0; i < sizeof(runtimes) / sizeof(runtimes[0]); i++)
		if (strstr(info.dli_fname, runtimes[i]))
			return 1;
	return 0;
}

/*
 * The trapped context of a system call the backstop trapped, while its
 * event is reported (backstop_trap.c): the walk starts there, at the
 * trapping instruction, not in the SIGSYS handler.
 */
static __thread const ucontext_t *trap_ctx RTO_TLS;

/* The cursor at the first frame to look at; 1, or 0 when there is none. */
/* Inlined: the context unw_getcontext() takes must be the caller's own, live frame. */
static inline __attribute__((always_inline)) int cursor_start(unw_cursor_t *c, unw_context_t *uc)
{
	if (trap_ctx) {
		memcpy(uc, trap_ctx,
		       sizeof(*uc) < sizeof(*trap_ctx) ? sizeof(*uc) : sizeof(*trap_ctx));
		return unw_init_local2(c, uc, UNW_INIT_SIGNAL_FRAME) >= 0;
	}
	unw_getcontext(uc);
	return unw_init_local(c, uc) >= 0 && unw_step(c) > 0; /* past this function */
}

/* Walk the stack; print it when print, and note the first frame outside us. */
static int walk(struct site *s, int print)
{
	unw_context_t uc;
	unw_cursor_t c;
	int frame = 0, stack_suppressed = 0;

	if (!cursor_start(&c, &uc))
		return 0;
	for (int more = 1; more && frame<DEPTH; more = unw_step(&c)> 0) {
		unw_word_t ip, off = 0;
		char name[128] = "??";
		Dl_info info = {0};
		unw_get_reg(&c, UNW_REG_IP, &ip);
		if (in_library(ip) || in_sanitizer_runtime(ip))
			continue;
		unw_get_proc_name(&c, name, sizeof(name), &off);
		dladdr((void *)ip, &info);
		if (frame == 0)
			snprintf(s->where, sizeof(s->where), "%s", name);
		stack_suppressed |= suppressed_by("stack:", name);
		if (print)
			out("    #%d 0x%lx in %s+0x%lx (%s+0x%lx)\n", frame, (unsigned long)ip,
			    name, (unsigned long)off, info.dli_fname ? info.dli_fname : "?",
			    (unsigned long)(ip - (uintptr_t)info.dli_fbase));
		frame++;
	}
	return stack_suppressed;
}

static void report(struct site *s, struct rto_fn *fn, int event, uint64_t minor, uint64_t major)
{
	char thread[17] = "?";

	RTO_HAND_REAL(prctl)(PR_GET_NAME, (unsigned long)thread, 0, 0, 0);
	int stack_suppressed = walk(s, 0); /* also notes where, for the exit listing */
	s->suppressed = suppressed_by("function:", fn->name) || stack_suppressed;
	if (s->suppressed || report_max <= uatomic_add_return(&reports, 1) - 1)
		return;
	out("==%d==rtoffload: %s '%s' from realtime thread '%s' (tid %ld)\n", (int)getpid(),
	    event_names[event], fn->name, thread, (long)rto_syscall(SYS_gettid));
	walk(s, 1);
	if (event == RTO_EVENT_FAULT)
		out("SUMMARY: rtoffload: %s '%s' in %s (%lu minor, %lu major faults)\n",
		    event_names[event], fn->name, s->where, minor, major);
	else
		out("SUMMARY: rtoffload: %s '%s' in %s\n", event_names[event], fn->name, s->where);
}

/*
 * The calling stack's instruction pointers.  unw_backtrace() keeps a cache
 * per thread whose key destructor makes itself the last one to run, as
 * ThreadSanitizer's does: under ThreadSanitizer it then runs on a retired
 * thread and crashes there, so the walk is made step by step instead.
 */
static int backtrace_ips(void **ips, int max)
{
	unw_context_t uc;
	unw_cursor_t c;
	int n = 0;

	if (!rto_sanitizer_is_tsan() && !trap_ctx)
		return unw_backtrace(ips, max);
	if (!cursor_start(&c, &uc))
		return 0;
	for (int more = 1; more && n<max; more = unw_step(&c)> 0) {
		unw_word_t ip;
		unw_get_reg(&c, UNW_REG_IP, &ip);
		ips[n++] = (void *)ip;
	}
	return n;
}

/*
 * Registered by a module above this one (async.c), once, in the
 * constructor (rto_async_init), before any thread is marked: the marking
 * thread ran the constructor itself or was started after it
 * (pthread_create orders the store before it).  A thread that was running
 * before the library loaded may race with the store: relaxed accesses,
 * and an unset hook means what it means before async.c is set up, that
 * nothing is queued to act on.
 */
static void (*abort_hook)(void); /* async.c: what is queued is written first */

void rto_callsite_on_abort(void (*fn)(void))
{
	CMM_STORE_SHARED(abort_hook, fn);
}

static __attribute__((noreturn)) void program_abort(void)
{
	void (*hook)(void) = CMM_LOAD_SHARED(abort_hook);

	if (hook)
		hook();	       /* does not return */
	rto_route_go_direct(); /* and never resumed, as in the hook */
	RTO_HAND_REAL(abort)();
	__builtin_unreachable();
}

static void event_at_site(int event, struct rto_fn *fn, uint64_t ns, uint64_t minor, uint64_t major)
{
	void *ips[DEPTH];
	int fresh;

	int n = backtrace_ips(ips, DEPTH);
	struct site *s = site_of(hash_stack(ips, n, event, fn), &fresh);
	if (!s)
		return;
	if (fresh) {
		s->fn = fn;
		s->event = event;
		if (event == RTO_EVENT_OFFLOAD)
			walk(s, 0); /* only to note where */
		else
			report(s, fn, event, minor, major);
	}
	uatomic_inc(&s->count);
	if (event == RTO_EVENT_FAULT) {
		uatomic_add(&s->minor, minor);
		uatomic_add(&s->major, major);
	}
	if (event == RTO_EVENT_OFFLOAD) {
		uatomic_add(&s->total_ns, ns);
		if (ns > CMM_LOAD_SHARED(s->max_ns))
			CMM_STORE_SHARED(s->max_ns, ns); /* a racy max: a report, not a bound */
	}
	if (event == RTO_EVENT_STRICT && on_strict == RTO_ON_STRICT_ABORT) {
		if (!fresh || s->suppressed)
			report(s, fn, event, 0, 0);
		program_abort(); /* what the program's own abort() would do */
	}
	if (event == RTO_EVENT_STRICT && on_strict == RTO_ON_STRICT_SIGNAL)
		pthread_sigqueue(pthread_self(), RT_OFFLOAD_SIGDEBUG,
				 (union sigval){.sival_ptr = (void *)fn->name});
}

/*
 * With faults:warn, the faults the thread takes while reporting (libunwind,
 * dladdr, the first time) are its own business, not the wrapped call's.
 */
static __thread uint64_t excluded_faults RTO_TLS;

static uint64_t faults_of_self(void)
{
	uint64_t minor, major;

	return rto_thread_fault_counts(0, &minor, &major) == 0 ? minor + major : 0;
}

static void at_site(int event, struct rto_fn *fn, uint64_t ns, uint64_t minor, uint64_t major)
{
	uint64_t before = RTO_UNLIKELY(rto_fault_watch) ? faults_of_self() : 0;

	/* libunwind maps memory, dladdr takes locks: their calls go direct. */
	unsigned char was = rto_route_go_direct();
	event_at_site(event, fn, ns, minor, major);
	rto_route_resume(was);
	if (RTO_UNLIKELY(rto_fault_watch))
		excluded_faults += faults_of_self() - before;
}

void rto_callsite_event(int event, struct rto_fn *fn, uint64_t ns)
{
	at_site(event, fn, ns, 0, 0);
}

/*
 * An event another part noted on a realtime thread by its return address
 * alone (pool_events.c), counted here by the reporting side: the site is
 * that one frame, named from the ELF symbols, reported the first time.
 */
void rto_callsite_at_ip(int event, struct rto_fn *fn, uintptr_t ip, uint64_t count)
{
	void *ips[1] = {(void *)ip};
	Dl_info info = {0};
	int fresh;

	struct site *s = site_of(hash_stack(ips, 1, event, fn), &fresh);
	if (!s)
		return;
	if (fresh) {
		/*
		 * ip - 1: a return address may be the next function's first byte.
		 * libunwind reads the ELF symbol table (static functions too).
		 */
		char name[128] = "??";
		unw_word_t off = 0;
		unw_accessors_t *a = unw_get_accessors(unw_local_addr_space);
		dladdr((void *)(ip - 1), &info);
		if (!a || !a->get_proc_name ||
		    a->get_proc_name(unw_local_addr_space, ip - 1, name, sizeof(name), &off, NULL) <
			    0) {
			snprintf(name, sizeof(name), "%s", info.dli_sname ? info.dli_sname : "??");
			off = ip - 1 - (uintptr_t)info.dli_saddr;
		}
		snprintf(s->where, sizeof(s->where), "%s", name);
		s->event = event;
		s->suppressed =
			suppressed_by("function:", fn->name) || suppressed_by("stack:", name);
		cmm_smp_wmb(); /* where and event before fn: rto_callsite_next reads fn first */
		CMM_STORE_SHARED(s->fn, fn);
		if (!s->suppressed && report_max > uatomic_add_return(&reports, 1) - 1) {
			out("==%d==rtoffload: %s '%s' from a realtime thread\n", (int)getpid(),
			    event_names[event], fn->name);
			out("    #0 0x%lx in %s+0x%lx (%s+0x%lx)\n", (unsigned long)ip, name,
			    (unsigned long)off + 1, info.dli_fname ? info.dli_fname : "?",
			    (unsigned long)(ip - (uintptr_t)info.dli_fbase));
			out("SUMMARY: rtoffload: %s '%s' in %s\n", event_names[event], fn->name,
			    name);
		}
	}
	uatomic_add(&s->count, count);
}

int rto_callsite_report_fd(void)
{
	return report_fd;
}

void rto_callsite_report(const char *line, size_t n)
{
	if (report_max <= uatomic_add_return(&reports, 1) - 1)
		return;
	rto_syscall(SYS_write, report_fd, line, n);
}

void rto_callsite_event_trapped(int event, struct rto_fn *fn, const void *uc)
{
	trap_ctx = uc;
	at_site(event, fn, 0, 0, 0);
	trap_ctx = NULL;
}

/* ---- faults:warn ---------------------------------------------------------------- */

/*
 * The library's own getrusage: the backstop's selector allows it, or it
 * would trap and the SIGSYS frame's fresh stack pages would count as the
 * call's faults.
 */
static int own_fault_counts(uint64_t *minor, uint64_t *major)
{
	unsigned char sel = rto_backstop_enter();
	int ret = rto_thread_fault_counts(0, minor, major);
	rto_backstop_leave(sel);
	return ret;
}

void rto_fault_begin(struct rto_fault_mark *m)
{
	m->excluded = excluded_faults;
	if (own_fault_counts(&m->minor, &m->major) != 0)
		m->minor = m->major = UINT64_MAX; /* unknown: nothing to compare with */
}

void rto_fault_end(struct rto_fault_mark *m, struct rto_fn *fn)
{
	uint64_t minor, major;
	int saved = errno;

	if (m->minor == UINT64_MAX || own_fault_counts(&minor, &major) != 0)
		return;
	minor -= m->minor;
	major -= m->major;
	/* Faults of our own reports during the call: off the minor count first. */
	uint64_t mine = excluded_faults - m->excluded;
	uint64_t off = mine < minor ? mine : minor;
	minor -= off;
	major -= mine - off < major ? mine - off : major;
	if (minor || major)
		at_site(RTO_EVENT_FAULT, fn, 0, minor, major);
	errno = saved;
}

/* ---- the exit listing --------------------------------------------------------------- */

int rto_callsite_next(unsigned *pos, struct rto_site_row *row)
{
	for (; *pos < SITES; (*pos)++) {
		struct site *s = &sites[*pos];
		if (!CMM_LOAD_SHARED(s->key) || !CMM_LOAD_SHARED(s->fn))
			continue;
		*row = (struct rto_site_row){
			.where = s->where,
			.event = event_names[s->event],
			.fn = s->fn->name,
			.count = uatomic_read(&s->count),
			.total_ns = uatomic_read(&s->total_ns),
			.max_ns = CMM_LOAD_SHARED(s->max_ns),
			.minor = uatomic_read(&s->minor),
			.major = uatomic_read(&s->major),
			.suppressed = s->suppressed,
		};
		(*pos)++;
		return 1;
	}
	return 0;
}
