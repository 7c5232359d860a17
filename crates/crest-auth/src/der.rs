//! The few ASN.1 structures authentication reads and writes (X.509 certificates and names,
//! SubjectPublicKeyInfo, PKCS#8/SEC1 private keys), through yasna (already in the tree as
//! rcgen's ASN.1 library).

use yasna::models::ObjectIdentifier;
use yasna::tags::{TAG_BMPSTRING, TAG_IA5STRING, TAG_PRINTABLESTRING, TAG_UTF8STRING};
use yasna::{ASN1Error, ASN1ErrorKind, ASN1Result, Tag};

pub(crate) const OID_CN: &[u64] = &[2, 5, 4, 3];
pub(crate) const OID_O: &[u64] = &[2, 5, 4, 10];
/// The Kubernetes user UID attribute (`1.3.6.1.4.1.57683.2`, CNCF's enterprise number).
pub(crate) const OID_K8S_UID: &[u64] = &[1, 3, 6, 1, 4, 1, 57683, 2];
pub(crate) const OID_EC_PUBLIC_KEY: &[u64] = &[1, 2, 840, 10045, 2, 1];
pub(crate) const OID_P256: &[u64] = &[1, 2, 840, 10045, 3, 1, 7];
pub(crate) const OID_P384: &[u64] = &[1, 3, 132, 0, 34];
pub(crate) const OID_RSA: &[u64] = &[1, 2, 840, 113549, 1, 1, 1];
pub(crate) const OID_ECDSA_SHA256: &[u64] = &[1, 2, 840, 10045, 4, 3, 2];
pub(crate) const OID_ECDSA_SHA384: &[u64] = &[1, 2, 840, 10045, 4, 3, 3];
pub(crate) const OID_RSA_SHA256: &[u64] = &[1, 2, 840, 113549, 1, 1, 11];
pub(crate) const OID_KEY_USAGE: &[u64] = &[2, 5, 29, 15];
pub(crate) const OID_EXT_KEY_USAGE: &[u64] = &[2, 5, 29, 37];
pub(crate) const OID_BASIC_CONSTRAINTS: &[u64] = &[2, 5, 29, 19];
pub(crate) const OID_AUTHORITY_KEY_ID: &[u64] = &[2, 5, 29, 35];
pub(crate) const OID_SUBJECT_KEY_ID: &[u64] = &[2, 5, 29, 14];
pub(crate) const OID_CLIENT_AUTH: &[u64] = &[1, 3, 6, 1, 5, 5, 7, 3, 2];

const TAG_T61STRING: Tag = Tag {
    tag_class: yasna::TagClass::Universal,
    tag_number: 20,
};
const TAG_NUMERICSTRING: Tag = Tag {
    tag_class: yasna::TagClass::Universal,
    tag_number: 18,
};

pub(crate) fn oid(components: &[u64]) -> ObjectIdentifier {
    ObjectIdentifier::from_slice(components)
}

fn invalid() -> ASN1Error {
    ASN1Error::new(ASN1ErrorKind::Invalid)
}

/// The parts of a certificate authentication needs, as raw DER elements.
pub(crate) struct CertParts {
    pub subject: Vec<u8>,
    /// The SubjectPublicKeyInfo element.
    pub spki: Vec<u8>,
    /// The SubjectKeyIdentifier extension's value, when present.
    pub subject_key_id: Option<Vec<u8>>,
}

pub(crate) fn parse_certificate(der: &[u8]) -> ASN1Result<CertParts> {
    yasna::parse_ber(der, |r| {
        r.read_sequence(|r| {
            let parts = r.next().read_sequence(|r| {
                r.read_optional(|r| r.read_tagged(Tag::context(0), |r| r.read_i64()))?;
                r.next().read_der()?; // serialNumber
                r.next().read_der()?; // signature
                r.next().read_der()?; // issuer
                r.next().read_der()?; // validity
                let subject = r.next().read_der()?;
                let spki = r.next().read_der()?;
                let mut subject_key_id = None;
                while let Some(elem) = r.read_optional(|r| r.read_tagged_der())? {
                    if elem.tag() == Tag::context(3) {
                        subject_key_id = find_subject_key_id(elem.value())?;
                    }
                }
                Ok(CertParts {
                    subject,
                    spki,
                    subject_key_id,
                })
            })?;
            r.next().read_der()?; // signatureAlgorithm
            r.next().read_der()?; // signatureValue
            Ok(parts)
        })
    })
}

