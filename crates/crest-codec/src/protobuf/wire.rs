//! Protobuf wire primitives (varints, keys, length-delimited fields), with prost's varint
//! codec underneath and gogo-protobuf's error texts, which kube-apiserver's messages carry.

use bytes::Buf;

pub(crate) const VARINT: u8 = 0;
pub(crate) const FIXED64: u8 = 1;
pub(crate) const LEN: u8 = 2;
pub(crate) const FIXED32: u8 = 5;

/// `io.ErrUnexpectedEOF`'s text.
pub(crate) const UNEXPECTED_EOF: &str = "unexpected EOF";

pub(crate) struct Reader<'a> {
    pub(crate) buf: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Reader { buf }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    pub(crate) fn varint(&mut self) -> Result<u64, String> {
        if self.buf.is_empty() {
            return Err(UNEXPECTED_EOF.into());
        }
        // A varint of more than 10 bytes is gogo's ErrIntOverflowGenerated.
        let long = self.buf.iter().take(10).all(|b| b & 0x80 != 0);
        if long && self.buf.len() >= 10 {
            return Err("proto: integer overflow".into());
        }
        prost::encoding::decode_varint(&mut self.buf).map_err(|_| UNEXPECTED_EOF.to_string())
    }

    /// A field key: (field number, wire type), with gogo's checks for `msg`.
    pub(crate) fn key(&mut self, msg: &str) -> Result<(u32, u8), String> {
        let k = self.varint()?;
        let wire = (k & 7) as u8;
        let num = k >> 3;
        if wire == 4 {
            return Err(format!("proto: {msg}: wiretype end group for non-group"));
        }
        if num == 0 || num > u64::from(u32::MAX >> 3) {
            return Err(format!(
                "proto: {msg}: illegal tag {num} (wire type {wire})"
            ));
        }
        Ok((num as u32, wire))
    }

    pub(crate) fn bytes(&mut self) -> Result<&'a [u8], String> {
        let n = self.varint()?;
        if (n as i64) < 0 {
            return Err("proto: negative length found during unmarshaling".into());
        }
        let n = usize::try_from(n).map_err(|_| UNEXPECTED_EOF.to_string())?;
        if n > self.buf.len() {
            return Err(UNEXPECTED_EOF.into());
        }
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        Ok(head)
    }

    pub(crate) fn fixed64(&mut self) -> Result<u64, String> {
        if self.buf.len() < 8 {
            return Err(UNEXPECTED_EOF.into());
        }
        Ok(self.buf.get_u64_le())
    }

    /// Skips a field of an unknown number, as gogo's `skipGenerated`.
    pub(crate) fn skip(&mut self, wire: u8) -> Result<(), String> {
        match wire {
            VARINT => self.varint().map(drop),
            FIXED64 => self.fixed64().map(drop),
            LEN => self.bytes().map(drop),
            FIXED32 => {
                if self.buf.len() < 4 {
                    return Err(UNEXPECTED_EOF.into());
                }
                self.buf.advance(4);
                Ok(())
            }
            // Groups (3, 4) are not in Kubernetes' messages.
            w => Err(format!("proto: illegal wireType {w}")),
        }
    }
}

pub(crate) fn put_varint(v: u64, out: &mut Vec<u8>) {
    prost::encoding::encode_varint(v, out);
}

pub(crate) fn put_key(tag: u32, wire: u8, out: &mut Vec<u8>) {
    put_varint(u64::from(tag) << 3 | u64::from(wire), out);
}

pub(crate) fn put_bytes(tag: u32, b: &[u8], out: &mut Vec<u8>) {
    put_key(tag, LEN, out);
    put_varint(b.len() as u64, out);
    out.extend_from_slice(b);
}

/// Starts a length-delimited field whose length is not known yet; [`end_len`] patches it.
pub(crate) fn begin_len(tag: u32, out: &mut Vec<u8>) -> usize {
    put_key(tag, LEN, out);
    out.push(0);
    out.len()
}

/// Writes the length of the field begun at `start` (moving the body when the length needs more
/// than one byte).
pub(crate) fn end_len(start: usize, out: &mut Vec<u8>) {
    let n = out.len() - start;
    if n < 0x80 {
        out[start - 1] = n as u8;
        return;
    }
    let mut len = Vec::with_capacity(10);
    put_varint(n as u64, &mut len);
    out.splice(start - 1..start, len);
}
