// Linux, macOS. The Windows counterpart is PostgresServer+Windows.swift.
#if !os(Windows) && !PROFIREST_SHIMS
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

enum OSPostgres: OSPostgresServer {
    /// As root: `postgres` (which Debian's package creates), else `nobody`.
    static func unprivilegedUser() -> (UInt32, UInt32)? {
        guard geteuid() == 0 else { return nil }
        for name in ["postgres", "nobody"] {
            if let entry = getpwnam(name) { return (UInt32(entry.pointee.pw_uid), UInt32(entry.pointee.pw_gid)) }
        }
        return nil
    }

    static func freePort() throws -> Int {
        let fd = socket(AF_INET, int32(SOCK_STREAM), 0)
        guard fd >= 0 else { throw PostgresServer.StartFailure(message: "socket failed") }
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
        guard bound else { throw PostgresServer.StartFailure(message: "no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    // Glibc spells SOCK_STREAM as an enum, Darwin as an Int32: one call for both.
    private static func int32<T: RawRepresentable>(_ value: T) -> Int32 where T.RawValue: BinaryInteger { Int32(value.rawValue) }
    private static func int32(_ value: Int32) -> Int32 { value }
}
#endif