fn find_subject_key_id(extensions: &[u8]) -> ASN1Result<Option<Vec<u8>>> {
    let mut found = None;
    yasna::parse_ber(extensions, |r| {
        r.read_sequence_of(|r| {
            r.read_sequence(|r| {
                let id = r.next().read_oid()?;
                r.read_optional(|r| r.read_bool())?;
                let value = r.next().read_bytes()?;
                if id == oid(OID_SUBJECT_KEY_ID) {
                    found = Some(yasna::parse_ber(&value, |r| r.read_bytes())?);
                }
                Ok(())
            })
        })
    })?;
    Ok(found)
}

/// A Name's attributes in order; `None` for a value that is not a string (Go's
/// `pkix.Name.FillFromRDNSequence` skips those).
pub(crate) fn parse_name(der: &[u8]) -> ASN1Result<Vec<(ObjectIdentifier, Option<String>)>> {
    let mut out = Vec::new();
    yasna::parse_ber(der, |r| {
        r.read_sequence_of(|r| {
            r.read_set_of(|r| {
                r.read_sequence(|r| {
                    let id = r.next().read_oid()?;
                    let value = r.next().read_tagged_der()?;
                    out.push((id, string_value(value.tag(), value.value())));
                    Ok(())
                })
            })
        })
    })?;
    Ok(out)
}

fn string_value(tag: Tag, bytes: &[u8]) -> Option<String> {
    if tag == TAG_UTF8STRING
        || tag == TAG_PRINTABLESTRING
        || tag == TAG_IA5STRING
        || tag == TAG_NUMERICSTRING
    {
        return String::from_utf8(bytes.to_vec()).ok();
    }
    if tag == TAG_T61STRING {
        // Go reads a T61String's bytes as they are; Latin-1 is the closest reading.
        return Some(bytes.iter().map(|&b| b as char).collect());
    }
    if tag == TAG_BMPSTRING {
        if bytes.len() % 2 != 0 {
            return None;
        }
        let units: Vec<u16> = bytes
            .chunks(2)
            .map(|c| u16::from_be_bytes([c[0], c[1]]))
            .collect();
        return String::from_utf16(&units).ok();
    }
    None
}

/// A parsed SubjectPublicKeyInfo: the algorithm (and curve) and the key bits.
pub(crate) struct Spki {
    pub algorithm: ObjectIdentifier,
    pub curve: Option<ObjectIdentifier>,
    pub key: Vec<u8>,
}

pub(crate) fn parse_spki(der: &[u8]) -> ASN1Result<Spki> {
    yasna::parse_der(der, |r| {
        r.read_sequence(|r| {
            let (algorithm, curve) = r.next().read_sequence(|r| {
                let algorithm = r.next().read_oid()?;
                let curve = r.read_optional(|r| r.read_oid())?;
                if curve.is_none() {
                    r.read_optional(|r| r.read_null())?;
                }
                Ok((algorithm, curve))
            })?;
            let (key, bits) = r.next().read_bitvec_bytes()?;
            if bits % 8 != 0 {
                return Err(invalid());
            }
            Ok(Spki {
                algorithm,
                curve,
                key,
            })
        })
    })
}

