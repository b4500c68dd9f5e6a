import Foundation

/// SHA-256 (FIPS 180-4), HMAC (RFC 2104) and PBKDF2 (RFC 8018) in plain Swift, for platforms without CryptoKit.
///
/// Speed matters mostly for PBKDF2, so HMAC keeps the states after the ipad/opad blocks and each PBKDF2
/// iteration is exactly two compressions on words, with no allocation and no byte shuffling.
enum PortableSHA256 {
    struct State {
        var h0: UInt32 = 0x6a09_e667, h1: UInt32 = 0xbb67_ae85, h2: UInt32 = 0x3c6e_f372, h3: UInt32 = 0xa54f_f53a
        var h4: UInt32 = 0x510e_527f, h5: UInt32 = 0x9b05_688c, h6: UInt32 = 0x1f83_d9ab, h7: UInt32 = 0x5be0_cd19
    }

    private static let k: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    static func hash(_ data: Data) -> Data {
        var state = State()
        return data.withUnsafeBytes { message in
            withSchedule { w in
                finish(&state, alreadyHashed: 0, message: message, w: w)
                return digest(state)
            }
        }
    }

    static func hmac(key: Data, message: Data) -> Data {
        var (inner, outer) = keyedStates(key)
        return message.withUnsafeBytes { message in
            withSchedule { w in
                finishHMAC(inner: &inner, outer: &outer, message: message, w: w)
                return digest(outer)
            }
        }
    }

    static func pbkdf2(password: Data, salt: Data, iterations: Int, keyLength: Int) -> Data {
        let (innerKeyed, outerKeyed) = keyedStates(password)
        var output = Data(capacity: keyLength + 32)
        var saltAndIndex = salt
        saltAndIndex.append(contentsOf: [0, 0, 0, 0])
        let indexOffset = salt.count
        var blockIndex: UInt32 = 1
        withSchedule { w in
            while output.count < keyLength {
                saltAndIndex[indexOffset] = UInt8(truncatingIfNeeded: blockIndex >> 24)
                saltAndIndex[indexOffset + 1] = UInt8(truncatingIfNeeded: blockIndex >> 16)
                saltAndIndex[indexOffset + 2] = UInt8(truncatingIfNeeded: blockIndex >> 8)
                saltAndIndex[indexOffset + 3] = UInt8(truncatingIfNeeded: blockIndex)
                var inner = innerKeyed, u = outerKeyed
                saltAndIndex.withUnsafeBytes { finishHMAC(inner: &inner, outer: &u, message: $0, w: w) }
                var t = u
                if iterations > 1 {
                    for _ in 2...iterations {
                        u = hmacOfDigest(u, inner: innerKeyed, outer: outerKeyed, w: w)
                        xor(&t, u)
                    }
                }
                output.append(digest(t))
                blockIndex &+= 1
            }
        }
        return output.prefix(keyLength)
    }

    /// The 64-word message schedule lives on the stack and is reused for every block of one operation.
    private static func withSchedule<R>(_ body: (UnsafeMutablePointer<UInt32>) -> R) -> R {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { body($0.baseAddress!) }
    }

    /// The HMAC states after absorbing `key ⊕ ipad` and `key ⊕ opad`, reusable for any message.
    private static func keyedStates(_ key: Data) -> (inner: State, outer: State) {
        var padded = [UInt8](repeating: 0, count: 64)
        if key.count > 64 {
            let hashed = hash(key)
            padded.replaceSubrange(0..<32, with: hashed)
        } else {
            padded.replaceSubrange(0..<key.count, with: key)
        }
        var inner = State(), outer = State()
        withSchedule { w in
            var block = padded.map { $0 ^ 0x36 }
            block.withUnsafeBytes { loadBlock($0.baseAddress!, into: w) }
            compress(&inner, w)
            block = padded.map { $0 ^ 0x5c }
            block.withUnsafeBytes { loadBlock($0.baseAddress!, into: w) }
            compress(&outer, w)
        }
        return (inner, outer)
    }

    private static func finishHMAC(
        inner: inout State, outer: inout State, message: UnsafeRawBufferPointer, w: UnsafeMutablePointer<UInt32>
    ) {
        finish(&inner, alreadyHashed: 64, message: message, w: w)
        outer = hashDigest(inner, onto: outer, w: w)
    }

    /// HMAC of a 32-byte message given as a state: one padded block for the inner hash, one for the outer.
    @inline(__always)
    private static func hmacOfDigest(
        _ message: State, inner: State, outer: State, w: UnsafeMutablePointer<UInt32>
    ) -> State {
        hashDigest(hashDigest(message, onto: inner, w: w), onto: outer, w: w)
    }

