// swift-tools-version:5.9
import PackageDescription

// Swift 6 language mode with complete strict concurrency is switched on per target so the
// package still builds with a 5.9 toolchain (which ignores the unknown setting names it does not have).
let strict: [SwiftSetting] = [
    .enableExperimentalFeature("StrictConcurrency"),
]

// Test-only, Linux-only (on Apple platforms the real frameworks are there, and the shims' CFString/CFDictionary
// would clash with Foundation's): the Apple platform files compiled unchanged against declaration shims, so `swift test`
// type-checks them and runs their logic tests. Not dependencies of ProfirestAPI, not products.
// - AppleShims: Security, CryptoKit and CommonCrypto declarations as the platform files use them, backed by an
//   in-memory keychain and the portable SHA-256 (a symlink to the library's file).
// - WindowsShims: the WinSDK declarations the Windows files use (files, locks, the process token, SDDL security
//   descriptors, reading an existing file's owner and setting its DACL, LocalFree), backed by the file system, a
//   handle and lock table, and a record of each file's owner and of the security descriptor it was created with or
//   later given.
// - PlatformShims: symlinks to the platform files (KeychainTokenStorage, Crypto+CryptoKit, FileLock+Windows,
//   TokenFile+Windows, JournalFile+Windows, OwnerOnlySecurity+Windows) plus the few library files they need (TokenStorage, StorageError, Crypto, PortableSHA256),
//   built with PROFIREST_SHIMS. Symlinked sources rather than a dependency on ProfirestAPI,
//   because the files extend internal types (`Crypto`) and a second copy of ProfirestAPI's public API would make
//   every name ambiguous in the tests; the shim module's copies of those types are its own and internal to it.
var platformShimTargets: [Target] {
    #if os(Linux)
    return [
        .target(name: "AppleShims", swiftSettings: strict),
        .target(name: "WindowsShims", swiftSettings: strict),
        .target(
            name: "PlatformShims", dependencies: ["AppleShims", "WindowsShims"],
            swiftSettings: strict + [.define("PROFIREST_SHIMS")]),
        .testTarget(
            name: "PlatformShimsTests", dependencies: ["PlatformShims", "AppleShims", "WindowsShims"],
            swiftSettings: strict),
    ]
    #else
    return []
    #endif
}

let package = Package(
    name: "profirest-api-swift",
    platforms: [.iOS(.v15), .macOS(.v12), .tvOS(.v15), .watchOS(.v8)],
    products: [
        .library(name: "ProfirestAPI", targets: ["ProfirestAPI"]),
        .executable(name: "profirest-codegen", targets: ["ProfirestCodegen"]),
        .executable(name: "Pichacka", targets: ["Pichacka"]),
    ],
    targets: [
        // The library's Linux transport speaks to the system's libcurl through this tiny C target: it loads libcurl at
        // run time (dlopen; the one FoundationNetworking links) and wraps its variadic functions, so neither the build
        // nor a user's machine needs curl's development headers. It compiles to nothing on other platforms.
        .target(
            name: "CProfirestCurl",
            linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]),
        .target(name: "ProfirestAPI", dependencies: ["CProfirestCurl"], swiftSettings: strict),
        .target(name: "ProfirestCodegenKit", swiftSettings: strict),
        .executableTarget(name: "ProfirestCodegen", dependencies: ["ProfirestCodegenKit"], swiftSettings: strict),
        .executableTarget(name: "Pichacka", dependencies: ["ProfirestAPI"], swiftSettings: strict),
        // Not a product: the processes of the cross-process refresh tests (and the bench's cross-process keys).
        .executableTarget(name: "ProfirestRefreshProbe", dependencies: ["ProfirestAPI"], swiftSettings: strict),
        // Not a product: starting and stopping the local servers (sandbox, loopback) for the tests and the bench, and
        // ScriptedTransport, the in-memory transport of the unit tests (ProfirestAPI's public API only).
        .target(name: "ProfirestTestSupport", dependencies: ["ProfirestAPI"], swiftSettings: strict),
        .executableTarget(
            name: "ProfirestBench", dependencies: ["ProfirestAPI", "ProfirestTestSupport"], path: "benchmarks/ProfirestBench",
            swiftSettings: strict),
        .testTarget(name: "ProfirestAPITests", dependencies: ["ProfirestAPI", "ProfirestTestSupport"], swiftSettings: strict),
        .testTarget(name: "ProfirestCodegenTests", dependencies: ["ProfirestCodegenKit"], swiftSettings: strict),
    ] + platformShimTargets,
    // Swift 6 language mode where the compiler has it; a 5.9 compiler falls back to 5.
    swiftLanguageVersions: [.version("6"), .v5]
)

