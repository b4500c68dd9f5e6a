/// The release this source is, and the User-Agent every request (OAuth ones included) carries.
enum LibraryVersion {
    /// The same as the repository's VERSION file, which names `make dist`'s archive (a unit test compares them, so
    /// a release cannot announce another version to servers).
    static let version = "1.0.0"
    static let userAgent = "ProfirestAPI-Swift/\(version)"
}
