// swift-tools-version:5.9
import PackageDescription

// Swift 6 language mode with complete strict concurrency is switched on per target so the
// package still builds with a 5.9 toolchain (which ignores the unknown setting names it does not have).
let strict: [SwiftSetting] = [
    .enableExperimentalFeature("StrictConcurrency"),
]

// Test-only, Linux-only (on Apple platforms the real frameworks are there, and the shims' CFString/CFDictionary
// would clash with Foundation's): every platform branch of the package compiled here against declaration shims of the
// platform's API, as that platform's Swift declares it, so `make build` type-checks the Windows and Apple code and
// `swift test` runs its logic. Not dependencies of the package's products, not products. See README, "How it is built".
// - AppleShims: Security (keychain, SecTrust), CryptoKit, CommonCrypto and Darwin's URL Loading System, backed by an
//   in-memory keychain (both macOS keychains) and the portable SHA-256 (a symlink to the library's file).
// - WindowsShims: the WinSDK declarations the Windows files use (files, locks, long paths, the process token, SDDL
//   security descriptors, a file's owner and DACL, LocalFree, processes), every macro with the type Swift's importer
//   gives it, backed by the file system, a handle and lock table, and a record of each file's owner and security.
// - NotOnWindows: POSIX names the Windows C runtime lacks, with Glibc's signatures, so a Windows or portable file that
//   calls one fails here (re-exported by WindowsShims).
// - PlatformShims: symlinks to the library's platform files (KeychainTokenStorage, Crypto+CryptoKit, the Windows
//   storage files and the outbox journal's Windows file, the Apple branches of Transport/) plus the few library files
//   they need (the keychain's lock: FileLock+POSIX, OwnedLock, BlockingPool, LockBridge), built with PROFIREST_SHIMS.
//   Symlinked sources rather than a dependency on ProfirestAPI, because the files extend internal types (`Crypto`) and
//   a second copy of ProfirestAPI's public API would make every name ambiguous in the tests; the shim module's copies
//   of those types are its own and internal to it.
// - TestSupportWindowsCheck, BenchWindowsCheck: ProfirestTestSupport and the bench compiled a second time as Windows
//   would (symlinked folders): the Windows files against WindowsShims, every file with NotOnWindows imported.
//   (`-import-module` is an unsafe flag; SwiftPM accepts it in a path dependency, `make dist-test`, as these targets
//   are in no product.)
var platformShimTargets: [Target] {
    #if os(Linux)
    // Each file of the targets that check portable code for Windows imports NotOnWindows, as if it said so itself.
    let notOnWindows: [SwiftSetting] = [.unsafeFlags(["-Xfrontend", "-import-module", "-Xfrontend", "NotOnWindows"])]
    return [
        .target(name: "AppleShims", swiftSettings: strict),
        .target(name: "NotOnWindows", swiftSettings: strict),
        .target(name: "WindowsShims", dependencies: ["NotOnWindows"], swiftSettings: strict),
        .target(
            name: "PlatformShims", dependencies: ["AppleShims", "WindowsShims", "CProfirestCurl"],
            swiftSettings: strict + [.define("PROFIREST_SHIMS")]),
        .target(
            name: "TestSupportWindowsCheck", dependencies: ["ProfirestAPI", "WindowsShims", "NotOnWindows"],
            path: "Sources/WindowsChecks/TestSupport", swiftSettings: strict + [.define("PROFIREST_SHIMS")] + notOnWindows),
        .executableTarget(
            name: "BenchWindowsCheck", dependencies: ["ProfirestAPI", "ProfirestTestSupport", "NotOnWindows"],
            path: "Sources/WindowsChecks/Bench", swiftSettings: strict + notOnWindows),
        .testTarget(
            name: "PlatformShimsTests", dependencies: ["PlatformShims", "AppleShims", "WindowsShims"],
            swiftSettings: strict),
    ]
    #else
    return []
    #endif
}

// Linux only: the storage-fault sweep runs a client's life on the keychain storage compiled against the in-memory
// keychain (StorageFaultSweepTests+Keychain.swift, which names the shim module's types by module), and the
// cross-process refresh tests run the probe's processes on it, sharing its items through a file
// (ShimKeychainStorage.swift, in the probe and linked into the tests).
var keychainShimDependencies: [Target.Dependency] {
    #if os(Linux)
    return ["PlatformShims", "AppleShims"]
    #else
    return []
    #endif
}

