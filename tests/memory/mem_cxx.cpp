// SPDX-License-Identifier: LGPL-2.1-or-later
// C++ new and delete in a marked thread with malloc=pool: they reach the
// pool (libstdc++'s operator new calls malloc, the aligned one
// aligned_alloc).  Run with a 1 MiB pool and pool_full=fail, a 2 MiB new
// throws std::bad_alloc: the pool said no, glibc would not have.  Prints
// key=value words for test_memory.c.
#include <rtoffload.h>

#include <malloc.h>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

struct alignas(256) Wide {
	char bytes[256];
};

int main()
{
	long used_delta = -1, freed = -1, aligned_ok = 0, contents_ok = 0, marked = 0,
	     bad_alloc = 0;

	std::thread t([&] {
		marked = rt_offload_mark_thread() == 0;
		size_t before = mallinfo2().uordblks; // the pools' bytes in use are counted
		auto *v = new std::vector<int>(100000, 7);
		auto *m = new std::map<int, std::string>;
		for (int i = 0; i < 1000; i++)
			(*m)[i] = std::string(100, 'a' + i % 26);
		auto *w = new Wide[4];
		aligned_ok = (reinterpret_cast<uintptr_t>(w) & 255) == 0;
		size_t during = mallinfo2().uordblks;
		used_delta = (long)(during - before);
		contents_ok = (*v)[99999] == 7 && (*m)[999] == std::string(100, 'a' + 999 % 26);
		try {
			auto *huge = new char[2 << 20];
			huge[0] = 1;
			delete[] huge;
		} catch (const std::bad_alloc &) {
			bad_alloc = 1;
		}
		delete[] w;
		delete m;
		delete v;
		freed = (long)(during - mallinfo2().uordblks);
	});
	t.join();
	std::printf("marked=%ld used_delta=%ld freed=%ld aligned_ok=%ld contents_ok=%ld "
		    "bad_alloc=%ld\n",
		    marked, used_delta, freed, aligned_ok, contents_ok, bad_alloc);
	return 0;
}
