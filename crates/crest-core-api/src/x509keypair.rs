//! Go's `tls.X509KeyPair` as a check: why it would refuse a PEM certificate and key, worded as
//! it words it (kube-apiserver's Secret strategy returns that error as a warning for
//! `kubernetes.io/tls` Secrets, `warningsForSecret` in pkg/registry/core/secret).
//!
//! The stages and their order are Go's: the PEM blocks (the first `CERTIFICATE` block of the
//! certificate input, the first `PRIVATE KEY` / `... PRIVATE KEY` block of the key input), the
//! certificate's DER (`x509.ParseCertificate`, up to and including its public key), the private
//! key (PKCS #1, then PKCS #8, then SEC 1, as `parsePrivateKey`), and whether the two belong
//! together (RSA modulus, EC point, Ed25519 key).
//!
//! What is not reproduced: the certificate's names, validity and extensions are read only as
//! DER elements (Go parses their contents too, so a certificate malformed only there is not
//! reported); an RSA private key is read, not validated (`rsa.PrivateKey.Validate`); whether an
//! EC point is on its curve is left to the key comparison. The EC public key is derived from
//! the private scalar (with ring) for P-256 and P-384; for P-224 and P-521, which ring lacks,
//! the public key embedded in the private key is compared when there is one.

use ring::signature::{
    EcdsaKeyPair, Ed25519KeyPair, KeyPair, ECDSA_P256_SHA256_ASN1_SIGNING,
    ECDSA_P384_SHA384_ASN1_SIGNING,
};

const OID_RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];
const OID_EC: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
const OID_ED25519: &[u8] = &[0x2b, 0x65, 0x70];
const OID_X25519: &[u8] = &[0x2b, 0x65, 0x6e];

const TAG_INTEGER: u8 = 0x02;
const TAG_BIT_STRING: u8 = 0x03;
const TAG_OCTET_STRING: u8 = 0x04;
const TAG_NULL: u8 = 0x05;
const TAG_OID: u8 = 0x06;
const TAG_SEQUENCE: u8 = 0x30;

/// The named curves `x509` knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Curve {
    P224,
    P256,
    P384,
    P521,
}

impl Curve {
    fn from_oid(oid: &[u8]) -> Option<Curve> {
        match oid {
            [0x2b, 0x81, 0x04, 0x00, 0x21] => Some(Curve::P224),
            [0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07] => Some(Curve::P256),
            [0x2b, 0x81, 0x04, 0x00, 0x22] => Some(Curve::P384),
            [0x2b, 0x81, 0x04, 0x00, 0x23] => Some(Curve::P521),
            _ => None,
        }
    }

    /// The length of a field element (and of a private scalar) in bytes.
    fn byte_len(self) -> usize {
        match self {
            Curve::P224 => 28,
            Curve::P256 => 32,
            Curve::P384 => 48,
            Curve::P521 => 66,
        }
    }

    /// The group order, big-endian, `byte_len` bytes long.
    fn order(self) -> &'static [u8] {
        match self {
            Curve::P224 => &[
                0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                0x16, 0xa2, 0xe0, 0xb8, 0xf0, 0x3e, 0x13, 0xdd, 0x29, 0x45, 0x5c, 0x5c, 0x2a, 0x3d,
            ],
            Curve::P256 => &[
                0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                0xff, 0xff, 0xbc, 0xe6, 0xfa, 0xad, 0xa7, 0x17, 0x9e, 0x84, 0xf3, 0xb9, 0xca, 0xc2,
                0xfc, 0x63, 0x25, 0x51,
            ],
            Curve::P384 => &[
                0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xc7, 0x63, 0x4d, 0x81,
                0xf4, 0x37, 0x2d, 0xdf, 0x58, 0x1a, 0x0d, 0xb2, 0x48, 0xb0, 0xa7, 0x7a, 0xec, 0xec,
                0x19, 0x6a, 0xcc, 0xc5, 0x29, 0x73,
            ],
            Curve::P521 => &[
                0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                0xff, 0xff, 0xff, 0xff, 0xff, 0xfa, 0x51, 0x86, 0x87, 0x83, 0xbf, 0x2f, 0x96, 0x6b,
                0x7f, 0xcc, 0x01, 0x48, 0xf7, 0x09, 0xa5, 0xd0, 0x3b, 0xb5, 0xc9, 0xb8, 0x89, 0x9c,
                0x47, 0xae, 0xbb, 0x6f, 0xb7, 0x1e, 0x91, 0x38, 0x64, 0x09,
            ],
        }
    }
}

