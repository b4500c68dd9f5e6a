// Test-only declaration shims of the URL Loading System as Apple's SDK declares it to Swift — the part that the Apple
// branches of Sources/ProfirestAPI/Transport use (URLSessionTransport, SessionDelegate, AuthChallenge, ServerTrust) —
// so that PlatformShims compiles those branches against Darwin's API rather than FoundationNetworking's, which differs:
// no `URLProtectionSpace.serverTrust`, no `URLCredential(trust:)`, challenges of HTTP only. On Linux, Foundation itself
// declares these names only as unavailable stubs ("moved to FoundationNetworking"), so a file that imports Foundation
// and AppleShims but not FoundationNetworking sees these declarations.
//
// Every declaration is the Swift one on Apple's documentation page cited next to it; "(confirmed)" marks the pages read
// in the docs corpus while writing this, the others follow the SDK as the library already uses it on Apple platforms.
// Declared here as Apple's SDK has them, and weaker where Linux Swift cannot follow:
// - The delegate protocols' methods are Objective-C optionals, which Linux Swift cannot declare: see "Delegates" below
//   for how the library's delegate methods are held to Darwin's signatures instead.
// - Sendable: URLSession, its tasks and configuration, and URLCredential are `@unchecked Sendable` as the SDK's
//   headers mark them (NS_SWIFT_SENDABLE; objc2-foundation's bindings, generated from those headers, mark NSURLSession
//   Send + Sync); not confirmed for each class from Apple's pages, which list no conformances.
// - Nothing here runs: a session or a task only fails (`fatalError`), since the library's tests of the transport run on
//   Linux against FoundationNetworking and real servers. Only the challenge types can be made, for ServerTrust's tests.
import Foundation

// MARK: Requests and responses

/// https://developer.apple.com/documentation/foundation/nsurlrequest/cachepolicy-swift.enum —
/// `enum CachePolicy : UInt, @unchecked Sendable` (nested in `NSURLRequest`)
open class NSURLRequest: NSObject {
    public enum CachePolicy: UInt, @unchecked Sendable {
        case useProtocolCachePolicy = 0
        case reloadIgnoringLocalCacheData = 1
        case returnCacheDataElseLoad = 2
        case returnCacheDataDontLoad = 3
        case reloadIgnoringLocalAndRemoteCacheData = 4
        case reloadRevalidatingCacheData = 5
    }
}

/// https://developer.apple.com/documentation/foundation/urlrequest — `struct URLRequest` (Hashable, Sendable)
public struct URLRequest: Hashable, Sendable {
    /// `var url: URL?`
    public var url: URL?
    /// `var httpMethod: String?`
    public var httpMethod: String? = "GET"
    /// `var timeoutInterval: TimeInterval`
    public var timeoutInterval: TimeInterval
    /// `var httpBody: Data?`
    public var httpBody: Data?
    /// `var httpShouldHandleCookies: Bool`
    public var httpShouldHandleCookies = true
    /// `var cachePolicy: URLRequest.CachePolicy` (NSURLRequest.CachePolicy)
    public var cachePolicy: NSURLRequest.CachePolicy
    private var headers: [String: String] = [:]

    /// `init(url: URL, cachePolicy: URLRequest.CachePolicy = .useProtocolCachePolicy, timeoutInterval: TimeInterval =
    /// 60.0)`
    public init(url: URL, cachePolicy: NSURLRequest.CachePolicy = .useProtocolCachePolicy, timeoutInterval: TimeInterval = 60.0) {
        self.url = url
        self.cachePolicy = cachePolicy
        self.timeoutInterval = timeoutInterval
    }

    /// `mutating func setValue(_ value: String?, forHTTPHeaderField field: String)`
    public mutating func setValue(_ value: String?, forHTTPHeaderField field: String) { headers[field] = value }

    /// `func value(forHTTPHeaderField field: String) -> String?`
    public func value(forHTTPHeaderField field: String) -> String? { headers[field] }
}

/// https://developer.apple.com/documentation/foundation/urlresponse — `class URLResponse`
open class URLResponse: NSObject, @unchecked Sendable {
    /// `var url: URL? { get }`
    open var url: URL? { nil }
    /// https://developer.apple.com/documentation/foundation/urlresponse/expectedcontentlength —
    /// `var expectedContentLength: Int64 { get }`, -1 (`NSURLResponseUnknownLength`) when the length is not known.
    open var expectedContentLength: Int64 { -1 }
}

/// https://developer.apple.com/documentation/foundation/httpurlresponse — `class HTTPURLResponse`
open class HTTPURLResponse: URLResponse, @unchecked Sendable {
    /// `var statusCode: Int { get }`
    open var statusCode: Int { 0 }
    /// `var allHeaderFields: [AnyHashable : Any] { get }`
    open var allHeaderFields: [AnyHashable: Any] { [:] }
}

