// The prototypes of the libpq functions pq_shim.c looks up, as function pointer types. PGconn and PGresult are
// declared with libpq-fe.h's own structure tags, so tools/check_pq_abi.py can include this file after libpq-fe.h and
// assert that each type is the type of libpq's function. Where libpq returns an enum (ConnStatusType,
// ExecStatusType) these say int, and the check asserts that the enum has an int's size.
#ifndef CPROFIRESTPQ_API_H
#define CPROFIRESTPQ_API_H

#include <stddef.h>

typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;

/// PQconninfoOption, mirrored (its layout is asserted against libpq-fe.h by the check).
typedef struct {
    char *keyword;
    char *envvar;
    char *compiled;
    char *val;
    char *label;
    char *dispchar;
    int dispsize;
} pfq_conninfo_option;

typedef void (*pfq_notice_receiver)(void *arg, const PGresult *res);

typedef int (*pfq_fn_lib_version)(void);
typedef int (*pfq_fn_isthreadsafe)(void);
typedef PGconn *(*pfq_fn_connectdb_params)(const char *const *keywords, const char *const *values, int expand_dbname);
typedef int (*pfq_fn_status)(const PGconn *conn);  // ConnStatusType
typedef char *(*pfq_fn_error_message)(const PGconn *conn);
typedef void (*pfq_fn_finish)(PGconn *conn);
typedef int (*pfq_fn_socket)(const PGconn *conn);
typedef int (*pfq_fn_consume_input)(PGconn *conn);
typedef pfq_notice_receiver (*pfq_fn_set_notice_receiver)(PGconn *conn, pfq_notice_receiver proc, void *arg);
typedef PGresult *(*pfq_fn_exec_params)(PGconn *conn, const char *command, int nParams, const unsigned int *paramTypes,
                                        const char *const *paramValues, const int *paramLengths,
                                        const int *paramFormats, int resultFormat);
typedef int (*pfq_fn_result_status)(const PGresult *res);  // ExecStatusType
typedef char *(*pfq_fn_result_error_field)(const PGresult *res, int fieldcode);
typedef int (*pfq_fn_ntuples)(const PGresult *res);
typedef int (*pfq_fn_getisnull)(const PGresult *res, int tup_num, int field_num);
typedef char *(*pfq_fn_getvalue)(const PGresult *res, int tup_num, int field_num);
typedef int (*pfq_fn_getlength)(const PGresult *res, int tup_num, int field_num);
typedef void (*pfq_fn_clear)(PGresult *res);
// PQconninfoParse and PQconninfoFree take libpq's PQconninfoOption, which this file cannot name without defining it a
// second time: they are declared with the mirror, and the check compares them with casts of libpq's prototypes.
typedef pfq_conninfo_option *(*pfq_fn_conninfo_parse)(const char *conninfo, char **errmsg);
typedef void (*pfq_fn_conninfo_free)(pfq_conninfo_option *options);
typedef void (*pfq_fn_freemem)(void *ptr);

#endif // CPROFIRESTPQ_API_H
