import Foundation

/// Paths inside this repository, found from this file's location so tests run from any working directory.
enum RepositoryPaths {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let contract = root.appendingPathComponent("contract/profirest-v2.openapi.json")
    static let generated = root.appendingPathComponent("Sources/ProfirestAPI/Generated", isDirectory: true)
    static let testingKitGenerated = root.appendingPathComponent("Sources/ProfirestTesting/Generated", isDirectory: true)
}
