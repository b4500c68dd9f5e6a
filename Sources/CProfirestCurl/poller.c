// The engine's event loop primitives (see CurlEngine.swift): an epoll set of the sockets libcurl asks to watch and an
// eventfd that wakes the loop. C rather than Swift because Swift's Glibc module does not include sys/epoll.h or
// sys/eventfd.h.
#if defined(__linux__)

#include "CProfirestCurl.h"

#include <errno.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

int pfc_poller_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int pfc_poller_watch(int poller, int fd, int what) {
    if (what == PFC_POLL_REMOVE) {
        struct epoll_event ignored = {0};
        return epoll_ctl(poller, EPOLL_CTL_DEL, fd, &ignored);
    }
    struct epoll_event event = {0};
    if (what & PFC_POLL_IN) event.events |= EPOLLIN;
    if (what & PFC_POLL_OUT) event.events |= EPOLLOUT;
    event.data.fd = fd;
    // Modify first: most calls change a socket already watched; a new one is added.
    if (epoll_ctl(poller, EPOLL_CTL_MOD, fd, &event) == 0) return 0;
    if (errno != ENOENT) return -1;
    return epoll_ctl(poller, EPOLL_CTL_ADD, fd, &event);
}

int pfc_poller_wait(int poller, int timeout_ms, int *fds, int *ready, int capacity) {
    struct epoll_event events[256];
    if (capacity > 256) capacity = 256;
    int count = epoll_wait(poller, events, capacity, timeout_ms);
    if (count < 0) return errno == EINTR ? 0 : -1;
    for (int i = 0; i < count; i++) {
        int mask = 0;
        if (events[i].events & (EPOLLIN | EPOLLHUP)) mask |= PFC_CSELECT_IN;
        if (events[i].events & EPOLLOUT) mask |= PFC_CSELECT_OUT;
        if (events[i].events & EPOLLERR) mask |= PFC_CSELECT_ERR;
        fds[i] = events[i].data.fd;
        ready[i] = mask;
    }
    return count;
}

int pfc_waker_create(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

void pfc_waker_signal(int waker) {
    uint64_t one = 1;
    ssize_t written = write(waker, &one, sizeof one);
    (void)written;  // EAGAIN means the counter is already set: the loop wakes either way
}

void pfc_waker_drain(int waker) {
    uint64_t count;
    ssize_t got = read(waker, &count, sizeof count);
    (void)got;
}

#else
typedef int pfc_poller_unused;
#endif
