// Windows only. On Linux the test-only target TestSupportWindowsCheck compiles this same file (PROFIREST_SHIMS), so
// `PostgresServer` builds for Windows; it imports nothing, and starts no server there: its guard is a POSIX shell
// script (initdb, pg_ctl, setpriv), so `PostgresServer.start` throws `Unavailable` before it gets here.
#if os(Windows) || PROFIREST_SHIMS

enum OSPostgres: OSPostgresServer {
    static func unprivilegedUser() -> (UInt32, UInt32)? { nil }

    static func freePort() throws -> Int {
        throw PostgresServer.Unavailable(reason: "PostgresServer starts PostgreSQL on Linux and macOS only")
    }
}
#endif
