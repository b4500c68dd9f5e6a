// Test-only, and not a library file: the URLSession delegate methods the library implements (SessionDelegate.swift,
// URLSessionTransport.swift's SendSessionDelegate), named with the types Apple's SDK gives them
// (Sources/AppleShims/URLLoadingShims.swift, "Delegates"). On Darwin they are Objective-C optional requirements, so a
// method whose name, labels or types differ from the SDK's is no error there — it is never called, and a redirect is
// followed or a challenge left to default handling. Here such a method does not convert to the SDK's type, and the
// build fails. (A method missing a `@Sendable` that the SDK's has still converts: a function taking any closure takes a
// Sendable one too.)
#if PROFIREST_SHIMS
import AppleShims
import Foundation

enum DarwinDelegateSignatures {
    typealias Redirection = (
        URLSession, URLSessionTask, HTTPURLResponse, URLRequest, @escaping @Sendable (URLRequest?) -> Void
    ) -> Void
    typealias TaskChallenge = (
        URLSession, URLSessionTask, URLAuthenticationChallenge,
        @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) -> Void
    typealias Response = (
        URLSession, URLSessionDataTask, URLResponse, @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) -> Void
    typealias ReceivedData = (URLSession, URLSessionDataTask, Data) -> Void
    typealias Completion = (URLSession, URLSessionTask, (any Error)?) -> Void

    /// Never called: it only has to compile.
    static func check(_ stream: SessionDelegate, _ send: SendSessionDelegate) {
        let _: Redirection = stream.urlSession(_:task:willPerformHTTPRedirection:newRequest:completionHandler:)
        let _: TaskChallenge = stream.urlSession(_:task:didReceive:completionHandler:)
        let _: Response = stream.urlSession(_:dataTask:didReceive:completionHandler:)
        let _: ReceivedData = stream.urlSession(_:dataTask:didReceive:)
        let _: Completion = stream.urlSession(_:task:didCompleteWithError:)
        let _: Redirection = send.urlSession(_:task:willPerformHTTPRedirection:newRequest:completionHandler:)
        let _: TaskChallenge = send.urlSession(_:task:didReceive:completionHandler:)
        let _: Response = send.urlSession(_:dataTask:didReceive:completionHandler:)
        let _: ReceivedData = send.urlSession(_:dataTask:didReceive:)
        let _: Completion = send.urlSession(_:task:didCompleteWithError:)
    }
}
#endif
