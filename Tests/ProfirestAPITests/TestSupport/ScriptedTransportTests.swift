import Foundation
import ProfirestAPI
import ProfirestTestSupport
import XCTest

/// The one fake transport every unit test builds on: its routes, queue and handler, streamed replies, and the
/// errors it gives for what was not scripted.
final class ScriptedTransportTests: XCTestCase {
    private func request(_ method: String = "GET", _ path: String = "/v2/events") -> HTTPRequest {
        HTTPRequest(method: method, url: URL(string: "https://api.example.test" + path)!)
    }

    func testRoutesComeBeforeTheQueueAndTheQueueBeforeTheHandler() async throws {
        let transport = ScriptedTransport(
            [.respond(APIResponse(status: 201))], otherwise: { _ in .respond(APIResponse(status: 204)) })
        transport.route("GET", "/v2/events", [.respond(APIResponse(status: 200))])

        let routed = try await transport.send(request())
        let queued = try await transport.send(request("POST", "/v2/orders"))
        let handled = try await transport.send(request("POST", "/v2/orders"))
        // The route's queue is empty now and it has no handler of its own: the transport's handler answers.
        let afterRoute = try await transport.send(request())

        XCTAssertEqual([routed.status, queued.status, handled.status, afterRoute.status], [200, 201, 204, 204])
        XCTAssertEqual(transport.requests.count, 4)
        XCTAssertEqual(transport.requests("GET", "/v2/events").count, 2)
    }

    func testAnUnscriptedRequestFailsNamingIt() async {
        let transport = ScriptedTransport([])
        do {
            _ = try await transport.send(request("DELETE", "/v2/customers/c1"))
            XCTFail("an unscripted request must fail")
        } catch let error as ScriptedTransport.Unscripted {
            XCTAssertEqual(error.request.method, "DELETE")
            XCTAssertTrue(error.description.contains("/v2/customers/c1"))
        } catch {
            XCTFail("unexpected \(error)")
        }
    }

    func testChunksAreJoinedForSendAndStreamedForStreamThenBreakOff() async throws {
        let chunks = [Data("a".utf8), Data("b".utf8)]
        let transport = ScriptedTransport([
            .chunks(chunks: chunks), .chunks(chunks: chunks, thenFail: URLError(.networkConnectionLost)),
        ])
        let whole = try await transport.send(request())
        XCTAssertEqual(String(decoding: whole.data, as: UTF8.self), "ab")

        let streamed = try await transport.stream(request())
        var received: [String] = []
        do {
            for try await chunk in streamed.body { received.append(String(decoding: chunk, as: UTF8.self)) }
            XCTFail("the body must break off")
        } catch let error as URLError {
            XCTAssertEqual(error.code, .networkConnectionLost)
        }
        XCTAssertEqual(received, ["a", "b"])
    }

    func testALiveStreamYieldsWhatTheTestSends() async throws {
        let (reply, body) = ScriptedTransport.Reply.live(headers: ["Content-Type": "text/event-stream"])
        let transport = ScriptedTransport([reply])
        let head = try await transport.stream(request())
        XCTAssertEqual(head.headers["Content-Type"], "text/event-stream")
        body.yield(Data("data: 1\n\n".utf8))
        body.finish()
        var text = ""
        for try await chunk in head.body { text += String(decoding: chunk, as: UTF8.self) }
        XCTAssertEqual(text, "data: 1\n\n")
    }

    func testAFailureIsThrownAndAHangEndsOnlyWithItsCancellation() async throws {
        let transport = ScriptedTransport([.fail(URLError(.cannotConnectToHost)), .hang])
        do {
            _ = try await transport.send(request())
            XCTFail("the failure must be thrown")
        } catch let error as URLError {
            XCTAssertEqual(error.code, .cannotConnectToHost)
        }
        let hangingRequest = request()
        let hung = Task { try await transport.send(hangingRequest) }
        // No answer comes by itself; the test ends the request the way the library's deadline does.
        while transport.requests.count < 2 { await Task.yield() }
        hung.cancel()
        do {
            _ = try await hung.value
            XCTFail("a cancelled hang must throw")
        } catch {
            XCTAssertTrue(error is CancellationError, "\(error)")
        }
    }

    func testWithoutStreamingHidesTheStreamingEntry() {
        let transport = ScriptedTransport([])
        XCTAssertTrue((transport as any HTTPTransport) is any StreamingHTTPTransport)
        XCTAssertFalse(transport.withoutStreaming is any StreamingHTTPTransport)
    }
}
