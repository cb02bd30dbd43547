/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Issue 13's socket rows (decided by descriptor) through the family harness. */
#include "more.h"

#include <criterion/criterion.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

extern ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen, int flags);
extern ssize_t __recvfrom_chk(int fd, void *buf, size_t len, size_t buflen, int flags,
			      struct sockaddr *from, socklen_t *fromlen);

/* A connected datagram pair in r->pair, "queued" waiting at pair[0]. */
HOOK(prep_pair)
{
	cr_assert_eq(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, r->pair), 0);
	cr_assert_eq(send(r->pair[1], "queued", 6, 0), 6);
}
/* What reached pair[1] from the case's send. */
HOOK(post_sent)
{
	char buf[32] = "";
	ssize_t n = recv(r->pair[1], buf, sizeof(buf) - 1, MSG_DONTWAIT);
	note(r, " sent:%zd:%s", n, n > 0 ? buf : "");
}
static struct iovec iov_of(char *buf, size_t len)
{
	return (struct iovec){buf, len};
}

/* clang-format off */
CASE(send_ok) { INT(send(r->pair[0], "hello", 5, 0)); }
CASE(send_ebadf) { INT(send(x->bad, "x", 1, 0)); }
CASE(send_enotsock) { INT(send(x->wr, "x", 1, 0)); }
CASE(sendto_ok) { INT(sendto(r->pair[0], "to", 2, 0, NULL, 0)); }
CASE(sendto_edestaddrreq) { INT(sendto(x->udp, "x", 1, 0, NULL, 0)); }
CASE(sendmsg_ok)
{
	struct iovec v = iov_of("msg", 3);
	struct msghdr m = {.msg_iov = &v, .msg_iovlen = 1};
	INT(sendmsg(r->pair[0], &m, 0));
}
CASE(sendmmsg_ok)
{
	struct iovec v[2] = {iov_of("one", 3), iov_of("two", 3)};
	struct mmsghdr mm[2] = {{.msg_hdr = {.msg_iov = &v[0], .msg_iovlen = 1}},
				{.msg_hdr = {.msg_iov = &v[1], .msg_iovlen = 1}}};
	INT(sendmmsg(r->pair[0], mm, 2, 0));
	note(r, "len=%u,%u", mm[0].msg_len, mm[1].msg_len);
}
CASE(recv_ok) { char b[16] = ""; INT(recv(r->pair[0], b, sizeof(b), 0)); note(r, "%s", b); }
CASE(recv_eagain) { INT(recv(r->pair[1], (char[4]){0}, 4, MSG_DONTWAIT)); }
CASE(__recv_chk_ok) { char b[16] = ""; INT(__recv_chk(r->pair[0], b, sizeof(b), sizeof(b), 0)); note(r, "%s", b); }
CASE(recvfrom_ok) { char b[16] = ""; INT(recvfrom(r->pair[0], b, sizeof(b), 0, NULL, NULL)); note(r, "%s", b); }
CASE(recvfrom_ebadf) { INT(recvfrom(x->bad, (char[4]){0}, 4, 0, NULL, NULL)); }
CASE(__recvfrom_chk_ok) { char b[16] = ""; INT(__recvfrom_chk(r->pair[0], b, sizeof(b), sizeof(b), 0, NULL, NULL)); note(r, "%s", b); }
CASE(recvmsg_ok)
{
	char b[16] = "";
	struct iovec v = iov_of(b, sizeof(b));
	struct msghdr m = {.msg_iov = &v, .msg_iovlen = 1};
	INT(recvmsg(r->pair[0], &m, 0));
	note(r, "%s", b);
}
CASE(recvmmsg_ok)
{
	char b[16] = "";
	struct iovec v = iov_of(b, sizeof(b));
	struct mmsghdr mm = {.msg_hdr = {.msg_iov = &v, .msg_iovlen = 1}};
	INT(recvmmsg(r->pair[0], &mm, 1, MSG_DONTWAIT, NULL));
	note(r, "%s/%u", b, mm.msg_len);
}
CASE(shutdown_ok) { INT(shutdown(r->pair[0], SHUT_RDWR)); }
CASE(shutdown_enotconn) { INT(shutdown(x->tcp, SHUT_RDWR)); }
CASE(getsockopt_ok) { int v = 0; socklen_t n = sizeof(v); INT(getsockopt(x->udp, SOL_SOCKET, SO_TYPE, &v, &n)); note(r, "%d/%u", v, n); }
CASE(getsockopt_enoprotoopt) { int v = 0; socklen_t n = sizeof(v); INT(getsockopt(x->udp, SOL_SOCKET, 12345, &v, &n)); }
CASE(setsockopt_ok) { INT(setsockopt(x->tcp, SOL_SOCKET, SO_REUSEADDR, &(int){1}, sizeof(int))); }
CASE(setsockopt_einval) { INT(setsockopt(x->tcp, SOL_SOCKET, SO_REUSEADDR, &(int){1}, 1)); }
CASE(getsockname_ok)
{
	struct sockaddr_in sin; socklen_t n = sizeof(sin);
	INT(getsockname(x->lsn, (struct sockaddr *)&sin, &n));
	note(r, "%d/%u/%d", sin.sin_family, n, sin.sin_port == x->lsn_addr.sin_port);
}
CASE(getpeername_ok) { struct sockaddr_storage ss; socklen_t n = sizeof(ss); INT(getpeername(r->pair[0], (struct sockaddr *)&ss, &n)); note(r, "%d", ss.ss_family); }
CASE(getpeername_enotconn) { struct sockaddr_in sin; socklen_t n = sizeof(sin); INT(getpeername(x->tcp, (struct sockaddr *)&sin, &n)); }
/* clang-format on */

#define PAIR(id)	 ENTRY(id, .prep = prep_pair, .post = post_sent)
#define PAIR_FAIL(id, e) ENTRY(id, .fail = 1, .err = e, .prep = prep_pair, .post = post_sent)

const struct fcase more_net_cases[] = {
	PAIR(send_ok),
	FAIL(send_ebadf, EBADF),
	FAIL(send_enotsock, ENOTSOCK),
	PAIR(sendto_ok),
	FAIL(sendto_edestaddrreq, EDESTADDRREQ),
	PAIR(sendmsg_ok),
	PAIR(sendmmsg_ok),
	PAIR(recv_ok),
	PAIR_FAIL(recv_eagain, EAGAIN),
	PAIR(__recv_chk_ok),
	PAIR(recvfrom_ok),
	FAIL(recvfrom_ebadf, EBADF),
	PAIR(__recvfrom_chk_ok),
	PAIR(recvmsg_ok),
	PAIR(recvmmsg_ok),
	PAIR(shutdown_ok),
	FAIL(shutdown_enotconn, ENOTCONN),
	OK(getsockopt_ok),
	FAIL(getsockopt_enoprotoopt, ENOPROTOOPT),
	OK(setsockopt_ok),
	FAIL(setsockopt_einval, EINVAL),
	OK(getsockname_ok),
	PAIR(getpeername_ok),
	FAIL(getpeername_enotconn, ENOTCONN),
};
const size_t more_net_count = sizeof(more_net_cases) / sizeof(more_net_cases[0]);
