// See include/CProfirestPQ.h: libpq looked up at run time and called through these wrappers, so that Swift sees
// opaque pointers and ints only. The prototypes (pq_api.h) are checked against libpq-fe.h by tools/check_pq_abi.py.
#include "CProfirestPQ.h"
#include "pq_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(_WIN32)
// Not loaded on Windows yet: pfq_load says so, and nothing else is ever called.
#else
#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#endif

typedef struct {
    pfq_fn_lib_version lib_version;
    pfq_fn_isthreadsafe isthreadsafe;
    pfq_fn_connectdb_params connectdb_params;
    pfq_fn_status status;
    pfq_fn_error_message error_message;
    pfq_fn_finish finish;
    pfq_fn_socket socket;
    pfq_fn_consume_input consume_input;
    pfq_fn_set_notice_receiver set_notice_receiver;
    pfq_fn_exec_params exec_params;
    pfq_fn_result_status result_status;
    pfq_fn_result_error_field result_error_field;
    pfq_fn_ntuples ntuples;
    pfq_fn_getisnull getisnull;
    pfq_fn_getvalue getvalue;
    pfq_fn_getlength getlength;
    pfq_fn_clear clear;
    pfq_fn_conninfo_parse conninfo_parse;
    pfq_fn_conninfo_free conninfo_free;
    pfq_fn_freemem freemem;
} pfq_api;

static pfq_api api;

#if defined(_WIN32)

int pfq_load(const char *const *names, int count, char *error, size_t error_size) {
    (void)names;
    (void)count;
    snprintf(error, error_size, "loading libpq is not supported on Windows yet");
    return 1;
}

static int idle_socket_has_input(int fd) {
    (void)fd;
    return 0;
}

#else

static int loaded = 0;
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

// Fills `table` from the first library in `names` that opens, and sets `handle` to it; 0 on success.
static int lookup(pfq_api *table, const char *const *names, int count, char *error, size_t error_size,
                  void **handle) {
    void *library = NULL;
    const char *opened = NULL;
    char first_reason[256] = "";
    for (int i = 0; i < count && library == NULL; i++) {
        library = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        opened = names[i];
        if (library == NULL && first_reason[0] == 0) {
            const char *reason = dlerror();
            snprintf(first_reason, sizeof(first_reason), "%s", reason ? reason : "not found");
        }
    }
    if (library == NULL) {
        snprintf(error, error_size, "libpq could not be loaded (%s)", first_reason);
        return 1;
    }
    struct { const char *name; void **slot; } symbols[] = {
        {"PQlibVersion", (void **)&table->lib_version},
        {"PQisthreadsafe", (void **)&table->isthreadsafe},
        {"PQconnectdbParams", (void **)&table->connectdb_params},
        {"PQstatus", (void **)&table->status},
        {"PQerrorMessage", (void **)&table->error_message},
        {"PQfinish", (void **)&table->finish},
        {"PQsocket", (void **)&table->socket},
        {"PQconsumeInput", (void **)&table->consume_input},
        {"PQsetNoticeReceiver", (void **)&table->set_notice_receiver},
        {"PQexecParams", (void **)&table->exec_params},
        {"PQresultStatus", (void **)&table->result_status},
        {"PQresultErrorField", (void **)&table->result_error_field},
        {"PQntuples", (void **)&table->ntuples},
        {"PQgetisnull", (void **)&table->getisnull},
        {"PQgetvalue", (void **)&table->getvalue},
        {"PQgetlength", (void **)&table->getlength},
        {"PQclear", (void **)&table->clear},
        {"PQconninfoParse", (void **)&table->conninfo_parse},
        {"PQconninfoFree", (void **)&table->conninfo_free},
        {"PQfreemem", (void **)&table->freemem},
    };
    for (size_t i = 0; i < sizeof(symbols) / sizeof(symbols[0]); i++) {
        *symbols[i].slot = dlsym(library, symbols[i].name);
        if (*symbols[i].slot == NULL) {
            snprintf(error, error_size, "%s has no %s (libpq 10 or later is needed)", opened, symbols[i].name);
            dlclose(library);
            return 1;
        }
    }
    if (!table->isthreadsafe()) {
        snprintf(error, error_size, "%s was built without thread safety, which PostgresTokenStorage needs", opened);
        dlclose(library);
        return 1;
    }
    *handle = library;
    return 0;
}

