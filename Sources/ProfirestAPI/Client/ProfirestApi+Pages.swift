import Foundation

extension ProfirestApi {
    /// The pages of a list, fetched one at a time as you iterate: `next_cursor` goes back as the `cursor` query
    /// parameter, verbatim. The walk ends after a page without `next_cursor` or an empty page; nothing more is
    /// fetched once you stop iterating or your task is cancelled.
    ///
    /// - Parameters:
    ///   - path: the list's path, relative to `/v2` (`/restaurants/11/staff`).
    ///   - type: the page model to decode each page as, such as `StaffMemberPage`.
    ///   - options: what the requests do differently: the list's query parameters (filters, `limit`), staff token,
    ///     retries…
    /// - Returns: the pages in order, as an asynchronous sequence that throws what a request throws
    ///   (``ProfirestAPIError``, ``ProfirestUsageError``, ``StorageError``, `CancellationError`), and
    ///   `invalid_response` when the server gives the same `next_cursor` twice.
    ///
    /// ```swift
    /// for try await page in api.pages("/restaurants/11/attendance/presence", as: AttendancePresencePage.self) { print(page.data) }
    /// ```
    public func pages<P: ProfirestPage>(
        _ path: String, as type: P.Type, options: RequestOptions = .init()
    ) -> AsyncThrowingStream<P, Error> {
        let walk = Locked(PageWalk())
        return AsyncThrowingStream(unfolding: { [self] in
            let (cursor, finished, first) = walk.withLock { ($0.cursor, $0.finished, !$0.started) }
            if finished { return nil }
            var pageOptions = options
            if let cursor { pageOptions.query["cursor"] = .string(cursor) }
            let page = try await core.send(ProfirestRequest("GET", path, options: pageOptions, as: P.self))
            let next = page.nextCursor.flatMap { $0.isEmpty ? nil : $0 }
            if let next, next == cursor {
                // A server bug would otherwise make this loop forever.
                throw core.errors().make(
                    ErrorCode.invalidResponse, status: 200, detail: "the server returned the same next_cursor again for \(path)")
            }
            walk.withLock {
                $0.started = true
                $0.cursor = next
                $0.finished = next == nil || page.data.isEmpty
            }
            // An empty first page is still a page (the list is empty); an empty later page only ends the walk.
            return page.data.isEmpty && !first ? nil : page
        })
    }

    /// Every item of a list, all pages joined.
    ///
    /// - Parameters:
    ///   - path: the list's path, relative to `/v2` (`/restaurants/11/staff`).
    ///   - type: the type of one item; left out, the annotation gives it.
    ///   - options: what the requests do differently: the list's query parameters (filters, `limit`), staff token,
    ///     retries…
    /// - Returns: every item of every page, in order.
    /// - Throws: ``ProfirestAPIError`` when a page's request fails — decide by its `code` (`not_found`,
    ///   `insufficient_scope`, `not_paired`, `network_error`…; `invalid_response` when a page does not decode or the
    ///   server gives the same `next_cursor` twice); ``ProfirestUsageError`` when the call is wrong and nothing was
    ///   sent; ``StorageError`` when the stored state cannot be read or written; `CancellationError` when the task is
    ///   cancelled.
    ///
    /// ```swift
    /// let staff: [StaffMember] = try await api.all("/restaurants/11/staff")
    /// ```
    public func all<T: Decodable & Sendable>(
        _ path: String, as type: T.Type = T.self, options: RequestOptions = .init()
    ) async throws -> [T] {
        var items: [T] = []
        for try await page in pages(path, as: ItemPage<T>.self, options: options) {
            items.append(contentsOf: page.data)
        }
        return items
    }
}

/// A page of the items `all` collects, whatever their type.
struct ItemPage<Item: Decodable & Sendable>: ProfirestPage {
    var data: [Item]
    var nextCursor: String?

    private enum CodingKeys: String, CodingKey {
        case data
        case nextCursor = "next_cursor"
    }
}

/// Where a page walk stands between two pulls.
struct PageWalk {
    var cursor: String?
    var started = false
    var finished = false
}
