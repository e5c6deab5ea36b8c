//! The 2ping checksum: the "amended, implementation-compatible" method of the
//! protocol (version 3.0 and later), which is what every deployed 2ping
//! computes.
//!
//! It is a 16-bit one's complement sum over the whole UDP payload with the
//! checksum field zeroed, folded after every word, complemented, and with 0
//! mapped to 0xFFFF (0 on the wire means "not computed"). It lives in its own
//! module because both the encoder and the decoder need it, and because it is
//! the one part of the format with a published test vector.

/// Byte range of the checksum field inside a packet.
pub(crate) const FIELD: std::ops::Range<usize> = 2..4;

/// Computes the 2ping checksum of `payload` as given (the caller zeroes the
/// checksum field first, or uses [`checksum_of_packet`]).
///
/// Never returns 0: a computed 0 is sent as 0xFFFF, as the protocol asks.
pub fn checksum(payload: &[u8]) -> u16 {
    finish(sum_words(0, payload))
}

/// Computes the checksum of a whole packet as if its checksum field (bytes
/// 2..4) were zero, without copying the packet. Payloads shorter than 4
/// bytes are summed as they are.
pub fn checksum_of_packet(packet: &[u8]) -> u16 {
    if packet.len() < FIELD.end {
        return checksum(packet);
    }
    // The field starts at an even offset, so summing the parts on either side
    // of it keeps every word aligned exactly as in the zeroed packet.
    let sum = sum_words(0, &packet[..FIELD.start]);
    finish(sum_words(sum, &packet[FIELD.end..]))
}

/// Adds the big-endian 16-bit words of `bytes` to `sum`, folding the carry
/// after every word as the reference does. Callers only split a packet at
/// even offsets, which keeps word alignment intact.
fn sum_words(mut sum: u32, bytes: &[u8]) -> u32 {
    let mut words = bytes.chunks_exact(2);
    for pair in &mut words {
        sum += u32::from(u16::from_be_bytes([pair[0], pair[1]]));
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    if let [last] = words.remainder() {
        // An odd-length payload is padded with one zero byte.
        sum += u32::from(*last) << 8;
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    sum
}

fn finish(sum: u32) -> u16 {
    let value = !sum & 0xFFFF;
    // `value` fits in 16 bits after the mask; 0 is reserved for "not computed".
    match u16::try_from(value) {
        Ok(0) | Err(_) => 0xFFFF,
        Ok(v) => v,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_test_vector() {
        let payload = [0x32, 0x50, 0, 0, 0, 0, 0, 0, 0xa0, 0x01, 0, 0];
        assert_eq!(checksum(&payload), 0x2DAE);
        assert_eq!(checksum_of_packet(&payload), 0x2DAE);
    }

    #[test]
    fn field_is_ignored_by_checksum_of_packet() {
        let payload = [0x32, 0x50, 0x2d, 0xae, 0, 0, 0, 0, 0xa0, 0x01, 0, 0];
        assert_eq!(checksum_of_packet(&payload), 0x2DAE);
    }

    #[test]
    fn odd_length_is_padded_with_zero() {
        assert_eq!(
            checksum(&[0x12, 0x34, 0x56]),
            checksum(&[0x12, 0x34, 0x56, 0])
        );
    }

    #[test]
    fn zero_result_is_sent_as_ffff() {
        // Words summing to 0xFFFF complement to 0, which must become 0xFFFF.
        assert_eq!(checksum(&[0xFF, 0xFF]), 0xFFFF);
        assert_eq!(checksum(&[]), 0xFFFF);
    }

    #[test]
    fn reference_dumps_verify() {
        // Server reply of the protocol document's example 3.
        let dump = [
            0x32, 0x50, 0x7d, 0xa3, 0, 0, 0, 0, 0xb0, 0x01, 0x00, 0x03, 0x00, 0x00, 0x00, 0x06, 0,
            0, 0, 0, 0xa0, 0x01,
        ];
        assert_eq!(checksum_of_packet(&dump), 0x7da3);
    }
}