int pfq_load(const char *const *names, int count, char *error, size_t error_size) {
    // Looked up every time, so that a library that is missing or lacks a function is reported whatever was loaded
    // before; the first one found is kept, and a later one only checked (the loader counts the opens).
    pfq_api table;
    void *library = NULL;
    int failed = lookup(&table, names, count, error, error_size, &library);
    if (failed) return failed;
    pthread_mutex_lock(&load_lock);
    int keep = !loaded;
    if (keep) {
        api = table;
        loaded = 1;
    }
    pthread_mutex_unlock(&load_lock);
    if (!keep) dlclose(library);
    return 0;
}

static int idle_socket_has_input(int fd) {
    struct pollfd entry = {fd, POLLIN, 0};
    return poll(&entry, 1, 0) > 0;
}

#endif

int pfq_lib_version(void) { return api.lib_version(); }

// A connection and what its notices said: the server's goodbye to an idle session ("terminating connection due to
// administrator command", severity FATAL) reaches libpq as a notice, before the end of the stream does.
typedef struct {
    PGconn *conn;
    int ended_by_server;
} pfq_connection;

// Replaces libpq's default receiver, which prints notices on stderr: notices are dropped, a FATAL one remembered.
static void receive_notice(void *arg, const PGresult *res) {
    pfq_connection *connection = arg;
    const char *severity = api.result_error_field(res, PFQ_PG_DIAG_SEVERITY_NONLOCALIZED);
    if (severity != NULL && (strcmp(severity, "FATAL") == 0 || strcmp(severity, "PANIC") == 0)) {
        connection->ended_by_server = 1;
    }
}

void *pfq_connect(const char *const *keywords, const char *const *values, int expand_dbname) {
    pfq_connection *connection = calloc(1, sizeof(pfq_connection));
    if (connection == NULL) return NULL;
    connection->conn = api.connectdb_params(keywords, values, expand_dbname);
    if (connection->conn == NULL) {
        free(connection);
        return NULL;
    }
    api.set_notice_receiver(connection->conn, receive_notice, connection);
    return connection;
}

static PGconn *conn_of(const void *connection) { return ((const pfq_connection *)connection)->conn; }

int pfq_status(const void *connection) { return api.status(conn_of(connection)); }
const char *pfq_error_message(const void *connection) { return api.error_message(conn_of(connection)); }

void pfq_finish(void *connection) {
    api.finish(conn_of(connection));
    free(connection);
}

int pfq_idle_connection_is_dead(void *handle) {
    pfq_connection *connection = handle;
    PGconn *conn = connection->conn;
    if (connection->ended_by_server || api.status(conn) != PFQ_CONNECTION_OK) return 1;
    int fd = api.socket(conn);
    if (fd < 0) return 1;
    // An idle connection has nothing to read unless the server spoke first: usually its goodbye, a FATAL error that
    // libpq hands the notice receiver above, and then the end of the stream, which libpq sees only on a read of its
    // own — hence a few rounds. A harmless message (a parameter status) is read and leaves the connection good.
    for (int round = 0; round < 16 && idle_socket_has_input(fd); round++) {
        if (!api.consume_input(conn) || connection->ended_by_server || api.status(conn) != PFQ_CONNECTION_OK) return 1;
    }
    return connection->ended_by_server || api.status(conn) != PFQ_CONNECTION_OK;
}

void *pfq_exec(void *connection, const char *command, int count, const char *const *values) {
    return api.exec_params(conn_of(connection), command, count, NULL, values, NULL, NULL, 0);
}

int pfq_result_status(const void *result) { return api.result_status(result); }
const char *pfq_result_error_field(const void *result, int field) { return api.result_error_field(result, field); }
int pfq_ntuples(const void *result) { return api.ntuples(result); }
int pfq_get_is_null(const void *result, int row, int column) { return api.getisnull(result, row, column); }
const char *pfq_get_value(const void *result, int row, int column) { return api.getvalue(result, row, column); }
int pfq_get_length(const void *result, int row, int column) { return api.getlength(result, row, column); }
void pfq_clear(void *result) { api.clear(result); }

void *pfq_conninfo_parse(const char *conninfo) {
    char *message = NULL;
    pfq_conninfo_option *options = api.conninfo_parse(conninfo, &message);
    if (message != NULL) api.freemem(message);
    return options;
}

const char *pfq_conninfo_value(const void *options, const char *keyword) {
    for (const pfq_conninfo_option *option = options; option != NULL && option->keyword != NULL; option++) {
        if (strcmp(option->keyword, keyword) == 0) return option->val;
    }
    return NULL;
}

void pfq_conninfo_free(void *options) { api.conninfo_free(options); }
