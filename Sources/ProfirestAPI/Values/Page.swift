/// A page of any decodable item, for a list read page by page without its generated page model.
@available(
    *, deprecated,
    message: "use the list's generated page model (such as StaffMemberPage) or your own ProfirestPage type"
)
public struct Page<Item: Decodable & Sendable>: ProfirestPage {
    /// The items of this page.
    public var data: [Item]
    /// The opaque cursor of the next page; `nil` on the last page.
    public var nextCursor: String?

    private enum CodingKeys: String, CodingKey {
        case data
        case nextCursor = "next_cursor"
    }
}
