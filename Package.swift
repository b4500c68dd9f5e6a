// swift-tools-version:5.9
import PackageDescription

// Swift 6 language mode with complete strict concurrency is switched on per target so the
// package still builds with a 5.9 toolchain (which ignores the unknown setting names it does not have).
let strict: [SwiftSetting] = [
    .enableExperimentalFeature("StrictConcurrency"),
]

let package = Package(
    name: "profirest-api-swift",
    platforms: [.iOS(.v15), .macOS(.v12), .tvOS(.v15), .watchOS(.v8)],
    products: [
        .library(name: "ProfirestAPI", targets: ["ProfirestAPI"]),
        .executable(name: "profirest-codegen", targets: ["ProfirestCodegen"]),
        .executable(name: "Pichacka", targets: ["Pichacka"]),
    ],
    targets: [
        .target(name: "ProfirestAPI", swiftSettings: strict),
        .target(name: "ProfirestCodegenKit", swiftSettings: strict),
        .executableTarget(name: "ProfirestCodegen", dependencies: ["ProfirestCodegenKit"], swiftSettings: strict),
        .executableTarget(name: "Pichacka", dependencies: ["ProfirestAPI"], swiftSettings: strict),
        // Not a product: the processes of the cross-process refresh tests (and the bench's cross-process keys).
        .executableTarget(name: "ProfirestRefreshProbe", dependencies: ["ProfirestAPI"], swiftSettings: strict),
        // Not a product: starting and stopping the local servers (sandbox, loopback) for the tests and the bench.
        .target(name: "ProfirestTestSupport", swiftSettings: strict),
        .executableTarget(
            name: "ProfirestBench", dependencies: ["ProfirestAPI", "ProfirestTestSupport"], path: "benchmarks/ProfirestBench",
            swiftSettings: strict),
        .testTarget(name: "ProfirestAPITests", dependencies: ["ProfirestAPI", "ProfirestTestSupport"], swiftSettings: strict),
        .testTarget(name: "ProfirestCodegenTests", dependencies: ["ProfirestCodegenKit"], swiftSettings: strict),
    ],
    // Swift 6 language mode where the compiler has it; a 5.9 compiler falls back to 5.
    swiftLanguageVersions: [.version("6"), .v5]
)