let package = Package(
    name: "profirest-api-swift",
    platforms: [.iOS(.v15), .macOS(.v12), .tvOS(.v15), .watchOS(.v8)],
    products: [
        .library(name: "ProfirestAPI", targets: ["ProfirestAPI"]),
        // A token storage on PostgreSQL, for backends whose replicas share their connections: a product of its own,
        // so that ProfirestAPI stays free of dependencies (this one needs libpq at run time only).
        .library(name: "ProfirestPostgres", targets: ["ProfirestPostgres"]),
        // For apps' own tests: an in-memory server answering with the contract's examples, scripted faults, a virtual
        // clock and a paired client — without a socket. Depends on ProfirestAPI alone.
        .library(name: "ProfirestTesting", targets: ["ProfirestTesting"]),
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
        // Windows: the owner-only access lists (OwnerOnlySecurity+Windows.swift) call AdvAPI32's security functions
        // (SetNamedSecurityInfoW, ConvertStringSecurityDescriptorToSecurityDescriptorW, OpenProcessToken: "Library
        // Advapi32.lib" on each one's Microsoft Learn page); WinSDK's Security submodule names no library to link.
        .target(
            name: "ProfirestAPI", dependencies: ["CProfirestCurl"], swiftSettings: strict,
            linkerSettings: [.linkedLibrary("AdvAPI32", .when(platforms: [.windows]))]),
        // PostgresTokenStorage speaks to PostgreSQL through libpq, loaded at run time by this tiny C target (dlopen of
        // libpq.so.5, like CProfirestCurl), so that building the package needs neither libpq's headers nor the
        // library; its constants and prototypes are checked against libpq-fe.h by tools/check_pq_abi.py.
        .target(
            name: "CProfirestPQ",
            linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]),
        .target(name: "ProfirestPostgres", dependencies: ["ProfirestAPI", "CProfirestPQ"], swiftSettings: strict),
        .target(name: "ProfirestTesting", dependencies: ["ProfirestAPI"], swiftSettings: strict),
        .target(name: "ProfirestCodegenKit", swiftSettings: strict),
        .executableTarget(name: "ProfirestCodegen", dependencies: ["ProfirestCodegenKit"], swiftSettings: strict),
        .executableTarget(name: "Pichacka", dependencies: ["ProfirestAPI"], swiftSettings: strict),
        // Not a product: the example of a partner's backend serving many restaurants from one process (the article
        // "Serving many restaurants"), run by its integration test against the sandbox.
        .executableTarget(
            name: "PartnerServer", dependencies: ["ProfirestAPI", "ProfirestPostgres"], swiftSettings: strict),
        // Not a product: the processes of the cross-process refresh tests (and the bench's cross-process keys).
        .executableTarget(
            name: "ProfirestRefreshProbe", dependencies: ["ProfirestAPI", "ProfirestPostgres"] + keychainShimDependencies,
            swiftSettings: strict),
        // Not a product: starting and stopping the local servers (sandbox, loopback) for the tests and the bench, and
        // ScriptedTransport, the in-memory transport of the unit tests (ProfirestAPI's public API only).
        .target(name: "ProfirestTestSupport", dependencies: ["ProfirestAPI"], swiftSettings: strict),
        // CProfirestCurl: the bench also drives libcurl itself, through the library's wrappers (its floor).
        .executableTarget(
            name: "ProfirestBench", dependencies: ["ProfirestAPI", "ProfirestTestSupport", "CProfirestCurl"],
            path: "benchmarks/ProfirestBench",
            swiftSettings: strict),
        // ProfirestPostgres: the articles' code that shows the PostgreSQL storage compiles here too. ProfirestTesting:
        // unit tests that an app could write the same way use the kit, so that it is kept honest.
        .testTarget(
            name: "ProfirestAPITests",
            dependencies: ["ProfirestAPI", "ProfirestTestSupport", "ProfirestPostgres", "ProfirestTesting"]
                + keychainShimDependencies,
            swiftSettings: strict),
        // The testing kit's own tests, and the article "Testing your app"'s example, compiled and run
        // (TestingYourAppArticle.swift, written from the kit's DocC catalog by tools/article_snippets.py).
        .testTarget(name: "ProfirestTestingTests", dependencies: ["ProfirestTesting", "ProfirestAPI"], swiftSettings: strict),
        .testTarget(name: "ProfirestCodegenTests", dependencies: ["ProfirestCodegenKit"], swiftSettings: strict),
        // Against a real PostgreSQL server that the tests start themselves (initdb into a temporary directory).
        .testTarget(
            name: "ProfirestPostgresTests", dependencies: ["ProfirestPostgres", "ProfirestAPI", "ProfirestTestSupport"],
            swiftSettings: strict),
    ] + platformShimTargets,
    // Swift 6 language mode where the compiler has it; a 5.9 compiler falls back to 5.
    swiftLanguageVersions: [.version("6"), .v5]
)

