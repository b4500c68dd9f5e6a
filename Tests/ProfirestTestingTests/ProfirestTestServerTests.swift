import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ProfirestAPI
import ProfirestTesting
import XCTest

/// The in-memory server answers as the contract and the kit's documentation say, through a real client.
final class ProfirestTestServerTests: XCTestCase {
    private let staffRoute = "/v2/restaurants/{restaurant_id}/staff"

    func testAPairedClientReadsTheContractsExampleAsTypedModels() async throws {
        let server = ProfirestTestServer()
        let api = try server.pairedClient()
        XCTAssertTrue(api.isPaired)
        XCTAssertEqual(api.restaurantID, "11")
        let staff: [StaffMember] = try await api.all("/restaurants/11/staff")
        XCTAssertEqual(staff.map(\.name), Fixtures.listStaff.data.map(\.name))
        XCTAssertEqual(staff.first?.name, "Jana Nováková")
        let sent = try XCTUnwrap(server.requests(GET, staffRoute).first)
        XCTAssertEqual(sent.header("Authorization"), "Bearer at_test_1")
        XCTAssertEqual(sent.url.path, "/v2/restaurants/11/staff")
    }

    func testEveryExampleOfTheContractDecodesAsItsModel() throws {
        XCTAssertGreaterThan(Fixtures.all.count, 30)
        for fixture in Fixtures.all {
            XCTAssertNoThrow(try fixture.decode(as: JSONValue.self), fixture.operationID)
        }
        // The generated typed properties (each decodes its example as the client's model, or traps).
        XCTAssertEqual(Fixtures.createAttendancePunch.employee.name, "Jana Nováková")
        XCTAssertEqual(Fixtures.getRestaurant.name, "Bistro U Lípy")
        XCTAssertFalse(Fixtures.listOrders.data.isEmpty)
        XCTAssertEqual(Fixtures.fixture("POST", "/v2/restaurants/11/attendance/punches")?.status, 201)
        XCTAssertNil(Fixtures.fixture("GET", "/v2/nowhere"))
    }

    func testADroppedConnectionIsANetworkErrorAndTheNextRequestIsAnswered() async throws {
        let server = ProfirestTestServer()
        let api = try server.pairedClient { $0.retries = 0 }
        server.answer(GET, staffRoute, with: .drop)
        do {
            let _: StaffMemberPage = try await api.get("/restaurants/11/staff")
            XCTFail("a dropped connection answered")
        } catch let error as ProfirestAPIError {
            XCTAssertEqual(error.code, ErrorCode.networkError)
        }
        let page: StaffMemberPage = try await api.get("/restaurants/11/staff")
        XCTAssertEqual(page.data.count, Fixtures.listStaff.data.count)
    }

    func testA503WithRetryAfterIsWaitedOutOnTheVirtualClock() async throws {
        let server = ProfirestTestServer()
        let api = try server.pairedClient()
        server.answer(GET, staffRoute, with: .unavailable(retryAfter: 7))
        let started = Date()
        let call = Task { () -> StaffMemberPage in try await api.get("/restaurants/11/staff") }
        let waiting = await server.clock.waitForSleep()
        XCTAssertTrue(waiting)
        XCTAssertEqual(server.clock.pendingSleeps, [7])
        server.clock.advance(7)
        let page = try await call.value
        XCTAssertEqual(page.data.first?.name, "Jana Nováková")
        XCTAssertEqual(server.requests(GET, staffRoute).count, 2)
        XCTAssertLessThan(Date().timeIntervalSince(started), 5, "no real time waited")
    }

    func testADelayedAnswerComesWhenTheClockIsAdvanced() async throws {
        let server = ProfirestTestServer()
        let api = try server.pairedClient()
        server.answer(GET, "/v2/restaurants/{restaurant_id}", with: .delay(30, then: .fixture))
        let call = Task { () -> Restaurant in try await api.get("/restaurants/11") }
        await server.clock.waitForSleep()
        XCTAssertEqual(server.clock.pendingSleeps, [30])
        server.clock.advance(30)
        let restaurant = try await call.value
        XCTAssertEqual(restaurant.name, Fixtures.getRestaurant.name)
    }

    func testAnExpiredAccessTokenIsRefreshedAtTheKitsTokenEndpointOnce() async throws {
        let server = ProfirestTestServer()
        let api = try server.pairedClient()
        server.expireAccessToken()
        let page: StaffMemberPage = try await api.get("/restaurants/11/staff")
        XCTAssertFalse(page.data.isEmpty)
        XCTAssertEqual(server.refreshCount, 1)
        let attempts = server.requests(GET, staffRoute)
        XCTAssertEqual(attempts.count, 2)
        XCTAssertEqual(attempts[0].header("Authorization"), "Bearer at_test_1")
        XCTAssertEqual(attempts[1].header("Authorization"), "Bearer at_test_3")
        XCTAssertEqual(server.requests("POST", "/oauth/token").count, 1)
    }

