/// A page of a list: `{data, next_cursor}`. Every generated `…Page` model conforms, so ``ProfirestApi/pages(_:as:options:)``
/// can follow `next_cursor` for you.
///
/// ```swift
/// for try await page in api.pages("/restaurants/11/staff", as: StaffMemberPage.self) { render(page.data) }
/// ```
public protocol ProfirestPage: Decodable, Sendable {
    /// The type of one item of the list.
    associatedtype Item: Decodable & Sendable
    /// The items of this page.
    var data: [Item] { get }
    /// The opaque cursor of the next page; `nil` on the last page. Never build one yourself.
    var nextCursor: String? { get }
}
