// Names the calling thread for the system's tools. C because Swift's Glibc module leaves out pthread_setname_np (a
// GNU extension, declared only under _GNU_SOURCE), and Foundation's Thread.name setter, run inside a new thread,
// reaches the system only when the Thread object already knows its pthread — which races with Thread.start().
#if defined(__linux__)
#define _GNU_SOURCE
#include <pthread.h>

#include "CProfirestCurl.h"

int pfc_name_this_thread(const char *name) { return pthread_setname_np(pthread_self(), name); }

#endif