    func testAScripted401IsFollowedByARefreshAndOneMoreAttempt() async throws {
        let server = ProfirestTestServer()
        let api = try server.pairedClient()
        server.answer(GET, staffRoute, with: .unauthorized)
        let page: StaffMemberPage = try await api.get("/restaurants/11/staff")
        XCTAssertFalse(page.data.isEmpty)
        XCTAssertEqual(server.refreshCount, 1)
        XCTAssertEqual(server.requests(GET, staffRoute).count, 2)
    }

    func testAStaffAmbiguousAnswerCarriesTheCandidates() async throws {
        let server = ProfirestTestServer()
        let api = try server.pairedClient()
        server.answer("POST", "/v2/restaurants/{restaurant_id}/attendance/punches",
                      with: .staffAmbiguous([("emp_2", "Petr Svoboda"), ("emp_3", "Eva Dvořáková")]))
        let punch = AttendancePunchCreate(
            id: ProfirestApi.uuid(), type: .clockIn, credential: StaffCredential(method: "pin", secret: "2222"))
        do {
            _ = try await api.attendance.createPunch(restaurantID: "11", punch)
            XCTFail("a shared PIN was recorded")
        } catch let error as ProfirestAPIError {
            XCTAssertEqual(error.code, ErrorCode.staffAmbiguous)
            XCTAssertEqual(error.candidates.compactMap { $0["id"]?.stringValue }, ["emp_2", "emp_3"])
        }
        var chosen = punch
        chosen.credential?.employeeId = "emp_2"
        let recorded = try await api.attendance.createPunch(restaurantID: "11", chosen)
        XCTAssertEqual(recorded.id, punch.id)
        XCTAssertEqual(server.recordedPunches.count, 1)
    }

    func testWhileOfflineEveryRequestFailsAndIsRecorded() async throws {
        let server = ProfirestTestServer()
        let api = try server.pairedClient { $0.retries = 0 }
        server.isOffline = true
        do {
            let _: Restaurant = try await api.get("/restaurants/11")
            XCTFail("answered while offline")
        } catch let error as ProfirestAPIError {
            XCTAssertEqual(error.code, ErrorCode.networkError)
        }
        XCTAssertEqual(server.requests.count, 1)
    }

    func testPushedEventsReachAWatcherThroughTheLiveStream() async throws {
        let server = ProfirestTestServer()
        let api = try server.pairedClient()
        let seen = Recorder<String>()
        let watcher = api.eventWatcher(.init(restaurantID: "11", onEvents: { events in seen.add(events.map(\.id)) }))
        let running = Task { await watcher.run() }
        defer { running.cancel() }
        let opened = await eventually { server.openStreams == 1 }
        XCTAssertTrue(opened, "the watcher opened no stream")
        let first = server.pushEvent(type: "order.created", data: ["order_id": "ord_1"])
        let second = server.pushEvent(type: "order.created", data: ["order_id": "ord_2"])
        let delivered = await eventually { seen.items.count == 2 }
        XCTAssertTrue(delivered, "delivered: \(seen.items)")
        XCTAssertEqual(seen.items, [first, second])
        XCTAssertEqual(server.requests(GET, "/v2/events/stream").count, 1, "read through the streaming transport")
        watcher.stop()
        await running.value
    }

    func testEventsPushedWhileTheStreamWasCutAreReadAfterTheReconnect() async throws {
        let server = ProfirestTestServer()
        let api = try server.pairedClient()
        let seen = Recorder<String>()
        let watcher = api.eventWatcher(.init(restaurantID: "11", onEvents: { events in seen.add(events.map(\.id)) }))
        let running = Task { await watcher.run() }
        defer { running.cancel() }
        _ = await eventually { server.openStreams == 1 }
        let first = server.pushEvent(type: "order.created")
        _ = await eventually { seen.items.count == 1 }
        server.dropStreams()
        let second = server.pushEvent(type: "order.created")
        // The reader waits its reconnect delay on the virtual clock; let it pass.
        var reopened = false
        for _ in 0..<20 where !reopened {
            if await server.clock.waitForSleep(limit: 0.05) { server.clock.advance(60) }
            reopened = seen.items.count == 2
        }
        XCTAssertEqual(seen.items, [first, second])
        watcher.stop()
        await running.value
    }

    private let GET = "GET"
}
