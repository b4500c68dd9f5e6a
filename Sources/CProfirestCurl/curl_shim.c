// See include/CProfirestCurl.h: libcurl looked up at run time, called through non-variadic wrappers. The mirrored
// structures below (curl_blob, CURLMsg) are checked against curl.h by tools/check_curl_abi.py.
#if defined(__linux__)

#include "CProfirestCurl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

// libcurl's own declarations, as curl.h and multi.h give them; handles are opaque, options and codes are ints.
typedef struct {
    int msg;  // CURLMSG
    void *easy_handle;
    union {
        void *whatever;
        int result;  // CURLcode
    } data;
} pfc_curl_msg;

typedef struct {
    int (*global_init)(long flags);
    const char *(*version)(void);
    void *(*easy_init)(void);
    void (*easy_cleanup)(void *);
    void (*easy_reset)(void *);
    int (*easy_setopt)(void *, int, ...);
    int (*easy_getinfo)(void *, int, ...);
    int (*easy_pause)(void *, int);
    const char *(*easy_strerror)(int);
    void *(*multi_init)(void);
    int (*multi_cleanup)(void *);
    int (*multi_setopt)(void *, int, ...);
    int (*multi_add_handle)(void *, void *);
    int (*multi_remove_handle)(void *, void *);
    int (*multi_perform)(void *, int *);
    int (*multi_poll)(void *, void *, unsigned int, int, int *);
    pfc_curl_msg *(*multi_info_read)(void *, int *);
    int (*multi_socket_action)(void *, int, int, int *);
    void *(*slist_append)(void *, const char *);
    void (*slist_free_all)(void *);
} pfc_api;

static pfc_api api;
static int loaded = 0;
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

#define PFC_CURL_GLOBAL_ALL 3

// Fills `table` from the first library in `names` that opens; 0 on success.
static int lookup(pfc_api *table, const char *const *names, int count, char *error, size_t error_size) {
    void *library = NULL;
    const char *opened = NULL;
    for (int i = 0; i < count && library == NULL; i++) {
        library = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        opened = names[i];
    }
    if (library == NULL) {
        const char *reason = dlerror();
        snprintf(error, error_size, "libcurl could not be loaded (%s)", reason ? reason : "not found");
        return 1;
    }
    struct { const char *name; void **slot; } symbols[] = {
        {"curl_global_init", (void **)&table->global_init},
        {"curl_version", (void **)&table->version},
        {"curl_easy_init", (void **)&table->easy_init},
        {"curl_easy_cleanup", (void **)&table->easy_cleanup},
        {"curl_easy_reset", (void **)&table->easy_reset},
        {"curl_easy_setopt", (void **)&table->easy_setopt},
        {"curl_easy_getinfo", (void **)&table->easy_getinfo},
        {"curl_easy_pause", (void **)&table->easy_pause},
        {"curl_easy_strerror", (void **)&table->easy_strerror},
        {"curl_multi_init", (void **)&table->multi_init},
        {"curl_multi_cleanup", (void **)&table->multi_cleanup},
        {"curl_multi_setopt", (void **)&table->multi_setopt},
        {"curl_multi_add_handle", (void **)&table->multi_add_handle},
        {"curl_multi_remove_handle", (void **)&table->multi_remove_handle},
        {"curl_multi_perform", (void **)&table->multi_perform},
        {"curl_multi_poll", (void **)&table->multi_poll},
        {"curl_multi_info_read", (void **)&table->multi_info_read},
        {"curl_multi_socket_action", (void **)&table->multi_socket_action},
        {"curl_slist_append", (void **)&table->slist_append},
        {"curl_slist_free_all", (void **)&table->slist_free_all},
    };
    for (size_t i = 0; i < sizeof(symbols) / sizeof(symbols[0]); i++) {
        *symbols[i].slot = dlsym(library, symbols[i].name);
        if (*symbols[i].slot == NULL) {
            snprintf(error, error_size, "%s has no %s (libcurl 7.66 or later is needed)", opened, symbols[i].name);
            dlclose(library);
            return 1;
        }
    }
    return 0;
}

