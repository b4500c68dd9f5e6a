import Foundation
import ProfirestTestSupport
import XCTest
@testable import ProfirestPostgres

/// The tests' PostgreSQL server: `PostgresServer` (ProfirestTestSupport: initdb into a temporary directory, a free
/// port, stopped and removed at the end — also when the test process dies, through its guard).
///
/// One server serves every test of the process (`PostgresServer.shared()`); each test uses a table of its own.
/// Missing binaries or libpq fail the tests under CI (CI=true) and skip them elsewhere.
extension PostgresServer {
    private static let started = NSLock()
    nonisolated(unsafe) private static var instance: Result<PostgresServer, Error>?

    /// The server of this test process, started on first use and stopped when the test bundle ends; throws `XCTSkip`
    /// outside CI when PostgreSQL is missing.
    static func shared() throws -> PostgresServer {
        started.lock()
        defer { started.unlock() }
        if instance == nil {
            instance = Result { try startForTests() }
            if case .success(let server) = instance {
                XCTestObservationCenter.shared.addTestObserver(StopAtTheEnd(server))
            }
        }
        return try instance!.get()
    }

    private static func startForTests() throws -> PostgresServer {
        do {
            _ = try LibPQ.load(path: nil)
        } catch let failure as LibPQ.LoadFailure {
            throw missing("libpq cannot be loaded (\(failure.message); Debian: apt-get install libpq5)")
        }
        do {
            return try start()
        } catch let unavailable as Unavailable {
            throw missing(unavailable.reason)
        }
    }

    private static func missing(_ reason: String) -> Error {
        if ProcessInfo.processInfo.environment["CI"] == "true" {
            return StartFailure(message: reason + "; under CI that is a failure (.ci/run installs it)")
        }
        return XCTSkip(reason + "; the PostgreSQL tests are skipped outside CI")
    }

    /// A connection of the test's own, for SQL the storage does not run: damaging a row, ending a session.
    func admin() throws -> PostgresConnection {
        try PostgresConnection.open(keywords: ["dbname", "application_name"], values: [connectionString, "tests-admin"])
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