/// A certificate's public key, as far as the comparison needs it.
enum PublicKey<'a> {
    /// The modulus, without leading zeros.
    Rsa(&'a [u8]),
    /// The uncompressed point.
    Ec(&'a [u8]),
    Ed25519(&'a [u8]),
    /// An algorithm `tls.X509KeyPair` does not pair (DSA, X25519, unknown OIDs).
    Other,
}

/// A parsed private key.
enum PrivateKey<'a> {
    Rsa(&'a [u8]),
    Ec {
        curve: Curve,
        scalar: Vec<u8>,
        embedded_public: Option<&'a [u8]>,
    },
    Ed25519(&'a [u8]),
}

/// A DER reader with cryptobyte's strictness (definite, minimal lengths; one-byte tags).
#[derive(Clone, Copy)]
struct Der<'a>(&'a [u8]);

impl<'a> Der<'a> {
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn peek_tag(&self) -> Option<u8> {
        self.0.first().copied()
    }

    /// The next element: its tag, the whole element and its contents.
    fn element(&mut self) -> Option<(u8, &'a [u8], &'a [u8])> {
        let data = self.0;
        let tag = *data.first()?;
        if tag & 0x1f == 0x1f {
            return None;
        }
        let first = *data.get(1)?;
        let (len, header) = if first & 0x80 == 0 {
            (usize::from(first), 2)
        } else {
            let n = usize::from(first & 0x7f);
            // Indefinite lengths and lengths that do not fit are refused, as are non-minimal ones.
            if n == 0 || n > 4 {
                return None;
            }
            let bytes = data.get(2..2 + n)?;
            if bytes[0] == 0 {
                return None;
            }
            let len = bytes
                .iter()
                .fold(0usize, |acc, b| (acc << 8) | usize::from(*b));
            if len < 128 {
                return None;
            }
            (len, 2 + n)
        };
        let end = header.checked_add(len)?;
        let whole = data.get(..end)?;
        self.0 = &data[end..];
        Some((tag, whole, &whole[header..]))
    }

    /// The contents of the next element if it has `tag`.
    fn read(&mut self, tag: u8) -> Option<Der<'a>> {
        self.read_bytes(tag).map(Der)
    }

    fn read_bytes(&mut self, tag: u8) -> Option<&'a [u8]> {
        let mut probe = *self;
        let (t, _, contents) = probe.element()?;
        if t != tag {
            return None;
        }
        *self = probe;
        Some(contents)
    }

    /// The whole next element if it has `tag`.
    fn read_element(&mut self, tag: u8) -> Option<&'a [u8]> {
        let mut probe = *self;
        let (t, whole, _) = probe.element()?;
        if t != tag {
            return None;
        }
        *self = probe;
        Some(whole)
    }

    /// An INTEGER's contents, checked as `checkASN1Integer` checks them (non-empty, minimal).
    fn integer(&mut self) -> Option<&'a [u8]> {
        let mut probe = *self;
        let v = probe.read_bytes(TAG_INTEGER)?;
        let minimal = match v {
            [] => false,
            [0x00, next, ..] => next & 0x80 != 0,
            [0xff, next, ..] => next & 0x80 == 0,
            _ => true,
        };
        if !minimal {
            return None;
        }
        *self = probe;
        Some(v)
    }

    /// A small non-negative INTEGER.
    fn small_int(&mut self) -> Option<i64> {
        let v = self.integer()?;
        if v.len() > 4 || v[0] & 0x80 != 0 {
            return None;
        }
        Some(v.iter().fold(0i64, |acc, b| (acc << 8) | i64::from(*b)))
    }

    /// A BIT STRING's bytes (only whole bytes: the unused-bit count must be 0 for keys).
    fn bit_string(&mut self) -> Option<(u8, &'a [u8])> {
        let mut probe = *self;
        let v = probe.read_bytes(TAG_BIT_STRING)?;
        let (&unused, bits) = v.split_first()?;
        if unused > 7 || (bits.is_empty() && unused != 0) {
            return None;
        }
        if let Some(last) = bits.last() {
            if unused != 0 && last & ((1 << unused) - 1) != 0 {
                return None;
            }
        }
        *self = probe;
        Some((unused, bits))
    }
}

