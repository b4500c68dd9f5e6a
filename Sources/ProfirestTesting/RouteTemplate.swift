import Foundation

/// Matches a request's path against a route: a contract path template whose `{name}` segments stand for any one
/// segment (`/v2/restaurants/{restaurant_id}/staff`), or a literal path.
enum RouteTemplate {
    static func matches(_ template: String, _ path: String) -> Bool {
        let wanted = template.split(separator: "/", omittingEmptySubsequences: false)
        let given = path.split(separator: "/", omittingEmptySubsequences: false)
        guard wanted.count == given.count else { return false }
        for (segment, actual) in zip(wanted, given) {
            if segment.hasPrefix("{") && segment.hasSuffix("}") {
                if actual.isEmpty { return false }
            } else if segment != actual {
                return false
            }
        }
        return true
    }
}