int pfc_load(const char *const *names, int count, char *error, size_t error_size) {
    pthread_mutex_lock(&load_lock);
    int failed = 0;
    if (!loaded) {
        pfc_api table;
        failed = lookup(&table, names, count, error, error_size);
        if (!failed) {
            // Thread-safe from libcurl 7.84; FoundationNetworking has usually done it already, and it counts calls.
            if (table.global_init(PFC_CURL_GLOBAL_ALL) != 0) {
                snprintf(error, error_size, "curl_global_init failed");
                failed = 1;
            } else {
                api = table;
                loaded = 1;
            }
        }
    }
    pthread_mutex_unlock(&load_lock);
    return failed;
}

int pfc_probe(const char *const *names, int count, char *error, size_t error_size) {
    pfc_api table;
    return lookup(&table, names, count, error, error_size);
}

const char *pfc_version(void) { return api.version(); }

void *pfc_easy_init(void) { return api.easy_init(); }
void pfc_easy_cleanup(void *easy) { api.easy_cleanup(easy); }
void pfc_easy_reset(void *easy) { api.easy_reset(easy); }
int pfc_easy_setopt_long(void *easy, int option, long value) { return api.easy_setopt(easy, option, value); }
int pfc_easy_setopt_pointer(void *easy, int option, const void *value) { return api.easy_setopt(easy, option, value); }
int pfc_easy_setopt_offset(void *easy, int option, int64_t value) { return api.easy_setopt(easy, option, (int64_t)value); }
int pfc_easy_setopt_callback(void *easy, int option, pfc_data_callback callback) {
    return api.easy_setopt(easy, option, callback);
}
int pfc_easy_setopt_blob(void *easy, int option, const void *data, size_t length) {
    // struct curl_blob { void *data; size_t len; unsigned int flags; } with CURL_BLOB_COPY (1).
    struct { void *data; size_t len; unsigned int flags; } blob = {(void *)data, length, 1};
    return api.easy_setopt(easy, option, &blob);
}
int pfc_easy_getinfo_long(void *easy, int info, long *value) { return api.easy_getinfo(easy, info, value); }
int pfc_easy_getinfo_string(void *easy, int info, const char **value) { return api.easy_getinfo(easy, info, value); }
int pfc_easy_pause(void *easy, int bitmask) { return api.easy_pause(easy, bitmask); }
const char *pfc_easy_strerror(int code) { return api.easy_strerror(code); }

void *pfc_multi_init(void) { return api.multi_init(); }
int pfc_multi_cleanup(void *multi) { return api.multi_cleanup(multi); }
int pfc_multi_setopt_long(void *multi, int option, long value) { return api.multi_setopt(multi, option, value); }
int pfc_multi_add_handle(void *multi, void *easy) { return api.multi_add_handle(multi, easy); }
int pfc_multi_remove_handle(void *multi, void *easy) { return api.multi_remove_handle(multi, easy); }
int pfc_multi_perform(void *multi, int *running) { return api.multi_perform(multi, running); }
int pfc_multi_poll(void *multi, int timeout_ms, int *ready) { return api.multi_poll(multi, NULL, 0, timeout_ms, ready); }
int pfc_multi_setopt_socket_callback(void *multi, pfc_socket_callback callback, void *context) {
    int failed = api.multi_setopt(multi, PFC_MOPT_SOCKETFUNCTION, callback);
    return failed ? failed : api.multi_setopt(multi, PFC_MOPT_SOCKETDATA, context);
}
int pfc_multi_setopt_timer_callback(void *multi, pfc_timer_callback callback, void *context) {
    int failed = api.multi_setopt(multi, PFC_MOPT_TIMERFUNCTION, callback);
    return failed ? failed : api.multi_setopt(multi, PFC_MOPT_TIMERDATA, context);
}
int pfc_multi_socket_action(void *multi, int socket, int events, int *running) {
    return api.multi_socket_action(multi, socket, events, running);
}
int pfc_multi_next_done(void *multi, void **easy, int *result) {
    int left = 0;
    pfc_curl_msg *message;
    while ((message = api.multi_info_read(multi, &left)) != NULL) {
        if (message->msg == 1) {  // CURLMSG_DONE
            *easy = message->easy_handle;
            *result = message->data.result;
            return 1;
        }
    }
    return 0;
}

void *pfc_slist_append(void *list, const char *string) { return api.slist_append(list, string); }
void pfc_slist_free_all(void *list) { api.slist_free_all(list); }

#else
// Only Linux uses this target; elsewhere it compiles to nothing (a C target needs one source file).
typedef int pfc_unused;
#endif
