// The few libcurl functions the library's Linux transport uses, looked up at run time in the libcurl that
// FoundationNetworking already loads, so that neither the build nor a user's machine needs curl's development headers.
//
// Every function here is a plain (non-variadic) C function: `curl_easy_setopt`, `curl_easy_getinfo` and
// `curl_multi_setopt` are variadic, which Swift cannot call, and calling a variadic function through a
// non-variadic pointer is not sound on every ABI. The wrappers call them as C calls them.
//
// The numeric constants are libcurl's public ABI, which libcurl keeps stable across releases (options and codes are
// only ever added); the values are those of curl 7.88.1's include/curl/curl.h and multi.h (Debian 12's libcurl),
// checked at compile time against those headers by tools/check_curl_abi.py (make check-curl-abi, in make test).
#ifndef CPROFIRESTCURL_H
#define CPROFIRESTCURL_H

#include <stddef.h>
#include <stdint.h>

#if defined(__linux__)

/// A libcurl data callback: CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION share this shape.
typedef size_t (*pfc_data_callback)(char *data, size_t size, size_t count, void *context);
/// CURLMOPT_SOCKETFUNCTION: which socket libcurl wants watched for what (PFC_POLL_*); 0 for success.
typedef int (*pfc_socket_callback)(void *easy, int socket, int what, void *context, void *socket_context);
/// CURLMOPT_TIMERFUNCTION: when libcurl wants `pfc_multi_socket_action(PFC_SOCKET_TIMEOUT)` called (-1: no timer).
typedef int (*pfc_timer_callback)(void *multi, long timeout_ms, void *context);

/// Loads libcurl from the first of `names` that dlopen finds and looks up every function the wrappers use.
/// Returns 0 on success (also when an earlier call already succeeded); otherwise 1, with a message in `error`.
/// On failure nothing is kept: a later call with other names may still succeed.
int pfc_load(const char *const *names, int count, char *error, size_t error_size);

/// Looks `names` up like `pfc_load`, without keeping anything, for a test of a library that lacks a symbol.
int pfc_probe(const char *const *names, int count, char *error, size_t error_size);

/// curl_version(): "libcurl/7.88.1 OpenSSL/3.0.x …".
const char *pfc_version(void);

void *pfc_easy_init(void);
void pfc_easy_cleanup(void *easy);
/// curl_easy_reset: every option back to its default, keeping the handle's caches, for the next transfer.
void pfc_easy_reset(void *easy);
int pfc_easy_setopt_long(void *easy, int option, long value);
int pfc_easy_setopt_pointer(void *easy, int option, const void *value);
int pfc_easy_setopt_offset(void *easy, int option, int64_t value);
int pfc_easy_setopt_callback(void *easy, int option, pfc_data_callback callback);
/// CURLOPT_CAINFO_BLOB and the like: libcurl copies the bytes (CURL_BLOB_COPY).
int pfc_easy_setopt_blob(void *easy, int option, const void *data, size_t length);
int pfc_easy_getinfo_long(void *easy, int info, long *value);
int pfc_easy_getinfo_string(void *easy, int info, const char **value);
int pfc_easy_pause(void *easy, int bitmask);
const char *pfc_easy_strerror(int code);

void *pfc_multi_init(void);
int pfc_multi_cleanup(void *multi);
int pfc_multi_setopt_long(void *multi, int option, long value);
int pfc_multi_add_handle(void *multi, void *easy);
int pfc_multi_remove_handle(void *multi, void *easy);
int pfc_multi_perform(void *multi, int *running);
int pfc_multi_poll(void *multi, int timeout_ms, int *ready);
/// CURLMOPT_SOCKETFUNCTION and CURLMOPT_SOCKETDATA in one call; CURLMOPT_TIMERFUNCTION and CURLMOPT_TIMERDATA in the
/// other: the event-driven interface, where the caller watches the sockets and keeps the timer.
int pfc_multi_setopt_socket_callback(void *multi, pfc_socket_callback callback, void *context);
int pfc_multi_setopt_timer_callback(void *multi, pfc_timer_callback callback, void *context);
/// curl_multi_socket_action: `socket` is ready for `events` (PFC_CSELECT_*), or the timer fired (PFC_SOCKET_TIMEOUT).
int pfc_multi_socket_action(void *multi, int socket, int events, int *running);
/// Reads the next finished transfer: returns 1 and sets `easy` and `result` for a CURLMSG_DONE, 0 when none is left.
int pfc_multi_next_done(void *multi, void **easy, int *result);

// Names the calling thread (thread_name.c), at most 15 bytes; 0 or an errno value.
int pfc_name_this_thread(const char *name);

// The engine's event loop (poller.c): an epoll set and an eventfd.
/// epoll_create1(EPOLL_CLOEXEC): a new set, or -1.
int pfc_poller_create(void);
/// Watches `fd` for `what` (PFC_POLL_IN, _OUT, _INOUT), or stops watching it (PFC_POLL_REMOVE); 0 or -1.
int pfc_poller_watch(int poller, int fd, int what);
/// Waits up to `timeout_ms` (-1: no limit) and fills `fds` and `ready` (PFC_CSELECT_* masks) with at most `capacity`
/// (≤ 256) sockets that are ready; returns how many (0 when interrupted by a signal), or -1.
int pfc_poller_wait(int poller, int timeout_ms, int *fds, int *ready, int capacity);
/// eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC): a file descriptor that `pfc_waker_signal` makes readable, or -1.
int pfc_waker_create(void);
void pfc_waker_signal(int waker);
void pfc_waker_drain(int waker);

