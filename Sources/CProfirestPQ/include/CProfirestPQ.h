// The few libpq functions ProfirestPostgres uses, looked up at run time (dlopen) in the system's libpq (Debian's
// libpq5: libpq.so.5), so that building the package needs neither libpq's development headers (libpq-dev) nor
// PostgreSQL at all: only a program that creates a PostgresTokenStorage needs the library, and one that lacks it
// gets an error that says so instead of failing to link or to start.
//
// The numeric constants are libpq's public ABI, which libpq keeps stable across releases (libpq.so.5 since
// PostgreSQL 8.x): the values of libpq-fe.h and postgres_ext.h of PostgreSQL 15 (Debian 12's libpq-dev), checked at
// compile time against those headers — with the prototypes of every function looked up and the layout of the one
// structure mirrored — by tools/check_pq_abi.py (make check-pq-abi, part of make test).
#ifndef CPROFIRESTPQ_H
#define CPROFIRESTPQ_H

#include <stddef.h>

/// Loads libpq from the first of `names` that the system's loader finds and looks up every function the wrappers
/// use. Returns 0 on success; otherwise 1, with a message in `error`, and nothing is kept. The first library loaded
/// is the one used for the life of the process: a later call with other names only checks that one of them loads.
int pfq_load(const char *const *names, int count, char *error, size_t error_size);

/// PQlibVersion(): 150018 for libpq 15.18.
int pfq_lib_version(void);

/// PQconnectdbParams(keywords, values, expand_dbname), wrapped with a notice receiver that drops the server's notices
/// (libpq's default prints them on stderr) and remembers a FATAL one (the server ending the session). The handle the
/// other functions take; never NULL unless out of memory; check pfq_status; pfq_finish frees it, also a failed one.
void *pfq_connect(const char *const *keywords, const char *const *values, int expand_dbname);
/// PQstatus(): PFQ_CONNECTION_OK or PFQ_CONNECTION_BAD (or a state of a connection still being made).
int pfq_status(const void *conn);
/// PQerrorMessage(): the last error on the connection; owned by the connection.
const char *pfq_error_message(const void *conn);
/// PQfinish(): closes the connection and frees it (also a failed one).
void pfq_finish(void *conn);
/// Whether an idle connection is known to be dead without a round trip: the server closed it (a restart,
/// pg_terminate_backend) and its last words — a FATAL error, the end of the stream — are waiting in the socket or
/// were read. 1 when dead, 0 when it looks alive.
int pfq_idle_connection_is_dead(void *conn);

/// PQexecParams() with `count` text parameters (NUL-terminated, no NULLs), asking for text results.
void *pfq_exec(void *conn, const char *command, int count, const char *const *values);
/// PQresultStatus(): PFQ_PGRES_COMMAND_OK, PFQ_PGRES_TUPLES_OK, PFQ_PGRES_FATAL_ERROR, …
int pfq_result_status(const void *result);
/// PQresultErrorField(): one field of the error (PFQ_PG_DIAG_SQLSTATE, PFQ_PG_DIAG_MESSAGE_PRIMARY), or NULL.
const char *pfq_result_error_field(const void *result, int field);
/// PQntuples().
int pfq_ntuples(const void *result);
/// PQgetisnull().
int pfq_get_is_null(const void *result, int row, int column);
/// PQgetvalue(): the text of a value, owned by the result.
const char *pfq_get_value(const void *result, int row, int column);
/// PQgetlength(): its length in bytes.
int pfq_get_length(const void *result, int row, int column);
/// PQclear().
void pfq_clear(void *result);

/// PQconninfoParse() without its error message (which may quote the string, and so a password): NULL when the
/// connection string cannot be parsed. Free the result with pfq_conninfo_free.
void *pfq_conninfo_parse(const char *conninfo);
/// The value a parsed connection string gives `keyword` (such as "host" or "password"), or NULL when it gives none.
const char *pfq_conninfo_value(const void *options, const char *keyword);
/// PQconninfoFree().
void pfq_conninfo_free(void *options);

// ConnStatusType (libpq-fe.h).
#define PFQ_CONNECTION_OK 0
#define PFQ_CONNECTION_BAD 1

// ExecStatusType (libpq-fe.h).
#define PFQ_PGRES_EMPTY_QUERY 0
#define PFQ_PGRES_COMMAND_OK 1
#define PFQ_PGRES_TUPLES_OK 2
#define PFQ_PGRES_BAD_RESPONSE 5
#define PFQ_PGRES_NONFATAL_ERROR 6
#define PFQ_PGRES_FATAL_ERROR 7

// Error fields (postgres_ext.h): characters there, their codes here, since Swift imports numeric macros only.
#define PFQ_PG_DIAG_SQLSTATE 67  // 'C'
#define PFQ_PG_DIAG_MESSAGE_PRIMARY 77  // 'M'
#define PFQ_PG_DIAG_SEVERITY_NONLOCALIZED 86  // 'V'

#endif // CPROFIRESTPQ_H
