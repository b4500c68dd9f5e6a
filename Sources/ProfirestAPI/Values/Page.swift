/// A page of any decodable item, used when you ask for items rather than pages.
///
/// ```swift
/// let page = try await api.get("/restaurants/11/staff", as: Page<StaffMember>.self)
/// ```
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