    /// Hashes a 32-byte value (as words) on top of a keyed state: 64 bytes already hashed + 32 = 768 bits.
    @inline(__always)
    private static func hashDigest(_ value: State, onto keyed: State, w: UnsafeMutablePointer<UInt32>) -> State {
        w[0] = value.h0; w[1] = value.h1; w[2] = value.h2; w[3] = value.h3
        w[4] = value.h4; w[5] = value.h5; w[6] = value.h6; w[7] = value.h7
        w[8] = 0x8000_0000
        w[9] = 0; w[10] = 0; w[11] = 0; w[12] = 0; w[13] = 0; w[14] = 0
        w[15] = 768
        var s = keyed
        compress(&s, w)
        return s
    }

    /// Hashes the rest of a message and pads it; `alreadyHashed` bytes (a multiple of 64) are in `state`.
    private static func finish(
        _ state: inout State, alreadyHashed: Int, message: UnsafeRawBufferPointer, w: UnsafeMutablePointer<UInt32>
    ) {
        let fullBlocks = message.count / 64
        if let base = message.baseAddress {
            for i in 0..<fullBlocks {
                loadBlock(base + i * 64, into: w)
                compress(&state, w)
            }
        }
        let tailCount = message.count - fullBlocks * 64
        let bitLength = UInt64(alreadyHashed + message.count) &* 8
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 128) { tail in
            let tail = UnsafeMutableRawBufferPointer(tail)
            tail.initializeMemory(as: UInt8.self, repeating: 0)
            if tailCount > 0 {
                tail.baseAddress!.copyMemory(from: message.baseAddress! + fullBlocks * 64, byteCount: tailCount)
            }
            tail[tailCount] = 0x80
            let blocks = tailCount < 56 ? 1 : 2
            let end = blocks * 64
            for i in 0..<8 {
                tail[end - 1 - i] = UInt8(truncatingIfNeeded: bitLength >> (8 * UInt64(i)))
            }
            for i in 0..<blocks {
                loadBlock(tail.baseAddress! + i * 64, into: w)
                compress(&state, w)
            }
        }
    }

    @inline(__always)
    private static func loadBlock(_ bytes: UnsafeRawPointer, into w: UnsafeMutablePointer<UInt32>) {
        for i in 0..<16 {
            w[i] = UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self))
        }
    }

    @inline(__always)
    private static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 {
        (x &>> n) | (x &<< (32 &- n))
    }

    /// One compression; `w[0..<16]` holds the block's words, the rest is scratch.
    private static func compress(_ state: inout State, _ w: UnsafeMutablePointer<UInt32>) {
        for t in 16..<64 {
            let x = w[t - 15], y = w[t - 2]
            let s0 = rotr(x, 7) ^ rotr(x, 18) ^ (x &>> 3)
            let s1 = rotr(y, 17) ^ rotr(y, 19) ^ (y &>> 10)
            w[t] = w[t - 16] &+ s0 &+ w[t - 7] &+ s1
        }
        var a = state.h0, b = state.h1, c = state.h2, d = state.h3
        var e = state.h4, f = state.h5, g = state.h6, h = state.h7
        k.withUnsafeBufferPointer { k in
            for t in 0..<64 {
                let bigS1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)
                let ch = (e & f) ^ (~e & g)
                let t1 = h &+ bigS1 &+ ch &+ k[t] &+ w[t]
                let bigS0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)
                let maj = (a & b) ^ (a & c) ^ (b & c)
                let t2 = bigS0 &+ maj
                h = g; g = f; f = e; e = d &+ t1
                d = c; c = b; b = a; a = t1 &+ t2
            }
        }
        state.h0 &+= a; state.h1 &+= b; state.h2 &+= c; state.h3 &+= d
        state.h4 &+= e; state.h5 &+= f; state.h6 &+= g; state.h7 &+= h
    }

    private static func xor(_ t: inout State, _ u: State) {
        t.h0 ^= u.h0; t.h1 ^= u.h1; t.h2 ^= u.h2; t.h3 ^= u.h3
        t.h4 ^= u.h4; t.h5 ^= u.h5; t.h6 ^= u.h6; t.h7 ^= u.h7
    }

    private static func digest(_ s: State) -> Data {
        var words = (
            s.h0.bigEndian, s.h1.bigEndian, s.h2.bigEndian, s.h3.bigEndian,
            s.h4.bigEndian, s.h5.bigEndian, s.h6.bigEndian, s.h7.bigEndian
        )
        return withUnsafeBytes(of: &words) { Data($0) }
    }
}