/// SubjectPublicKeyInfo DER of an EC key (named curve) or an RSA key (PKCS#1 `RSAPublicKey`),
/// as Go's `x509.MarshalPKIXPublicKey` writes them.
pub(crate) fn spki(algorithm: &[u64], curve: Option<&[u64]>, key: &[u8]) -> Vec<u8> {
    yasna::construct_der(|w| {
        w.write_sequence(|w| {
            w.next().write_sequence(|w| {
                w.next().write_oid(&oid(algorithm));
                match curve {
                    Some(c) => w.next().write_oid(&oid(c)),
                    None => w.next().write_null(),
                }
            });
            w.next().write_bitvec_bytes(key, key.len() * 8);
        })
    })
}

/// A PKCS#8 PrivateKeyInfo's algorithm and curve.
pub(crate) fn pkcs8_algorithm(
    der: &[u8],
) -> ASN1Result<(ObjectIdentifier, Option<ObjectIdentifier>)> {
    yasna::parse_der(der, |r| {
        r.read_sequence(|r| {
            r.next().read_i64()?;
            let alg = r.next().read_sequence(|r| {
                let algorithm = r.next().read_oid()?;
                let curve = r.read_optional(|r| r.read_oid())?;
                if curve.is_none() {
                    r.read_optional(|r| r.read_null())?;
                }
                Ok((algorithm, curve))
            })?;
            r.next().read_bytes()?;
            // attributes [0] and publicKey [1] (PKCS#8 v2) may follow.
            while r.read_optional(|r| r.read_tagged_der())?.is_some() {}
            Ok(alg)
        })
    })
}

/// A SEC1 `ECPrivateKey`: the private scalar, the curve and the public point.
pub(crate) struct Sec1 {
    pub private: Vec<u8>,
    pub curve: Option<ObjectIdentifier>,
    pub public: Option<Vec<u8>>,
}

pub(crate) fn parse_sec1(der: &[u8]) -> ASN1Result<Sec1> {
    yasna::parse_der(der, |r| {
        r.read_sequence(|r| {
            if r.next().read_i64()? != 1 {
                return Err(invalid());
            }
            let private = r.next().read_bytes()?;
            let curve = r.read_optional(|r| r.read_tagged(Tag::context(0), |r| r.read_oid()))?;
            let public = r.read_optional(|r| {
                r.read_tagged(Tag::context(1), |r| {
                    let (bytes, bits) = r.read_bitvec_bytes()?;
                    if bits % 8 != 0 {
                        return Err(invalid());
                    }
                    Ok(bytes)
                })
            })?;
            Ok(Sec1 {
                private,
                curve,
                public,
            })
        })
    })
}

/// The modulus and exponent of a PKCS#1 `RSAPublicKey`, big-endian without leading zeros.
pub(crate) fn rsa_public_components(der: &[u8]) -> ASN1Result<(Vec<u8>, Vec<u8>)> {
    yasna::parse_der(der, |r| {
        r.read_sequence(|r| {
            let (n, _) = r.next().read_bigint_bytes()?;
            let (e, _) = r.next().read_bigint_bytes()?;
            Ok((strip_zeros(n), strip_zeros(e)))
        })
    })
}

fn strip_zeros(mut v: Vec<u8>) -> Vec<u8> {
    let n = v.iter().take_while(|&&b| b == 0).count();
    v.drain(..n);
    v
}

/// A UTCTime (before 2050) or GeneralizedTime element for a certificate's validity.
pub(crate) fn write_time(w: yasna::DERWriter<'_>, unix: i64) {
    let t = chrono::DateTime::from_timestamp(unix, 0).unwrap_or_default();
    let year = chrono::Datelike::year(&t);
    if (1950..2050).contains(&year) {
        let s = t.format("%y%m%d%H%M%SZ").to_string();
        w.write_tagged_implicit(yasna::tags::TAG_UTCTIME, |w| w.write_bytes(s.as_bytes()));
    } else {
        let s = t.format("%Y%m%d%H%M%SZ").to_string();
        w.write_tagged_implicit(yasna::tags::TAG_GENERALIZEDTIME, |w| {
            w.write_bytes(s.as_bytes())
        });
    }
}