/// A positive INTEGER without its sign byte.
fn unsigned(v: &[u8]) -> &[u8] {
    match v {
        [0x00, rest @ ..] if !rest.is_empty() => rest,
        _ => v,
    }
}

fn positive(v: &[u8]) -> bool {
    v[0] & 0x80 == 0 && v.iter().any(|b| *b != 0)
}

/// `parseAI`: the algorithm OID and the parameters' whole DER (empty when absent).
fn algorithm_identifier<'a>(mut seq: Der<'a>) -> Result<(&'a [u8], &'a [u8]), &'static str> {
    let oid = seq.read_bytes(TAG_OID).ok_or("x509: malformed OID")?;
    if seq.is_empty() {
        return Ok((oid, &[]));
    }
    let (_, params, _) = seq.element().ok_or("x509: malformed parameters")?;
    Ok((oid, params))
}

/// `x509.ParseCertificate`, as far as the public key (then the signature's presence and
/// trailing data).
fn parse_certificate(der: &[u8]) -> Result<PublicKey<'_>, &'static str> {
    let mut all = Der(der);
    let raw = all
        .read_element(TAG_SEQUENCE)
        .ok_or("x509: malformed certificate")?;
    let mut input = Der(raw)
        .read(TAG_SEQUENCE)
        .ok_or("x509: malformed certificate")?;
    let mut tbs = input
        .read(TAG_SEQUENCE)
        .ok_or("x509: malformed tbs certificate")?;
    let version = if tbs.peek_tag() == Some(0xa0) {
        let mut explicit = tbs.read(0xa0).ok_or("x509: malformed version")?;
        let v = explicit.small_int().ok_or("x509: malformed version")?;
        if !explicit.is_empty() {
            return Err("x509: malformed version");
        }
        v
    } else {
        0
    };
    if version + 1 > 3 {
        return Err("x509: invalid version");
    }
    let serial = tbs.integer().ok_or("x509: malformed serial number")?;
    // Go 1.23 (kube-apiserver 1.32's) refuses negative serial numbers by default.
    if serial[0] & 0x80 != 0 {
        return Err("x509: negative serial number");
    }
    let sig_ai = tbs
        .read_bytes(TAG_SEQUENCE)
        .ok_or("x509: malformed signature algorithm identifier")?;
    let outer_ai = input
        .read_bytes(TAG_SEQUENCE)
        .ok_or("x509: malformed algorithm identifier")?;
    if outer_ai != sig_ai {
        return Err("x509: inner and outer signature algorithm identifiers don't match");
    }
    algorithm_identifier(Der(sig_ai))?;
    tbs.read_element(TAG_SEQUENCE)
        .ok_or("x509: malformed issuer")?;
    tbs.read(TAG_SEQUENCE).ok_or("x509: malformed validity")?;
    // Go's message for the subject is the issuer's.
    tbs.read_element(TAG_SEQUENCE)
        .ok_or("x509: malformed issuer")?;
    let mut spki = tbs.read(TAG_SEQUENCE).ok_or("x509: malformed spki")?;
    let pk_ai = spki
        .read(TAG_SEQUENCE)
        .ok_or("x509: malformed public key algorithm identifier")?;
    let (oid, params) = algorithm_identifier(pk_ai)?;
    let (unused, key) = spki
        .bit_string()
        .ok_or("x509: malformed subjectPublicKey")?;
    // BitString.RightAlign of a whole-byte string is its bytes.
    let key = if unused == 0 { key } else { &[][..] };
    let public = match oid {
        OID_RSA => {
            if params != [TAG_NULL, 0] {
                return Err("x509: RSA key missing NULL parameters");
            }
            let mut seq = Der(key)
                .read(TAG_SEQUENCE)
                .ok_or("x509: invalid RSA public key")?;
            let n = seq.integer().ok_or("x509: invalid RSA modulus")?;
            let e = seq.integer().ok_or("x509: invalid RSA public exponent")?;
            if !positive(n) {
                return Err("x509: RSA modulus is not a positive number");
            }
            if !positive(e) {
                return Err("x509: RSA public exponent is not a positive number");
            }
            PublicKey::Rsa(unsigned(n))
        }
        OID_EC => {
            let curve_oid = Der(params)
                .read_bytes(TAG_OID)
                .ok_or("x509: invalid ECDSA parameters")?;
            let curve = Curve::from_oid(curve_oid).ok_or("x509: unsupported elliptic curve")?;
            if key.len() != 1 + 2 * curve.byte_len() || key[0] != 4 {
                return Err("x509: failed to unmarshal elliptic curve point");
            }
            PublicKey::Ec(key)
        }
        OID_ED25519 => {
            if !params.is_empty() {
                return Err("x509: Ed25519 key encoded with illegal parameters");
            }
            if key.len() != 32 {
                return Err("x509: wrong Ed25519 public key size");
            }
            PublicKey::Ed25519(key)
        }
        _ => PublicKey::Other,
    };
    // Unique IDs and extensions are DER elements before the signature, within tbs.
    input.bit_string().ok_or("x509: malformed signature")?;
    if !all.is_empty() {
        return Err("x509: trailing data");
    }
    Ok(public)
}

