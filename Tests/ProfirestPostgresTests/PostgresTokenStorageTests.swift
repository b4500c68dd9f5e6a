import Foundation
import ProfirestAPI
import XCTest
@testable import ProfirestPostgres

/// What PostgresTokenStorage stores and how it fails, against a real server (PostgresServer).
final class PostgresTokenStorageTests: PostgresTestCase {
    func testRoundTrip() throws {
        let storage = try storage()
        XCTAssertNil(try storage.get("profirest-api:a"))
        try storage.set("profirest-api:a", #"{"access_token":"at_1"}"#)
        try storage.set("profirest-api:b", #"{"access_token":"at_2"}"#)
        XCTAssertEqual(try storage.get("profirest-api:a"), #"{"access_token":"at_1"}"#)
        try storage.set("profirest-api:a", #"{"access_token":"at_3"}"#)
        XCTAssertEqual(try storage.get("profirest-api:a"), #"{"access_token":"at_3"}"#)
        try storage.remove("profirest-api:a")
        try storage.remove("profirest-api:a")  // not there: not an error
        XCTAssertNil(try storage.get("profirest-api:a"))
        XCTAssertEqual(try storage.get("profirest-api:b"), #"{"access_token":"at_2"}"#)
        // Another storage — another process, as far as the table can tell — sees the same rows.
        XCTAssertEqual(try self.storage().get("profirest-api:b"), #"{"access_token":"at_2"}"#)
    }

    func testTheTableIsCreatedWithItsColumns() throws {
        _ = try storage()
        let admin = try server.admin()
        let columns = try admin.sql(
            "SELECT column_name || ' ' || data_type FROM information_schema.columns WHERE table_name = $1 "
                + "ORDER BY ordinal_position", [table])
        XCTAssertEqual(columns, ["key text", "value text", "updated_at timestamp with time zone"])
        try storage().set("k", "1")
        XCTAssertEqual(try admin.sql("SELECT count(*)::text FROM \(table) WHERE updated_at > now() - interval '1 hour'"), ["1"])
    }

    func testManyStoragesCreatingTheTableAtOnce() throws {
        let failures = Failures()
        let (connectionString, table) = (server.connectionString, table)
        XCTAssertTrue(onThreads(6) { index in
            do {
                try PostgresTokenStorage(connectionString: connectionString, table: table).set("k\(index)", "\(index)")
            } catch {
                failures.record(error)
            }
        })
        XCTAssertEqual(failures.all, [])
        XCTAssertEqual(try storage().get("k5"), "5")
    }

    func testValuesWithQuotesUnicodeAndAMegabyteComeBackByteForByte() throws {
        let storage = try storage()
        let awkward = [
            #"{"quote":"it's \"quoted\" 'twice'","backslash":"C:\\tokens\\","sql":"'); DROP TABLE x; --"}"#,
            #"{"unicode":"Příliš žluťoučký kůň úpěl ďábelské ódy — 🍕🇨🇿 ﷽","nul":"a\u0000b","tab":"a\tb"}"#,
            #"  [1, 2.50, "spaces and order kept" ]  "#,
            #""a bare string""#, "42", "null",
        ]
        for (index, value) in awkward.enumerated() {
            try storage.set("key \(index) 'ščř' \"", value)
            XCTAssertEqual(try storage.get("key \(index) 'ščř' \""), value)
        }
        let filler = String(repeating: "abcdefghijklmnopqrstuvwxyz0123456789ěščřžýáíé", count: 1_048_576 / 50)
        let big = #"{"access_token":"at_big","filler":"\#(filler)"}"#
        XCTAssertGreaterThan(big.utf8.count, 1_000_000)
        try storage.set("big", big)
        XCTAssertEqual(try storage.get("big"), big)
    }

    func testTextThatIsNotJSONIsRefusedAndNothingIsWritten() throws {
        let storage = try storage()
        try storage.set("k", #"{"v":1}"#)
        for value in ["r1", "", "{\"unterminated\": ", "{} trailing"] {
            let error = storageError { try storage.set("k", value) }
            XCTAssertEqual(error?.kind, .unwritable)
            XCTAssertTrue(error?.reason.contains("not a JSON document") == true, "\(String(describing: error))")
        }
        XCTAssertEqual(try storage.get("k"), #"{"v":1}"#)
        XCTAssertEqual(storageError { try storage.set("a\u{0}b", "1") }?.kind, .unwritable)
        XCTAssertEqual(storageError { _ = try storage.get("a\u{0}b") }?.kind, .unreadable)
    }

    func testACorruptRowIsAClearErrorNamingItsKeyAndIsLeftAlone() throws {
        let storage = try storage()
        let admin = try server.admin()
        try storage.set("profirest-api:good", "{}")
        try admin.sql("INSERT INTO \(table) (key, value) VALUES ($1, $2)", ["profirest-api:bad", "{\"refresh_token\": \"rt_secret"])
        let error = storageError { _ = try storage.get("profirest-api:bad") }
        XCTAssertEqual(error?.kind, .corrupt)
        XCTAssertTrue(error?.description.contains("profirest-api:bad") == true, "\(String(describing: error))")
        XCTAssertTrue(error?.description.contains("not valid JSON") == true, "\(String(describing: error))")
        XCTAssertFalse(error?.description.contains("rt_secret") == true, "the message must not quote the row")
        XCTAssertFalse(String(reflecting: error as Any).contains("rt_secret"))
        XCTAssertEqual(try admin.sql("SELECT value FROM \(table) WHERE key = $1", ["profirest-api:bad"]),
                       ["{\"refresh_token\": \"rt_secret"], "a corrupt row is left for a person to inspect")
        XCTAssertEqual(try storage.get("profirest-api:good"), "{}", "the other rows still read")
        // Under the lock too, and the lock is released after the error.
        XCTAssertEqual(storageError { try storage.withLock("profirest-api:bad") { _ = try storage.get("profirest-api:bad") } }?.kind, .corrupt)
        XCTAssertEqual(try storage.withLock("profirest-api:bad") { 1 }, 1)
    }

    func testSessionsClosedByTheServerAreReplacedForReadsAndWrites() throws {
        let storage = try storage(maximumConnections: 2)
        try storage.set("k", "1")
        let admin = try server.admin()
        // Every idle session of the storage ends, as when the server restarts or an administrator ends them.
        let ended = try admin.sql(
            "SELECT pg_terminate_backend(pid, 60000)::text FROM pg_stat_activity "
                + "WHERE application_name = 'profirest-api' AND pid <> pg_backend_pid()")
        XCTAssertFalse(ended.isEmpty)
        XCTAssertEqual(try storage.get("k"), "1")
        _ = try admin.sql(
            "SELECT pg_terminate_backend(pid, 60000) FROM pg_stat_activity "
                + "WHERE application_name = 'profirest-api' AND pid <> pg_backend_pid()")
        try storage.set("k", "2")  // known not to have been sent on the dead session: sent on a new one
        XCTAssertEqual(try storage.get("k"), "2")
        XCTAssertEqual(try storage.withLock("k") { try storage.get("k") }, "2")
    }

    func testAnIdleSessionEndedByTheServerIsKnownDeadWithoutARoundTrip() throws {
        let name = "probe-\(UUID().uuidString.prefix(8))"
        let connection = try PostgresConnection.open(
            keywords: ["dbname", "application_name"], values: [server.connectionString, name])
        XCTAssertFalse(connection.isKnownDead)
        try server.admin().sql("SET application_name = 'x'")  // a parameter change elsewhere: not this session's
        XCTAssertFalse(connection.isKnownDead)
        let ended = try server.admin().sql(
            "SELECT pg_terminate_backend(pid, 60000)::text FROM pg_stat_activity WHERE application_name = $1", [name])
        XCTAssertEqual(ended, ["true"])
        // The server's FATAL goodbye was sent before the session ended, so this needs no waiting.
        XCTAssertTrue(connection.isKnownDead)
    }

    func testUnlockedWritesFromManyThreadsThroughTwoConnectionsLoseNothing() throws {
        let storage = try storage(maximumConnections: 2)
        let failures = Failures()
        XCTAssertTrue(onThreads(8) { index in
            for n in 0..<10 {
                do { try storage.set("k\(index)-\(n)", "\(n)") } catch { failures.record(error) }
            }
        })
        XCTAssertEqual(failures.all, [])
        XCTAssertEqual(try server.admin().sql("SELECT count(*)::text FROM \(table)"), ["80"])
    }

    func testAWrongPasswordIsAClearErrorWithoutThePassword() throws {
        let wrong = "hunter2-\(UUID().uuidString)"
        let connection = "host=127.0.0.1 port=\(server.port) dbname=postgres user=profirest password=\(wrong)"
        let error = storageError { _ = try PostgresTokenStorage(connectionString: connection, table: table) }
        XCTAssertEqual(error?.kind, .unreadable)
        let text = String(describing: error as Any) + String(reflecting: error as Any)
        XCTAssertTrue(text.contains("password authentication failed"), text)
        XCTAssertTrue(text.contains("127.0.0.1"), text)
        XCTAssertFalse(text.contains(wrong), text)
        // The same as a URI.
        let uri = "postgresql://profirest:\(wrong)@127.0.0.1:\(server.port)/postgres"
        let uriError = storageError { _ = try PostgresTokenStorage(connectionString: uri, table: table) }
        XCTAssertFalse(String(reflecting: uriError as Any).contains(wrong))
    }

    func testAnUnreachableServerIsAClearErrorWithoutThePassword() throws {
        // A port nothing listens on: the server that was there has gone.
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) + getsockname(listener, $0, &length) }
        }
        close(listener)
        let port = UInt16(bigEndian: address.sin_port)
        let secret = "pw-\(UUID().uuidString)"
        let error = storageError {
            _ = try PostgresTokenStorage(connectionString: "host=127.0.0.1 port=\(port) user=x password=\(secret)")
        }
        XCTAssertEqual(error?.kind, .unreadable)
        let text = String(describing: error as Any)
        XCTAssertTrue(text.contains("cannot connect to PostgreSQL"), text)
        XCTAssertTrue(text.contains("Connection refused"), text)
        XCTAssertFalse(text.contains(secret), text)
    }

    func testMalformedConnectionStringsAndTableNamesAreClearErrors() throws {
        let secret = "pw-\(UUID().uuidString)"
        for text in ["host=127.0.0.1 password='\(secret)", "password \(secret)", "postgresql://u:\(secret)@[::1/x"] {
            let error = storageError { _ = try PostgresTokenStorage(connectionString: text) }
            XCTAssertEqual(error?.kind, .unreadable)
            XCTAssertTrue(error?.reason.contains("cannot be parsed") == true, "\(String(describing: error))")
            XCTAssertFalse(String(describing: error as Any).contains(secret))
        }
        for name in ["", "a-b", "x; DROP TABLE y", "\"quoted\"", "a.b.c", "1abc", String(repeating: "a", count: 64)] {
            let error = storageError { _ = try PostgresTokenStorage(connectionString: server.connectionString, table: name) }
            XCTAssertEqual(error?.kind, .unreadable, name)
        }
        try server.admin().sql("CREATE SCHEMA IF NOT EXISTS tokens")
        let qualified = try PostgresTokenStorage(connectionString: server.connectionString, table: "tokens.\(table)")
        try qualified.set("k", "1")
        XCTAssertEqual(try qualified.get("k"), "1")
        try server.admin().sql("DROP TABLE tokens.\(table)")
    }

    func testALibpqThatCannotBeLoadedIsAClearError() throws {
        let error = storageError {
            _ = try PostgresTokenStorage(connectionString: server.connectionString, libraryPath: "/nonexistent/libpq.so.5")
        }
        XCTAssertEqual(error?.kind, .unreadable)
        XCTAssertTrue(error?.reason.contains("libpq could not be loaded") == true, "\(String(describing: error))")
        XCTAssertTrue(error?.reason.contains("apt-get install libpq5") == true, "\(String(describing: error))")
    }

    func testDescriptionsAndDumpsShowNeitherThePasswordNorValues() throws {
        let storage = try storage()
        try storage.set("profirest-api:x", #"{"refresh_token":"rt_secret_value"}"#)
        var dumped = ""
        dump(storage, to: &dumped)
        for text in [storage.description, String(describing: storage), String(reflecting: storage), dumped] {
            XCTAssertFalse(text.contains(server.password), text)
            XCTAssertFalse(text.contains("rt_secret_value"), text)
            XCTAssertTrue(text.contains(table), text)
            XCTAssertTrue(text.contains("127.0.0.1"), text)
        }
        XCTAssertEqual(storage.description, "PostgresTokenStorage(postgresql://profirest@127.0.0.1:\(server.port)/postgres, table: \(table))")
    }
}
