import Foundation

/// RFC 9562 UUIDv7 strings that sort strictly in creation order within this process.
///
/// Layout: 48-bit Unix milliseconds, version 7, a 12-bit counter in `rand_a` (RFC 9562 §6.2, method 1),
/// variant `10`, 62 random bits. Strict order is what lets the server treat a client id as an
/// idempotency key and lets callers sort locally created records.
enum UUIDv7 {
    static let shared = UUIDv7Generator()

    static func make(now: Date) -> String {
        shared.next(now: now)
    }
}

/// One monotonic sequence; `UUIDv7.shared` is the process-wide one, tests make their own.
final class UUIDv7Generator: @unchecked Sendable {
    // @unchecked: every mutable field is touched only while `lock` is held.
    // NSLock rather than Mutex/OSAllocatedUnfairLock: those are missing on some of our deployment targets.
    private let lock = NSLock()
    private var lastMillis: UInt64 = 0
    private var counter: UInt16 = 0
    private var started = false

    private static let maxMillis: UInt64 = (1 << 48) - 1
    private static let maxCounter: UInt16 = 0xFFF

    func next(now: Date) -> String {
        var rng = SystemRandomNumberGenerator()
        let randB = rng.next() as UInt64
        // A fresh millisecond starts the counter at a random value with its top bit clear: that hides how many
        // ids were made before it, yet leaves at least 2048 increments before the counter overflows.
        let seed = UInt16(truncatingIfNeeded: rng.next() as UInt64) & 0x7FF
        let millis = Self.millis(of: now)

        lock.lock()
        if !started || millis > lastMillis {
            started = true
            lastMillis = millis
            counter = seed
        } else if counter < Self.maxCounter {
            // Same millisecond or a clock that went backwards: keep the last timestamp so order holds.
            counter += 1
        } else {
            // Overflow: borrow the next millisecond rather than break order; the clock catches up later.
            lastMillis = min(lastMillis + 1, Self.maxMillis)
            counter = seed
        }
        let (ms, ctr) = (lastMillis, counter)
        lock.unlock()

        return Self.format(millis: ms, counter: ctr, random: randB)
    }

    private static func millis(of date: Date) -> UInt64 {
        let ms = (date.timeIntervalSince1970 * 1000).rounded(.down)
        guard ms.isFinite, ms > 0 else { return 0 }
        return ms >= Double(maxMillis) ? maxMillis : UInt64(ms)
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    private static func format(millis: UInt64, counter: UInt16, random: UInt64) -> String {
        var bytes = (
            UInt8(truncatingIfNeeded: millis >> 40), UInt8(truncatingIfNeeded: millis >> 32),
            UInt8(truncatingIfNeeded: millis >> 24), UInt8(truncatingIfNeeded: millis >> 16),
            UInt8(truncatingIfNeeded: millis >> 8), UInt8(truncatingIfNeeded: millis),
            UInt8(0x70 | (counter >> 8) & 0x0F), UInt8(truncatingIfNeeded: counter),
            UInt8(0x80 | (random >> 56) & 0x3F), UInt8(truncatingIfNeeded: random >> 48),
            UInt8(truncatingIfNeeded: random >> 40), UInt8(truncatingIfNeeded: random >> 32),
            UInt8(truncatingIfNeeded: random >> 24), UInt8(truncatingIfNeeded: random >> 16),
            UInt8(truncatingIfNeeded: random >> 8), UInt8(truncatingIfNeeded: random)
        )
        return withUnsafeBytes(of: &bytes) { raw in
            String(unsafeUninitializedCapacity: 36) { out in
                var o = 0
                for (i, byte) in raw.enumerated() {
                    if i == 4 || i == 6 || i == 8 || i == 10 {
                        out[o] = UInt8(ascii: "-")
                        o += 1
                    }
                    out[o] = hexDigits[Int(byte >> 4)]
                    out[o + 1] = hexDigits[Int(byte & 0x0F)]
                    o += 2
                }
                return o
            }
        }
    }
}
