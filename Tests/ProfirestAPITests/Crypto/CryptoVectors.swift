import Foundation

/// Published test vectors for the library's hashing, shared by CryptoTests (the platform's backend and the portable
/// code) and PlatformShimsTests' AppleCryptoBranchTests (the CryptoKit and CommonCrypto branches, through a link to this
/// file), so both check the same bytes.
enum CryptoVectors {
    /// FIPS 180-2's SHA-256 examples, the empty message and one million "a".
    static let sha256: [(message: Data, digest: String)] = [
        (Data("abc".utf8), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (Data(), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        (Data("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8),
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        (Data(repeating: UInt8(ascii: "a"), count: 1_000_000),
         "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"),
    ]

    /// RFC 4231's HMAC-SHA256 cases 1–4, 6 and 7 (case 5, truncated, is checked where the branch allows it).
    static let hmacSHA256: [(key: Data, message: Data, mac: String)] = {
        let longKey = Data(repeating: 0xaa, count: 131)
        return [
            (Data(repeating: 0x0b, count: 20), Data("Hi There".utf8),
             "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
            (Data("Jefe".utf8), Data("what do ya want for nothing?".utf8),
             "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
            (Data(repeating: 0xaa, count: 20), Data(repeating: 0xdd, count: 50),
             "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
            (Data(1...25), Data(repeating: 0xcd, count: 50),
             "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
            (longKey, Data("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
             "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
            (longKey,
             Data(("This is a test using a larger than block-size key and a larger than block-size data. "
                 + "The key needs to be hashed before being used by the HMAC algorithm.").utf8),
             "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
        ]
    }()

    /// RFC 6070's inputs with HMAC-SHA256 (the widely published set), plus a password longer than a block and a key
    /// spanning three blocks (from Python's hashlib).
    static let pbkdf2SHA256: [(password: String, salt: String, iterations: Int, length: Int, key: String)] = [
        ("password", "salt", 1, 32, "120fb6cffcf8b32c43e7225256c4f837a86548c92ccc35480805987cb70be17b"),
        ("password", "salt", 2, 32, "ae4d0c95af6b46d32d0adff928f06dd02a303f8ef3c251dfd6e2d85a95474c43"),
        ("password", "salt", 4096, 32, "c5e478d59288c841aa530db6845c4c8d962893a001ce4e11a4963873aa98134a"),
        ("passwordPASSWORDpassword", "saltSALTsaltSALTsaltSALTsaltSALTsalt", 4096, 40,
         "348c89dbcbd32b2f32d814b8116e84cf2b17347ebc1800181c4e2a1fb8dd53e1c635518c7dac47e9"),
        ("pass\0word", "sa\0lt", 4096, 16, "89b69d0516f829893c696226650a8687"),
        (String(repeating: "k", count: 100), "s", 3, 70,
         "5393fdd22141d18e0ad7f185974c30da7be2e9b79425e88e4991c4fc7c9027cb895e27ba09d1ff1d841d8a431a248da1"
            + "91e13e60ea407957d3dee1d796093886dc016c29c6ef"),
    ]
}