// MARK: Sessions and tasks

/// https://developer.apple.com/documentation/foundation/urlcache — `class URLCache`
open class URLCache: NSObject, @unchecked Sendable {}
/// https://developer.apple.com/documentation/foundation/httpcookiestorage — `class HTTPCookieStorage`
open class HTTPCookieStorage: NSObject, @unchecked Sendable {}
/// https://developer.apple.com/documentation/foundation/urlcredentialstorage — `class URLCredentialStorage`
open class URLCredentialStorage: NSObject, @unchecked Sendable {}

/// https://developer.apple.com/documentation/foundation/urlsessionconfiguration — `class URLSessionConfiguration`
open class URLSessionConfiguration: NSObject, @unchecked Sendable {
    /// `class var ephemeral: URLSessionConfiguration { get }`
    open class var ephemeral: URLSessionConfiguration { URLSessionConfiguration() }
    /// `var urlCache: URLCache? { get set }`
    open var urlCache: URLCache?
    /// `var httpCookieStorage: HTTPCookieStorage? { get set }`
    open var httpCookieStorage: HTTPCookieStorage?
    /// `var httpShouldSetCookies: Bool { get set }`
    open var httpShouldSetCookies = true
    /// `var requestCachePolicy: NSURLRequest.CachePolicy { get set }`
    open var requestCachePolicy = NSURLRequest.CachePolicy.useProtocolCachePolicy
    /// `var urlCredentialStorage: URLCredentialStorage? { get set }`
    open var urlCredentialStorage: URLCredentialStorage?
}

/// https://developer.apple.com/documentation/foundation/urlsessiontask — `class URLSessionTask`
open class URLSessionTask: NSObject, @unchecked Sendable {
    /// https://developer.apple.com/documentation/foundation/urlsessiontask/taskidentifier — `var taskIdentifier: Int
    /// { get }` (confirmed)
    open var taskIdentifier: Int { fatalError("URL loading shims do not run") }
    /// `@NSCopying var response: URLResponse? { get }`
    open var response: URLResponse? { fatalError("URL loading shims do not run") }
    /// `func resume()`
    open func resume() { fatalError("URL loading shims do not run") }
    /// `func cancel()`
    open func cancel() { fatalError("URL loading shims do not run") }
}

/// https://developer.apple.com/documentation/foundation/urlsessiondatatask — `class URLSessionDataTask`
open class URLSessionDataTask: URLSessionTask, @unchecked Sendable {}

/// https://developer.apple.com/documentation/foundation/urlsession — `class URLSession`
open class URLSession: NSObject, @unchecked Sendable {
    /// https://developer.apple.com/documentation/foundation/urlsession/authchallengedisposition —
    /// `enum AuthChallengeDisposition : Int, @unchecked Sendable`
    public enum AuthChallengeDisposition: Int, @unchecked Sendable {
        case useCredential = 0
        case performDefaultHandling = 1
        case cancelAuthenticationChallenge = 2
        case rejectProtectionSpace = 3
    }

    /// https://developer.apple.com/documentation/foundation/urlsession/responsedisposition —
    /// `enum ResponseDisposition` (confirmed), `: Int, @unchecked Sendable`
    public enum ResponseDisposition: Int, @unchecked Sendable {
        case cancel = 0
        case allow = 1
        case becomeDownload = 2
        case becomeStream = 3
    }

    /// `init(configuration: URLSessionConfiguration, delegate: (any URLSessionDelegate)?, delegateQueue queue:
    /// OperationQueue?)` (the same in the SDK's Swift interface, as listed for iOS 7+)
    public init(configuration: URLSessionConfiguration, delegate: (any URLSessionDelegate)?, delegateQueue queue: OperationQueue?) {
        fatalError("URL loading shims do not run")
    }

    /// https://developer.apple.com/documentation/foundation/urlsession/datatask(with:)-10dy7 (the URL form, confirmed;
    /// this is the URLRequest form) — `func dataTask(with request: URLRequest) -> URLSessionDataTask`
    open func dataTask(with request: URLRequest) -> URLSessionDataTask { fatalError("URL loading shims do not run") }

    /// https://developer.apple.com/documentation/foundation/urlsession/datatask(with:completionhandler:)-e6xv —
    /// `func dataTask(with request: URLRequest, completionHandler: @escaping @Sendable (Data?, URLResponse?,
    /// (any Error)?) -> Void) -> URLSessionDataTask` (confirmed)
    open func dataTask(
        with request: URLRequest, completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
    ) -> URLSessionDataTask { fatalError("URL loading shims do not run") }

