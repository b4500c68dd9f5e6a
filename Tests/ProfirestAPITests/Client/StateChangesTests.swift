import Foundation
import XCTest
@testable import ProfirestAPI
import ProfirestTestSupport
#if canImport(Observation)
import Observation
#endif

/// `api.state`, `api.stateChanges` and `ProfirestStateModel`: the pairing, the staff session, the outbox and the
/// feed as one value — the current one first, then each change in order, none repeated — in virtual time.
final class StateChangesTests: XCTestCase {
    private static let handler: ScriptedTransport.Handler = { request in
        switch request.url.path {
        case "/v2/restaurants/11/staff/sessions": return Answers.staffSession(token: "st_jana_0123456789")
        case "/v2/restaurants/11/attendance/punches/batch": return .problem(503, "service_unavailable")
        default: return ok
        }
    }

    private func client() throws -> WiredClient {
        try WiredClient(
            transport: ScriptedTransport(Self.handler), tokens: ("at_valid_0123456789", "rt_1_0123456789", 86_400),
            retries: 0, sleeping: .untilAdvanced)
    }

    private let signIn = StaffCredential(method: "pin", secret: "1234")

    func testTheCurrentStateComesFirstThenEachChangeInOrder() async throws {
        let client = try client()
        let api = client.api
        var changes = api.stateChanges.makeAsyncIterator()
        let first = await changes.next()
        XCTAssertEqual(first, ProfirestState(isPaired: true, restaurantID: "11"))
        XCTAssertEqual(first, api.state)

        try await api.signInStaff(restaurantID: "11", credential: signIn)
        let signedIn = await changes.next()
        XCTAssertEqual(signedIn?.staff?.employeeID, "emp_1")
        XCTAssertEqual(signedIn?.staff?.expiresAt, WiredClient.start.addingTimeInterval(300))

        client.clock.advance(100)
        try await api.get("/restaurants/11/tabs")  // carries the staff token: the idle timeout starts again
        let extended = await changes.next()
        XCTAssertEqual(extended?.staff?.expiresAt, WiredClient.start.addingTimeInterval(400))

        client.clock.advance(300)  // the session's timer ends it on time, without a request
        let expired = await changes.next()
        XCTAssertNotNil(expired)
        XCTAssertNil(expired?.staff)
        XCTAssertEqual(expired?.isPaired, true)

        await api.unpair()
        let unpaired = await changes.next()
        XCTAssertEqual(unpaired?.isPaired, false)
        XCTAssertNil(unpaired?.restaurantID)
        XCTAssertEqual(api.state, unpaired)
    }

    func testAStateEqualToTheLastIsNotRepeated() async throws {
        let client = try client()
        let api = client.api
        let seen = Locked<[ProfirestState]>([])
        let following = Task {
            for await state in api.stateChanges { seen.withLock { $0.append(state) } }
        }
        await waitForCount(seen, 1)
        try await api.get("/restaurants/11/tabs")  // no staff: nothing changes
        try await api.signInStaff(restaurantID: "11", credential: signIn)
        await waitForCount(seen, 2)
        await api.signOutStaff()
        await waitForCount(seen, 3)
        following.cancel()
        await following.value
        XCTAssertEqual(seen.withLock { $0.map { $0.staff?.employeeID } }, [nil, "emp_1", nil])
    }

    func testTheOutboxAndTheFeedAreInTheState() async throws {
        let client = try client()
        let api = client.api
        XCTAssertNil(api.state.outbox)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("state-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let outbox = try api.outbox(path: path)
        XCTAssertEqual(api.state.outbox?.count, 0)
        var changes = api.stateChanges.makeAsyncIterator()
        _ = await changes.next()
        let punch = AttendancePunchCreate(id: ProfirestApi.uuid(), type: .clockIn, credential: signIn)
        let outcome = try await outbox.punch(restaurantID: "11", punch)
        guard case .queued = outcome else { return XCTFail("\(outcome)") }
        var queued = await changes.next()
        while queued?.outbox?.lastFailure == nil { queued = await changes.next() }
        XCTAssertEqual(queued?.outbox?.count, 1)
        XCTAssertEqual(queued?.outbox?.lastFailure?.code, "service_unavailable")
        XCTAssertEqual(api.state.outbox, outbox.status)
        XCTAssertEqual(api.state.feed, .stopped)
    }

    func testAStreamEndsWithItsTaskAndStopsListening() async throws {
        let client = try client()
        let api = client.api
        let following = Task {
            for await _ in api.stateChanges {}
        }
        following.cancel()
        await following.value
        try await api.signInStaff(restaurantID: "11", credential: signIn)  // nobody listens: nothing to do
        XCTAssertEqual(api.state.staff?.employeeID, "emp_1")
    }

    #if canImport(Observation)
    @MainActor
    func testTheObservableModelFollowsTheStateOnTheMainActor() async throws {
        guard #available(iOS 17, macOS 14, tvOS 17, watchOS 10, *) else {
            return XCTFail("the model needs iOS 17 / macOS 14; the tests run where it exists")
        }
        let client = try client()
        let model = ProfirestStateModel(api: client.api)
        XCTAssertEqual(model.state, client.api.state, "the current state at once")
        XCTAssertTrue(model.isPaired)
        XCTAssertNil(model.staff)
        let observed = Locked(0)
        withObservationTracking {
            _ = model.staff
        } onChange: {
            observed.withLock { $0 += 1 }
        }
        try await client.api.signInStaff(restaurantID: "11", credential: signIn)
        // The model is updated by its task on the main actor: give it turns until it has (10 s at most).
        for _ in 0..<200 where model.staff == nil { try await Task.sleep(nanoseconds: 50_000_000) }
        XCTAssertEqual(model.staff?.name, "Jana Nováková")
        XCTAssertEqual(observed.withLock { $0 }, 1, "a view reading the staff was told once")
        XCTAssertEqual(model.feed, .stopped)
        XCTAssertNil(model.outbox)
    }
    #endif

    private func waitForCount(_ seen: Locked<[ProfirestState]>, _ count: Int) async {
        let reached = await waitUntil(10) { seen.withLock { $0.count } >= count }
        XCTAssertTrue(reached, "\(count) states expected, have \(seen.withLock { $0.count })")
    }
}
