//! Lower-case hex, the one spelling of a digest or an id in text: the log's
//! hash chain, the policy revision, a bundle's SHA-256 sums, OTLP's trace
//! and span ids. Std only, so the core and the wire can both use it.

const DIGITS: &[u8; 16] = b"0123456789abcdef";

/// Lower-case hex of a SHA-256 digest, on the stack: the log's chain
/// writes two a line, and a `String` each was two allocations a line.
pub fn encode_digest(digest: &[u8; 32]) -> [u8; 64] {
    let mut out = [0u8; 64];
    for (pair, b) in out.chunks_exact_mut(2).zip(digest) {
        pair[0] = DIGITS[(b >> 4) as usize];
        pair[1] = DIGITS[(b & 0xf) as usize];
    }
    out
}

/// Lower-case hex of `bytes`, two digits a byte.
pub fn encode(bytes: &[u8]) -> String {
    // Bytes first, checked once: `String::push` encodes each `char` as
    // UTF-8, which cost the log's chain a few thousand instructions a line.
    let digits: Vec<u8> = bytes
        .iter()
        .flat_map(|b| [DIGITS[(b >> 4) as usize], DIGITS[(b & 0xf) as usize]])
        .collect();
    String::from_utf8(digits).expect("hex digits are ASCII")
}

#[cfg(test)]
mod tests {
    use super::{encode, encode_digest};

    #[test]
    fn two_lower_case_digits_a_byte() {
        assert_eq!(encode(&[]), "");
        assert_eq!(encode(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
        let digest: [u8; 32] = std::array::from_fn(|i| (i * 37) as u8);
        assert_eq!(
            encode_digest(&digest).as_slice(),
            encode(&digest).as_bytes()
        );
    }
}