/// `x509.ParsePKCS1PrivateKey` (structure only): the modulus.
fn parse_pkcs1(der: &[u8]) -> Option<&[u8]> {
    let mut all = Der(der);
    let mut seq = all.read(TAG_SEQUENCE)?;
    if !all.is_empty() {
        return None;
    }
    let version = seq.small_int()?;
    if version > 1 {
        return None;
    }
    let n = seq.integer()?;
    // e, d, p, q; then dp, dq, qinv and further primes, optional.
    for _ in 0..4 {
        seq.integer()?;
    }
    if !positive(n) {
        return None;
    }
    Some(unsigned(n))
}

/// `x509.ParseECPrivateKey` / `parseECPrivateKey` with the curve PKCS #8 named, if any.
fn parse_sec1(der: &[u8], named: Option<Curve>) -> Option<PrivateKey<'_>> {
    let mut all = Der(der);
    let mut seq = all.read(TAG_SEQUENCE)?;
    if !all.is_empty() || seq.small_int()? != 1 {
        return None;
    }
    let scalar = seq.read_bytes(TAG_OCTET_STRING)?;
    let mut curve = named;
    if seq.peek_tag() == Some(0xa0) {
        let oid = seq.read(0xa0)?.read_bytes(TAG_OID)?;
        if curve.is_none() {
            curve = Some(Curve::from_oid(oid)?);
        }
    }
    let curve = curve?;
    let embedded_public = match seq.peek_tag() {
        Some(0xa1) => Some(seq.read(0xa1)?.bit_string()?.1),
        _ => None,
    };
    // Longer scalars may carry leading zeros; shorter ones are padded.
    let len = curve.byte_len();
    let mut s = scalar;
    while s.len() > len {
        if s[0] != 0 {
            return None;
        }
        s = &s[1..];
    }
    let mut padded = vec![0u8; len - s.len()];
    padded.extend_from_slice(s);
    if padded.as_slice() >= curve.order() || padded.iter().all(|b| *b == 0) {
        return None;
    }
    Some(PrivateKey::Ec {
        curve,
        scalar: padded,
        embedded_public,
    })
}

/// What `x509.ParsePKCS8PrivateKey` finds: a key, a key type `tls` does not take, or nothing.
enum Pkcs8<'a> {
    Key(PrivateKey<'a>),
    Unsupported,
    Invalid,
}

