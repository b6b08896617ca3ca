//! Lower-case hex, the one spelling of a digest or an id in text: the log's
//! hash chain, the policy revision, a bundle's SHA-256 sums, OTLP's trace
//! and span ids. Std only, so the core and the wire can both use it.

/// Lower-case hex of `bytes`, two digits a byte.
pub fn encode(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        text.push(DIGITS[(b >> 4) as usize] as char);
        text.push(DIGITS[(b & 0xf) as usize] as char);
    }
    text
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
