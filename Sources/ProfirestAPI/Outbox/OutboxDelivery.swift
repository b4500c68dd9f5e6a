import Foundation

/// One delivery round of an ``Outbox``: the oldest writes first, each request alone and consecutive punches of one
/// restaurant in a batch, until the queue is empty or a write gets no definitive answer.
extension Outbox {
    /// What the server's answer means for one queued write.
    enum Verdict {
        /// Recorded (2xx), with the answer.
        case delivered(JSONValue?)
        /// Refused for good: it leaves the queue and the error goes to its caller or `onFailure`.
        case refused(ProfirestAPIError)
        /// No definitive answer: it stays, and the round stops here to keep the order.
        case kept(ProfirestAPIError)
    }

    /// What became of one batch request.
    enum BatchAnswer {
        /// The server answered with a result per punch.
        case answered([String: Verdict])
        /// No definitive answer for the batch as a whole: every punch in it stays, and the batch stays begun.
        case kept(ProfirestAPIError)
        /// The server refused the batch as a whole.
        case refused(ProfirestAPIError)
    }

    /// Whether the delivery may go on after a round, with the next round when it was picked from the journal under
    /// the lock that recorded this one's outcome.
    enum Sequel {
        case stop
        case goOn(OutboxJournal.Round?)
    }

    /// Sends waiting writes in order; called only inside `Outbox.delivering`, so one round runs at a time in this process.
    func deliver() async {
        var picked: OutboxJournal.Round?
        while !Task.isCancelled {
            // Afresh from the file (in the section that recorded the last outcome, or now): another process sharing
            // it may have delivered or added writes.
            guard let round = picked ?? (try? journal.nextRound()) else { return }
            let sequel: Sequel
            switch round {
            case .request(let entry):
                sequel = record([entry], [entry.id: await send(entry)], answeredBatch: nil, pickingNext: true)
            case .batch(let key, let entries):
                sequel = await deliverBatch(entries, key: key, pickingNext: true)
            }
            guard case .goOn(let next) = sequel else { return }
            picked = next
        }
    }

    /// A queued request, as it was handed in: its bytes, its Idempotency-Key, no staff token, no retries of the
    /// core's own (the outbox retries, durably).
    private func send(_ entry: JournalEntry) async -> Verdict {
        let options = RequestOptions(idempotencyKey: .key(entry.id), staff: .none, retries: 0)
        do {
            let response = try await core.response(for: ProfirestRequest(
                "POST", entry.path, body: .data(entry.body, contentType: entry.contentType), options: options, as: JSONValue?.self))
            return verdict(answered: response)
        } catch {
            return verdict(error)
        }
    }

    /// A begun batch, and what follows from its answer: a result per punch; nothing (it goes again as it is); or a
    /// refusal as a whole, after which each punch goes alone, so that only the one the server cannot take is
    /// refused. Returns whether the round may go on (and the next round, when `pickingNext` and it was picked).
    private func deliverBatch(_ entries: [JournalEntry], key: String, pickingNext: Bool) async -> Sequel {
        switch await sendBatch(entries, key: key) {
        case .answered(let verdicts):
            return record(entries, verdicts, answeredBatch: key, pickingNext: pickingNext)
        case .kept(let error):
            return record(
                entries, Dictionary(uniqueKeysWithValues: entries.map { ($0.id, .kept(error)) }), answeredBatch: nil,
                pickingNext: false)
        case .refused(let error):
            guard entries.count > 1 else {
                return record(entries, [entries[0].id: .refused(error)], answeredBatch: key, pickingNext: pickingNext)
            }
            guard case .goOn = record([], [:], answeredBatch: key, pickingNext: false) else { return .stop }
            for entry in entries {
                guard let alone = try? journal.beginBatch([entry.id]),
                    case .goOn = await deliverBatch([entry], key: alone, pickingNext: false)
                else {
                    return .stop
                }
            }
            return .goOn(nil)
        }
    }

    /// Consecutive punches of one restaurant as `POST …/attendance/punches/batch` under the batch's own key.
    private func sendBatch(_ entries: [JournalEntry], key: String) async -> BatchAnswer {
        guard let restaurantID = entries.first?.restaurantID,
            let punches = try? entries.map({ try JSONCoding.decoder.decode(JSONValue.self, from: $0.body) })
        else {
            return .refused(core.errors().make(ErrorCode.invalidResponse, detail: "a journaled punch cannot be read"))
        }
        let options = RequestOptions(idempotencyKey: .key(key), staff: .none, retries: 0)
        let response: APIResponse
        do {
            response = try await core.response(for: ProfirestRequest(
                "POST", "/restaurants/\(restaurantID)/attendance/punches/batch",
                body: .data(try JSONCoding.encode(JSONValue.object(["punches": .array(punches)])), contentType: "application/json"),
                options: options, as: JSONValue?.self))
        } catch {
            switch verdict(error) {
            case .kept(let error): return .kept(error)
            case .refused(let error): return .refused(error)
            case .delivered: return .kept(unexpected(error))
            }
        }
        guard let results = Self.json(in: response)?["results"]?.arrayValue else {
            return .kept(unreadable(response))
        }
        var verdicts: [String: Verdict] = [:]
        for result in results {
            guard let id = result["id"]?.stringValue, let status = result["status"]?.intValue else { continue }
            if (200..<300).contains(status) {
                verdicts[id] = .delivered(result["punch"])
            } else {
                let problem = (try? JSONCoding.encode(result["problem"] ?? .object([:]))) ?? Data()
                let answer = APIResponse(status: status, headers: ["Content-Type": "application/problem+json"], data: problem)
                verdicts[id] = verdict(core.errors().fromResponse(answer, now: core.clock()))
            }
        }
        for entry in entries where verdicts[entry.id] == nil {
            verdicts[entry.id] = .kept(core.errors().make(ErrorCode.invalidResponse, detail: "the batch answer has no result for this punch"))
        }
        return .answered(verdicts)
    }