fn parse_pkcs8(der: &[u8]) -> Pkcs8<'_> {
    let parse = || -> Option<Pkcs8<'_>> {
        let mut all = Der(der);
        let mut seq = all.read(TAG_SEQUENCE)?;
        if !all.is_empty() {
            return None;
        }
        seq.small_int()?;
        let (oid, params) = algorithm_identifier(seq.read(TAG_SEQUENCE)?).ok()?;
        let inner = seq.read_bytes(TAG_OCTET_STRING)?;
        Some(match oid {
            OID_RSA => Pkcs8::Key(PrivateKey::Rsa(parse_pkcs1(inner)?)),
            OID_EC => {
                let curve = Curve::from_oid(Der(params).read_bytes(TAG_OID)?)?;
                Pkcs8::Key(parse_sec1(inner, Some(curve))?)
            }
            OID_ED25519 => {
                if !params.is_empty() {
                    return None;
                }
                let mut inner = Der(inner);
                let seed = inner.read_bytes(TAG_OCTET_STRING)?;
                if !inner.is_empty() || seed.len() != 32 {
                    return None;
                }
                Pkcs8::Key(PrivateKey::Ed25519(seed))
            }
            OID_X25519 => Pkcs8::Unsupported,
            _ => return None,
        })
    };
    parse().unwrap_or(Pkcs8::Invalid)
}

/// `tls.parsePrivateKey`.
fn parse_private_key(der: &[u8]) -> Result<PrivateKey<'_>, &'static str> {
    if let Some(n) = parse_pkcs1(der) {
        return Ok(PrivateKey::Rsa(n));
    }
    match parse_pkcs8(der) {
        Pkcs8::Key(k) => return Ok(k),
        Pkcs8::Unsupported => return Err("tls: found unknown private key type in PKCS#8 wrapping"),
        Pkcs8::Invalid => {}
    }
    parse_sec1(der, None).ok_or("tls: failed to parse private key")
}

/// Whether the EC private scalar's public point is `point` (`None`: cannot tell).
fn ec_matches(curve: Curve, scalar: &[u8], embedded: Option<&[u8]>, point: &[u8]) -> Option<bool> {
    let alg = match curve {
        Curve::P256 => &ECDSA_P256_SHA256_ASN1_SIGNING,
        Curve::P384 => &ECDSA_P384_SHA384_ASN1_SIGNING,
        Curve::P224 | Curve::P521 => return embedded.map(|e| e == point),
    };
    let rng = ring::rand::SystemRandom::new();
    match EcdsaKeyPair::from_private_key_and_public_key(alg, scalar, point, &rng) {
        Ok(_) => Some(true),
        Err(e) if e.to_string() == "InconsistentComponents" => Some(false),
        // A point of another curve's length, or one not on the curve.
        Err(e) if e.to_string() == "InvalidEncoding" => Some(false),
        Err(_) => None,
    }
}

/// The PEM blocks in `input`, in order, as `pem.Decode` finds them: `-----BEGIN T-----` ...
/// `-----END T-----` around a base64 body (headers skipped; blocks that do not decode are
/// skipped, as `pem.Decode` skips them).
pub(crate) fn pem_blocks(input: &[u8]) -> Vec<(String, Vec<u8>)> {
    let text = String::from_utf8_lossy(input);
    let mut blocks = vec![];
    let mut rest: &str = &text;
    while let Some(start) = rest.find("-----BEGIN ") {
        let after = &rest[start + "-----BEGIN ".len()..];
        let Some(end_of_type) = after.find("-----") else {
            break;
        };
        let ty = &after[..end_of_type];
        let body_start = &after[end_of_type + 5..];
        let end_marker = format!("-----END {ty}-----");
        let Some(end) = body_start.find(&end_marker) else {
            rest = body_start;
            continue;
        };
        let body: String = body_start[..end]
            .lines()
            .filter(|l| !l.contains(':'))
            .flat_map(|l| l.chars().filter(|c| !c.is_whitespace()))
            .collect();
        if !ty.contains('\n') {
            if let Ok(bytes) = crest_gofmt::go_base64_decode(body.as_bytes()) {
                blocks.push((ty.to_string(), bytes));
            }
        }
        rest = &body_start[end + end_marker.len()..];
    }
    blocks
}

/// Go's `%v` of a `[]string`.
fn go_list(items: &[String]) -> String {
    format!("[{}]", items.join(" "))
}

