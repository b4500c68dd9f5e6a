import Foundation

// Descriptions and mirrors of the identity types that hold secrets (tokens, the device code, the PKCE verifier,
// the client secret). `print`, `dump`, string interpolation and debugger summaries show only what is safe to log,
// since any of them may end up in a log or a crash report.

extension StoredState: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    var description: String {
        let expiry = expiresAt.map(RFC3339.string(from:)) ?? "none"
        return "StoredState(paired: \(hasTokens), expiresAt: \(expiry), restaurantID: \(restaurantID ?? "none"), "
            + "deviceID: \(deviceID ?? "none"), scopes: \(scopes), pendingConsent: \(pendingConsent != nil), "
            + "cursors: \(eventsCursor.count), pendingRevocations: \(pendingRevocations.count))"
    }
    var debugDescription: String { description }
    var customMirror: Mirror { Mirror(self, children: ["summary": description]) }
}

extension OAuthClient: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    var description: String { "OAuthClient(clientID: \(clientID), confidential: \(clientSecret != nil))" }
    var debugDescription: String { description }
    var customMirror: Mirror { Mirror(self, children: ["summary": description]) }
}

extension Pairing: CustomStringConvertible, CustomReflectable {
    /// The user code and expiry, never the device code.
    ///
    /// ```swift
    /// print(pairing)
    /// ```
    public var description: String { "Pairing(\(state))" }
    /// Keeps `dump` and debugger views from showing the device code.
    ///
    /// ```swift
    /// dump(pairing)
    /// ```
    public var customMirror: Mirror {
        Mirror(self, children: ["userCode": userCode, "verificationURI": verificationURI, "expiresAt": expiresAt])
    }
}

extension StaffSessions: CustomReflectable {
    var customMirror: Mirror { Mirror(self, children: ["staff": currentInfo as Any]) }
}

extension TokenRefresher.Settings: CustomReflectable {
    var customMirror: Mirror {
        Mirror(self, children: ["client": client as Any, "fixedAccessToken": fixedAccessToken != nil,
                                "refreshMargin": refreshMargin])
    }
}

extension Identity: CustomReflectable {
    var customMirror: Mirror {
        Mirror(self, children: ["context": context, "fixedAccessToken": fixedAccessToken != nil, "staff": staffSessions])
    }
}

extension IdentityContext: CustomReflectable {
    var customMirror: Mirror {
        Mirror(self, children: ["key": store.key, "clientID": clientID as Any, "baseURL": baseURL.absoluteString])
    }
}

extension StateStore: CustomReflectable {
    var customMirror: Mirror { Mirror(self, children: ["key": key, "state": snapshot]) }
}
