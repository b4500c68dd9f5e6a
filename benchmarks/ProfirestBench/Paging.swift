// Paging against benchmarks/bench_server.py on loopback: 100 000 items in pages of 100.
//
//   paging_ratio        `api.all("/items")` ÷ raw URLSession fetching the same 1 000 pages one after another
//                       (data(for:), JSONDecoder, following next_cursor) and collecting the items; the median of
//                       per-round ratios, the two interleaved (the order alternates each round)
//   pages_peak_rss_mb   the process's peak resident memory while `for try await page in api.pages(...)` walks the
//                       same list keeping nothing (VmHWM, reset just before); pages_rss_growth_mb is that peak minus
//                       the resident memory just before (after one page was fetched, so loading URLSession and the
//                       decoder is not counted) — one page's worth stays; all_rss_growth_mb is the same for
//                       `all()`, which holds every item, for comparison
import Foundation
import ProfirestAPI
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One item of the bench's list (~110 bytes of JSON).
struct BenchItem: Decodable, Sendable {
    let id: String
    let name: String
    let priceCents: Int
    let category: String
    let active: Bool

    private enum CodingKeys: String, CodingKey {
        case id, name, category, active
        case priceCents = "price_cents"
    }
}

/// The page as an app would decode it without the library.
struct RawItemPage: Decodable {
    let data: [BenchItem]
    let nextCursor: String?

    private enum CodingKeys: String, CodingKey {
        case data
        case nextCursor = "next_cursor"
    }
}

func pagingResults(_ arguments: [String]) async throws -> [String: Any] {
    var rounds = 7
    if let index = arguments.firstIndex(of: "--paging-rounds"), index + 1 < arguments.count {
        rounds = max(1, Int(arguments[index + 1]) ?? rounds)
    }
    let server = try BenchServer()
    defer { server.stop() }
    let expected = 100_000
    let api = ProfirestApi(options: .init(baseURL: server.base, accessToken: "bench-access-token"))
    let session = URLSession(configuration: .ephemeral)
    let decoder = JSONDecoder()
    let base = server.base

    @Sendable func library() async throws -> Int {
        try await api.all("/items", as: BenchItem.self).count
    }
    @Sendable func raw() async throws -> Int {
        var items: [BenchItem] = []
        var cursor: String?
        repeat {
            var components = URLComponents(string: base + "/v2/items")!
            if let cursor { components.queryItems = [URLQueryItem(name: "cursor", value: cursor)] }
            var request = URLRequest(url: components.url!)
            request.setValue("application/json", forHTTPHeaderField: "Accept")
            let (data, response) = try await session.data(for: request)
            guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw URLError(.badServerResponse) }
            let page = try decoder.decode(RawItemPage.self, from: data)
            items.append(contentsOf: page.data)
            cursor = page.data.isEmpty ? nil : page.nextCursor
        } while cursor != nil
        return items.count
    }
    func timed(_ walk: @Sendable () async throws -> Int) async throws -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        let count = try await walk()
        guard count == expected else { throw BenchFailure("paging: \(count) of \(expected) items") }
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    _ = try await timed(library)  // warm up: the server builds its pages, connections open
    _ = try await timed(raw)
    var lib: [Double] = []
    var rawTimes: [Double] = []
    for round in 0..<rounds {
        if round % 2 == 0 {
            lib.append(try await timed(library))
            rawTimes.append(try await timed(raw))
        } else {
            rawTimes.append(try await timed(raw))
            lib.append(try await timed(library))
        }
    }
    let ratios = zip(lib, rawTimes).map { $0 / $1 }
    FileHandle.standardError.write(Data(String(
        format: "paging: all() %.3f s, raw %.3f s (medians), ratio %.3f\n", median(lib), median(rawTimes), median(ratios)).utf8))

    // Memory, in a fresh process (this one's heap keeps what the walks above freed, which would hide growth).
    let memory = try runChild(["--child", "paging-memory", "--base", base])
    return [
        "paging_ratio": rounded(median(ratios)),
        "paging_ratio_quartiles": quartiles(ratios).map(rounded),
        "paging_seconds": ["all": rounded(median(lib)), "raw": rounded(median(rawTimes))],
        "pages_peak_rss_mb": memory["pages_peak_rss_mb"] ?? Double.nan,
        "pages_rss_growth_mb": memory["pages_rss_growth_mb"] ?? Double.nan,
        "all_rss_growth_mb": memory["all_rss_growth_mb"] ?? Double.nan,
        "paging_bench_setup": "benchmarks/bench_server.py on loopback, 100000 items (~110 bytes of JSON each) in pages of "
            + "100 (1000 GETs a walk), api.all() (the default transport) vs raw URLSession data(for:) + JSONDecoder following next_cursor, "
            + "\(rounds) rounds interleaved (order alternating); medians of per-round ratios; memory from /proc/self/status "
            + "(VmHWM reset through clear_refs before each walk), in a fresh process of the bench: pages() first, then all()",
    ]
}

/// The child process of `pagingResults`: pages() keeping nothing, then all() keeping everything, each from a fresh
/// peak; prints the figures as one JSON line.
func pagingMemoryChild(base: String) async throws {
    let api = ProfirestApi(options: .init(baseURL: base, accessToken: "bench-access-token"))
    // One page first, so that what loading URLSession, libcurl and the decoder costs once is not counted as the walk's.
    _ = try await api.get("/items", as: BenchItemPage.self)
    let pagesBefore = residentMB()
    resetPeakResident()
    var walked = 0
    for try await page in api.pages("/items", as: BenchItemPage.self) { walked += page.data.count }
    let pagesPeak = residentMB(peak: true)
    let allBefore = residentMB()
    resetPeakResident()
    let everything = try await api.all("/items", as: BenchItem.self)
    let allPeak = residentMB(peak: true)
    FileHandle.standardError.write(Data(String(
        format: "paging: pages() peak %.1f MB (+%.2f) over %d items, all() peak %.1f MB (+%.2f) holding %d\n",
        pagesPeak, pagesPeak - pagesBefore, walked, allPeak, allPeak - allBefore, everything.count).utf8))
    try printJSONLine([
        "pages_peak_rss_mb": rounded(pagesPeak), "pages_rss_growth_mb": rounded(pagesPeak - pagesBefore),
        "all_rss_growth_mb": rounded(allPeak - allBefore), "items": walked,
    ])
}

/// One JSON object on stdout, the answer of a child process.
func printJSONLine(_ object: [String: Any]) throws {
    print(String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self))
}

/// Runs this bench again with `arguments` (a `--child` part) and returns the JSON object of its last stdout line.
func runChild(_ arguments: [String]) throws -> [String: Any] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let last = String(decoding: data, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? ""
    guard process.terminationStatus == 0,
        let object = (try? JSONSerialization.jsonObject(with: Data(last.utf8))) as? [String: Any]
    else { throw BenchFailure("\(arguments.joined(separator: " ")) failed (status \(process.terminationStatus)): \(last)") }
    return object
}

/// A page of the bench server's items.
struct BenchItemPage: ProfirestPage {
    var data: [BenchItem]
    var nextCursor: String?

    private enum CodingKeys: String, CodingKey {
        case data
        case nextCursor = "next_cursor"
    }
}
