import Foundation
import XCTest
import ProfirestAPI  // not @testable: the reference's identity snippets must compile against the public API alone

/// The reference's pairing, consent, staff and options shapes, compiled against the public API. The snippet
/// functions are never called (compiling them is the check); the test below runs the synchronous ones.
final class IdentitySnippetsCompileTests: XCTestCase {
    func testTheSynchronousShapesAnswerBeforePairing() throws {
        let api = ProfirestApi(options: .init(baseURL: "http://127.0.0.1:8080", clientID: "profirest-kds",
                                              storage: MemoryTokenStorage(), onUnpaired: { _ in }))
        XCTAssertFalse(api.isPaired)
        XCTAssertNil(api.restaurantID)
        XCTAssertNil(api.deviceID)
        XCTAssertEqual(api.scopes, [])
        XCTAssertNil(api.staff)
        let url = try api.authorizationURL(redirectURI: "mojeaplikace://profirest", scope: "restaurants:read orders:read")
        XCTAssertEqual(url.path, "/oauth/authorize")
    }

    func pairing(url: String, file: String) async throws {
        let api = ProfirestApi(options: .init(baseURL: url, clientID: "profirest-dochazka", storage: FileTokenStorage(path: file)))
        if !api.isPaired {
            let pairing = try await api.pair(scope: "restaurants:read attendance:punch", deviceName: "Píchačka")
            print(pairing.userCode, pairing.verificationURIComplete)
            try await pairing.connected()
        }
        let pairing2 = try await api.pair(scope: "kitchen:read", deviceName: "KDS", appVersion: "2.3.0")
        _ = try await pairing2.poll()
        pairing2.cancel()
        let saved = pairing2.state
        _ = try api.resumePairing(saved)
        if api.restaurantID == nil { _ = try? await api.connection() }
        let connection: Connection = try await api.connection()
        let state: (Bool, String?, String?, [String]) = (api.isPaired, api.restaurantID, api.deviceID, api.scopes)
        await api.unpair()
        _ = (connection, state)
    }

    func pairingErrors(_ api: ProfirestApi) async {
        do {
            let pairing = try await api.pair(scope: "restaurants:read kitchen:read kitchen:write", deviceName: "KDS kuchyň", appVersion: "2.3.0")
            try await pairing.connected()
        } catch let e as ProfirestOAuthError {
            switch e.error {
            case "access_denied": print("refused")
            case "expired_token": print("expired")
            default: print(e.message)
            }
        } catch let e as ProfirestUsageError {
            print(e.message)
        } catch {
            print(error.localizedDescription)
        }
    }

    /// The README's partner callback (a dictionary from the callback's query) and Disconnect button.
    func partnerCallbackAndDisconnect(_ api: ProfirestApi, callbackURL: URL, flash: (String) -> Void) async throws {
        let parameters = Dictionary(
            (URLComponents(url: callbackURL, resolvingAgainstBaseURL: false)?.queryItems ?? [])
                .compactMap { item in item.value.map { (item.name, $0) } },
            uniquingKeysWith: { first, _ in first })
        try await api.completeAuthorization(parameters: parameters)
        _ = try api.authorizationURL(redirectURI: "mojeaplikace://profirest", scope: "orders:read", prompt: "consent")
        do {
            try await api.disconnect()
        } catch let e as ProfirestAPIError {
            flash("Disconnected here; Profirest could not be told yet (\(e.code)), we will retry.")
        } catch let e as ProfirestOAuthError {
            flash("Disconnected here; Profirest refused the revocation: \(e.message)")
        }
    }

    func consent(_ api: ProfirestApi, callbackURL: URL, c: String, s: String, i: String) async throws {
        let url = try api.authorizationURL(redirectURI: "mojeaplikace://profirest", scope: "restaurants:read orders:read")
        let connection = try await api.completeAuthorization(callbackURL)
        let connection2 = try await api.completeAuthorization(parameters: ["code": c, "state": s, "iss": i])
        try await api.completeAuthorization(callbackURL)
        _ = (url, connection, connection2)
    }

    func staff(_ api: ProfirestApi, rid: String, pin: String, receipt: ReceiptCreate) async throws {
        var credential = StaffCredential(method: "pin", secret: pin)
        do {
            try await api.signInStaff(restaurantID: rid, credential: credential)
        } catch let e as ProfirestAPIError where e.code == ErrorCode.staffAmbiguous {
            credential.employeeId = e.candidates.first?["id"]?.stringValue
            try await api.signInStaff(restaurantID: rid, credential: credential)
        }
        let session: StaffSession = try await api.signInStaff(restaurantID: rid, credential: credential)
        try await api.post("/restaurants/\(rid)/receipts", body: receipt, options: .init(staff: .required))
        await api.signOutStaff()
        await api.signOutStaff(token: session.token)
        let who: StaffInfo? = api.staff
        _ = who.map { ($0.employeeID, $0.name, $0.role, $0.restaurantID, $0.expiresAt) }
    }

    @MainActor
    func options() {
        let kds = ProfirestApi(options: .init(clientID: "profirest-kds", storage: MemoryTokenStorage(), onUnpaired: { _ in Task { @MainActor in print("unpaired") } }))
        let eshop = ProfirestApi(options: .init(clientID: "muj-eshop", clientSecret: "s", storage: FileTokenStorage(path: "/var/lib/eshop/tokens.json"), storageKey: "profirest-api:muj-eshop:account-42"))
        let fixed = ProfirestApi(options: .init(accessToken: "token-from-elsewhere"))
        let handlers = ProfirestApi(options: .init(
            clientID: "profirest-pos",
            onUnpaired: { error in print(error.code == ErrorCode.notPaired) },
            onStaffExpired: { staff in print("\(staff.name) signed out") }))
        _ = (kds, eshop, fixed, handlers)
    }
}