void *pfc_slist_append(void *list, const char *string);
void pfc_slist_free_all(void *list);

// Options (CURLOPT_*): long options from 0, object pointers from 10000, functions from 20000, curl_off_t from
// 30000, blobs from 40000.
#define PFC_OPT_WRITEDATA 10001
#define PFC_OPT_URL 10002
#define PFC_OPT_PROXY 10004
#define PFC_OPT_POSTFIELDS 10015
#define PFC_OPT_HTTPHEADER 10023
#define PFC_OPT_HEADERDATA 10029
#define PFC_OPT_CUSTOMREQUEST 10036
#define PFC_OPT_NOBODY 44
#define PFC_OPT_POST 47
#define PFC_OPT_FOLLOWLOCATION 52
#define PFC_OPT_HTTPGET 80
#define PFC_OPT_HTTP_VERSION 84
#define PFC_OPT_NOSIGNAL 99
#define PFC_OPT_ACCEPT_ENCODING 10102
#define PFC_OPT_PRIVATE 10103
#define PFC_OPT_TCP_NODELAY 121
#define PFC_OPT_TIMEOUT_MS 155
#define PFC_OPT_CONNECTTIMEOUT_MS 156
#define PFC_OPT_TCP_KEEPALIVE 213
#define PFC_OPT_TCP_KEEPIDLE 214
#define PFC_OPT_TCP_KEEPINTVL 215
#define PFC_OPT_PIPEWAIT 237
#define PFC_OPT_SUPPRESS_CONNECT_HEADERS 265
#define PFC_OPT_MAXAGE_CONN 288
#define PFC_OPT_CAINFO 10065
#define PFC_OPT_CAPATH 10097
#define PFC_OPT_PROTOCOLS_STR 10318
#define PFC_OPT_WRITEFUNCTION 20011
#define PFC_OPT_HEADERFUNCTION 20079
#define PFC_OPT_POSTFIELDSIZE_LARGE 30120
#define PFC_OPT_CAINFO_BLOB 40309

// Information (CURLINFO_*).
#define PFC_INFO_RESPONSE_CODE 2097154
#define PFC_INFO_HTTP_CONNECTCODE 2097174
#define PFC_INFO_HTTP_VERSION 2097198
#define PFC_INFO_CAINFO 1048637
#define PFC_INFO_CAPATH 1048638

// Multi options (CURLMOPT_*) and their values.
#define PFC_MOPT_PIPELINING 3
#define PFC_MOPT_MAXCONNECTS 6
#define PFC_MOPT_MAX_CONCURRENT_STREAMS 16
#define PFC_MOPT_SOCKETFUNCTION 20001
#define PFC_MOPT_SOCKETDATA 10002
#define PFC_MOPT_TIMERFUNCTION 20004
#define PFC_MOPT_TIMERDATA 10005
#define PFC_PIPE_MULTIPLEX 2

// The event-driven interface's values: what to watch a socket for, what it is ready for, the timer's socket.
#define PFC_POLL_IN 1
#define PFC_POLL_OUT 2
#define PFC_POLL_INOUT 3
#define PFC_POLL_REMOVE 4
#define PFC_CSELECT_IN 1
#define PFC_CSELECT_OUT 2
#define PFC_CSELECT_ERR 4
#define PFC_SOCKET_TIMEOUT -1

// Values of options.
#define PFC_HTTP_VERSION_1_1 2
#define PFC_HTTP_VERSION_2TLS 4
#define PFC_PAUSE_CONT 0
#define PFC_WRITEFUNC_PAUSE 0x10000001

// Result codes (CURLcode) the transport tells apart.
#define PFC_E_OK 0
#define PFC_E_UNSUPPORTED_PROTOCOL 1
#define PFC_E_URL_MALFORMAT 3
#define PFC_E_COULDNT_RESOLVE_PROXY 5
#define PFC_E_COULDNT_RESOLVE_HOST 6
#define PFC_E_COULDNT_CONNECT 7
#define PFC_E_WEIRD_SERVER_REPLY 8
#define PFC_E_HTTP2 16
#define PFC_E_PARTIAL_FILE 18
#define PFC_E_WRITE_ERROR 23
#define PFC_E_OUT_OF_MEMORY 27
#define PFC_E_OPERATION_TIMEDOUT 28
#define PFC_E_SSL_CONNECT_ERROR 35
#define PFC_E_UNKNOWN_OPTION 48
#define PFC_E_GOT_NOTHING 52
#define PFC_E_SEND_ERROR 55
#define PFC_E_RECV_ERROR 56
#define PFC_E_SSL_CERTPROBLEM 58
#define PFC_E_PEER_FAILED_VERIFICATION 60
#define PFC_E_BAD_CONTENT_ENCODING 61
#define PFC_E_SSL_CACERT_BADFILE 77
#define PFC_E_SSL_ISSUER_ERROR 83
#define PFC_E_HTTP2_STREAM 92
#define PFC_E_PROXY 97

#endif // __linux__
#endif // CPROFIRESTCURL_H