    /// `func finishTasksAndInvalidate()`
    open func finishTasksAndInvalidate() { fatalError("URL loading shims do not run") }
}

// MARK: Authentication challenges

/// https://developer.apple.com/documentation/foundation/nsurlauthenticationmethodservertrust —
/// `let NSURLAuthenticationMethodServerTrust: String`
public let NSURLAuthenticationMethodServerTrust = "NSURLAuthenticationMethodServerTrust"
/// https://developer.apple.com/documentation/foundation/nsurlauthenticationmethodhttpbasic —
/// `let NSURLAuthenticationMethodHTTPBasic: String` (for the tests' HTTP challenges)
public let NSURLAuthenticationMethodHTTPBasic = "NSURLAuthenticationMethodHTTPBasic"

/// https://developer.apple.com/documentation/foundation/urlprotectionspace — `class URLProtectionSpace`
open class URLProtectionSpace: NSObject, @unchecked Sendable {
    /// `var authenticationMethod: String { get }`
    open var authenticationMethod: String { method }
    /// https://developer.apple.com/documentation/foundation/urlprotectionspace/servertrust — `var serverTrust:
    /// SecTrust? { get }`, "nil if the authentication method of the protection space is not server trust"
    /// (confirmed)
    open var serverTrust: SecTrust? { trust }

    private let method: String
    private let trust: SecTrust?

    /// Shim only (the system makes these): a protection space with this method, and its server's trust.
    public init(shimAuthenticationMethod method: String, serverTrust trust: SecTrust?) {
        self.method = method
        self.trust = method == NSURLAuthenticationMethodServerTrust ? trust : nil
    }
}

/// https://developer.apple.com/documentation/foundation/urlauthenticationchallenge — `class URLAuthenticationChallenge`
open class URLAuthenticationChallenge: NSObject, @unchecked Sendable {
    /// `var protectionSpace: URLProtectionSpace { get }`
    open var protectionSpace: URLProtectionSpace { space }
    private let space: URLProtectionSpace

    /// Shim only (the system makes these): a challenge for `protectionSpace`.
    public init(shimProtectionSpace space: URLProtectionSpace) { self.space = space }
}

/// https://developer.apple.com/documentation/foundation/urlcredential — `class URLCredential`
open class URLCredential: NSObject, @unchecked Sendable {
    /// Shim only: the trust this credential was made for. Usage: `credential?.shimTrust === trust`
    public let shimTrust: SecTrust?

    /// https://developer.apple.com/documentation/foundation/urlcredential/init(trust:) — `init(trust: SecTrust)`
    /// (confirmed)
    public init(trust: SecTrust) { shimTrust = trust }
}

// MARK: Delegates
//
// Their methods are all Objective-C `optional`: Swift checks no conformance against them, and a method spelled
// differently from the SDK's is simply never called. So the protocols here have no requirements either (a Swift
// requirement with a default implementation would hide a misspelt method the same way), and the methods the library
// implements are named with the types below in Sources/PlatformShims/DarwinDelegateSignatures.swift, where one that
// differs fails to compile. Each is quoted from its page, all confirmed in the docs corpus but the last two:
// - URLSessionTaskDelegate:
//   `optional func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response:
//   HTTPURLResponse, newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void)`
//   (…/urlsessiontaskdelegate/urlsession(_:task:willperformhttpredirection:newrequest:completionhandler:))
// - URLSessionTaskDelegate:
//   `optional func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge:
//   URLAuthenticationChallenge, completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition,
//   URLCredential?) -> Void)` (…/urlsessiontaskdelegate/urlsession(_:task:didreceive:completionhandler:))
// - URLSessionDataDelegate:
//   `optional func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
//   completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void)`
//   (…/urlsessiondatadelegate/urlsession(_:datatask:didreceive:completionhandler:))
// - URLSessionDataDelegate:
//   `optional func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data)`
// - URLSessionTaskDelegate:
//   `optional func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?)`

/// https://developer.apple.com/documentation/foundation/urlsessiondelegate —
/// `protocol URLSessionDelegate : NSObjectProtocol, Sendable` (confirmed)
public protocol URLSessionDelegate: NSObjectProtocol, Sendable {}

/// https://developer.apple.com/documentation/foundation/urlsessiontaskdelegate —
/// `protocol URLSessionTaskDelegate : URLSessionDelegate`
public protocol URLSessionTaskDelegate: URLSessionDelegate {}

/// https://developer.apple.com/documentation/foundation/urlsessiondatadelegate —
/// `protocol URLSessionDataDelegate : URLSessionTaskDelegate`
public protocol URLSessionDataDelegate: URLSessionTaskDelegate {}
