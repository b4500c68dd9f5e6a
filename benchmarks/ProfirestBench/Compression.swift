// A large list over the real network at +50 ms each way, compressed or not: tools/net_harness.py's nginx (TLS, the
// `h2` block) in front of tools/loopback_server.py's /v2/big-list (a ~200 KB StaffMemberPage; with ?encoding=gzip the
// same page gzip-compressed, ~12 KB), reached through the harness's delaying proxy. The library with its default
// transport (which offers every encoding its libcurl has and decodes the answer) GETs and decodes the page, the two
// variants interleaved, the order alternating round by round, after a warm-up on the same connection:
//
//   net50_list200k_ratio_gzip        the median of the per-round ratios, gzip ÷ plain (below 1: compression pays)
//   net50_list200k_ms_<gzip|plain>   the medians behind it, ms per GET + decode
//   net50_list200k_bytes_<gzip|plain> the body's size on the wire
//
// Needs nginx (apt-get install nginx), else skipped with the reason; no root (the library trusts the harness's CA
// through its options).
import Foundation
import ProfirestAPI
import ProfirestTestSupport

func compressionResults(_ arguments: [String]) async throws -> [String: Any] {
    let rounds = arguments.value(after: "--compress-rounds").flatMap(Int.init).map { max(1, $0) } ?? 15
    let server = try Server(script: "tools/loopback_server.py")
    defer { server.stop() }
    let net: NetHarness
    do {
        net = try NetHarness(
            upstream: "http://127.0.0.1:\(server.port)", delayMilliseconds: 50,
            root: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
    } catch let missing as NetHarness.Unavailable {
        FileHandle.standardError.write(Data("compress: skipped — \(missing) (apt-get install nginx)\n".utf8))
        return [:]
    }
    defer { net.stop() }
    let api = ProfirestApi(options: .init(baseURL: net.base(.h2, delayed: true), trustedCertificates: .pemFile(net.caFile)))
    let variants = ["gzip", "plain"]
    @Sendable func get(_ variant: String) async throws -> Int {
        let options = RequestOptions(query: variant == "gzip" ? ["encoding": "gzip"] : [:])
        return try await api.get("/big-list", as: StaffMemberPage.self, options: options).data.count
    }
    for variant in variants {
        for _ in 0..<3 {
            guard try await get(variant) == 1600 else { throw BenchFailure("compress: /v2/big-list is not 1,600 members") }
        }
    }
    var times: [String: [Double]] = [:]
    for round in 0..<rounds {
        for variant in round % 2 == 0 ? variants : variants.reversed() {
            times[variant, default: []].append(try await elapsedMilliseconds { _ = try await get(variant) })
        }
    }
    // The sizes on the wire: the Content-Length of each, straight from the loopback server.
    let plainTransport = try CurlTransport()
    var bytes: [String: Int] = [:]
    for variant in variants {
        let query = variant == "gzip" ? "?encoding=gzip" : ""
        let answer = try await plainTransport.send(HTTPRequest(
            method: "GET", url: URL(string: "http://127.0.0.1:\(server.port)/v2/big-list\(query)")!))
        bytes[variant] = Int(answer.header("Content-Length") ?? "") ?? -1
    }
    let ratios = zip(times["gzip"]!, times["plain"]!).map { $0 / $1 }
    let results: [String: Any] = [
        "net50_list200k_ratio_gzip": rounded(median(ratios)),
        "net50_list200k_ms_gzip": rounded(median(times["gzip"]!)),
        "net50_list200k_ms_plain": rounded(median(times["plain"]!)),
        "net50_list200k_bytes_gzip": bytes["gzip"] ?? -1,
        "net50_list200k_bytes_plain": bytes["plain"] ?? -1,
        "net50_list200k_setup": "tools/net_harness.py (nginx \(net.nginxVersion), TLS, HTTP/2 block) +50 ms each way in "
            + "front of tools/loopback_server.py /v2/big-list; ProfirestApi with its default transport, GET + decode "
            + "of 1,600 members, \(rounds) interleaved rounds after 3 warm-ups each; medians",
    ]
    FileHandle.standardError.write(Data(String(
        format: "compress: 200 KB list at +50 ms: gzip %.1f ms, plain %.1f ms, ratio %.3f (%d vs %d bytes)\n",
        median(times["gzip"]!), median(times["plain"]!), median(ratios), bytes["gzip"] ?? -1, bytes["plain"] ?? -1).utf8))
    return results
}
