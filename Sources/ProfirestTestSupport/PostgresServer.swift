import Foundation

/// A PostgreSQL server of a test run's or the soak's own, from the machine's PostgreSQL packages (Debian's
/// `postgresql`): `initdb` into a fresh temporary directory, a free port on 127.0.0.1 (and its unix socket in that
/// directory), `pg_ctl start -w`; `stop()` stops it and removes the directory. Not part of the library.
///
/// The server lives under a guard — a shell that started it and waits for its stdin to close — so it is stopped and
/// removed also when the process that started it dies without stopping it (a crash, SIGKILL): stdin closes then too.
///
/// initdb and postgres refuse to run as root; as root (CI here), they run as the `postgres` user the package creates
/// (or `nobody`), through `setpriv`. The guard is a POSIX shell script: on Windows `start` throws `Unavailable`.
///
/// ```swift
/// let server = try PostgresServer.start()
/// defer { server.stop() }
/// let storage = try PostgresTokenStorage(connectionString: server.connectionString)
/// ```
public final class PostgresServer: @unchecked Sendable {
    // @unchecked: every property is set once in init; Process and Pipe are thread-safe for the calls made here.
    public let port: Int
    public let user = "profirest"
    public let password: String
    private let guardProcess: Process
    private let guardInput: Pipe
    private let directory: String

    /// The connection string of the server's `postgres` database, password included.
    public var connectionString: String { connectionStringWithoutPassword + " password=\(password)" }
    /// The same without the password (a child process gets it in PGPASSWORD).
    public var connectionStringWithoutPassword: String { "host=127.0.0.1 port=\(port) dbname=postgres user=\(user)" }

    /// PostgreSQL's server programs are not installed here (or this platform cannot start them).
    public struct Unavailable: Error, CustomStringConvertible {
        public let reason: String
        public var description: String { reason }
        public init(reason: String) { self.reason = reason }
    }

    /// The server was found but did not start; `message` is what initdb or pg_ctl said.
    public struct StartFailure: Error, CustomStringConvertible {
        public let message: String
        public var description: String { "the PostgreSQL server could not start: \(message)" }
        public init(message: String) { self.message = message }
    }

    /// Starts a new server; a port found free can be taken before the server binds it, so a few are tried.
    ///
    /// - Parameter maxConnections: the server's `max_connections`.
    /// - Throws: `Unavailable` when PostgreSQL's server programs (initdb, pg_ctl) are missing, `StartFailure` when
    ///   they did not start a server.
    /// Usage: `let server = try PostgresServer.start(maxConnections: 300)`
    public static func start(maxConnections: Int = 200) throws -> PostgresServer {
        guard let binaries = binDirectory() else {
            throw Unavailable(reason: "PostgreSQL's server programs (initdb, pg_ctl) are not installed (Debian: "
                + "apt-get install postgresql)")
        }
        var failures: [String] = []
        for _ in 0..<3 {
            do {
                return try PostgresServer(binaries: binaries, port: try OSPostgres.freePort(), maxConnections: maxConnections)
            } catch let failure as StartFailure {
                failures.append(failure.message)
            }
        }
        throw StartFailure(message: failures.joined(separator: "\n"))
    }