    /// A 2xx is definitive only when its body can be read: a proxy's page or a cut body may not be the server's.
    private func verdict(answered response: APIResponse) -> Verdict {
        if response.data.isEmpty { return .delivered(nil) }
        guard let answer = Self.json(in: response) else { return .kept(unreadable(response)) }
        return .delivered(answer)
    }

    /// Keep or refuse, by the one rule on the catalog's retryable column (`SendPolicy.keepsWriteWaiting`).
    private func verdict(_ error: Error) -> Verdict {
        guard let error = error as? ProfirestAPIError else { return .kept(unexpected(error)) }
        return SendPolicy.keepsWriteWaiting(error) ? .kept(error) : .refused(error)
    }

    /// Something other than the server's answer stopped the send (a cancellation): nothing is known, it waits.
    private func unexpected(_ error: Error) -> ProfirestAPIError {
        core.errors().make(ErrorCode.networkError, detail: "not sent: \(type(of: error))")
    }

    private func unreadable(_ response: APIResponse) -> ProfirestAPIError {
        core.errors().make(
            ErrorCode.invalidResponse, status: response.status,
            detail: "HTTP \(response.status) with a body that is not the expected JSON; the write stays queued")
    }

    private static func json(in response: APIResponse) -> JSONValue? {
        guard response.header("Content-Type")?.lowercased().contains("json") == true else { return nil }
        return try? JSONCoding.decoder.decode(JSONValue.self, from: response.data)
    }

    /// Journals what the round settled and what it left waiting, then hands each outcome to its caller or to
    /// `onFailure` and tells `run()` when to send again. Returns whether the round may go on: not when a write was
    /// kept (the order), nor when the journal could not be written (the settled writes then stay, and go again
    /// later, which the server answers from its records); with `pickingNext`, the journal picks the next round in
    /// the same locked section.
    private func record(
        _ round: [JournalEntry], _ verdicts: [String: Verdict], answeredBatch: String?, pickingNext: Bool
    ) -> Sequel {
        var delivered: [String] = []
        var refused: [String: JournalSettlement.Refusal] = [:]
        var kept: [String: String] = [:]
        var firstKept: ProfirestAPIError?
        for entry in round {
            switch verdicts[entry.id] {
            case .delivered?: delivered.append(entry.id)
            case .refused(let error)?: refused[entry.id] = .init(code: error.code, status: error.status)
            case .kept(let error)?:
                kept[entry.id] = error.code
                if firstKept == nil { firstKept = error }
            case nil: break
            }
        }
        let next: OutboxJournal.Round?
        do {
            next = try journal.record(
                delivered: delivered, refused: refused, kept: kept, closes: answeredBatch, pickingNext: pickingNext)
        } catch {
            return .stop
        }
        if let observe = core.observe {
            for entry in round {
                switch verdicts[entry.id] {
                case .delivered?: observe(.outbox(.delivered(id: entry.id)))
                case .refused(let error)?: observe(.outbox(.refused(id: entry.id, code: error.code)))
                case .kept(let error)?: observe(.outbox(.waiting(id: entry.id, code: error.code)))
                case nil: break
                }
            }
        }
        var refusedLater: [OutboxFailure] = []
        state.withLock { state in
            for entry in round {
                switch verdicts[entry.id] {
                case .delivered(let answer)?:
                    if state.awaited.contains(entry.id) { state.outcomes[entry.id] = .success(answer) }
                case .refused(let error)?:
                    if state.awaited.contains(entry.id) {
                        state.outcomes[entry.id] = .failure(error)
                    } else {
                        refusedLater.append(OutboxFailure(item: entry.item, error: error))
                    }
                case .kept(let error)?:
                    state.lastFailure = error
                case nil:
                    break
                }
            }
            if kept.isEmpty, !(delivered.isEmpty && refused.isEmpty) { state.lastFailure = nil }
        }
        // The queue and its last failure changed: the client's state stream says so.
        core.store.changes.notify()
        if let firstKept {
            noteFailedRound(retryAfter: firstKept.retryAfter)
        } else if !(delivered.isEmpty && refused.isEmpty) {
            noteSettledRound()
        }
        for failure in refusedLater { onFailure?(failure) }
        return kept.isEmpty ? .goOn(next) : .stop
    }
}
