//! Lower-case hex, the one spelling of a digest or an id in text: the log's
//! hash chain, the policy revision, a bundle's SHA-256 sums, OTLP's trace
//! and span ids. Std only, so the core and the wire can both use it.

/// Lower-case hex of `bytes`, two digits a byte.
pub fn encode(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
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
    use super::encode;

    #[test]
    fn two_lower_case_digits_a_byte() {
        assert_eq!(encode(&[]), "");
        assert_eq!(encode(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
    }
}