/// Why `tls.X509KeyPair(cert, key)` fails, in its words; `None` when it succeeds.
pub fn x509_key_pair_error(cert: &[u8], key: &[u8]) -> Option<String> {
    let mut cert_der = None;
    let mut skipped = vec![];
    for (ty, bytes) in pem_blocks(cert) {
        if ty == "CERTIFICATE" {
            cert_der.get_or_insert(bytes);
        } else {
            skipped.push(ty);
        }
    }
    let Some(cert_der) = cert_der else {
        if skipped.is_empty() {
            return Some("tls: failed to find any PEM data in certificate input".into());
        }
        if skipped.len() == 1 && skipped[0].ends_with("PRIVATE KEY") {
            return Some("tls: failed to find certificate PEM data in certificate input, but did find a private key; PEM inputs may have been switched".into());
        }
        return Some(format!(
            "tls: failed to find \"CERTIFICATE\" PEM block in certificate input after skipping PEM blocks of the following types: {}",
            go_list(&skipped)
        ));
    };
    let mut skipped = vec![];
    let mut key_der = None;
    for (ty, bytes) in pem_blocks(key) {
        if ty == "PRIVATE KEY" || ty.ends_with(" PRIVATE KEY") {
            key_der = Some(bytes);
            break;
        }
        skipped.push(ty);
    }
    let Some(key_der) = key_der else {
        if skipped.is_empty() {
            return Some("tls: failed to find any PEM data in key input".into());
        }
        if skipped.len() == 1 && skipped[0] == "CERTIFICATE" {
            return Some(
                "tls: found a certificate rather than a key in the PEM for the private key".into(),
            );
        }
        return Some(format!(
            "tls: failed to find PEM block with type ending in \"PRIVATE KEY\" in key input after skipping PEM blocks of the following types: {}",
            go_list(&skipped)
        ));
    };
    let public = match parse_certificate(&cert_der) {
        Ok(p) => p,
        Err(e) => return Some(e.into()),
    };
    let private = match parse_private_key(&key_der) {
        Ok(p) => p,
        Err(e) => return Some(e.into()),
    };
    const TYPE_MISMATCH: &str = "tls: private key type does not match public key type";
    const KEY_MISMATCH: &str = "tls: private key does not match public key";
    let matches = match (public, private) {
        (PublicKey::Rsa(n), PrivateKey::Rsa(m)) => n == m,
        (
            PublicKey::Ec(point),
            PrivateKey::Ec {
                curve,
                scalar,
                embedded_public,
            },
        ) => ec_matches(curve, &scalar, embedded_public, point).unwrap_or(true),
        (PublicKey::Ed25519(pk), PrivateKey::Ed25519(seed)) => {
            Ed25519KeyPair::from_seed_unchecked(seed)
                .map(|k| k.public_key().as_ref() == pk)
                .unwrap_or(false)
        }
        (PublicKey::Other, _) => return Some("tls: unknown public key algorithm".into()),
        _ => return Some(TYPE_MISMATCH.into()),
    };
    (!matches).then(|| KEY_MISMATCH.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! pem {
        ($f:literal) => {
            include_str!(concat!("../testdata/tls/", $f)).as_bytes()
        };
    }

    fn err(cert: &[u8], key: &[u8]) -> Option<String> {
        x509_key_pair_error(cert, key)
    }

    #[test]
    fn pairs_that_belong_together() {
        let pairs: [(&[u8], &[u8]); 9] = [
            (pem!("rsa.crt"), pem!("rsa.key")),
            (pem!("rsa.crt"), pem!("rsa-pkcs1.key")),
            (pem!("p256.crt"), pem!("p256.key")),
            (pem!("p256.crt"), pem!("p256-sec1.key")),
            // No public key in the private key: derived from the scalar.
            (pem!("p256.crt"), pem!("p256-nopub.key")),
            (pem!("p521.crt"), pem!("p521.key")),
            (pem!("p521.crt"), pem!("p521-sec1.key")),
            (pem!("ed25519.crt"), pem!("ed25519.key")),
            // Other blocks around them are skipped.
            (
                &[pem!("rsa.key"), pem!("rsa.crt")].concat(),
                &[pem!("rsa.crt"), pem!("rsa.key")].concat(),
            ),
        ];
        for (i, (c, k)) in pairs.iter().enumerate() {
            assert_eq!(err(c, k), None, "pair {i}");
        }
        // P-384, generated.
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P384_SHA384).expect("key");
        let cert = rcgen::CertificateParams::new(vec!["a".into()])
            .expect("params")
            .self_signed(&key)
            .expect("cert");
        assert_eq!(
            err(cert.pem().as_bytes(), key.serialize_pem().as_bytes()),
            None
        );
        let other = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P384_SHA384).expect("key");
        assert_eq!(
            err(cert.pem().as_bytes(), other.serialize_pem().as_bytes()).as_deref(),
            Some("tls: private key does not match public key")
        );
    }

    #[test]
    fn mismatches_in_go_words() {
        let no_match = Some("tls: private key does not match public key");
        assert_eq!(
            err(pem!("rsa.crt"), pem!("rsa-other.key")).as_deref(),
            no_match
        );
        assert_eq!(
            err(pem!("p256.crt"), pem!("p256-other.key")).as_deref(),
            no_match
        );
        assert_eq!(
            err(pem!("p521.crt"), pem!("p521-other.key")).as_deref(),
            no_match
        );
        assert_eq!(
            err(pem!("ed25519.crt"), pem!("ed25519-other.key")).as_deref(),
            no_match
        );
        // Both ECDSA, other curves: the points differ.
        assert_eq!(err(pem!("p256.crt"), pem!("p521.key")).as_deref(), no_match);
        assert_eq!(err(pem!("p521.crt"), pem!("p256.key")).as_deref(), no_match);
        assert_eq!(
            err(pem!("rsa.crt"), pem!("p256.key")).as_deref(),
            Some("tls: private key type does not match public key type")
        );
        assert_eq!(
            err(pem!("ed25519.crt"), pem!("rsa.key")).as_deref(),
            Some("tls: private key type does not match public key type")
        );
        assert_eq!(
            err(pem!("rsa.crt"), pem!("x25519.key")).as_deref(),
            Some("tls: found unknown private key type in PKCS#8 wrapping")
        );
        let block = |t: &str, body: &[u8]| {
            use base64::Engine;
            let b64 = base64::engine::general_purpose::STANDARD.encode(body);
            format!("-----BEGIN {t}-----\n{b64}\n-----END {t}-----\n").into_bytes()
        };
        assert_eq!(
            err(
                pem!("rsa.crt"),
                &block("PRIVATE KEY", b"\x30\x03\x02\x01\x00")
            )
            .as_deref(),
            Some("tls: failed to parse private key")
        );
        assert_eq!(
            err(&block("CERTIFICATE", b"junk"), pem!("rsa.key")).as_deref(),
            Some("x509: malformed certificate")
        );
        // A v3 certificate cut short after its serial number: negative, then positive.
        let cut = |serial: u8| {
            block(
                "CERTIFICATE",
                &[
                    0x30, 0x0a, 0x30, 0x08, 0xa0, 0x03, 0x02, 0x01, 0x02, 0x02, 0x01, serial,
                ],
            )
        };
        assert_eq!(
            err(&cut(0x80), pem!("rsa.key")).as_deref(),
            Some("x509: negative serial number")
        );
        assert_eq!(
            err(&cut(0x7f), pem!("rsa.key")).as_deref(),
            Some("x509: malformed signature algorithm identifier")
        );
        // The certificate's DER followed by more bytes.
        let der = &pem_blocks(pem!("rsa.crt"))[0].1;
        let trailing = [der.as_slice(), b"\x00"].concat();
        assert_eq!(
            err(&block("CERTIFICATE", &trailing), pem!("rsa.key")).as_deref(),
            Some("x509: trailing data")
        );
        // A certificate cut short within its signature.
        let mut short = der.clone();
        let len = short.len();
        short[2..4].copy_from_slice(&u16::try_from(len - 4 - 10).expect("len").to_be_bytes());
        short.truncate(len - 10);
        assert_eq!(
            err(&block("CERTIFICATE", &short), pem!("rsa.key")).as_deref(),
            Some("x509: malformed signature")
        );
    }
}