    private init(binaries: String, port: Int, maxConnections: Int) throws {
        self.port = port
        password = (0..<4).map { _ in String(UInt32.random(in: .min ... .max), radix: 16) }.joined()
        let runAs = OSPostgres.unprivilegedUser()
        // The server's user must reach its directory: under /tmp when run as root, whose TMPDIR may be closed to others.
        let base = runAs == nil ? NSTemporaryDirectory() : "/tmp/"
        directory = (base.hasSuffix("/") ? base : base + "/") + "profirest-pg-" + UUID().uuidString.prefix(8).lowercased()
        let files = FileManager.default
        do {
            try files.createDirectory(atPath: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        } catch {
            throw StartFailure(message: "cannot create \(directory): \(error)")
        }
        guard files.createFile(atPath: directory + "/pw", contents: Data((password + "\n").utf8), attributes: [.posixPermissions: 0o600]) else {
            try? files.removeItem(atPath: directory)
            throw StartFailure(message: "cannot write \(directory)/pw")
        }
        if let (uid, gid) = runAs {
            for path in [directory, directory + "/pw"] {
                do {
                    try files.setAttributes(
                        [.ownerAccountID: NSNumber(value: uid), .groupOwnerAccountID: NSNumber(value: gid)], ofItemAtPath: path)
                } catch {
                    try? files.removeItem(atPath: directory)
                    throw StartFailure(message: "cannot hand \(path) to uid \(uid)")
                }
            }
        }
        let script = """
            dir="$1"; bin="$2"; port="$3"; max="$4"
            fail() { echo "$1: $(tail -c 600 "$2" 2>/dev/null | tr '\\n' ' ')"; rm -rf "$dir"; exit 1; }
            "$bin/initdb" -D "$dir/data" -U profirest --pwfile="$dir/pw" --auth-local=trust \
                --auth-host=scram-sha-256 -E UTF8 --locale=C --no-sync >"$dir/initdb.log" 2>&1 \
                || fail "initdb failed" "$dir/initdb.log"
            rm -f "$dir/pw"
            "$bin/pg_ctl" start -w -t 300 -D "$dir/data" -l "$dir/server.log" -o "-p $port -k $dir \
                -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off \
                -c max_connections=$max" >/dev/null 2>&1 || fail "pg_ctl start failed" "$dir/server.log"
            echo ready
            cat >/dev/null
            "$bin/pg_ctl" stop -w -t 120 -m fast -D "$dir/data" >/dev/null 2>&1 \
                || "$bin/pg_ctl" stop -m immediate -D "$dir/data" >/dev/null 2>&1
            rm -rf "$dir"
            """
        let process = Process()
        if let (uid, gid) = runAs {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", "/bin/sh", "-c", script, "sh"]
        } else {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", script, "sh"]
        }
        process.arguments! += [directory, binaries, String(port), String(maxConnections)]
        process.currentDirectoryURL = URL(fileURLWithPath: "/")
        let output = Pipe()
        guardInput = Pipe()
        process.standardInput = guardInput
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            try? files.removeItem(atPath: directory)
            throw StartFailure(message: "the guard shell could not be started: \(error)")
        }
        guardProcess = process
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let first = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard first == "ready" else {
            try? guardInput.fileHandleForWriting.close()
            process.waitUntilExit()
            try? files.removeItem(atPath: directory)
            throw StartFailure(message: first.isEmpty ? "the server's guard ended without a word" : first)
        }
    }

    /// Stops the server and removes its directory (the guard does both when its stdin closes), waiting up to two
    /// minutes. Usage: `defer { server.stop() }`
    public func stop() {
        try? guardInput.fileHandleForWriting.close()
        let deadline = Date().addingTimeInterval(120)
        while guardProcess.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if guardProcess.isRunning { guardProcess.terminate() }
    }

    /// The server programs: PROFIREST_PG_BINDIR, the newest /usr/lib/postgresql/*/bin (Debian), `pg_config
    /// --bindir`, or the PATH.
    private static func binDirectory() -> String? {
        let fm = FileManager.default
        func has(_ dir: String) -> Bool { fm.isExecutableFile(atPath: dir + "/initdb") && fm.isExecutableFile(atPath: dir + "/pg_ctl") }
        if let given = ProcessInfo.processInfo.environment["PROFIREST_PG_BINDIR"], has(given) { return given }
        let versions = ((try? fm.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []).compactMap(Int.init).sorted()
        if let dir = versions.reversed().map({ "/usr/lib/postgresql/\($0)/bin" }).first(where: has) { return dir }
        var candidates: [String] = []
        if let bindir = run("pg_config", ["--bindir"]) { candidates.append(bindir) }
        candidates += (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        return candidates.first(where: has)
    }

    private static func run(_ tool: String, _ arguments: [String]) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// What each platform's file provides for `PostgresServer` (PostgresServer+POSIX.swift, PostgresServer+Windows.swift).
protocol OSPostgresServer {
    /// As root: the user to run the server as; nil when not root.
    static func unprivilegedUser() -> (UInt32, UInt32)?
    /// A TCP port on 127.0.0.1 that nothing listens on now.
    static func freePort() throws -> Int
}
