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

    /// Sends waiting writes in order; called only inside `gate`, so one round runs at a time.
    func deliver() async {
        // Afresh from the file: another process sharing it may have delivered or added writes. Each round's record
        // reads the file again anyway, so the next round starts from what it wrote.
        guard var entries = try? journal.update({ $0 }) else { return }
        while !Task.isCancelled, let head = entries.first {
            let round: [JournalEntry]
            if head.kind == OutboxItem.Kind.punch.rawValue {
                round = Array(entries.prefix { $0.kind == head.kind && $0.restaurantID == head.restaurantID }.prefix(100))
            } else {
                round = [head]
            }
            let verdicts = round.count == 1 && head.kind != OutboxItem.Kind.punch.rawValue
                ? [head.id: await send(head)]
                : await sendBatch(round)
            guard let rest = record(round, verdicts) else { return }
            entries = rest
        }
    }

    /// A queued request, as it was handed in: its bytes, its Idempotency-Key, no staff token, no retries of the
    /// pipeline's own (the outbox retries, durably).
    private func send(_ entry: JournalEntry) async -> Verdict {
        let options = RequestOptions(idempotencyKey: .key(entry.id), staff: .none, retries: 0)
        do {
            let response = try await api.execute("POST", path: entry.path, body: (entry.body, entry.contentType), options: options)
            return verdict(answered: response)
        } catch {
            return verdict(error)
        }
    }

    /// Consecutive punches of one restaurant as `POST …/attendance/punches/batch`, a verdict per punch from its own
    /// result.
    private func sendBatch(_ entries: [JournalEntry]) async -> [String: Verdict] {
        let everyone = { (verdict: Verdict) in Dictionary(uniqueKeysWithValues: entries.map { ($0.id, verdict) }) }
        guard let restaurantID = entries.first?.restaurantID,
            let punches = try? entries.map({ try JSONCoding.decoder.decode(JSONValue.self, from: $0.body) })
        else {
            return everyone(.refused(api.errorFactory.make(ErrorCode.invalidResponse, detail: "a journaled punch cannot be read")))
        }
        let options = RequestOptions(staff: .none, retries: 0)
        let response: APIResponse
        do {
            response = try await api.execute(
                "POST", path: "/restaurants/\(restaurantID)/attendance/punches/batch",
                body: (try JSONCoding.encode(JSONValue.object(["punches": .array(punches)])), "application/json"),
                options: options)
        } catch {
            let whole = verdict(error)
            if case .refused = whole, entries.count > 1 {
                // A refusal of the whole batch must not take every punch in it along: each goes alone, so only the
                // one the server cannot take is refused.
                var verdicts: [String: Verdict] = [:]
                for entry in entries {
                    let alone = await sendBatch([entry])[entry.id] ?? whole
                    verdicts[entry.id] = alone
                    // No answer for this one: the rest wait behind it, in order.
                    if case .kept = alone {
                        for later in entries where verdicts[later.id] == nil { verdicts[later.id] = alone }
                        break
                    }
                }
                return verdicts
            }
            return everyone(whole)
        }
        guard let results = Self.json(in: response)?["results"]?.arrayValue else {
            return everyone(.kept(unreadable(response)))
        }
        var verdicts: [String: Verdict] = [:]
        for result in results {
            guard let id = result["id"]?.stringValue, let status = result["status"]?.intValue else { continue }
            if (200..<300).contains(status) {
                verdicts[id] = .delivered(result["punch"])
            } else {
                let problem = (try? JSONCoding.encode(result["problem"] ?? .object([:]))) ?? Data()
                let answer = APIResponse(status: status, headers: ["Content-Type": "application/problem+json"], data: problem)
                verdicts[id] = verdict(api.errorFactory.fromResponse(answer, now: api.settings.clock()))
            }
        }
        for entry in entries where verdicts[entry.id] == nil {
            verdicts[entry.id] = .kept(api.errorFactory.make(ErrorCode.invalidResponse, detail: "the batch answer has no result for this punch"))
        }
        return verdicts
    }

    /// A 2xx is definitive only when its body can be read: a proxy's page or a cut body may not be the server's.
    private func verdict(answered response: APIResponse) -> Verdict {
        if response.data.isEmpty { return .delivered(nil) }
        guard let answer = Self.json(in: response) else { return .kept(unreadable(response)) }
        return .delivered(answer)
    }

    /// Errors that leave the write waiting: no answer, the server's trouble, rate limits, a write still running,
    /// and the connection's own state (tokens, pairing, scope), which the app can put right without the write
    /// being wrong. Everything else is the write's own fault and final.
    private func verdict(_ error: Error) -> Verdict {
        guard let error = error as? ProfirestAPIError else {
            return .kept(api.errorFactory.make(ErrorCode.networkError, detail: "not sent: \(type(of: error))"))
        }
        return verdict(error)
    }

    private func verdict(_ error: ProfirestAPIError) -> Verdict {
        let waits = error.retryable || error.status == 0 || error.status >= 500 || error.status == 429
            || error.code == ErrorCode.invalidToken || error.code == ErrorCode.notPaired
            || error.code == ErrorCode.insufficientScope
            || error.code == ErrorCode.idempotencyInProgress
        return waits ? .kept(error) : .refused(error)
    }

    private func unreadable(_ response: APIResponse) -> ProfirestAPIError {
        api.errorFactory.make(
            ErrorCode.invalidResponse, status: response.status,
            detail: "HTTP \(response.status) with a body that is not the expected JSON; the write stays queued")
    }

    private static func json(in response: APIResponse) -> JSONValue? {
        guard response.header("Content-Type")?.lowercased().contains("json") == true else { return nil }
        return try? JSONCoding.decoder.decode(JSONValue.self, from: response.data)
    }

    /// Takes delivered and refused writes out of the journal, notes the failure of the kept ones, and hands each
    /// outcome to its caller or to `onFailure`. Returns the journal as written, or nil when the delivery must stop
    /// (a write was kept, or the journal could not be written).
    private func record(_ round: [JournalEntry], _ verdicts: [String: Verdict]) -> [JournalEntry]? {
        var kept: [String: ProfirestAPIError] = [:]
        var settled: Set<String> = []
        for (id, verdict) in verdicts {
            switch verdict {
            case .kept(let error): kept[id] = error
            case .delivered, .refused: settled.insert(id)
            }
        }
        let ids = Set(round.map(\.id))
        let rest: [JournalEntry]
        do {
            rest = try journal.update { entries in
                entries.removeAll { ids.contains($0.id) && settled.contains($0.id) }
                for index in entries.indices {
                    if let error = kept[entries[index].id], ids.contains(entries[index].id) {
                        entries[index].attempts += 1
                        entries[index].lastErrorCode = error.code
                    }
                }
                return entries
            }
        } catch {
            // Not written: the settled writes stay and go again later, which the server answers from its records.
            return nil
        }
        if let observe = api.settings.observe {
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
            if kept.isEmpty, !settled.isEmpty { state.lastFailure = nil }
        }
        for failure in refusedLater { onFailure?(failure) }
        return kept.isEmpty ? rest : nil
    }
}
