import Foundation
import XCTest
@testable import ProfirestPostgres

/// A PostgreSQL server of the tests' own, from the machine's PostgreSQL packages (Debian's `postgresql`): `initdb`
/// into a fresh temporary directory, a free port on 127.0.0.1 (and its unix socket in that directory),
/// `pg_ctl start -w`; stopped and its directory removed when the test bundle ends.
///
/// One server serves every test of the process (`PostgresServer.shared()`); each test uses a table of its own.
/// The server lives under a guard — a shell that started it and waits for its stdin to close — so it is stopped and
/// removed also when the test process dies without tearing down (a crash, SIGKILL): stdin closes then too.
///
/// initdb and postgres refuse to run as root; as root (CI here), they run as the `postgres` user the package creates
/// (or `nobody`), through `setpriv`. Missing binaries fail the tests under CI (CI=true) and skip them elsewhere.
final class PostgresServer: @unchecked Sendable {
    // @unchecked: every property is set once in init.
    let port: Int
    let user = "profirest"
    let password: String
    private let guardProcess: Process
    private let guardInput: Pipe
    private let directory: String

    /// The connection string of the server's `postgres` database, password included.
    var connectionString: String { connectionStringWithoutPassword + " password=\(password)" }
    /// The same without the password (a child process gets it in PGPASSWORD).
    var connectionStringWithoutPassword: String { "host=127.0.0.1 port=\(port) dbname=postgres user=\(user)" }

    private static let started = NSLock()
    nonisolated(unsafe) private static var instance: Result<PostgresServer, Error>?

    /// The server of this test process, started on first use; throws `XCTSkip` outside CI when PostgreSQL is
    /// missing.
    static func shared() throws -> PostgresServer {
        started.lock()
        defer { started.unlock() }
        if instance == nil {
            instance = Result { try start() }
            if case .success(let server) = instance {
                let observer = StopAtTheEnd(server)
                XCTestObservationCenter.shared.addTestObserver(observer)
            }
        }
        return try instance!.get()
    }

    private static func start() throws -> PostgresServer {
        guard let binaries = binDirectory() else {
            throw missing("PostgreSQL's server programs (initdb, pg_ctl) are not installed (Debian: apt-get install "
                + "postgresql)")
        }
        do {
            _ = try LibPQ.load(path: nil)
        } catch let failure as LibPQ.LoadFailure {
            throw missing("libpq cannot be loaded (\(failure.message); Debian: apt-get install libpq5)")
        }
        var failures: [String] = []
        // A port found free can be taken before the server binds it: a few tries.
        for _ in 0..<3 {
            do {
                return try PostgresServer(binaries: binaries, port: try freePort())
            } catch let failure as StartFailure {
                failures.append(failure.message)
            }
        }
        throw StartFailure(message: failures.joined(separator: "\n"))
    }

    private static func missing(_ reason: String) -> Error {
        if ProcessInfo.processInfo.environment["CI"] == "true" {
            return StartFailure(message: reason + "; under CI that is a failure (.ci/run installs it)")
        }
        return XCTSkip(reason + "; the PostgreSQL tests are skipped outside CI")
    }

    struct StartFailure: Error, CustomStringConvertible {
        let message: String
        var description: String { "the tests' PostgreSQL server could not start: \(message)" }
    }

    private init(binaries: String, port: Int) throws {
        self.port = port
        password = (0..<4).map { _ in String(UInt32.random(in: .min ... .max), radix: 16) }.joined()
        let runAs = Self.unprivilegedUser()
        // The server's user must reach its directory: under /tmp when the tests run as root, whose TMPDIR may be
        // closed to others.
        let base = runAs == nil ? NSTemporaryDirectory() : "/tmp/"
        var template = Array((base + (base.hasSuffix("/") ? "" : "/") + "profirest-pg-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw StartFailure(message: "mkdtemp failed") }
        directory = String(cString: made)
        try Data((password + "\n").utf8).write(to: URL(fileURLWithPath: directory + "/pw"))
        if let (uid, gid) = runAs {
            for path in [directory, directory + "/pw"] where chown(path, uid, gid) != 0 {
                throw StartFailure(message: "cannot hand \(path) to uid \(uid)")
            }
        }
        let script = """
            dir="$1"; bin="$2"; port="$3"
            fail() { echo "$1: $(tail -c 600 "$2" 2>/dev/null | tr '\\n' ' ')"; rm -rf "$dir"; exit 1; }
            "$bin/initdb" -D "$dir/data" -U profirest --pwfile="$dir/pw" --auth-local=trust \
                --auth-host=scram-sha-256 -E UTF8 --locale=C --no-sync >"$dir/initdb.log" 2>&1 \
                || fail "initdb failed" "$dir/initdb.log"
            rm -f "$dir/pw"
            "$bin/pg_ctl" start -w -t 300 -D "$dir/data" -l "$dir/server.log" -o "-p $port -k $dir \
                -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off \
                -c max_connections=200" >/dev/null 2>&1 || fail "pg_ctl start failed" "$dir/server.log"
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
        process.arguments! += [directory, binaries, String(port)]
        process.currentDirectoryURL = URL(fileURLWithPath: "/")
        let output = Pipe()
        guardInput = Pipe()
        process.standardInput = guardInput
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
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
            try? FileManager.default.removeItem(atPath: directory)
            throw StartFailure(message: first.isEmpty ? "the server's guard ended without a word" : first)
        }
    }

    /// Stops the server and removes its directory (the guard does both when its stdin closes), waiting up to two
    /// minutes.
    func stop() {
        try? guardInput.fileHandleForWriting.close()
        let deadline = Date().addingTimeInterval(120)
        while guardProcess.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if guardProcess.isRunning { guardProcess.terminate() }
    }

    /// A connection of the test's own, for SQL the storage does not run: damaging a row, ending a session.
    func admin() throws -> PostgresConnection {
        try PostgresConnection.open(keywords: ["dbname", "application_name"], values: [connectionString, "tests-admin"])
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

    /// As root: the user to run the server as (`postgres`, which Debian's package creates, else `nobody`).
    private static func unprivilegedUser() -> (uid_t, gid_t)? {
        guard geteuid() == 0 else { return nil }
        for name in ["postgres", "nobody"] {
            if let entry = getpwnam(name) { return (entry.pointee.pw_uid, entry.pointee.pw_gid) }
        }
        return nil
    }

    /// A TCP port on 127.0.0.1 that nothing listens on now.
    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw StartFailure(message: "socket failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw StartFailure(message: "no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// Stops the shared server when the test bundle ends.
private final class StopAtTheEnd: NSObject, XCTestObservation, @unchecked Sendable {
    // @unchecked: `server` is set once.
    private let server: PostgresServer

    init(_ server: PostgresServer) {
        self.server = server
    }

    func testBundleDidFinish(_ testBundle: Bundle) {
        server.stop()
    }
}

extension PostgresConnection {
    /// Runs `sql`, failing the test with the server's message when it fails.
    @discardableResult
    func sql(_ sql: String, _ parameters: [String] = [], file: StaticString = #filePath, line: UInt = #line) throws
        -> [String?]
    {
        switch execute(sql, parameters) {
        case .success(let rows): return rows
        case .failure(let failure):
            XCTFail("\(sql): \(failure.message)", file: file, line: line)
            throw failure
        }
    }
}
