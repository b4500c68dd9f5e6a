import Foundation
import ProfirestTestSupport
import XCTest

extension NetHarness {
    /// The harness in front of `upstream` for a test: a skip on a developer's machine without nginx, a failure under
    /// `CI=true` (where `.ci/run` installs it), like a missing sandbox.
    static func forTest(upstream: String, delayMilliseconds: Double = 0, shortIdleSeconds: Double? = nil) throws -> NetHarness {
        do {
            return try NetHarness(
                upstream: upstream, delayMilliseconds: delayMilliseconds, shortIdleSeconds: shortIdleSeconds, root: packageRoot)
        } catch let missing as NetHarness.Unavailable {
            let reason = "nginx is needed for the real-network tests (apt-get install nginx): \(missing)"
            if ProcessInfo.processInfo.environment["CI"] == "true" {
                XCTFail(reason)
                throw ProfirestTestFailure(reason)
            }
            throw XCTSkip(reason)
        }
    }
}
